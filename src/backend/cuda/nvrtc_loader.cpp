// NVRTC opened with dlopen on first use, the way driver_loader.cpp opens the driver: kjudge
// defines the NVRTC entry points it calls (nvrtc.h's declarations) and forwards each to the
// library's, so nothing links against libnvrtc. A binary or the Python extension then starts on a
// machine whose NVRTC lives where the loader would not look (a wheel user's torch keeps its own
// in site-packages/nvidia), and a process that has NVRTC loaded already (torch) shares that copy.
//
// Where it looks, in order: $KJUDGE_NVRTC (a path), the library already in the process or on the
// loader's path (libnvrtc.so.MAJOR of the headers kjudge was built with), the toolkit kjudge was
// built against, $CUDA_HOME/lib64. A machine with none of them gets NVRTC_ERROR_INTERNAL_ERROR
// from every call, and nvrtcGetErrorString says what was tried.
#include <dlfcn.h>
#include <cuda.h>  // CUDA_VERSION: the NVRTC major kjudge was built against
#include <nvrtc.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "backend/cuda/nvrtc_internal.hpp"

#ifndef KJ_CUDA_LIBRARY_DIR
#define KJ_CUDA_LIBRARY_DIR ""
#endif

namespace {

// X(name, return type, parameters, arguments): every function kjudge calls.
#define KJ_NVRTC_FUNCTIONS(X)                                                                      \
  X(nvrtcVersion, (int* major, int* minor), (major, minor))                                       \
  X(nvrtcGetNumSupportedArchs, (int* count), (count))                                             \
  X(nvrtcGetSupportedArchs, (int* archs), (archs))                                                \
  X(nvrtcCreateProgram,                                                                            \
    (nvrtcProgram * prog, const char* src, const char* name, int headers,                          \
     const char* const* contents, const char* const* names),                                       \
    (prog, src, name, headers, contents, names))                                                   \
  X(nvrtcDestroyProgram, (nvrtcProgram * prog), (prog))                                           \
  X(nvrtcCompileProgram, (nvrtcProgram prog, int count, const char* const* options),              \
    (prog, count, options))                                                                        \
  X(nvrtcGetPTXSize, (nvrtcProgram prog, size_t* size), (prog, size))                             \
  X(nvrtcGetPTX, (nvrtcProgram prog, char* ptx), (prog, ptx))                                     \
  X(nvrtcGetCUBINSize, (nvrtcProgram prog, size_t* size), (prog, size))                           \
  X(nvrtcGetCUBIN, (nvrtcProgram prog, char* cubin), (prog, cubin))                               \
  X(nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t* size), (prog, size))                      \
  X(nvrtcGetProgramLog, (nvrtcProgram prog, char* log), (prog, log))                              \
  X(nvrtcAddNameExpression, (nvrtcProgram prog, const char* name), (prog, name))                  \
  X(nvrtcGetLoweredName, (nvrtcProgram prog, const char* name, const char** lowered),             \
    (prog, name, lowered))

struct Library {
#define KJ_NVRTC_POINTER(name, params, args) nvrtcResult(*name) params = nullptr;
  KJ_NVRTC_FUNCTIONS(KJ_NVRTC_POINTER)
#undef KJ_NVRTC_POINTER
  const char* (*nvrtcGetErrorString)(nvrtcResult) = nullptr;
  std::string why_not; // "" once every symbol resolved
};

void* open_first(std::string& tried) {
  const std::string soname = fmt::format("libnvrtc.so.{}", CUDA_VERSION / 1000);
  std::string candidates[4];
  if (const char* path = std::getenv("KJUDGE_NVRTC"); path && *path) candidates[0] = path;
  candidates[1] = soname;
  if (*KJ_CUDA_LIBRARY_DIR) candidates[2] = fmt::format("{}/{}", KJ_CUDA_LIBRARY_DIR, soname);
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    candidates[3] = fmt::format("{}/lib64/{}", home, soname);
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    // RTLD_LOCAL: NVRTC's symbols stay out of the global namespace (a torch loaded later keeps
    // finding its own).
    if (void* handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* err = ::dlerror();
    tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", c, err ? err : "dlopen failed");
  }
  return nullptr;
}

const Library& library() {
  static const Library lib = [] {
    Library l;
    std::string tried;
    void* handle = open_first(tried);
    if (handle == nullptr) {
      l.why_not = "NVRTC not found: " + tried;
      return l;
    }
    std::string missing;
#define KJ_NVRTC_RESOLVE(name, params, args)                                                       \
  l.name = reinterpret_cast<decltype(l.name)>(::dlsym(handle, #name));                             \
  if (l.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
    KJ_NVRTC_FUNCTIONS(KJ_NVRTC_RESOLVE)
    KJ_NVRTC_RESOLVE(nvrtcGetErrorString, , )
#undef KJ_NVRTC_RESOLVE
    if (!missing.empty()) l.why_not = "the NVRTC library found lacks " + missing;
    return l;
  }();
  return lib;
}

} // namespace

namespace kj::detail {

void* nvrtc_library_entry_point() {
  const Library& l = library();
  return l.why_not.empty() ? reinterpret_cast<void*>(l.nvrtcVersion) : nullptr;
}

} // namespace kj::detail

extern "C" {

#define KJ_NVRTC_FORWARD(name, params, args)                                                       \
  nvrtcResult name params {                                                                        \
    const Library& l = library();                                                                  \
    return l.why_not.empty() ? l.name args : NVRTC_ERROR_INTERNAL_ERROR;                           \
  }
KJ_NVRTC_FUNCTIONS(KJ_NVRTC_FORWARD)
#undef KJ_NVRTC_FORWARD

const char* nvrtcGetErrorString(nvrtcResult result) {
  const Library& l = library();
  return l.why_not.empty() ? l.nvrtcGetErrorString(result) : l.why_not.c_str();
}

} // extern "C"
