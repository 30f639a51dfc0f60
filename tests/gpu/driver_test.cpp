// The driver API wrapper (cuda.hpp). Without a GPU: availability with a reason, error names and
// stickiness, KJ_CU_TRY's message, IPC handle hex. With one: device facts, memory round trips,
// a CUBIN from compile_module loaded and launched (template kernel, large dynamic shared
// memory, clusters, cooperative), parameter sizes from cuFuncGetParamInfo, IPC within a
// process and across processes, and a sticky fault in a child process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {
namespace {

using namespace std::chrono_literals;

// TEST_F needs an unqualified fixture name.
class Gpu : public test::GpuTest {};

// ---- no GPU needed ----------------------------------------------------------------------------

TEST(Driver, AvailabilityComesWithAReason) {
  std::string why;
  const bool available = cuda_available(&why);
  std::string again;
  EXPECT_EQ(cuda_available(&again), available);  // decided once per process
  if (!available) {
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(why, again);
    if (test::gpu_required()) FAIL() << "KJUDGE_REQUIRE_GPU=1 but: " << why;
  }
}

TEST(Driver, NoGpuIsACudaErrorNotACrash) {
  std::string why;
  if (cuda_available(&why)) {
    EXPECT_NO_THROW(CudaContext{0});
    return;
  }
  try {
    CudaContext ctx(0);
    FAIL() << "a context without a usable driver";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Driver, ErrorNamesAndStickiness) {
  for (const CUresult code :
       {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS,
        CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_INVALID_PC,
        CUDA_ERROR_ASSERT, CUDA_ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_LAUNCH_TIMEOUT,
        CUDA_ERROR_INVALID_ADDRESS_SPACE})
    EXPECT_TRUE(CudaError(code, "x").sticky()) << code;
  for (const CUresult code : {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY,
                              CUDA_ERROR_NOT_FOUND, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                              CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, CUDA_ERROR_INVALID_CONTEXT})
    EXPECT_FALSE(CudaError(code, "x").sticky()) << code;
  EXPECT_EQ(CudaError(CUDA_ERROR_ILLEGAL_ADDRESS, "x").name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(CudaError(CUDA_ERROR_NO_DEVICE, "x").name(), "CUDA_ERROR_NO_DEVICE");
  EXPECT_EQ(CudaError(static_cast<CUresult>(1003), "x").name(), "CUresult 1003");
}

CUresult returns(CUresult r) { return r; }

TEST(Driver, KjCuTryNamesTheExpressionAndTheError) {
  try {
    KJ_CU_TRY(returns(CUDA_ERROR_INVALID_VALUE));
    FAIL() << "no throw";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    EXPECT_NE(what.find("returns(CUDA_ERROR_INVALID_VALUE)"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << what;
    EXPECT_NE(what.find("driver_test.cpp:"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(KJ_CU_TRY(returns(CUDA_SUCCESS)));
}

TEST(Ipc, HexRoundTrip) {
  IpcHandle h;
  std::mt19937 rng(7);
  for (char& c : h.reserved) c = static_cast<char>(rng() & 0xffu);
  const std::string hex = ipc_handle_to_hex(h);
  ASSERT_EQ(hex.size(), 128u);
  EXPECT_TRUE(std::all_of(hex.begin(), hex.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }));
  const IpcHandle back = ipc_handle_from_hex(hex);
  EXPECT_EQ(std::memcmp(back.reserved, h.reserved, sizeof h.reserved), 0);
  std::string upper = hex;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  EXPECT_EQ(std::memcmp(ipc_handle_from_hex(upper).reserved, h.reserved, sizeof h.reserved), 0);
}

TEST(Ipc, MalformedHexIsRefused) {
  EXPECT_THROW(ipc_handle_from_hex(""), InternalError);
  EXPECT_THROW(ipc_handle_from_hex(std::string(126, '0')), InternalError);
  EXPECT_THROW(ipc_handle_from_hex(std::string(130, '0')), InternalError);
  std::string bad(128, '0');
  bad[77] = 'g';
  EXPECT_THROW(ipc_handle_from_hex(bad), InternalError);
}

// ---- with a GPU -------------------------------------------------------------------------------

TEST_F(Gpu, ContextInfoIsSane) {
  const DeviceInfo& d = test::gpu().info();
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 7);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory, std::size_t{1} << 30);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GE(d.max_shared_per_block_optin, 48 * 1024);
  EXPECT_GE(d.max_threads_per_block, 512);
  EXPECT_GE(d.max_block[0], 512);
  EXPECT_GE(d.max_block[2], 1);
  EXPECT_GE(d.max_grid[0], 65535);
  EXPECT_GE(d.driver_version, 12040);
  EXPECT_NE(test::gpu().get(), nullptr);
  EXPECT_NE(test::gpu().stream(), nullptr);
  test::gpu().synchronize();
  std::printf("device: %s, sm_%d%d, %d SMs, %zu MiB, L2 %d KiB, shared opt-in %d KiB, "
              "clock %d MHz, driver %d, pageable memory access %s\n",
              d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.total_memory >> 20,
              d.l2_bytes >> 10, d.max_shared_per_block_optin >> 10, d.clock_khz / 1000,
              d.driver_version, d.pageable_memory_access ? "yes" : "no");
  // A second context object on the same device shares the primary context.
  CudaContext second(0);
  EXPECT_EQ(second.get(), test::gpu().get());
  EXPECT_NE(second.stream(), test::gpu().stream());
}

TEST_F(Gpu, MemoryRoundTrip) {
  const std::size_t bytes = (std::size_t{1} << 20) + 3;
  std::vector<unsigned char> host(bytes);
  std::mt19937 rng(11);
  for (auto& b : host) b = static_cast<unsigned char>(rng());
  DeviceBuffer a(bytes), b(bytes);
  EXPECT_NE(a.ptr(), 0u);
  EXPECT_EQ(a.bytes(), bytes);
  copy_to_device(a.ptr(), host.data(), bytes, stream());
  copy_device(b.ptr(), a.ptr(), bytes, stream());
  std::vector<unsigned char> back(bytes);
  copy_to_host(back.data(), b.ptr(), bytes, stream());
  EXPECT_EQ(back, host);

  fill_bytes(b.ptr() + 5, 0xab, 1000, stream());
  fill_u32(b.ptr() + 2048, 0x11223344u, 10, stream());
  copy_to_host(back.data(), b.ptr(), bytes, stream());
  std::vector<unsigned char> want = host;
  std::fill(want.begin() + 5, want.begin() + 1005, 0xab);
  for (std::size_t w = 0; w < 10; ++w) {
    const unsigned char le[4] = {0x44, 0x33, 0x22, 0x11};
    std::copy(le, le + 4, want.begin() + 2048 + static_cast<std::ptrdiff_t>(4 * w));
  }
  EXPECT_EQ(back, want);
  EXPECT_THROW(fill_u32(b.ptr() + 2, 0, 1, stream()), InternalError);

  // Moves hand the allocation over; an empty buffer holds nothing.
  DeviceBuffer moved(std::move(a));
  EXPECT_EQ(a.ptr(), 0u);
  EXPECT_EQ(moved.bytes(), bytes);
  a = std::move(moved);
  EXPECT_EQ(a.bytes(), bytes);
  DeviceBuffer empty(0);
  EXPECT_EQ(empty.ptr(), 0u);
  copy_to_host(back.data(), a.ptr(), 0, stream());  // zero bytes: no call at all
}

constexpr const char* test_kernels = R"(
template <int N>
__global__ void add_n(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += N;
}
struct Triple { double a, b, c; };
__global__ void signature(const double* p, int n, char c, long long q, Triple t, float f) {}
__global__ void big_shared(unsigned* out, unsigned n) {
  extern __shared__ unsigned s[];
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned i = 0; i < n; ++i) sum += s[i];
    out[blockIdx.x] = sum;
  }
}
__global__ void block_ids(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x + 1;
}
__global__ void poke(unsigned char* p) { *p = 1; }
)";

CompiledModule compile_test_kernels() {
  return compile_module(test_kernels, "driver_test_kernels.cu",
                        {"add_n<3>", "signature", "big_shared", "block_ids", "poke"},
                        test::compile_options());
}

TEST_F(Gpu, CubinLoadsAndLaunches) {
  const CompiledModule m = compile_test_kernels();
  CudaLibrary lib(m.cubin);
  const CUfunction add = lib.function(m.kernels[0].lowered);
  const int n = 1000;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 0.0f);
  DeviceBuffer x(n * sizeof(float));
  copy_to_device(x.ptr(), host.data(), x.bytes(), stream());
  CUdeviceptr xp = x.ptr();
  int count = n;
  void* params[] = {&xp, &count};
  LaunchDims dims;
  dims.grid = {(n + 127) / 128, 1, 1};
  dims.block = {128, 1, 1};
  launch_kernel(add, dims, params, stream());
  std::vector<float> back(n);
  copy_to_host(back.data(), x.ptr(), x.bytes(), stream());
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<float>(i + 3)) << i;

