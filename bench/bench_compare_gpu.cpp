// The GPU comparator (kj::DeviceComparator) on 2^28-element outputs, against the device's own
// copy bandwidth: the target (README "Performance") is one pass at >= 70% of it (bytes of actual +
// expected, read once). BM_CopyBandwidth copies 1 GiB device to device (read + write counted); the
// comparator benchmarks report the bytes they must read per second (SetBytesProcessed), so the
// two compare directly. allclose is f32 against f32 (the tensors torch.testing.assert_close gets
// in bench/compare_peers.py); relative reads the f64 golden and the f32 reference beside the
// candidate (16 bytes an element). Each iteration is one compare() call: launches, the trees,
// the read-back and the finding, synchronised. Without a GPU every benchmark says so and stops.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kjudge/cuda.hpp"
#include "kjudge/device_compare.hpp"

namespace {

constexpr std::int64_t kRows = 1 << 14, kCols = 1 << 14; // 2^28 elements

struct Setup {
  std::unique_ptr<kj::CudaContext> context;
  std::unique_ptr<kj::DeviceComparator> comparator;
  kj::DeviceBuffer actual, reference, golden;
  std::string why_not;
};

// One context, comparator and set of tensors for every benchmark: the candidate one f32 ulp
// from the reference almost everywhere, the golden the reference's values in f64.
Setup& setup() {
  static Setup s = [] {
    Setup r;
    if (!kj::cuda_available(&r.why_not)) return r;
    r.context = std::make_unique<kj::CudaContext>(0);
    kj::CompileOptions o;
    o.arch = r.context->info().cc_major * 10 + r.context->info().cc_minor;
    o.kjudge_include = std::string(KJ_SOURCE_DIR) + "/include";
    r.comparator = std::make_unique<kj::DeviceComparator>(r.context->info(), o);
    const std::int64_t n = kRows * kCols;
    kj::HostTensor a(kj::DType::f32, {n}), ref(kj::DType::f32, {n}), g(kj::DType::f64, {n});
    float* pa = a.data<float>();
    float* pr = ref.data<float>();
    double* pg = g.data<double>();
    std::uint64_t state = 12345;
    for (std::int64_t i = 0; i < n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double u = static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5;
      pr[i] = static_cast<float>(u);
      pg[i] = u;
      pa[i] = i % 3 == 0 ? pr[i] : std::nextafter(pr[i], 1.0f);
    }
    auto upload = [&](const kj::HostTensor& h) {
      kj::DeviceBuffer b(h.nbytes());
      kj::copy_to_device(b.ptr(), h.bytes().data(), h.nbytes(), r.context->stream());
      return b;
    };
    r.actual = upload(a);
    r.reference = upload(ref);
    r.golden = upload(g);
    r.context->synchronize();
    return r;
  }();
  return s;
}

bool ready(benchmark::State& state) {
  if (setup().context) return true;
  state.SkipWithError(("no usable GPU: " + setup().why_not).c_str());
  return false;
}

void BM_CopyBandwidth(benchmark::State& state) {
  if (!ready(state)) return;
  Setup& s = setup();
  const std::size_t bytes = s.actual.bytes();
  kj::DeviceBuffer to(bytes);
  for (auto _ : state) {
    kj::copy_device(to.ptr(), s.actual.ptr(), bytes, s.context->stream());
    s.context->synchronize();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * bytes));
}

// `statistics`: the percentiles of the passing output too (`--stats`); without, the verdict pass.
void judge(benchmark::State& state, kj::PolicySpec policy, bool sliced, bool golden,
           std::int64_t bytes_per_element, bool statistics = false) {
  if (!ready(state)) return;
  Setup& s = setup();
  kj::OutputSpec spec;
  spec.name = "y";
  spec.dtype = kj::DType::f32;
  spec.policy = policy;
  if (sliced) spec.slice = 0;
  kj::DeviceCompareInputs in;
  in.spec = &spec;
  in.shape = {kRows, kCols};
  in.actual = {s.actual.ptr(), kj::DType::f32};
  in.reference = kj::DeviceTensor{s.reference.ptr(), kj::DType::f32};
  if (golden) in.golden = kj::DeviceTensor{s.golden.ptr(), kj::DType::f64};
  in.statistics = statistics;
  kj::OutputFinding f = s.comparator->compare(in, s.context->stream()); // scratch warm
  for (auto _ : state)
    benchmark::DoNotOptimize(f = s.comparator->compare(in, s.context->stream()));
  state.SetBytesProcessed(state.iterations() * kRows * kCols * bytes_per_element);
  state.SetLabel(f.pass() ? "PASS" : "FAIL: " + f.message);
}

kj::PolicySpec allclose_policy() {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::allclose;
  p.expected = kj::Expected::reference;
  return p;
}
kj::PolicySpec relative_policy() {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::relative;
  return p;
}

void BM_AllcloseF32(benchmark::State& state) {
  judge(state, allclose_policy(), false, false, 8);
}
void BM_AllcloseF32Stats(benchmark::State& state) {
  judge(state, allclose_policy(), false, false, 8, true);
}

void BM_ExactF32(benchmark::State& state) {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::exact;
  p.expected = kj::Expected::reference;
  judge(state, p, false, false, 8);
}

void BM_RelativeSliced(benchmark::State& state) {
  judge(state, relative_policy(), true, true, 16);
}
void BM_RelativeSlicedStats(benchmark::State& state) {
  judge(state, relative_policy(), true, true, 16, true);
}

BENCHMARK(BM_CopyBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllcloseF32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllcloseF32Stats)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExactF32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RelativeSliced)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RelativeSlicedStats)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace
