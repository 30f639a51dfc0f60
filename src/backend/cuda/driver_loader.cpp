// Opens libcuda.so.1 with dlopen on first use and resolves the driver entry points kjudge calls
// (driver_loader.hpp), then runs cuInit once. Nothing here links against libcuda, so a binary
// built with the CUDA backend starts on a machine without a GPU driver, and cuda_available()
// reports why the GPU is unusable instead of the loader refusing to start the program.
#include "backend/cuda/driver_loader.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "kjudge/cuda.hpp"

namespace kj::cuda_detail {
namespace {

// Expands its argument first, so KJ_CU_NAME(cuMemAlloc) is "cuMemAlloc_v2" under cuda.h's
// defines: the symbol of the ABI version the prototypes in the table describe.
#define KJ_CU_NAME2(x) #x
#define KJ_CU_NAME(x) KJ_CU_NAME2(x)

struct Loaded {
  DriverApi api;
  bool symbols_ok = false; // the library opened and every symbol resolved
  std::string load_error;  // why not
  CUresult init_status = CUDA_ERROR_NOT_INITIALIZED;
  std::string init_error; // "cuInit: CUDA_ERROR_NO_DEVICE"
};

std::string name_of(const DriverApi* api, CUresult code);

Loaded load() {
  Loaded l;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace, so a host process that
  // loads its own libcuda (PyTorch) is unaffected; the handle is kept for the process lifetime.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    l.load_error =
        fmt::format("libcuda.so.1 not found: {}", err != nullptr ? err : "dlopen failed");
    return l;
  }
  std::string missing;
#define KJ_CU_RESOLVE(name)                                                                        \
  l.api.name = reinterpret_cast<decltype(l.api.name)>(dlsym(handle, KJ_CU_NAME(name)));            \
  if (l.api.name == nullptr)                                                                       \
    missing += (missing.empty() ? "" : ", ") + std::string(KJ_CU_NAME(name));
  KJ_CU_REQUIRED_FUNCTIONS(KJ_CU_RESOLVE)
#undef KJ_CU_RESOLVE
  if (!missing.empty()) {
    l.load_error =
        fmt::format("libcuda.so.1 lacks {} (a driver for CUDA 12.4 or newer is needed)", missing);
    return l;
  }
  l.symbols_ok = true;
  l.init_status = l.api.cuInit(0);
  if (l.init_status != CUDA_SUCCESS) {
    l.init_error = fmt::format("cuInit: {}", name_of(&l.api, l.init_status));
    return l;
  }
  int count = 0;
  const CUresult st = l.api.cuDeviceGetCount(&count);
  if (st != CUDA_SUCCESS) {
    l.init_status = st;
    l.init_error = fmt::format("cuDeviceGetCount: {}", name_of(&l.api, st));
  } else if (count == 0) {
    l.init_status = CUDA_ERROR_NO_DEVICE;
    l.init_error = "cuDeviceGetCount: no CUDA device";
  }
  return l;
}

// Loaded once per process; a function-local static, so it is safe to call from static
// initialisers and from several threads.
const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

struct NamedCode {
  CUresult code;
  const char* name;
};

// The codes kjudge meets, for naming errors where no driver is there to ask.
constexpr NamedCode known_codes[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
    {CUDA_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
    {CUDA_ERROR_MPS_CLIENT_TERMINATED, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
};

// Not cu_error_name: load() runs inside the initialisation of loaded() and must not reenter it.
std::string name_of(const DriverApi* api, CUresult code) {
  if (api != nullptr && api->cuGetErrorName != nullptr) {
    const char* name = nullptr;
    if (api->cuGetErrorName(code, &name) == CUDA_SUCCESS && name != nullptr) return name;
  }
  for (const NamedCode& k : known_codes)
    if (k.code == code) return k.name;
  return fmt::format("CUresult {}", static_cast<int>(code));
}

} // namespace

const DriverApi* driver_table(std::string* why_not) {
  const Loaded& l = loaded();
  if (!l.symbols_ok) {
    if (why_not != nullptr) *why_not = l.load_error;
    return nullptr;
  }
  return &l.api;
}

const DriverApi& cu() {
  const Loaded& l = loaded();
  if (!l.symbols_ok) throw CudaError(CUDA_ERROR_NOT_INITIALIZED, l.load_error);
  if (l.init_status != CUDA_SUCCESS) throw CudaError(l.init_status, l.init_error);
  return l.api;
}

std::string cu_error_name(CUresult code) {
  return name_of(driver_table(), code);
}

} // namespace kj::cuda_detail

namespace kj {

bool cuda_available(std::string* why_not) {
  const cuda_detail::Loaded& l = cuda_detail::loaded();
  if (!l.symbols_ok) {
    if (why_not != nullptr) *why_not = l.load_error;
    return false;
  }
  if (l.init_status != CUDA_SUCCESS) {
    if (why_not != nullptr) *why_not = l.init_error;
    return false;
  }
  return true;
}

} // namespace kj
