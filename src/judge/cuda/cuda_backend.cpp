// The CUDA backend (backend.hpp): the oracle on the device, candidates in CUDA workers, clean
// runs judged by the GPU comparator where their outputs lie, and the bench's timing loop.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "judge/backend.hpp"
#include "judge/case_cache.hpp"
#include "judge/cuda/cuda_oracle.hpp"
#include "judge/cuda/cuda_runner.hpp"
#include "judge/cuda/timing_loop.hpp"
#include "judge/output_judging.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/error.hpp"

namespace kj::judge {

namespace {

std::string driver_version_text(int v) {
  if (v <= 0) return "";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

class CudaBackend final : public CheckBackend {
public:
  CudaBackend(CheckSettings& settings, const Problem& problem, CaseCache*& cache, Verdict& v);

  CaseOracle& oracle() override { return *oracle_; }
  std::unique_ptr<KernelUnderTest> make_runner(std::string role, const Candidate& kernel) override {
    return std::make_unique<CudaKernelRunner>(std::move(role), kernel, problem_, *oracle_,
                                              settings_);
  }
  void outputs_to_host(RunOutcome& run, const std::vector<Shape>& shapes) override {
    judge::outputs_to_host(run, problem_, shapes, context_->stream());
  }
  void complete_host_copies(const CaseData& data) override {
    oracle_->complete_host_copies(data);
  }
  // The device's model and compute capability, not its ordinal: any H200 makes the same cases.
  std::string case_identity() const override {
    const DeviceInfo& dev = context_->info();
    return fmt::format("{} sm_{}{} | {}", dev.name, dev.cc_major, dev.cc_minor,
                       oracle_->builds_identity());
  }
  std::optional<std::string> encode_case(const CaseData& data) override {
    return oracle_->encode_case(data);
  }
  std::optional<CaseData> decode_case(CaseImage image) override {
    return oracle_->decode_case(std::move(image));
  }
  std::optional<std::vector<OutputFinding>>
  judge_in_place(const CaseData& data, const RunOutcome& first, const RunOutcome& second) override;
  void time_public_cases(KernelUnderTest& candidate, const std::vector<const Case*>& cases,
                         Verdict& v) override;
  std::optional<OutputFinding> judge_made_output(const CaseData& data, std::size_t o,
                                                 const HostTensor& actual) override;
  bool judges_made_outputs() const override { return comparator_ != nullptr; }

private:
  const CheckSettings& settings_;
  const Problem& problem_;
  // This check's own context and stream (current on the judge's thread).
  std::shared_ptr<CudaContext> context_;
  std::unique_ptr<CudaOracle> oracle_;
  std::unique_ptr<DeviceComparator> comparator_; // null: every case judged on the host
};

CudaBackend::CudaBackend(CheckSettings& settings, const Problem& problem, CaseCache*& cache,
                         Verdict& v)
    : settings_(settings), problem_(problem) {
  const CheckOptions& asked = settings.asked;
  if (asked.timed_runs > 0)
    throw InternalError("timed runs on the GPU are the timing loop's "
                        "(CheckOptions::gpu_timing), not timed_runs");
  // This check's own context (current on this thread, its own stream); the cache keeps the
  // first one offered, and with it the primary context its device buffers live in. Another
  // device's cache is not used.
  context_ = std::make_shared<CudaContext>(asked.device);
  if (cache && cache->keep_context(context_)->get() != context_->get()) cache = nullptr;
  const DeviceInfo& dev = context_->info();
  settings.memory_cap = dev.total_memory;
  v.manifest.gpu = dev.name;
  v.manifest.device = dev.ordinal;
  v.manifest.driver_version = driver_version_text(dev.driver_version);
  if (dev.clock_khz > 0) v.manifest.clocks = fmt::format("{} MHz", dev.clock_khz / 1000);
  CompileOptions compile;
  compile.arch = dev.cc_major * 10 + dev.cc_minor;
  compile.kjudge_include = settings.kjudge_include;
  compile.cache_dir = asked.cache_dir;
  compile.precompiled_dir = precompiled_kernels_dir(asked.self_exe);
  oracle_ = std::make_unique<CudaOracle>(problem, *context_, compile, !asked.against.has_value());
  oracle_->set_trace(settings.trace);
  if (asked.gpu_comparator) comparator_ = std::make_unique<DeviceComparator>(dev, compile);
}

// When both runs ran clean and left the same bytes in every output, no element can be
// unwritten (the two runs' poisons differ in every element) and none differs between the runs,
// so each output's finding is the policy's alone, and the GPU comparator makes it where the
// outputs lie, with the host comparator's finding bit for bit.
std::optional<std::vector<OutputFinding>> CudaBackend::judge_in_place(const CaseData& data,
                                                                      const RunOutcome& first,
                                                                      const RunOutcome& second) {
  const std::size_t n_out = problem_.outputs.size();
  if (!comparator_ || first.device_outputs.size() != n_out ||
      second.device_outputs.size() != n_out || data.device_golden.size() != n_out ||
      data.device_reference.size() != n_out)
    return std::nullopt;
  const PhaseTrace::Scope timed(settings_.trace, "comparison (GPU)");
  const CUstream stream = context_->stream();
  std::vector<BuiltinKernels::ByteCount> counts;
  for (std::size_t o = 0; o < n_out; ++o)
    counts.push_back(BuiltinKernels::mismatched_bytes(
        first.device_outputs[o].ptr(), second.device_outputs[o].ptr(),
        tensor_bytes(problem_.outputs[o].dtype, data.output_shapes[o])));
  for (const std::uint64_t differing : oracle_->builtins().count_all(counts, stream))
    if (differing != 0) return std::nullopt;
  // An integer output is judged on the host (judge_device_outputs).
  if (std::any_of(problem_.outputs.begin(), problem_.outputs.end(),
                  [](const OutputSpec& o) { return !is_float(o.dtype); }))
    oracle_->complete_host_copies(data);
  return judge_device_outputs(problem_, data, first, *comparator_, stream,
                              extras_asked(settings_.asked));
}

// Uploaded to a scratch buffer and judged as a run's output would be (judge_device_outputs);
// integer outputs and a case without its device golden go the host's way.
std::optional<OutputFinding> CudaBackend::judge_made_output(const CaseData& data, std::size_t o,
                                                           const HostTensor& actual) {
  const DType dtype = problem_.outputs[o].dtype;
  if (!comparator_ || !is_float(dtype) || actual.dtype() != dtype ||
      data.device_golden.size() <= o || data.device_reference.size() <= o)
    return std::nullopt;
  const CUstream stream = context_->stream();
  DeviceBuffer scratch(actual.nbytes());
  copy_to_device(scratch.ptr(), actual.bytes().data(), actual.nbytes(), stream);
  return comparator_->compare(
      device_compare_inputs(problem_, o, data, DeviceTensor{scratch.ptr(), dtype}, {}), stream);
}

// The first case of each public shape set (identity transform, no special values) timed, its
// timing or its failure put on its finding, with the problem's timed baseline (or else its
// recorded one for this GPU and shape set); the resources and memory of the first.
void CudaBackend::time_public_cases(KernelUnderTest& candidate,
                                    const std::vector<const Case*>& cases, Verdict& v) {
  if (!settings_.asked.gpu_timing) return;
  const TimingLoop loop{problem_,
                        *oracle_,
                        candidate,
                        comparator_.get(),
                        *settings_.asked.gpu_timing,
                        settings_.defences.regenerate,
                        settings_.trace,
                        settings_.started,
                        settings_.against_kernel};
  std::set<std::string> shape_sets;
  std::optional<DeviceRates> rates;
  for (const Case* c : cases) {
    if (c->case_class() != "public" || !c->transform.input.empty() || c->special ||
        !shape_sets.insert(c->shapes.id).second)
      continue;
    if (!rates) rates = measure_rates(loop.oracle, loop.problem);
    CaseBench b = time_case(loop, *c, *rates);
    if (const std::string skip = fmt::format("SKIP({}) baseline", b.baseline_skip);
        !b.baseline_skip.empty() &&
        std::find(v.skips.begin(), v.skips.end(), skip) == v.skips.end())
      v.skips.push_back(skip);
    const auto f = std::find_if(v.cases.begin(), v.cases.end(),
                                [&](const CaseFinding& found) { return found.case_id == c->id; });
    KJ_EXPECTS(f != v.cases.end(), "a timed case was judged");
    if (b.reason != Reason::none) {
      f->reason = b.reason;
      f->message = std::move(b.message);
      return;
    }
    f->timing = std::move(b.timing);
    if (const RecordedBaseline* recorded = problem_.find_baseline(v.manifest.gpu, c->shapes.dims);
        recorded && !f->timing->baseline_ms) {
      f->timing->baseline_ms = recorded->ms;
      f->timing->baseline = recorded->name;
    }
    if (v.resources.empty()) {
      v.resources = std::move(b.resources);
      v.memory_bytes = b.memory_bytes;
      v.ref_memory_bytes = b.ref_memory_bytes;
    }
  }
}

} // namespace

std::unique_ptr<CheckBackend> make_cuda_backend(CheckSettings& settings, const Problem& problem,
                                                CaseCache*& cache, Verdict& v) {
  return std::make_unique<CudaBackend>(settings, problem, cache, v);
}

} // namespace kj::judge
