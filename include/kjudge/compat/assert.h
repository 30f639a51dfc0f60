// What `#include <assert.h>` (and <cassert>) gives a candidate: the toolkit's device assert, as
// NVRTC's own headers define it (crt/common_functions.h), which NVRTC already provides with no
// include at all. Like the C library's header it has no include guard: each inclusion defines
// assert anew by whether NDEBUG is defined there, so `#define NDEBUG` before the include turns
// it off, as usual. The host build finds this file for the host's own headers too (the compat
// folder is on its include path): before the emulation has declared __assertfail they get the
// C library's assert; after it, the same device assert, which cuda_emulation.hpp turns into the
// launch's failure. The function's name is __func__ where the toolkit's has
// __PRETTY_FUNCTION__, which each compiler spells its own way and the host backend refuses in
// the text it compiles (the name is printed, never judged).
#if defined(KJ_HOST_BACKEND) && !defined(KJ_HOST_ASSERTFAIL)
#include_next <assert.h>
#else
#undef assert
#ifdef NDEBUG
#define assert(e) (static_cast<void>(0))
#else
#define assert(e)                                                                                  \
  ((e) ? static_cast<void>(0)                                                                      \
       : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
#endif
