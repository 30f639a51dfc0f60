// BuiltinKernels: compiles kjudge's own kernels (detail/builtin_kernels.cuh) with NVRTC, keeps
// them in compile_module's on-disk cache, loads them, and launches them with parameters
// prepared on the host. The host-side preparation mirrors generate_input step for step (which
// input the transform and the special values apply to, saturation ranges, int() bounds), so the
// kernel only has to repeat the per-element arithmetic, which is shared code.
//
// Not compile_module itself: it applies the candidates' include allow-list, which (rightly)
// refuses kjudge's internal headers. This file runs NVRTC on its own trusted one-line source and
// shares the cache (compile_cache.hpp) under a key of the same parts.
#include "kjudge/builtin_kernels.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <type_traits>

#include <fmt/format.h>
#include <nvrtc.h>

#include "backend/cuda/compile_cache.hpp"
#include "kjudge/detail/builtin_kernels.cuh"
#include "kjudge/error.hpp"

namespace kj {
namespace {

// The device code names dtypes and distributions by number; these pin the numbering to the
// enums, so reordering either fails to compile instead of generating the wrong dtype.
static_assert(static_cast<int>(DType::f64) == detail::dt_f64 &&
              static_cast<int>(DType::f32) == detail::dt_f32 &&
              static_cast<int>(DType::f16) == detail::dt_f16 &&
              static_cast<int>(DType::bf16) == detail::dt_bf16 &&
              static_cast<int>(DType::fp8e4m3) == detail::dt_fp8e4m3 &&
              static_cast<int>(DType::fp8e5m2) == detail::dt_fp8e5m2 &&
              static_cast<int>(DType::i64) == detail::dt_i64 &&
              static_cast<int>(DType::i32) == detail::dt_i32 &&
              static_cast<int>(DType::i16) == detail::dt_i16 &&
              static_cast<int>(DType::i8) == detail::dt_i8 &&
              static_cast<int>(DType::u8) == detail::dt_u8 &&
              static_cast<int>(DType::boolean) == detail::dt_bool);
using Kind = Distribution::Kind;
static_assert(static_cast<int>(Kind::normal) == detail::dist_normal &&
              static_cast<int>(Kind::uniform) == detail::dist_uniform &&
              static_cast<int>(Kind::integer) == detail::dist_integer &&
              static_cast<int>(Kind::bernoulli) == detail::dist_bernoulli &&
              static_cast<int>(Kind::pareto) == detail::dist_pareto &&
              static_cast<int>(Kind::constant) == detail::dist_constant &&
              static_cast<int>(Kind::arange) == detail::dist_arange);

constexpr std::string_view source = "#include \"kjudge/detail/builtin_kernels.cuh\"\n";

// Grid-stride kernels: enough blocks to fill an H200 several times over, no more (the counts
// pay one atomic per warp).
constexpr unsigned block_threads = 256;
constexpr unsigned long long max_blocks = 4096;

void launch_1d(CUfunction f, unsigned long long work_items, void** params, CUstream s) {
  LaunchDims dims;
  const unsigned long long blocks = std::clamp<unsigned long long>(
      (work_items + block_threads - 1) / block_threads, 1, max_blocks);
  dims.grid = {static_cast<unsigned>(blocks), 1, 1};
  dims.block = {block_threads, 1, 1};
  launch_kernel(f, dims, params, s);
}

// The split of [a, a + bytes) for 16-byte vector access; when a second buffer b is read in step
// with a, both must share the alignment, or every byte goes the loose way.
detail::byte_span split_span(CUdeviceptr a, const CUdeviceptr* b, std::size_t bytes) {
  if (b != nullptr && (a & 15u) != (*b & 15u)) return {bytes, bytes, 0};
  const unsigned long long head = std::min<unsigned long long>((16u - (a & 15u)) & 15u, bytes);
  return {bytes, head, (bytes - head) / 16u};
}

unsigned long long span_work(const detail::byte_span& s) {
  return std::max(s.vectors, s.bytes - 16u * s.vectors);
}

void nvrtc_check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw InternalError(
        fmt::format("{} failed for kjudge's own kernels: {}", what, nvrtcGetErrorString(r)));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

} // namespace

std::string_view builtin_kernels_source() {
  return source;
}

const std::vector<std::string>& builtin_kernel_names() {
  static const std::vector<std::string> names = {
      "kj::builtin::generate", "kj::builtin::widen_to_f64", "kj::builtin::round_from_f64",
      "kj::builtin::fill_pattern", "kj::builtin::count_differences", "kj::builtin::spin",
      "kj::builtin::count_pattern_elements"};
  return names;
}

CompiledModule compile_trusted_module(std::string_view source, const std::string& file,
                                      const std::vector<std::string>& names,
                                      const CompileOptions& options) {
  // No contraction into fma: the shared math relies on every product being rounded on its own.
  // Only kjudge's flags: bits must not depend on what a problem allows its candidates.
  std::vector<std::string> argv = {
      fmt::format("--gpu-architecture=sm_{}{}", options.arch, options.arch_specific ? "a" : ""),
      "-std=c++17", "-frandom-seed=1", "--fmad=false"};
  if (!options.kjudge_include.empty())
    argv.push_back("--include-path=" + options.kjudge_include.string());
  const std::string src(source);
  const std::string key = cuda_cache::cache_key(
      {cuda_cache::build_id(), cuda_cache::nvrtc_library_identity(),
       cuda_cache::pinned_header_set_hash(options.kjudge_include, {}), argv, file, names, src});
  for (const auto& dir : {options.cache_dir, options.precompiled_dir}) {
    if (dir.empty()) continue;
    if (auto hit = cuda_cache::load(dir, key)) {
      hit->from_cache = true;
      return std::move(*hit);
    }
  }

  nvrtcProgram raw = nullptr;
  nvrtc_check(nvrtcCreateProgram(&raw, src.c_str(), file.c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  const Program program(raw);
  for (const std::string& name : names)
    nvrtc_check(nvrtcAddNameExpression(raw, name.c_str()), "nvrtcAddNameExpression");
  std::vector<const char*> args;
  for (const std::string& a : argv)
    args.push_back(a.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(raw, static_cast<int>(args.size()), args.data());
  std::size_t log_size = 0;
  nvrtc_check(nvrtcGetProgramLogSize(raw, &log_size), "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtc_check(nvrtcGetProgramLog(raw, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && log.back() == '\0')
    log.pop_back();
  if (compiled != NVRTC_SUCCESS)
    throw InternalError(fmt::format("kjudge's kernels in {} do not compile for sm_{} (include "
                                    "folder '{}'): {}\n{}",
                                    file, options.arch, options.kjudge_include.string(),
                                    nvrtcGetErrorString(compiled), log));

  CompiledModule module;
  std::size_t cubin_size = 0;
  nvrtc_check(nvrtcGetCUBINSize(raw, &cubin_size), "nvrtcGetCUBINSize");
  module.cubin.resize(cubin_size);
  nvrtc_check(nvrtcGetCUBIN(raw, module.cubin.data()), "nvrtcGetCUBIN");
  for (const std::string& name : names) {
    const char* lowered = nullptr;
    nvrtc_check(nvrtcGetLoweredName(raw, name.c_str(), &lowered), "nvrtcGetLoweredName");
    KernelSymbol k;
    k.expression = name;
    k.lowered = lowered;
    module.kernels.push_back(std::move(k));
  }
  module.log = log;
  module.cache_key = key;
  if (!options.cache_dir.empty())
    cuda_cache::store(options.cache_dir, key, module, options.cache_cap_bytes);
  return module;
}

CompiledModule compile_builtin_kernels(const CompileOptions& options) {
  return compile_trusted_module(source, "kjudge_builtin_kernels.cu", builtin_kernel_names(),
                                options);
}

namespace detail {

generate_params make_generate_params(const InputSpec& spec, std::int64_t numel, StreamId stream,
                                     const Transform& transform, const SpecialValues* special) {
  KJ_EXPECTS(numel >= 0, "a non-negative element count");
  if (spec.dist.kind == Kind::file)
    throw InternalError(fmt::format("input '{}': file() inputs are read on the host and uploaded, "
                                    "not generated on the device",
                                    spec.name));
  // The host generator's own checks, with its messages: int() bounds, pareto's alpha.
  (void)draw_element(spec.dist, stream, 0, spec.where);

  const DType t = spec.dtype;
  generate_params g{};
  g.a = spec.dist.a;
  g.b = spec.dist.b;
  if (spec.dist.kind == Kind::integer) { // bounds checked above: integers within 64 bits
    g.int_lo = static_cast<long long>(spec.dist.a);
    const auto hi = static_cast<long long>(spec.dist.b);
    g.int_span =
        static_cast<unsigned long long>(hi) - static_cast<unsigned long long>(g.int_lo) + 1u;
  }
  g.seed = stream.seed;
  g.input_index = stream.input_index;
  g.visit = stream.visit;
  g.numel = numel;
  g.special_stride = special_stride;
  g.dist = static_cast<int>(spec.dist.kind);
  g.dtype = static_cast<int>(t);

  // Transforms are for float inputs only, and only the named one.
  g.transformed = is_float(t) && !transform.input.empty() && transform.input == spec.name ? 1 : 0;
  g.factor = g.transformed != 0 ? transform.factor : 1.0;
  g.offset = g.transformed != 0 ? transform.offset : 0.0;

  // Saturation to the finite range: generated values never overflow to Inf.
  g.floating = is_float(t) ? 1 : 0;
  if (is_float(t)) {
    g.range_hi = float_format(t).max_finite;
    g.range_lo = -g.range_hi;
  } else {
    switch (t) {
    case DType::i64:
      g.range_lo = -0x1p63;
      g.range_hi = 0x1.fffffffffffffp62;
      break;
    case DType::i32:
      g.range_lo = -2147483648.0;
      g.range_hi = 2147483647.0;
      break;
    case DType::i16:
      g.range_lo = -32768.0;
      g.range_hi = 32767.0;
      break;
    case DType::i8:
      g.range_lo = -128.0;
      g.range_hi = 127.0;
      break;
    case DType::u8:
      g.range_lo = 0.0;
      g.range_hi = 255.0;
      break;
    default:
      g.range_lo = 0.0;
      g.range_hi = 1.0;
      break; // bool
    }
  }

  if (special != nullptr && special->input == spec.name &&
      domain_admits(spec.domain, special->kind) && dtype_admits(t, special->kind) && numel > 0) {
    g.plant_special = 1;
    g.special = special_value(t, special->kind);
  }
  return g;
}

} // namespace detail

BuiltinKernels::BuiltinKernels(const CompileOptions& options) {
  const CompiledModule module = compile_builtin_kernels(options);
  KJ_EXPECTS(module.kernels.size() == builtin_kernel_names().size(),
             "one lowered name per builtin kernel");
  from_cache_ = module.from_cache;
  library_ = std::make_unique<CudaLibrary>(module.cubin);
  generate_ = library_->function(module.kernels[0].lowered);
  widen_ = library_->function(module.kernels[1].lowered);
  round_ = library_->function(module.kernels[2].lowered);
  fill_ = library_->function(module.kernels[3].lowered);
  count_ = library_->function(module.kernels[4].lowered);
  spin_ = library_->function(module.kernels[5].lowered);
  count_elements_ = library_->function(module.kernels[6].lowered);
  counter_ = DeviceBuffer(kCounters * sizeof(unsigned long long));
}

BuiltinKernels::~BuiltinKernels() = default;

void BuiltinKernels::generate(CUdeviceptr out, const InputSpec& spec, std::int64_t numel,
                              StreamId stream, const Transform& transform,
                              const SpecialValues* special, CUstream s) const {
  detail::generate_params g = detail::make_generate_params(spec, numel, stream, transform, special);
  if (numel == 0) return;
  void* out_ptr = reinterpret_cast<void*>(out);
  void* params[] = {&out_ptr, &g};
  launch_1d(generate_, static_cast<unsigned long long>(numel), params, s);
}

void BuiltinKernels::widen_to_f64(CUdeviceptr dst, CUdeviceptr src, DType src_dtype, std::int64_t n,
                                  CUstream s) const {
  KJ_EXPECTS(n >= 0, "a non-negative element count");
  if (n == 0) return;
  auto* dst_ptr = reinterpret_cast<double*>(dst);
  const void* src_ptr = reinterpret_cast<const void*>(src);
  int dtype = static_cast<int>(src_dtype);
  long long count = n;
  void* params[] = {&dst_ptr, &src_ptr, &dtype, &count};
  launch_1d(widen_, static_cast<unsigned long long>(n), params, s);
}

void BuiltinKernels::round_from_f64(CUdeviceptr dst, DType dst_dtype, CUdeviceptr src,
                                    std::int64_t n, CUstream s) const {
  KJ_EXPECTS(n >= 0, "a non-negative element count");
  if (n == 0) return;
  void* dst_ptr = reinterpret_cast<void*>(dst);
  const auto* src_ptr = reinterpret_cast<const double*>(src);
  int dtype = static_cast<int>(dst_dtype);
  long long count = n;
  void* params[] = {&dst_ptr, &src_ptr, &dtype, &count};
  launch_1d(round_, static_cast<unsigned long long>(n), params, s);
}

void BuiltinKernels::fill_pattern(CUdeviceptr dst, std::size_t bytes, std::uint32_t pattern,
                                  CUstream s) const {
  if (bytes == 0) return;
  detail::byte_span span = split_span(dst, nullptr, bytes);
  auto* dst_ptr = reinterpret_cast<unsigned char*>(dst);
  unsigned int p = pattern;
  void* params[] = {&dst_ptr, &span, &p};
  launch_1d(fill_, span_work(span), params, s);
}

void BuiltinKernels::count_async(const ByteCount& c, CUdeviceptr counter, CUstream s) const {
  if (c.bytes == 0) return;
  auto* counter_ptr = reinterpret_cast<unsigned long long*>(counter);
  if (c.element_bytes > 0) {
    const auto* a_ptr = reinterpret_cast<const unsigned char*>(c.a);
    unsigned long long n = c.bytes / static_cast<std::size_t>(c.element_bytes);
    int width = c.element_bytes;
    unsigned int p = c.pattern;
    void* params[] = {&a_ptr, &n, &width, &p, &counter_ptr};
    launch_1d(count_elements_, n, params, s);
    return;
  }
  const bool against_pattern = c.b == 0;
  detail::byte_span span = split_span(c.a, against_pattern ? nullptr : &c.b, c.bytes);
  const auto* a_ptr = reinterpret_cast<const unsigned char*>(c.a);
  const auto* b_ptr = reinterpret_cast<const unsigned char*>(c.b);
  unsigned int p = c.pattern;
  int against = against_pattern ? 1 : 0;
  void* params[] = {&a_ptr, &b_ptr, &span, &p, &against, &counter_ptr};
  launch_1d(count_, span_work(span), params, s);
}

std::vector<std::uint64_t> BuiltinKernels::count_all(const std::vector<ByteCount>& counts,
                                                     CUstream s) const {
  std::vector<std::uint64_t> results(counts.size(), 0);
  // One set of accumulators for every call: the lock covers reset, kernels and read-back.
  const std::lock_guard<std::mutex> lock(counter_mutex_);
  for (std::size_t first = 0; first < counts.size(); first += kCounters) {
    const std::size_t n = std::min(kCounters, counts.size() - first);
    fill_bytes(counter_.ptr(), 0, n * sizeof(unsigned long long), s);
    for (std::size_t k = 0; k < n; ++k)
      count_async(counts[first + k], counter_.ptr() + k * sizeof(unsigned long long), s);
    std::array<unsigned long long, kCounters> got{};
    copy_to_host(got.data(), counter_.ptr(), n * sizeof(unsigned long long), s); // synchronises
    std::copy_n(got.begin(), n, results.begin() + static_cast<std::ptrdiff_t>(first));
  }
  return results;
}

double BuiltinKernels::sm_clock_mhz(long long cycles, CUstream s) const {
  const std::lock_guard<std::mutex> lock(counter_mutex_); // the stamps live in counter_
  auto* stamps = reinterpret_cast<unsigned long long*>(counter_.ptr());
  void* params[] = {&cycles, &stamps};
  launch_kernel(spin_, LaunchDims{}, params, s);
  std::array<unsigned long long, 2> got{};
  copy_to_host(got.data(), counter_.ptr(), sizeof got, s); // synchronises
  return got[1] > 0 ? static_cast<double>(got[0]) / static_cast<double>(got[1]) * 1e3 : 0;
}

std::uint64_t BuiltinKernels::count_mismatched_bytes(CUdeviceptr a, CUdeviceptr b,
                                                     std::size_t bytes, CUstream s) const {
  return count_all({mismatched_bytes(a, b, bytes)}, s).front();
}

std::uint64_t BuiltinKernels::count_not_pattern(CUdeviceptr p, std::size_t bytes,
                                                std::uint32_t pattern, CUstream s) const {
  return count_all({not_pattern(p, bytes, pattern)}, s).front();
}

} // namespace kj
