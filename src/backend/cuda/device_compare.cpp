// DeviceComparator: the pass's kernels launched over device tensors, the chunk trees reduced on
// the device, and the few bytes a finding needs read back (the whole output's statistics and
// percentiles, each slice's statistics for relative, the elements a message names); the rest
// of the finding is pass.cpp's, shared with the host comparator.
#include "kjudge/device_compare.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "compare/pass.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/detail/compare_pass_impl.hpp"
#include "kjudge/error.hpp"

namespace kj {

namespace {

using detail::cmp_stats;
using detail::compare_params;

constexpr std::string_view kernels_source = "#include \"kjudge/detail/compare_kernels.cuh\"\n";
const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> names = {
      "kj::cmp::judge_chunks<false, -1, -1>", "kj::cmp::judge_chunks<true, -1, -1>",
      "kj::cmp::judge_chunks<false, kj::detail::cmp_allclose, kj::detail::dt_f32>",
      "kj::cmp::judge_chunks<false, kj::detail::cmp_relative, kj::detail::dt_f32>",
      "kj::cmp::judge_chunks<false, kj::detail::cmp_exact, kj::detail::dt_f32>",
      "kj::cmp::judge_chunks<false, kj::detail::cmp_ulp, kj::detail::dt_f32>", "kj::cmp::combine_groups",
      "kj::cmp::percentiles", "kj::cmp::judge_chunks_lean<kj::detail::cmp_allclose>",
      "kj::cmp::judge_chunks_lean<kj::detail::cmp_exact>",
      "kj::cmp::judge_chunks_lean<kj::detail::cmp_ulp>"};
  return names;
}

constexpr std::size_t kHistBytes = static_cast<std::size_t>(detail::cmp_histograms) *
                                     detail::cmp_hist_bins * sizeof(unsigned long long);
constexpr unsigned kHistShared = static_cast<unsigned>(detail::cmp_histograms) *
                                   detail::cmp_hist_words * sizeof(unsigned int);
// Blocks of the lean pass per SM (its __launch_bounds__).
constexpr int kLeanBlocksPerSm = 2;

} // namespace

HostTensor to_host(const DeviceTensor& t, const Shape& shape, CUstream stream) {
  HostTensor h(t.dtype, shape);
  if (h.nbytes() > 0) copy_to_host(h.bytes().data(), t.ptr, h.nbytes(), stream);
  return h;
}

namespace {

// The tensors of a DeviceCompareInputs copied to the host, and the CompareInputs over them: the
// way back for what the pass does not judge, and for exact percentiles.
struct HostCopies {
  HostTensor actual;
  std::optional<HostTensor> golden, reference;
  CompareInputs in;

  HostCopies(const DeviceCompareInputs& d, CUstream s) : actual(to_host(d.actual, d.shape, s)) {
    if (d.golden) golden = to_host(*d.golden, d.shape, s);
    if (d.reference) reference = to_host(*d.reference, d.shape, s);
    static_cast<CompareRules&>(in) = d;
    in.actual = &actual;
    in.golden = golden ? &*golden : nullptr;
    in.reference = reference ? &*reference : nullptr;
  }
  HostCopies(const HostCopies&) = delete;
  HostCopies& operator=(const HostCopies&) = delete;
};

} // namespace

struct DeviceComparator::Impl {
  DeviceInfo device;
  std::unique_ptr<CudaLibrary> library;
  // The pass: generic (any policy and dtype; scaled sums for f64), and specialised for f32
  // outputs under each elementwise policy, where the per-element code folds to its constants.
  CUfunction judge = nullptr, judge_scaled = nullptr, combine = nullptr, percentiles = nullptr;
  CUfunction judge_f32[4] = {}; // by policy code
  // The lean pass (compare_kernels.cuh) by policy code; relative has none.
  CUfunction judge_lean[4] = {};

