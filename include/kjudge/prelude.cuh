// What every NVRTC compile of kjudge's sees before the source (--pre-include): the few macros
// device code takes from the C library headers that nvcc brings in implicitly and NVRTC does
// not (math.h's INFINITY and NAN, stddef.h's NULL). Each only where the source's own headers
// have not defined it; the host backend gets the same names from the C++ library. assert is
// kjudge/compat/assert.h's (the toolkit's __assertfail, named by __func__), read here in place of
// the one NVRTC's own headers define (named by __PRETTY_FUNCTION__, which each compiler spells
// its own way), as the host backend's preprocessing reads it first: the text the host compiles,
// given to NVRTC, is then the candidate's program (HostKernelRunner::nvrtc_compiles_the_same).
#pragma once

#include <assert.h>

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef NULL
#define NULL 0
#endif
