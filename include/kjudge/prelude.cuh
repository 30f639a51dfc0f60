// What every NVRTC compile of kjudge's sees before the source (--pre-include): the few macros
// device code takes from the C library headers that nvcc brings in implicitly and NVRTC does
// not (math.h's INFINITY and NAN, stddef.h's NULL). Each only where the source's own headers
// have not defined it; the host backend gets the same names from the C++ library. assert needs
// nothing here: NVRTC's own headers define it before this file is read (calling the toolkit's
// __assertfail), and `#include <assert.h>` or <cassert> reads kjudge/compat/assert.h; the host
// backend's preprocessing reads that file first in their place.
#pragma once

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef NULL
#define NULL 0
#endif
