// kjudge's own device kernels, which the oracle and the worker run on their buffers: the device
// twin of generate_input (so a case's inputs are made on the GPU, bit-identical to the host's),
// exact widening to f64 for the golden and rounding back from it, and byte patterns for poison
// and red zones with their checks (and byte comparisons of input copies against the master),
// and the bench's clock probe.
//
// The kernels live in include/kjudge/detail/builtin_kernels.cuh and are compiled once per
// BuiltinKernels by NVRTC, kept in compile_module's on-disk cache (so later processes load them
// without compiling), with kjudge's own flags (no contraction into fma), whatever options a
// problem allows its candidates. (Not through compile_module: its include allow-list is for
// candidates and refuses kjudge's internal headers.) All calls are asynchronous on the given
// stream except the counts, which synchronise it to return their result. A context must be
// current on the calling thread, the same one whenever a BuiltinKernels is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <cuda.h>

#include "kjudge/cuda.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {

class BuiltinKernels {
public:
  // Compiles (or fetches from options.cache_dir) and loads the kernels. From `options` only the
  // target (arch, arch_specific), the include folder (kjudge_include: the folder that holds
  // kjudge/, the repo's include/ in a build tree) and the cache settings are used; `options`'
  // NVRTC flags are ignored. Throws InternalError when the kernels do not compile (kjudge's
  // fault), CudaError when the CUBIN does not load.
  explicit BuiltinKernels(const CompileOptions& options);
  ~BuiltinKernels();
  BuiltinKernels(const BuiltinKernels&) = delete;
  BuiltinKernels& operator=(const BuiltinKernels&) = delete;

  // Fill `out` (numel elements of spec.dtype, its storage as HostTensor's) exactly as
  // generate_input(spec, shape, stream, transform, special) fills a host tensor of numel
  // elements: the same Philox draws, distribution math, transform, saturation, rounding to the
  // dtype (f16/bf16/fp8 bit encodings, integer saturation, bool) and special values at the same
  // positions. Every distribution except file(), which the caller reads on the host and uploads
  // (InternalError here). Bad distribution parameters throw generate_input's SpecError.
  void generate(CUdeviceptr out, const InputSpec& spec, std::int64_t numel, StreamId stream,
                const Transform& transform, const SpecialValues* special, CUstream s) const;

  // dst[i] = the value of src[i] as a double, exactly as HostTensor::get reads it (every value
  // of every dtype is exact, except i64 beyond 2^53, which rounds to nearest; NaN payloads as
  // get leaves them). dst holds n doubles.
  void widen_to_f64(CUdeviceptr dst, CUdeviceptr src, DType src_dtype, std::int64_t n,
                    CUstream s) const;

  // dst[i] = src[i] rounded to dst_dtype and stored as HostTensor::set stores it (round_to:
  // nearest even, overflow to Inf or e4m3 saturation, integer saturation, NaN -> 0 for
  // integers). For the golden rounded to an output's dtype.
  void round_from_f64(CUdeviceptr dst, DType dst_dtype, CUdeviceptr src, std::int64_t n,
                      CUstream s) const;

  // Byte o of [dst, dst + bytes) becomes byte (o mod 4) of `pattern` (little-endian), at any
  // address and any length: poison and red zones.
  void fill_pattern(CUdeviceptr dst, std::size_t bytes, std::uint32_t pattern, CUstream s) const;

  // Number of bytes where [a, a + bytes) and [b, b + bytes) differ (input copies against the
  // master, one run against another). Synchronises `s`.
  std::uint64_t count_mismatched_bytes(CUdeviceptr a, CUdeviceptr b, std::size_t bytes,
                                       CUstream s) const;

  // Number of bytes of [p, p + bytes) that differ from what fill_pattern(p, bytes, pattern)
  // writes (red zone and unwritten-output checks). Synchronises `s`.
  std::uint64_t count_not_pattern(CUdeviceptr p, std::size_t bytes, std::uint32_t pattern,
                                  CUstream s) const;

