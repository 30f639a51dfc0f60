// What `#include <cuda.h>` gives a candidate: code from training codebases includes it
// everywhere, but its host API has no place in one file of device code compiled by NVRTC (and
// the toolkit's header does not compile there). This stands in for it with what device code
// takes from it: the builtins NVRTC already has, and kjudge/prelude.cuh's macros.
#pragma once

#include "kjudge/prelude.cuh"
