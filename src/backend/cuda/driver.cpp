// The driver API wrapper of cuda.hpp: errors (and which of them poison the context), the primary
// context with its device facts and stream, device memory, libraries loaded from CUBIN, kernel
// attributes, launches, and CUDA IPC. Every driver call goes through the run-time loaded table
// of driver_loader.hpp, so nothing here needs libcuda at link time.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "backend/cuda/driver_loader.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"

namespace kj {

// ---- errors -----------------------------------------------------------------------------------

bool CudaError::sticky() const {
  // The codes the driver documents as "the process is left in an inconsistent state ... the
  // process must be terminated and relaunched": every later call in this context fails too.
  switch (code_) {
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_TENSOR_MEMORY_LEAK:
  case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    return true;
  default:
    return false;
  }
}

std::string CudaError::name() const {
  return cuda_detail::cu_error_name(code_);
}

void throw_cuda_error(CUresult code, const char* expr, const char* file, int line) {
  std::string description;
  if (const cuda_detail::DriverApi* api = cuda_detail::driver_table(); api != nullptr) {
    const char* text = nullptr;
    if (api->cuGetErrorString(code, &text) == CUDA_SUCCESS && text != nullptr)
      description = fmt::format(" ({})", text);
  }
  throw CudaError(code, fmt::format("{}:{}: {} failed: {}{}", file, line, expr,
                                    cuda_detail::cu_error_name(code), description));
}

void report_cuda_cleanup_failure(CUresult code, const char* expr, const char* file,
                                 int line) noexcept {
  // After a sticky error or at the driver's shutdown every call fails: nothing to tell.
  if (CudaError(code, "").sticky() || code == CUDA_ERROR_DEINITIALIZED ||
      code == CUDA_ERROR_NOT_INITIALIZED || code == CUDA_ERROR_CONTEXT_IS_DESTROYED)
    return;
  // Once per process: a cleanup that fails once tends to fail for every object after it.
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  try {
    std::fprintf(stderr, "kjudge: cleanup: %s failed: %s (%s:%d)\n", expr,
                 cuda_detail::cu_error_name(code).c_str(), file, line);
  } catch (...) {
    // No memory left for the name: the cleanup's failure goes untold rather than throwing.
  }
}

// ---- context ----------------------------------------------------------------------------------

namespace {

int device_attribute(CUdevice dev, CUdevice_attribute attribute) {
  int v = 0;
  KJ_CU_TRY(cu().cuDeviceGetAttribute(&v, attribute, dev));
  return v;
}

// For facts that are informative only (a driver may retire the attribute): 0 when unknown.
int device_attribute_or_zero(CUdevice dev, CUdevice_attribute attribute) {
  int v = 0;
  return cu().cuDeviceGetAttribute(&v, attribute, dev) == CUDA_SUCCESS ? v : 0;
}

DeviceInfo read_device_info(CUdevice dev, int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  KJ_CU_TRY(cu().cuDeviceGetName(name, static_cast<int>(sizeof name - 1), dev));
  info.name = name;
  info.cc_major = device_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = device_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = device_attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  KJ_CU_TRY(cu().cuDeviceTotalMem(&info.total_memory, dev));
  info.l2_bytes = device_attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.max_shared_per_block_optin =
      device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.max_threads_per_block = device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_block = {device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                    device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                    device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  info.max_grid = {device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                   device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                   device_attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  // docs/design.md's isolation check: the worker refuses a device that reads pageable host memory,
  // since a candidate's kernel could then read its process's host memory through plain pointers.
  info.pageable_memory_access =
      device_attribute(dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
  KJ_CU_TRY(cu().cuDriverGetVersion(&info.driver_version));
  info.clock_khz = device_attribute_or_zero(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.max_threads_per_sm =
      device_attribute_or_zero(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  return info;
}

} // namespace

CudaContext::CudaContext(int ordinal) {
  const cuda_detail::DriverApi& api = cu(); // throws when the driver is unusable, with why
  KJ_CU_TRY(api.cuDeviceGet(&dev_, ordinal));
  KJ_CU_TRY(api.cuDevicePrimaryCtxRetain(&ctx_, dev_));
  try {
    KJ_CU_TRY(api.cuCtxSetCurrent(ctx_));
    info_ = read_device_info(dev_, ordinal);
    // Non-blocking: kjudge's work must not serialise with the legacy default stream that a host
    // process (PyTorch) may be using in the same primary context.
    KJ_CU_TRY(api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  } catch (...) {
    api.cuDevicePrimaryCtxRelease(dev_);
    throw;
  }
}

CudaContext::~CudaContext() {
  const cuda_detail::DriverApi& api = cu();
  if (stream_ != nullptr) KJ_CU_CLEANUP(api.cuStreamDestroy(stream_));
  KJ_CU_CLEANUP(api.cuDevicePrimaryCtxRelease(dev_));
}

void CudaContext::synchronize() const {
  KJ_CU_TRY(cu().cuStreamSynchronize(stream_));
}

// ---- memory -----------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  // cuMemAlloc refuses 0 bytes; an empty tensor is a null buffer.
  if (bytes > 0) KJ_CU_TRY(cu().cuMemAlloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) KJ_CU_CLEANUP(cu().cuMemFree(ptr_));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != 0) KJ_CU_CLEANUP(cu().cuMemFree(ptr_));
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

// kjudge copies from pageable host memory only (pinned memory is device-addressable, which the
// isolation design avoids), and for pageable sources the driver has staged the bytes when the
// call returns, so `src` may be reused at once.
void copy_to_device(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  KJ_CU_TRY(cu().cuMemcpyHtoDAsync(dst, src, bytes, stream));
}

// Synchronises the stream: the bytes are in `dst` on return.
void copy_to_host(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  KJ_CU_TRY(cu().cuMemcpyDtoHAsync(dst, src, bytes, stream));
  KJ_CU_TRY(cu().cuStreamSynchronize(stream));
}

void copy_device(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  KJ_CU_TRY(cu().cuMemcpyDtoDAsync(dst, src, bytes, stream));
}

void fill_bytes(CUdeviceptr dst, std::uint8_t value, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  KJ_CU_TRY(cu().cuMemsetD8Async(dst, value, bytes, stream));
}

void fill_u32(CUdeviceptr dst, std::uint32_t value, std::size_t words, CUstream stream) {
  if (words == 0) return;
  KJ_EXPECTS(dst % 4 == 0, "fill_u32 of a 4-byte aligned address (BuiltinKernels::fill_pattern "
                           "takes any address)");
  KJ_CU_TRY(cu().cuMemsetD32Async(dst, value, words, stream));
}

// ---- libraries and launches -------------------------------------------------------------------

CudaLibrary::CudaLibrary(const std::vector<char>& cubin) {
  KJ_EXPECTS(!cubin.empty(), "a CUBIN to load");
  KJ_CU_TRY(cu().cuLibraryLoadData(&lib_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

CudaLibrary::~CudaLibrary() {
  if (lib_ != nullptr) KJ_CU_CLEANUP(cu().cuLibraryUnload(lib_));
}

CUfunction CudaLibrary::function(const std::string& lowered_name) const {
  CUkernel kernel = nullptr;
  const CUresult st = cu().cuLibraryGetKernel(&kernel, lib_, lowered_name.c_str());
  if (st != CUDA_SUCCESS)
    throw CudaError(st, fmt::format("kernel '{}' not found in the loaded CUBIN: {}", lowered_name,
                                    cuda_detail::cu_error_name(st)));
  // The function handle for the current context (libraries are context-independent).
  CUfunction f = nullptr;
  KJ_CU_TRY(cu().cuKernelGetFunction(&f, kernel));
  return f;
}

int max_blocks_per_sm(CUfunction f, int block_threads, std::size_t dynamic_shared) {
  int blocks = 0;
  KJ_CU_TRY(cu().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block_threads,
                                                             dynamic_shared));
  return blocks;
}

CudaEvent::CudaEvent() { KJ_CU_TRY(cu().cuEventCreate(&event_, CU_EVENT_DEFAULT)); }

CudaEvent::~CudaEvent() {
  if (event_) KJ_CU_CLEANUP(cu().cuEventDestroy(event_));
}

void CudaEvent::record(CUstream stream) { KJ_CU_TRY(cu().cuEventRecord(event_, stream)); }

double CudaEvent::elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  KJ_CU_TRY(cu().cuEventSynchronize(end.event_));
  float ms = 0;
  KJ_CU_TRY(cu().cuEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

KernelAttributes kernel_attributes(CUfunction f) {
  const auto get = [f](CUfunction_attribute attribute) {
    int v = 0;
    KJ_CU_TRY(cu().cuFuncGetAttribute(&v, attribute, f));
    return v;
  };
  KernelAttributes a;
  a.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  a.static_shared = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  a.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  a.max_threads = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  // The driver answers CUDA_ERROR_INVALID_VALUE for the first index past the last parameter.
  // Parameters take at least a byte of the 32 KiB parameter space, which bounds the loop.
  constexpr std::size_t max_params = 32768;
  for (std::size_t i = 0; i < max_params; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult st = cu().cuFuncGetParamInfo(f, i, &offset, &size);
    if (st == CUDA_ERROR_INVALID_VALUE) break;
    if (st != CUDA_SUCCESS) throw_cuda_error(st, "cuFuncGetParamInfo", __FILE__, __LINE__);
    a.param_sizes.push_back(size);
  }
  return a;
}

void launch_kernel(CUfunction f, const LaunchDims& dims, void** params, CUstream stream) {
  // Bad dimensions are left to the driver: its error (a CudaError) is the launch_error verdict
  // of a candidate, not a fault of kjudge.
  constexpr unsigned default_shared_limit = 48 * 1024;
  if (dims.shared_bytes > default_shared_limit)
    KJ_CU_TRY(cu().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(dims.shared_bytes)));
  const bool clustered = dims.cluster[0] != 0 || dims.cluster[1] != 0 || dims.cluster[2] != 0;
  if (!clustered && !dims.cooperative) {
    KJ_CU_TRY(cu().cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0],
                                  dims.block[1], dims.block[2], dims.shared_bytes, stream, params,
                                  nullptr));
    return;
  }
  CUlaunchAttribute attributes[2];
  std::memset(attributes, 0, sizeof attributes);
  unsigned count = 0;
  if (clustered) {
    // A cluster given in fewer dimensions than three leaves the others at 0: they mean 1.
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[count].value.clusterDim.x = dims.cluster[0] != 0 ? dims.cluster[0] : 1;
    attributes[count].value.clusterDim.y = dims.cluster[1] != 0 ? dims.cluster[1] : 1;
    attributes[count].value.clusterDim.z = dims.cluster[2] != 0 ? dims.cluster[2] : 1;
    ++count;
  }
  if (dims.cooperative) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attributes[count].value.cooperative = 1;
    ++count;
  }
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof config);
  config.gridDimX = dims.grid[0];
  config.gridDimY = dims.grid[1];
  config.gridDimZ = dims.grid[2];
  config.blockDimX = dims.block[0];
  config.blockDimY = dims.block[1];
  config.blockDimZ = dims.block[2];
  config.sharedMemBytes = dims.shared_bytes;
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  KJ_CU_TRY(cu().cuLaunchKernelEx(&config, f, params, nullptr));
}

// ---- IPC --------------------------------------------------------------------------------------

std::string ipc_handle_to_hex(const IpcHandle& h) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof h.reserved);
  for (const char c : h.reserved) {
    const auto byte = static_cast<unsigned char>(c);
    out += digits[byte >> 4];
    out += digits[byte & 0xfu];
  }
  return out;
}

IpcHandle ipc_handle_from_hex(const std::string& hex) {
  IpcHandle h;
  std::memset(&h, 0, sizeof h);
  // The handle comes over the worker protocol: anything malformed is a broken worker, which is
  // kjudge's own code (the candidate runs only device code), hence InternalError.
  if (hex.size() != 2 * sizeof h.reserved)
    throw InternalError(
        fmt::format("an IPC handle is {} hex digits, got {}", 2 * sizeof h.reserved, hex.size()));
  const auto nibble = [&hex](std::size_t i) -> unsigned {
    const char c = hex[i];
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    throw InternalError(fmt::format("an IPC handle holds hex digits only, got '{}' at {}", c, i));
  };
  for (std::size_t i = 0; i < sizeof h.reserved; ++i)
    h.reserved[i] = static_cast<char>((nibble(2 * i) << 4) | nibble(2 * i + 1));
  return h;
}

IpcHandle export_ipc(CUdeviceptr base) {
  IpcHandle h;
  KJ_CU_TRY(cu().cuIpcGetMemHandle(&h, base));
  return h;
}

IpcMapping::IpcMapping(const IpcHandle& h) {
  // Lazy peer access: the handle may come from another device of the machine.
  KJ_CU_TRY(cu().cuIpcOpenMemHandle(&ptr_, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
}

IpcMapping::~IpcMapping() {
  if (ptr_ != 0) KJ_CU_CLEANUP(cu().cuIpcCloseMemHandle(ptr_));
}

} // namespace kj
