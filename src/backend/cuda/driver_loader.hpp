// The CUDA driver, opened at run time. kjudge never links libcuda: CI machines have no driver,
// and the binaries must still start there (and say why the GPU is unusable instead of failing
// to load). libcuda.so.1 is opened with dlopen on first use and every entry point kjudge calls
// is resolved into one table, cu().
//
// Inside the library, call the driver only through this table, never the cu* functions of
// cuda.h directly (those symbols are not linked and the build fails): KJ_CU_TRY(cu().cuMemAlloc(&p,
// n)). The table's members are declared under the names cuda.h gives them, so cuda.h's own
// `#define cuMemAlloc cuMemAlloc_v2` lines rename the member and the dlsym string alike, and
// every call reaches the ABI version the header was written for.
#pragma once

#include <string>

#include <cuda.h>

namespace kj::cuda_detail {

// Entry points a usable driver must have (CUDA 12.4 or newer: cuLibrary*, cuKernelGetFunction,
// cuLaunchKernelEx, cuFuncGetParamInfo).
#define KJ_CU_REQUIRED_FUNCTIONS(X)                                                            \
  X(cuGetErrorName)                                                                            \
  X(cuGetErrorString)                                                                          \
  X(cuInit)                                                                                    \
  X(cuDriverGetVersion)                                                                        \
  X(cuDeviceGetCount)                                                                          \
  X(cuDeviceGet)                                                                               \
  X(cuDeviceGetName)                                                                           \
  X(cuDeviceGetAttribute)                                                                      \
  X(cuDeviceTotalMem)                                                                          \
  X(cuDevicePrimaryCtxRetain)                                                                  \
  X(cuDevicePrimaryCtxRelease)                                                                 \
  X(cuCtxSetCurrent)                                                                           \
  X(cuCtxGetCurrent)                                                                           \
  X(cuCtxGetDevice)                                                                            \
  X(cuCtxSynchronize)                                                                          \
  X(cuStreamCreate)                                                                            \
  X(cuStreamDestroy)                                                                           \
  X(cuStreamSynchronize)                                                                       \
  X(cuStreamQuery)                                                                             \
  X(cuEventCreate)                                                                             \
  X(cuEventDestroy)                                                                            \
  X(cuEventRecord)                                                                             \
  X(cuEventSynchronize)                                                                        \
  X(cuEventQuery)                                                                              \
  X(cuEventElapsedTime)                                                                        \
  X(cuMemAlloc)                                                                                \
  X(cuMemFree)                                                                                 \
  X(cuMemGetInfo)                                                                              \
  X(cuMemGetAddressRange)                                                                      \
  X(cuMemcpyHtoDAsync)                                                                         \
  X(cuMemcpyDtoHAsync)                                                                         \
  X(cuMemcpyDtoDAsync)                                                                         \
  X(cuMemsetD8Async)                                                                           \
  X(cuMemsetD32Async)                                                                          \
  X(cuLibraryLoadData)                                                                         \
  X(cuLibraryUnload)                                                                           \
  X(cuLibraryGetKernel)                                                                        \
  X(cuKernelGetFunction)                                                                       \
  X(cuFuncGetAttribute)                                                                        \
  X(cuFuncSetAttribute)                                                                        \
  X(cuFuncGetParamInfo)                                                                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                               \
  X(cuLaunchKernel)                                                                            \
  X(cuLaunchKernelEx)                                                                          \
  X(cuIpcGetMemHandle)                                                                         \
  X(cuIpcOpenMemHandle)                                                                        \
  X(cuIpcCloseMemHandle)

struct DriverApi {
  // `decltype(&::cuX)`: qualified, so the member's own name does not change the lookup.
#define KJ_CU_MEMBER(name) decltype(&::name) name = nullptr;
  KJ_CU_REQUIRED_FUNCTIONS(KJ_CU_MEMBER)
#undef KJ_CU_MEMBER
};

// The driver table, loaded and cuInit'ed on first use (thread-safe). Throws CudaError when the
// driver cannot be used: CUDA_ERROR_NOT_INITIALIZED with "libcuda.so.1 not found: ..." or "...
// lacks cuX", or the error cuInit returned ("cuInit: CUDA_ERROR_NO_DEVICE").
const DriverApi& cu();

// The same without throwing: nullptr and the reason when the driver is unusable. Only the
// library and its symbols are checked here, not cuInit; cu_error_name uses it so that naming an
// error never needs a device.
const DriverApi* driver_table(std::string* why_not = nullptr);

// "CUDA_ERROR_ILLEGAL_ADDRESS" for a code; works without a driver (a built-in table of the
// codes kjudge meets, "CUresult 123" for the rest).
std::string cu_error_name(CUresult code);

}  // namespace kj::cuda_detail

namespace kj {
using cuda_detail::cu;
}  // namespace kj
