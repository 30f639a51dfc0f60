// The CUDA driver API as kjudge uses it: the primary context, device facts, memory, libraries
// loaded from CUBIN (cuLibraryLoadData), launches from a parameter list, events, and CUDA IPC
// handles for handing buffers between the oracle and a worker. Driver API only (no cudart), so
// the library can live inside a PyTorch process without a second runtime. One error idiom:
// KJ_CU_TRY(expr) throws CudaError with file, line, expression and the CUDA error name.
//
// libcuda is never linked: it is opened with dlopen on first use, so binaries start on machines
// without a driver and cuda_available() says why. Code inside the library calls the driver only
// through the table of src/backend/cuda/driver_loader.hpp (KJ_CU_TRY(cu().cuEventCreate(...))),
// never the cu* functions of cuda.h, whose symbols are not linked.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda.h>

#include "kjudge/error.hpp"

namespace kj {

class CudaError : public Error {
public:
  CudaError(CUresult code, const std::string& message)
      : Error(ErrorKind::cuda, message), code_(code) {}
  CUresult code() const { return code_; }
  // The context is unusable after this error (illegal address, launch failure, ...): the
  // process must be replaced.
  bool sticky() const;
  std::string name() const;  // "CUDA_ERROR_ILLEGAL_ADDRESS"

private:
  CUresult code_;
};

[[noreturn]] void throw_cuda_error(CUresult code, const char* expr, const char* file, int line);

// A driver call checked: on failure, `on_failure(code, "expr", __FILE__, __LINE__)`.
#define KJ_CU_CHECKED_(expr, on_failure)                                                       \
  do {                                                                                         \
    const CUresult kj_cu_status_ = (expr);                                                     \
    if (kj_cu_status_ != CUDA_SUCCESS) on_failure(kj_cu_status_, #expr, __FILE__, __LINE__);   \
  } while (0)

#define KJ_CU_TRY(expr) KJ_CU_CHECKED_(expr, ::kj::throw_cuda_error)

// The no-throw check, for destructors and other cleanup that cannot report by throwing: a
// failure is written to standard error once per process, except the ones that follow a sticky
// error or the driver's shutdown (every call fails then, and the process is replaced anyway).
void report_cuda_cleanup_failure(CUresult code, const char* expr, const char* file,
                                 int line) noexcept;

#define KJ_CU_CLEANUP(expr) KJ_CU_CHECKED_(expr, ::kj::report_cuda_cleanup_failure)

// Whether a CUDA driver and at least one device are usable here (false on CI machines), decided
// once per process (dlopen, symbols, cuInit, a device). why_not: "libcuda.so.1 not found: ...",
// "libcuda.so.1 lacks cuX, ...", "cuInit: CUDA_ERROR_NO_DEVICE". Never throws.
bool cuda_available(std::string* why_not = nullptr);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;               // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;
  int l2_bytes = 0;
  int max_shared_per_block_optin = 0;
  int max_threads_per_block = 0;
  std::array<int, 3> max_block{}, max_grid{};
  bool pageable_memory_access = false;
  int driver_version = 0;          // cuDriverGetVersion
  int clock_khz = 0;
  int max_threads_per_sm = 0;      // for occupancy: resident threads an SM can hold
};

// Retains the device's primary context and makes it current on this thread; released on
// destruction. Throws CudaError when no driver or device is usable (the reason in what()).
class CudaContext {
public:
  explicit CudaContext(int ordinal = 0);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  const DeviceInfo& info() const { return info_; }
  CUcontext get() const { return ctx_; }
  CUstream stream() const { return stream_; }  // a non-blocking stream of this context
  void synchronize() const;                     // the stream

private:
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  DeviceInfo info_;
};

// Device memory, freed on destruction; 0 bytes is a null buffer (cuMemAlloc refuses 0).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Asynchronous on `stream`; from pageable memory (the only kind kjudge uses) `src` may be reused
// on return.
void copy_to_device(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);
// Synchronises `stream`: the bytes are in `dst` on return.
void copy_to_host(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);
void copy_device(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);
void fill_bytes(CUdeviceptr dst, std::uint8_t value, std::size_t bytes, CUstream stream);
// dst 4-byte aligned (BuiltinKernels::fill_pattern takes any address and length).
void fill_u32(CUdeviceptr dst, std::uint32_t value, std::size_t words, CUstream stream);

// A library loaded from a CUBIN; kernels are looked up by lowered name (the CUfunction is for
// the context current at the lookup). An unknown name throws CudaError naming it.
class CudaLibrary {
public:
  explicit CudaLibrary(const std::vector<char>& cubin);
  ~CudaLibrary();
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;
  CUfunction function(const std::string& lowered_name) const;

private:
  CUlibrary lib_ = nullptr;
};

struct KernelAttributes {
  int registers = 0, static_shared = 0, local_bytes = 0, max_threads = 0;
  std::vector<std::size_t> param_sizes;  // cuFuncGetParamInfo, the ABI cross-check
};
KernelAttributes kernel_attributes(CUfunction f);

struct LaunchDims {
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1}, cluster{0, 0, 0};
  unsigned shared_bytes = 0;
  bool cooperative = false;
};
// Launch with a parameter list (pointers to each argument's bytes). Opts into large dynamic
// shared memory when asked for more than 48 KiB. A cluster (any non-zero dim; a zero dim beside
// it means 1) or cooperative launch goes through cuLaunchKernelEx, anything else through
// cuLaunchKernel. Bad dimensions are the driver's CudaError (a candidate's launch_error).
void launch_kernel(CUfunction f, const LaunchDims& dims, void** params, CUstream stream);

// Blocks of `f` one SM can hold at once with `block_threads` threads and `dynamic_shared` bytes
// of dynamic shared memory (cuOccupancyMaxActiveBlocksPerMultiprocessor): the theoretical
// occupancy of a launch is this times its warps over the SM's.
int max_blocks_per_sm(CUfunction f, int block_threads, std::size_t dynamic_shared);

// A CUDA event with timing, for the bench's samples: recorded on a stream, then elapsed_ms
// between two once both have completed (it waits for the later one).
class CudaEvent {
public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void record(CUstream stream);
  CUevent get() const { return event_; }
  // Milliseconds from `start` to `end` (the driver's resolution is about half a microsecond).
  static double elapsed_ms(const CudaEvent& start, const CudaEvent& end);

private:
  CUevent event_ = nullptr;
};

using IpcHandle = CUipcMemHandle;
// 128 lowercase hex digits; from_hex also takes uppercase and throws InternalError for anything
// else (the handle comes over kjudge's own worker protocol).
std::string ipc_handle_to_hex(const IpcHandle& h);
IpcHandle ipc_handle_from_hex(const std::string& hex);
// `base` must be the start of a cuMemAlloc allocation.
IpcHandle export_ipc(CUdeviceptr base);
// Maps another process's allocation (CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS); unmapped on
// destruction. The exporting process cannot map its own handle (the driver refuses it).
class IpcMapping {
public:
  explicit IpcMapping(const IpcHandle& h);
  ~IpcMapping();
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  CUdeviceptr ptr() const { return ptr_; }

private:
  CUdeviceptr ptr_ = 0;
};

}  // namespace kj