  try {
    (void)lib.function("no_such_kernel");
    FAIL() << "a missing kernel was found";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
    EXPECT_FALSE(e.sticky());
  }
  // A bad launch is the driver's error (a candidate's launch_error), not a crash.
  dims.block = {4096, 1, 1};
  EXPECT_THROW(launch_kernel(add, dims, params, stream()), CudaError);
}

TEST_F(Gpu, ParamSizesFromTheDriver) {
  const CompiledModule m = compile_test_kernels();
  CudaLibrary lib(m.cubin);
  const KernelAttributes a = kernel_attributes(lib.function(m.kernels[1].lowered));
  EXPECT_EQ(a.param_sizes, (std::vector<std::size_t>{8, 4, 1, 8, 24, 4}));
  EXPECT_EQ(a.param_sizes.size(), m.kernels[1].param_types.size());
  EXPECT_GT(a.max_threads, 0);
  const KernelAttributes add = kernel_attributes(lib.function(m.kernels[0].lowered));
  EXPECT_EQ(add.param_sizes, (std::vector<std::size_t>{8, 4}));
  EXPECT_GT(add.registers, 0);
  EXPECT_EQ(add.static_shared, 0);
}

TEST_F(Gpu, LargeDynamicSharedMemoryIsOptedIn) {
  const unsigned shared = 100 * 1024;
  ASSERT_GE(static_cast<unsigned>(test::gpu().info().max_shared_per_block_optin), shared);
  const CompiledModule m = compile_test_kernels();
  CudaLibrary lib(m.cubin);
  DeviceBuffer out(2 * sizeof(unsigned));
  CUdeviceptr op = out.ptr();
  unsigned n = shared / sizeof(unsigned);
  void* params[] = {&op, &n};
  LaunchDims dims;
  dims.grid = {2, 1, 1};
  dims.block = {256, 1, 1};
  dims.shared_bytes = shared;
  launch_kernel(lib.function(m.kernels[2].lowered), dims, params, stream());
  unsigned back[2] = {};
  copy_to_host(back, out.ptr(), sizeof back, stream());
  const unsigned want = n * (n - 1) / 2;
  EXPECT_EQ(back[0], want);
  EXPECT_EQ(back[1], want);
}

