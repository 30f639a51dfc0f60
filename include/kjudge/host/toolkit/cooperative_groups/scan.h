// The host build's <cooperative_groups/scan.h>: inclusive_scan and exclusive_scan are in
// kjudge's cooperative_groups.hpp with the rest.
#pragma once
#include "kjudge/host/cooperative_groups.hpp"