  CUfunction judge_for(const compare_params& p) const {
    if (detail::scaled_sums(p)) return judge_scaled;
    if (p.dtype == detail::dt_f32 && p.policy >= 0 && p.policy < 4) return judge_f32[p.policy];
    return judge;
  }
  // The lean pass for f32 outputs under an elementwise policy whose expected value is the basis:
  // the rounded golden, the reference where there is no golden, or either where both are one
  // array (kjudge.compare without a golden); null for the rest.
  CUfunction lean_for(const compare_params& p, bool golden_is_reference) const {
    if (p.dtype != detail::dt_f32 || p.policy < 0 || p.policy >= 4 || p.with_bounds != 0)
      return nullptr;
    if (p.has_golden != 0 && p.expected_golden == 0 && !golden_is_reference) return nullptr;
    if (p.chunks >= (1ll << 31)) return nullptr; // `redo` lists chunks in 31 bits
    return judge_lean[p.policy];
  }
  // Scratch, grown on demand and kept: chunk statistics and two tree levels, the histograms,
  // the bounds, the lean pass's list of chunks to redo, and the result (whole statistics, then
  // the percentiles).
  DeviceBuffer chunks, level_a, level_b, hist, bounds, redo, result;

  static void grow(DeviceBuffer& b, std::size_t bytes) {
    if (b.bytes() < bytes) b = DeviceBuffer(std::max(bytes, 2 * b.bytes()));
  }

  // The stride-doubling trees of `segments` runs of `per_segment` statistics at `in`, one
  // level of groups per launch; returns where the `segments` results are.
  CUdeviceptr tree(CUdeviceptr in, long long per_segment, long long segments, CUstream s) {
    CUdeviceptr from = in;
    bool to_a = true;
    while (per_segment > 1) {
      long long groups = (per_segment + detail::cmp_tree_group - 1) / detail::cmp_tree_group;
      DeviceBuffer& out = to_a ? level_a : level_b;
      grow(out, static_cast<std::size_t>(groups * segments) * sizeof(cmp_stats));
      auto* in_ptr = reinterpret_cast<const cmp_stats*>(from);
      auto* out_ptr = reinterpret_cast<cmp_stats*>(out.ptr());
      void* params[] = {&in_ptr, &out_ptr, &per_segment, &groups};
      LaunchDims dims;
      dims.grid = {static_cast<unsigned>(groups * segments), 1, 1};
      dims.block = {static_cast<unsigned>(detail::cmp_tree_group), 1, 1};
      launch_kernel(combine, dims, params, s);
      from = out.ptr();
      per_segment = groups;
      to_a = !to_a;
    }
    return from;
  }
};

namespace {

// The pass over device tensors.
class DevicePassSource final : public PassSource {
public:
  DevicePassSource(DeviceComparator::Impl& impl, const DeviceCompareInputs& in, CUstream s)
      : impl_(impl), in_(in), s_(s) {}

