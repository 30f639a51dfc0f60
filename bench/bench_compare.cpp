// The host comparator (kj::compare_output) on f32 outputs of 2^20 to 2^24 elements: `relative`
// with 4096-row slices (softmax's policy), `exact` against the reference (vector_add's), and
// `allclose`. The candidate differs from the golden by one ulp almost everywhere, so every
// statistic has work to do. Each iteration reuses the thread's warm scratch, as `kjudge check`
// does after its first case; items/s is elements judged per second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "kjudge/compare.hpp"

namespace {

struct Tensors {
  kj::HostTensor golden, reference, actual;
};

Tensors make(std::int64_t rows, std::int64_t cols) {
  const kj::Shape shape{rows, cols};
  Tensors t{kj::HostTensor(kj::DType::f64, shape), kj::HostTensor(kj::DType::f32, shape),
            kj::HostTensor(kj::DType::f32, shape)};
  double* g = t.golden.data<double>();
  float* r = t.reference.data<float>();
  float* a = t.actual.data<float>();
  std::uint64_t state = 12345;
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    g[i] = u * 1e-3;
    r[i] = static_cast<float>(g[i]);
    a[i] = std::nextafter(r[i], 1.0f);
  }
  return t;
}

void run(benchmark::State& state, kj::PolicySpec policy, bool sliced) {
  const std::int64_t n = state.range(0);
  const std::int64_t cols = 4096;
  const Tensors t = make(n / cols, cols);
  kj::OutputSpec spec;
  spec.name = "y";
  spec.dtype = kj::DType::f32;
  spec.policy = policy;
  if (sliced) spec.slice = 0;
  kj::CompareInputs in;
  in.spec = &spec;
  in.actual = &t.actual;
  in.golden = &t.golden;
  in.reference = &t.reference;
  benchmark::DoNotOptimize(kj::compare_output(in)); // warm the scratch
  for (auto _ : state)
    benchmark::DoNotOptimize(kj::compare_output(in));
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Relative(benchmark::State& state) {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::relative;
  run(state, p, true);
}
void BM_Exact(benchmark::State& state) {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::exact;
  p.expected = kj::Expected::reference;
  run(state, p, false);
}
void BM_Allclose(benchmark::State& state) {
  kj::PolicySpec p;
  p.kind = kj::PolicySpec::Kind::allclose;
  run(state, p, false);
}

BENCHMARK(BM_Relative)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Exact)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Allclose)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);

} // namespace
