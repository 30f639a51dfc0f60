// The host build's <cooperative_groups/reduce.h>: reduce and its operators are in kjudge's
// cooperative_groups.hpp with the rest.
#pragma once
#include "kjudge/host/cooperative_groups.hpp"