  PassSummary run(const compare_params& p, const std::vector<double>* bounds,
                  bool histograms) override {
    DeviceComparator::Impl& d = impl_;
    PassSummary out;
    detail::empty_stats(out.whole);
    const std::size_t result_bytes = sizeof(cmp_stats) + sizeof(detail::cmp_percentiles);
    DeviceComparator::Impl::grow(d.result, result_bytes);
    if (p.chunks == 0) return out;

    DeviceComparator::Impl::grow(d.chunks, static_cast<std::size_t>(p.chunks) * sizeof(cmp_stats));
    const double* bounds_ptr = nullptr;
    if (bounds) {
      DeviceComparator::Impl::grow(d.bounds, bounds->size() * sizeof(double));
      copy_to_device(d.bounds.ptr(), bounds->data(), bounds->size() * sizeof(double), s_);
      bounds_ptr = reinterpret_cast<const double*>(d.bounds.ptr());
    }
    unsigned long long* hist_ptr = nullptr;
    if (histograms) {
      DeviceComparator::Impl::grow(d.hist, kHistBytes);
      fill_bytes(d.hist.ptr(), 0, kHistBytes, s_);
      hist_ptr = reinterpret_cast<unsigned long long*>(d.hist.ptr());
    }
    compare_params params = p;
    params.golden_dtype = in_.golden ? static_cast<int>(in_.golden->dtype) : detail::dt_f64;
    const void* actual = reinterpret_cast<const void*>(in_.actual.ptr);
    const void* golden = in_.golden ? reinterpret_cast<const void*>(in_.golden->ptr) : nullptr;
    const void* reference = in_.reference ? reinterpret_cast<const void*>(in_.reference->ptr)
                                          : nullptr;
    auto* chunks = reinterpret_cast<cmp_stats*>(d.chunks.ptr());
    const unsigned int* redo = nullptr;
    const long long sms = std::max(1, d.device.sm_count);
    const bool golden_is_reference = in_.golden && in_.reference &&
                                     in_.golden->ptr == in_.reference->ptr &&
                                     in_.golden->dtype == in_.reference->dtype;
    if (const CUfunction lean = d.lean_for(params, golden_is_reference)) {
      // The lean pass first; judge_chunks then judges the chunks it hands back.
      const std::size_t redo_bytes = static_cast<std::size_t>(p.chunks + 1) * sizeof(unsigned int);
      DeviceComparator::Impl::grow(d.redo, redo_bytes);
      fill_bytes(d.redo.ptr(), 0, sizeof(unsigned int), s_);
      auto* redo_ptr = reinterpret_cast<unsigned int*>(d.redo.ptr());
      const auto* actual_f32 = static_cast<const float*>(actual);
      const void* expected = params.has_golden != 0 ? golden : reference;
      void* lean_args[] = {&params, &actual_f32, &expected, &redo_ptr, &chunks, &hist_ptr};
      LaunchDims lean_dims;
      const long long lean_blocks = std::min(p.chunks, kLeanBlocksPerSm * sms);
      lean_dims.grid = {static_cast<unsigned>(lean_blocks), 1, 1};
      lean_dims.block = {static_cast<unsigned>(detail::cmp_threads), 1, 1};
      lean_dims.shared_bytes = histograms ? detail::cmp_lean_shared_bytes : 0;
      launch_kernel(lean, lean_dims, lean_args, s_);
      redo = redo_ptr;
    }
    void* args[] = {&params, &actual, &golden, &reference, &bounds_ptr, &redo, &chunks, &hist_ptr};
    LaunchDims dims;
    dims.grid = {static_cast<unsigned>(std::min(p.chunks, sms)), 1, 1};
    dims.block = {static_cast<unsigned>(detail::cmp_threads), 1, 1};
    dims.shared_bytes = histograms ? kHistShared : 0;
    launch_kernel(d.judge_for(p), dims, args, s_);

    const SliceLayout l = slice_layout(*in_.spec, in_.shape);
    if (l.axis >= 0) {
      const CUdeviceptr slices = d.tree(d.chunks.ptr(), p.chunks_per_slice, l.extent, s_);
      out.slices.resize(static_cast<std::size_t>(l.extent));
      copy_to_host(out.slices.data(), slices, out.slices.size() * sizeof(cmp_stats), s_);
    }
    const CUdeviceptr whole = d.tree(d.chunks.ptr(), p.chunks, 1, s_);
    copy_device(d.result.ptr(), whole, sizeof(cmp_stats), s_);

    if (histograms) {
      auto* hist_in = reinterpret_cast<const unsigned long long*>(d.hist.ptr());
      auto* whole_ptr = reinterpret_cast<const cmp_stats*>(d.result.ptr());
      auto* pct = reinterpret_cast<detail::cmp_percentiles*>(d.result.ptr() + sizeof(cmp_stats));
      void* pargs[] = {&hist_in, &whole_ptr, &pct};
      LaunchDims one;
      one.block = {1024, 1, 1};
      launch_kernel(d.percentiles, one, pargs, s_);
    }
    unsigned char bytes[sizeof(cmp_stats) + sizeof(detail::cmp_percentiles)];
    copy_to_host(bytes, d.result.ptr(), histograms ? result_bytes : sizeof(cmp_stats), s_);
    std::memcpy(&out.whole, bytes, sizeof(cmp_stats));
    if (histograms) std::memcpy(&out.binned, bytes + sizeof(cmp_stats), sizeof out.binned);
    return out;
  }

