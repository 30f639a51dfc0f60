// The trusted side of a check on either backend: what one case holds (CaseData), the oracle
// interface that makes it, and the pieces both oracles share for their trusted plans. A
// reference or golden that fails (does not compile, takes arguments its plan cannot give,
// crashes, writes its inputs, leaves an output unwritten) is the problem's fault: SpecError,
// which the judge reports as ERROR(spec_error).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "judge/cuda/buffer_pool.hpp"
#include "launch/marshal.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace kj::judge {

// Everything about one case that the candidate is judged against.
struct CaseData {
  Env env;                           // dims and integer scalars
  std::vector<Shape> input_shapes;   // per problem input
  std::vector<Shape> output_shapes;  // per problem output
  std::vector<DeviceBuffer> master;  // per input: the generated inputs, never exported
  std::vector<HostTensor> host_master; // the same on the host backend (master stays empty)
  // Per output: an in-out tensor's initial values (InitRule::drawn), in its dtype, on the host
  // (both backends) and on the device (CUDA); empty for the other outputs.
  std::vector<HostTensor> initial;
  std::vector<DeviceBuffer> device_initial;
  // Per output, on the host: the golden (f64; empty when the golden is not needed) and the
  // reference (in its dtype). The CUDA oracle makes them on the device and copies them here
  // only when a host comparison needs them (CheckBackend::complete_host_copies, before any
  // reader of this check looks), hence mutable in a shared case.
  mutable std::vector<HostTensor> golden;
  mutable std::vector<HostTensor> reference;
  // Held while they are made: the judges of one device share a cached case (CaseCache).
  std::unique_ptr<std::mutex> host_copies_mutex = std::make_unique<std::mutex>();
  double reference_s = 0;            // the reference's launches: wall time; host: CPU time
  std::vector<double> reference_cpu_ms; // host bench: the reference's timed runs, CPU time
  double reference_ms = 0;           // GPU bench visit: the reference's run, timed by events
  // GPU bench visit with a timed baseline: its run, timed like the reference's, and its outputs
  // (on the device, in the outputs' dtypes) for the check of its first visit.
  std::optional<double> baseline_ms;
  std::vector<PooledBuffer> device_baseline;
  bool nan_in_inputs = false;        // a NaN special-value case
  bool extreme_in_inputs = false;    // a dtype-max or infinity special-value case
  // CUDA: the golden's (f64 for float outputs) and the reference's outputs where they were made,
  // for the GPU comparator. Never exported: a worker in its own process cannot address them (a
  // candidate in the oracle's process, under the isolation switch, can: the trap that switch
  // demonstrates).
  std::vector<DeviceBuffer> device_golden, device_reference;
  // What output o is judged against on the host: the golden, or the reference where the case
  // has none (integer outputs). Precondition: host copies made.
  const HostTensor& expected(std::size_t o) const {
    return golden.size() > o && golden[o].numel() > 0 ? golden[o] : reference[o];
  }
  std::uint64_t input_bytes() const;
  // Every byte the case holds, host and device, counting host copies of the device's golden
  // and reference whether made yet or not: what keeping it in a cache costs.
  std::uint64_t resident_bytes() const;
};

// The compiled kernels of one plan (reference, golden, or a candidate's after its load reply).
struct CompiledPlan {
  std::vector<LaunchSpec> launches;          // with kernel names instantiated (T substituted)
  std::vector<PlanKernel> kernels;           // one per distinct expression
  std::vector<const PlanKernel*> per_launch; // parallel to launches
  PlanContext context;
};

// The name expression a plan's launch registers, in order of first appearance, and the index
// of each launch's expression.
std::vector<std::string> distinct_expressions(const std::vector<LaunchSpec>& launches,
                                              std::vector<std::size_t>& index_of_launch);

// A plan's launches with the float role T instantiated as `type` ("float", "double").
std::vector<LaunchSpec> instantiate_plan(const KernelSource& src, std::string_view type);

// The tensors the reference ("reference") or golden ("golden": float tensors as f64) sees.
PlanContext oracle_plan_context(const Problem& problem, const std::string& owner, bool golden,
                                const DeviceInfo& device);

// The name expressions the reference's build compiles and, where the golden has a source of
// its own, the golden's build; one build serves both when they share the reference's source.
struct ReferenceBuilds {
  std::vector<std::string> reference, golden; // golden empty: no build of its own
};
ReferenceBuilds reference_builds(const Problem& problem, const CompiledPlan& reference,
                                 const CompiledPlan* golden);

// The audit's rounded references: the reference's plan with T as kj::rounded<float, F>, for F
// in "tf32", "bf16", "f16" (rounding.hpp), each operation rounded to F. Only for an f32 problem
// whose reference is a template over T; else `unavailable` says why and `plans` is empty.
struct RoundedPlans {
  std::map<std::string, CompiledPlan> plans; // by format; bound after the build
  std::vector<std::string> expressions;      // every format's, for one build
  std::string unavailable;
};
RoundedPlans rounded_plans(const Problem& problem, const CompiledPlan& reference,
                           const PlanContext& context);