TEST_F(Gpu, ClusterAndCooperativeLaunches) {
  const CompiledModule m = compile_test_kernels();
  CudaLibrary lib(m.cubin);
  const CUfunction f = lib.function(m.kernels[3].lowered);
  for (const bool cooperative : {false, true}) {
    DeviceBuffer out(8 * sizeof(unsigned));
    fill_bytes(out.ptr(), 0, out.bytes(), stream());
    CUdeviceptr op = out.ptr();
    void* params[] = {&op};
    LaunchDims dims;
    dims.grid = {8, 1, 1};
    dims.block = {64, 1, 1};
    if (cooperative) {
      dims.cooperative = true;
    } else {
      if (test::gpu().info().cc_major < 9) continue;  // clusters are Hopper's
      dims.cluster = {2, 0, 0};
    }
    launch_kernel(f, dims, params, stream());
    std::vector<unsigned> back(8);
    copy_to_host(back.data(), out.ptr(), out.bytes(), stream());
    for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(back[i], i + 1) << "cooperative " << cooperative;
  }
}

TEST_F(Gpu, IpcExportWithinOneProcess) {
  DeviceBuffer buf(1 << 16);
  const IpcHandle h = export_ipc(buf.ptr());
  const std::string hex = ipc_handle_to_hex(h);
  EXPECT_NE(hex, std::string(128, '0'));
  EXPECT_EQ(ipc_handle_to_hex(export_ipc(buf.ptr())), hex);  // stable for one allocation
  // The exporting process cannot map its own handle (CUDA_ERROR_INVALID_CONTEXT by design).
  try {
    IpcMapping self(h);
    ADD_FAILURE() << "opened an IPC handle in the process that exported it";
  } catch (const CudaError& e) {
    std::printf("opening one's own handle: %s\n", e.name().c_str());
    EXPECT_FALSE(e.sticky());
  }
  // The context is still usable after that refusal.
  DeviceBuffer after(16);
  fill_bytes(after.ptr(), 1, 16, stream());
  test::gpu().synchronize();
}