  // One count for count_all: of count_mismatched_bytes (b set), of count_not_pattern (b 0), or
  // of pattern_elements (element_bytes set).
  struct ByteCount {
    CUdeviceptr a = 0, b = 0;
    std::size_t bytes = 0;
    std::uint32_t pattern = 0;
    int element_bytes = 0;
  };
  static ByteCount mismatched_bytes(CUdeviceptr a, CUdeviceptr b, std::size_t bytes) {
    return {a, b, bytes, 0};
  }
  static ByteCount not_pattern(CUdeviceptr p, std::size_t bytes, std::uint32_t pattern) {
    return {p, 0, bytes, pattern};
  }
  // The elements of `dtype` in [p, p + numel elements) that hold, every byte of them, what
  // fill_pattern(p, ..., pattern) wrote: the poison a plan left unwritten, counted where it lies.
  static ByteCount pattern_elements(CUdeviceptr p, std::int64_t numel, DType dtype,
                                    std::uint32_t pattern) {
    const int width = static_cast<int>(dtype_size(dtype));
    return {p, 0, static_cast<std::size_t>(numel) * static_cast<std::size_t>(width), pattern,
            width};
  }
  // One count queued on `s` without waiting: its result is added to the u64 at `counter` (the
  // bench's read-bandwidth probe, timed by events around it).
  void count_async(const ByteCount& count, CUdeviceptr counter, CUstream s) const;
  // Every count's result, with one synchronisation of `s` for all of them (a run's red zones
  // and inputs are a dozen small counts).
  std::vector<std::uint64_t> count_all(const std::vector<ByteCount>& counts, CUstream s) const;

  // The SM clock in MHz: one thread busy for `cycles` SM clock cycles, counted against the
  // device's global timer (the bench's clock probe; 0 when the timer did not move).
  // Synchronises `s`.
  double sm_clock_mhz(long long cycles, CUstream s) const;

  // Whether compile_module's cache served the CUBIN.
  bool from_cache() const { return from_cache_; }

private:
  static constexpr std::size_t kCounters = 64; // counts per launch batch of count_all

  std::unique_ptr<CudaLibrary> library_;
  CUfunction generate_ = nullptr, widen_ = nullptr, round_ = nullptr, fill_ = nullptr,
             count_ = nullptr, count_elements_ = nullptr, spin_ = nullptr;
  DeviceBuffer counter_;              // the counts' device accumulators, one call at a time
  mutable std::mutex counter_mutex_;
  bool from_cache_ = false;
};

// The source NVRTC compiles and its kernels' name expressions, in a fixed order.
std::string_view builtin_kernels_source();
const std::vector<std::string>& builtin_kernel_names();
// The compile step of the constructor alone (no GPU needed): from options.cache_dir when it
// holds the module, else NVRTC, then stored there. kernels[i] is builtin_kernel_names()[i]
// (expression and lowered name only). Throws InternalError when the kernels do not compile.
CompiledModule compile_builtin_kernels(const CompileOptions& options);
// The same for any of kjudge's own sources (`source` names its header; `file` is the program's
// name and part of the cache key): kjudge's flags (--fmad=false), the include folder, the cache.
CompiledModule compile_trusted_module(std::string_view source, const std::string& file,
                                      const std::vector<std::string>& names,
                                      const CompileOptions& options);

// kjudge's own kernels (these and the GPU comparator's, ~27 s of NVRTC on one core) compiled
// when kjudge is built, so a first check on a fresh machine loads them: cache entries under the
// keys compile_trusted_module looks up, in a folder beside the executable.
std::filesystem::path precompiled_kernels_dir(const std::filesystem::path& self_exe);
// Compiles both modules for each of `archs` (sm_XX, not arch-specific: what the oracle loads)
// into `dir`, skipping what is there already, on a thread per module. Returns the number
// compiled; throws InternalError when one does not compile.
int precompile_kernels(const std::filesystem::path& dir, const std::vector<int>& archs,
                       const std::filesystem::path& kjudge_include);

namespace detail {
struct generate_params;  // detail/builtin_kernels.cuh
// The kernel parameters generate() launches with, validated as generate_input validates
// (SpecError for bad parameters, InternalError for file()). Callers include the .cuh; the gpu
// tests run the kernel's per-element code on the host with them.
generate_params make_generate_params(const InputSpec& spec, std::int64_t numel, StreamId stream,
                                     const Transform& transform, const SpecialValues* special);
}  // namespace detail

}  // namespace kj