// An oracle's rounded references, built on first use: `Module` is its build (with `kernels`
// by expression), `build(expressions)` makes one or throws SpecError, whose first line becomes
// the reason there are none.
template <class Module> struct RoundedReferences {
  bool tried = false;
  RoundedPlans plans;
  std::unique_ptr<Module> module;

  // The plan for `format`, or null when there is none.
  template <class Build>
  const CompiledPlan* plan(std::string_view format, const Problem& problem,
                           const CompiledPlan& reference, Build&& build) {
    if (!tried) {
      tried = true;
      plans = rounded_plans(problem, reference, reference.context);
      try {
        if (plans.unavailable.empty()) {
          module = build(plans.expressions);
          for (auto& [f, p] : plans.plans) bind_plan(p, module->kernels, problem.reference);
        }
      } catch (const SpecError& e) {
        plans.plans.clear();
        const std::string what = e.what();
        plans.unavailable = what.substr(0, what.find('\n'));
      }
    }
    const auto it = plans.plans.find(std::string(format));
    return it == plans.plans.end() ? nullptr : &it->second;
  }
};

// A plan's kernels from its build's (by expression), checked against the plan; SpecError at
// the source when they do not fit.
void bind_plan(CompiledPlan& plan, const std::map<std::string, PlanKernel>& kernels,
               const KernelSource& src);

// The reference's (or golden's) outputs after its first run (poison 0), checked for poison
// left in them: an element still holding it may be a legitimate all-ones value (-1 in an
// integer output), so a second run with the other poison decides (`rerun` makes it and returns
// its outputs). Returns the outputs to use; SpecError when elements stay unwritten.
std::vector<HostTensor> checked_reference_outputs(
    const Problem& problem, const std::string& role, const std::string& case_id,
    const std::vector<Shape>& shapes, bool golden, std::vector<HostTensor> first,
    const std::function<std::vector<HostTensor>()>& rerun);

// A SpecError's location for a problem file (its name, no line).
Location file_location(const std::filesystem::path& path);

// The buffers of the problem's stages for one run of its reference (golden: f64), shaped by
// the case's dims `env`.
std::vector<HostTensor> stage_buffers(const Problem& problem, const Env& env, bool golden);

// A case's dims, shapes and special-value flags: CaseData without any tensor.
CaseData case_frame(const Problem& problem, const Case& c);

// The initial values of each in-out output, drawn like an input on a stream of its own (after
// the inputs'), without transforms or special values; an empty tensor for the other outputs.
std::vector<HostTensor> initial_outputs(const Problem& problem, const CaseData& data, const Case& c,
                                        std::uint32_t visit);

// The elements of all outputs of the largest of `cases` (a case whose shapes do not evaluate
// counts 0: the oracle reports it when it reaches the case).
std::uint64_t largest_case_elements(const Problem& problem, const std::vector<const Case*>& cases);

// The first of the candidate's preconditions (`requires`) that case `c`'s shapes do not meet, or
// null when they meet them all. One that cannot be evaluated on the shapes does not hold.
const Precondition* unmet_precondition(const Problem& problem, const Candidate& candidate,
                                       const Case& c);

using kj::problem_float_dtype; // kjudge/spec.hpp

// Each case's inputs, golden and reference, on either backend.
class CaseOracle {
public:
  virtual ~CaseOracle() = default;
  // Inputs, golden and reference of one case. Throws SpecError for the problem's faults.
  virtual CaseData prepare(const Case& c) = 0;
  // The reference of case `c` run on `inputs` instead of the case's own (one per problem input,
  // in its dtype), its outputs on the host: the audit's downgrades, the reference on inputs
  // rounded to a narrower format. Throws SpecError as prepare does.
  virtual std::vector<HostTensor> reference_on(const Case& c, std::vector<HostTensor> inputs) = 0;
  // Case `c` made on `inputs` instead of its generated ones (one per problem input, in its
  // dtype): golden, reference and the inputs a runner reads, as prepare makes them. `kjudge
  // localize` feeds a stage's exact or computed values to the launches after it this way.
  virtual CaseData prepare_on(const Case& c, std::vector<HostTensor> inputs) = 0;
  // Case `c` drawn afresh for one of the case loop's timed runs (bench on the host: visit 1, 2,
  // ... offset its inputs' random streams), its golden and reference made on them; nullopt where
  // the backend times elsewhere (the GPU's timing loop draws its own visits).
  virtual std::optional<CaseData> prepare_timed_visit(const Case& c, std::uint32_t visit) {
    (void)c;
    (void)visit;
    return std::nullopt;
  }
  // As reference_on, with the reference's T = kj::rounded<float, F> (`format`: "tf32", "bf16",
  // "f16"): every operation rounded to F, as a kernel that computes in F (its accumulator
  // included), not only reads in it. All formats built in one go on the first call; nullopt
  // when they cannot be, and rounded_unavailable() says why.
  virtual std::optional<std::vector<HostTensor>>
  rounded_reference_on(const Case& c, std::vector<HostTensor> inputs, std::string_view format) = 0;
  virtual std::string rounded_unavailable() const = 0;
  // The case's inputs on the host, as generated (the CUDA oracle copies its device master: a
  // copy is far cheaper than generating them again).
  virtual std::vector<HostTensor> inputs_on_host(const CaseData& data) const = 0;
};

} // namespace kj::judge