constexpr std::size_t ipc_bytes = (std::size_t{1} << 20) + 12;
constexpr std::uint32_t ipc_word = 0xa5c3e10fu;

TEST_F(Gpu, IpcAcrossProcesses) {
  if (test::child_role() == "ipc_export") {
    // The worker's side: export a buffer, keep it alive until the parent is done with it.
    DeviceBuffer buf(ipc_bytes);
    fill_u32(buf.ptr(), ipc_word, ipc_bytes / 4, stream());
    test::gpu().synchronize();
    const std::string line = ipc_handle_to_hex(export_ipc(buf.ptr())) + "\n";
    ASSERT_EQ(write(3, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    char ch = 0;
    while (read(4, &ch, 1) > 0) {
    }  // EOF: the parent has unmapped
    return;
  }
  test::Child child = test::spawn_self("ipc_export");
  ASSERT_GT(child.pid, 0) << "posix_spawn of the test binary failed";
  const std::string hex = test::read_line(child.from_child, 120s);
  ASSERT_EQ(hex.size(), 128u) << "the child sent no handle";
  {
    IpcMapping mapping(ipc_handle_from_hex(hex));
    ASSERT_NE(mapping.ptr(), 0u);
    std::vector<std::uint32_t> back(ipc_bytes / 4);
    copy_to_host(back.data(), mapping.ptr(), back.size() * 4, stream());
    EXPECT_TRUE(
        std::all_of(back.begin(), back.end(), [](std::uint32_t w) { return w == ipc_word; }));
    // Writes through the mapping land in the child's buffer too (the oracle reads outputs; the
    // check here is only that the mapping is the real memory).
    fill_u32(mapping.ptr(), 1u, 1, stream());
    test::gpu().synchronize();
  }
  EXPECT_EQ(test::wait_child(child, 120s), 0);
}

TEST_F(Gpu, StickyFaultIsDetectedInAChild) {
  if (test::child_role() == "sticky") {
    const CompiledModule m = compile_test_kernels();
    CudaLibrary lib(m.cubin);
    CUdeviceptr bad = 1;  // unmapped, so the store faults
    void* params[] = {&bad};
    LaunchDims dims;
    launch_kernel(lib.function(m.kernels[4].lowered), dims, params, stream());
    try {
      test::gpu().synchronize();
      FAIL() << "a store to address 0x1 did not fault";
    } catch (const CudaError& e) {
      EXPECT_EQ(e.code(), CUDA_ERROR_ILLEGAL_ADDRESS) << e.what();
      EXPECT_TRUE(e.sticky());
      EXPECT_EQ(e.name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    }
    // Sticky: the context refuses further work.
    EXPECT_THROW(test::gpu().synchronize(), CudaError);
    return;
  }
  test::Child child = test::spawn_self("sticky");
  ASSERT_GT(child.pid, 0) << "posix_spawn of the test binary failed";
  EXPECT_EQ(test::wait_child(child, 180s), 0) << "the child's checks failed (see its output)";
  // This process's context is untouched by the child's fault.
  DeviceBuffer ok(64);
  fill_bytes(ok.ptr(), 0, 64, stream());
  test::gpu().synchronize();
}

}  // namespace
}  // namespace kj