  ElementValues at(std::int64_t flat) override {
    ElementValues v;
    v.c = read(in_.actual, flat);
    v.g = in_.golden ? read(*in_.golden, flat) : std::numeric_limits<double>::quiet_NaN();
    v.r = in_.reference ? read(*in_.reference, flat) : std::numeric_limits<double>::quiet_NaN();
    return v;
  }

  ErrorStats exact_statistics(const compare_params& p) override {
    const HostCopies host(in_, s_);
    HostPassSource source(host.in);
    return source.exact_statistics(p);
  }

private:
  double read(const DeviceTensor& t, std::int64_t flat) {
    const std::size_t size = dtype_size(t.dtype);
    unsigned char raw[8] = {};
    copy_to_host(raw, t.ptr + static_cast<std::size_t>(flat) * size, size, s_);
    return detail::load_widened(raw, 0, static_cast<int>(t.dtype));
  }

  DeviceComparator::Impl& impl_;
  const DeviceCompareInputs& in_;
  CUstream s_;
};

PassInputs device_pass_inputs(const DeviceCompareInputs& in) {
  return pass_inputs_of(in, in.shape, in.golden.has_value(), in.reference.has_value());
}

} // namespace

CompiledModule compile_compare_kernels(const CompileOptions& options) {
  return compile_trusted_module(kernels_source, "kjudge_compare_kernels.cu", kernel_names(),
                                options);
}

DeviceComparator::DeviceComparator(const DeviceInfo& device, const CompileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const CompiledModule module = compile_compare_kernels(options);
  KJ_EXPECTS(module.kernels.size() == kernel_names().size(), "one lowered name per kernel");
  impl_->device = device;
  impl_->library = std::make_unique<CudaLibrary>(module.cubin);
  impl_->judge = impl_->library->function(module.kernels[0].lowered);
  impl_->judge_scaled = impl_->library->function(module.kernels[1].lowered);
  impl_->judge_f32[detail::cmp_allclose] = impl_->library->function(module.kernels[2].lowered);
  impl_->judge_f32[detail::cmp_relative] = impl_->library->function(module.kernels[3].lowered);
  impl_->judge_f32[detail::cmp_exact] = impl_->library->function(module.kernels[4].lowered);
  impl_->judge_f32[detail::cmp_ulp] = impl_->library->function(module.kernels[5].lowered);
  impl_->combine = impl_->library->function(module.kernels[6].lowered);
  impl_->percentiles = impl_->library->function(module.kernels[7].lowered);
  impl_->judge_lean[detail::cmp_allclose] = impl_->library->function(module.kernels[8].lowered);
  impl_->judge_lean[detail::cmp_exact] = impl_->library->function(module.kernels[9].lowered);
  impl_->judge_lean[detail::cmp_ulp] = impl_->library->function(module.kernels[10].lowered);
}

DeviceComparator::~DeviceComparator() = default;

bool DeviceComparator::on_device(const DeviceCompareInputs& in) {
  if (in.exact_percentiles || in.spec == nullptr) return false;
  if (in.actual.dtype != in.spec->dtype) return false;
  if (in.golden && !golden_read_in_place(in.golden->dtype)) return false;
  if (in.reference && in.reference->dtype != in.spec->dtype) return false;
  try {
    const PassInputs p = device_pass_inputs(in);
    if (!pass_params(p)) return false;
    return slice_layout(*in.spec, in.shape).outer == 1;
  } catch (const SpecError&) {
    return false; // compare_output on the host says what is wrong
  }
}

OutputFinding DeviceComparator::compare(const DeviceCompareInputs& in, CUstream stream) {
  KJ_EXPECTS(in.spec != nullptr, "DeviceComparator::compare needs the output's spec");
  if (!on_device(in)) {
    const HostCopies host(in, stream);
    return compare_output(host.in);
  }
  const PassInputs p = device_pass_inputs(in);
  const std::optional<compare_params> params = pass_params(p);
  DevicePassSource source(*impl_, in, stream);
  return judge_in_one_pass(p, *params, source);
}

} // namespace kj
