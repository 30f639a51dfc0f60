// The host build's <cooperative_groups.h> (this folder is on its include path before the
// toolkit's, whose header is device code): kjudge's cooperative groups over the emulation.
#pragma once
#include "kjudge/host/cooperative_groups.hpp"
