// The trusted side of a check: the oracle makes each case's master inputs on the device, runs
// the golden (the reference template in double, inputs widened exactly) and the same-precision
// reference on private copies of them, and keeps the results on the device for the GPU
// comparator and on the host for the host's. None of its allocations is ever exported to a
// worker. A reference or golden that fails here
// (does not compile, takes arguments its plan cannot give, crashes, writes its inputs, leaves
// an output unwritten) is the problem's fault: SpecError, which the judge reports as
// ERROR(spec_error).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/buffer_pool.hpp"
#include "judge/marshal.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/cublas.hpp"
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
  std::vector<HostTensor> golden;    // per output, f64; empty when the golden is not needed
  std::vector<HostTensor> reference; // per output, in its dtype
  double reference_s = 0;            // wall time of the reference's launches
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
  std::uint64_t input_bytes() const;
  // Every byte the case holds, host and device: what keeping it in a cache costs.
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

// A plan's kernels from its build's (by expression), checked against the plan; SpecError at
// the source when they do not fit.
void bind_plan(CompiledPlan& plan, const std::map<std::string, PlanKernel>& kernels,
               const KernelSource& src);

// The reference's (or golden's) outputs after its first run (poison 0), checked for poison
// left in them: an element still holding it may be a legitimate all-ones value (-1 in an
// integer output), so a second run with the other poison decides (`rerun` makes it and returns
// its outputs). Returns the outputs to use; SpecError when elements stay unwritten.
std::vector<HostTensor> settle_reference_outputs(
    const Problem& problem, const std::string& role, const std::string& case_id,
    const std::vector<Shape>& shapes, bool golden, std::vector<HostTensor> first,
    const std::function<std::vector<HostTensor>()>& rerun);

// A case's dims, shapes and special-value flags: CaseData without any tensor.
CaseData case_frame(const Problem& problem, const Case& c);

// The reference's float role T: the dtype of the first float input (else of the first float
// output; f32 when the problem has no float tensor).
DType problem_float_dtype(const Problem& problem);

// The trusted side of a check, on either backend: each case's inputs, golden and reference.
class CaseOracle {
public:
  virtual ~CaseOracle() = default;
  // Inputs, golden and reference of one case. Throws SpecError for the problem's faults.
  virtual CaseData prepare(const Case& c) = 0;
};

class Oracle final : public CaseOracle {
public:
  // Compiles the reference (and the golden when `need_golden`) and the builtin kernels. Throws
  // SpecError when the reference or golden does not compile or its plan does not fit its
  // kernels' signatures; CompileError never escapes.
  Oracle(const Problem& problem, const CudaContext& context, const CompileOptions& compile,
         bool need_golden);
  ~Oracle() override;

  CaseData prepare(const Case& c) override;

  // Bench on the GPU: case `c` with its inputs drawn afresh for `visit` (StreamId::visit; the
  // check's are visit 0), the golden and the reference made on the device (on the host too only
  // with `host_copies`, for outputs the GPU comparator does not judge), and the reference's run
  // timed like the candidate's (poison, L2 flush, its launches between two events) into
  // reference_ms. The reference's own checks (inputs left intact, every output written) ran on
  // this shape in the check and are not repeated.
  CaseData prepare_visit(const Case& c, std::uint32_t visit, bool host_copies);
  // Bench on the GPU: from now on every visit also times the problem's timed baseline (its
  // plan compiled here, or cuBLAS opened). Returns why it cannot be (cuBLAS missing: the bench
  // goes on without it), nullopt when it is ready or the problem has none. Throws SpecError
  // when the baseline's plan does not compile or fit its kernels.
  std::optional<std::string> enable_baseline();
  // cuBLAS on the oracle's stream, opened on first use; null with the reason in *why.
  Cublas* cublas(std::string* why);
  // Bytes written by each L2 flush: twice the L2, so nothing of a sample's inputs survives.
  std::size_t flush_bytes() const;
  // Write flush_bytes() bytes on the stream (the oracle's own buffer).
  void flush_l2();

  const BuiltinKernels& builtins() const { return *builtins_; }
  const CudaContext& context() const { return context_; }
  // Where the runs' output copies come from (RunOutcome::device_outputs).
  BufferPool& output_pool() const { return *output_pool_; }

private:
  struct Module;
  // One build of a trusted plan's source (`role`: "reference", "golden", "baseline"); SpecError
  // when it does not compile or load, or a kernel's parameters cannot be planned.
  static std::unique_ptr<Module> compile_trusted(const KernelSource& src,
                                                 const std::vector<std::string>& expressions,
                                                 const CompileOptions& compile,
                                                 const std::string& role);
  // `timed` (a bench visit): its launches between two events, their time in *timed_ms.
  void run_plan(const CompiledPlan& plan, const Module& module, const CaseData& data,
                const std::vector<CUdeviceptr>& inputs, const std::vector<CUdeviceptr>& outputs,
                const std::string& role, const std::string& case_id,
                double* timed_ms = nullptr);
  // A bench visit (`visit`): no checks of the plan's inputs and outputs, host copies only with
  // `host_copies`, the reference's run timed after an L2 flush.
  struct Visit {
    bool host_copies = false;
  };
  void produce(const CompiledPlan& plan, const Module& module, CaseData& data, bool golden,
               const std::string& case_id, const Visit* visit = nullptr);
  // The case's inputs for visit `visit_id`, then its golden and reference (`visit`: as a bench
  // visit makes them; null: as the check does).
  CaseData make_case(const Case& c, std::uint32_t visit_id, const Visit* visit);
  // Private copies of the case's master inputs, as a plan sees them: float tensors widened to
  // f64 for the golden.
  std::vector<DeviceBuffer> private_inputs(const CaseData& data, bool golden) const;
  // Output `o`'s buffer as run `run` (0 or 1) finds it: zeros for an init = "zero" output, else
  // that run's poison.
  void prepare_output(std::size_t o, CUdeviceptr ptr, DType dtype, const Shape& shape,
                      int run) const;
  // A visit's baseline run: on private copies of the inputs, after an L2 flush, timed.
  void time_baseline(CaseData& data, const std::string& case_id);
  CaseData make_inputs(const Case& c, std::uint32_t visit);

  const Problem& problem_;
  const CudaContext& context_;
  CompileOptions compile_;
  std::unique_ptr<BuiltinKernels> builtins_;
  std::shared_ptr<BufferPool> output_pool_ = BufferPool::make(std::size_t{1} << 30);
  std::unique_ptr<Module> reference_module_, golden_module_;
  CompiledPlan reference_, golden_;
  bool need_golden_;
  DeviceBuffer flush_; // flush_l2's target, made on first use
  // The timed baseline, once enable_baseline made it ready: its plan, or cuBLAS.
  bool baseline_ready_ = false;
  std::unique_ptr<Module> baseline_module_;
  CompiledPlan baseline_;
  std::unique_ptr<Cublas> cublas_;
  std::string cublas_error_;
};

} // namespace kj::judge
