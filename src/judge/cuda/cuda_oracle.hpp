// The CUDA backend's oracle: each case's master inputs made on the device, the golden (the
// reference template in double, inputs widened exactly) and the same-precision reference run on
// private copies of them, the results kept on the device for the GPU comparator and on the host
// for the host's. None of its allocations is ever exported to a worker.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "judge/case_disk_cache.hpp"
#include "judge/case_oracle.hpp"
#include "judge/cuda/buffer_pool.hpp"
#include "judge/trace.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/cublas.hpp"

namespace kj::judge {

class CudaOracle final : public CaseOracle {
public:
  // Compiles the reference (and the golden when `need_golden`) and the builtin kernels. Throws
  // SpecError when the reference or golden does not compile or its plan does not fit its
  // kernels' signatures; CompileError never escapes.
  CudaOracle(const Problem& problem, const CudaContext& context, const CompileOptions& compile,
         bool need_golden);
  ~CudaOracle() override;

  CaseData prepare(const Case& c) override;
  std::vector<HostTensor> reference_on(const Case& c, std::vector<HostTensor> inputs) override;
  CaseData prepare_on(const Case& c, std::vector<HostTensor> inputs) override;
  std::optional<std::vector<HostTensor>> rounded_reference_on(const Case& c,
                                                              std::vector<HostTensor> inputs,
                                                              std::string_view format) override;
  std::string rounded_unavailable() const override { return rounded_.plans.unavailable; }
  std::vector<HostTensor> inputs_on_host(const CaseData& data) const override;

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

  // The case's golden and reference on the host (data.golden, data.reference), copied from the
  // device where they are not there yet: a check makes them on the device only, and the host
  // comparator (a case whose runs differ, an integer output) asks for them first. Only the
  // thread that owns the CUDA context calls it, before handing the case to another thread.
  void complete_host_copies(const CaseData& data) const;

  // The on-disk case cache (judge/case_disk_cache.hpp). The reference's and golden's builds by
  // their NVRTC keys (the compiler, the headers, the options and architecture, the source).
  std::string builds_identity() const;
  // The case's bytes: its master inputs, golden and reference downloaded (the golden in the
  // plan's dtypes, f64 for float outputs), with the rest of encode_case_image's fields.
  std::string encode_case(const CaseData& data) const;
  // The case back on the device (master, initial values, golden, reference uploaded; the host
  // copies of golden and reference made lazily as for a fresh case); nullopt when the image's
  // dtypes are not this oracle's.
  std::optional<CaseData> decode_case(CaseImage image) const;

  // Where the oracle's time goes (KJUDGE_TRACE=1): its phases are added to `trace`.
  void set_trace(PhaseTrace* trace) { trace_ = trace; }

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
  void make_plan_outputs(const CompiledPlan& plan, const Module& module, CaseData& data,
                         bool golden, const std::string& case_id, const Visit* visit = nullptr);
  // Output o's dtype in the golden's plan (f64 for float outputs) or the reference's.
  DType plan_output_dtype(std::size_t o, bool golden) const;
  // A plan's outputs (`device`, one buffer per output) copied to the host.
  std::vector<HostTensor> outputs_on_host(const std::vector<DeviceBuffer>& device,
                                          const CaseData& data, bool golden) const;
  // Host copies of the golden's (f64 for float outputs) or the reference's outputs kept.
  void keep_host_copies(const CaseData& data, bool golden, std::vector<HostTensor> host) const;
  // The case's inputs for visit `visit_id`, then its golden and reference (`visit`: as a bench
  // visit makes them; null: as the check does).
  CaseData make_case(const Case& c, std::uint32_t visit_id, const Visit* visit);
  // Private copies of the case's master inputs, as a plan sees them: float tensors widened to
  // f64 for the golden.
  std::vector<DeviceBuffer> private_inputs(const CaseData& data, bool golden) const;
  // Output `o`'s buffer (in `dtype`: f64 for the golden's float outputs) as run `run` (0 or 1)
  // finds it: zeros for an init = "zero" output, an in-out tensor's initial values, else that
  // run's poison.
  void prepare_output(std::size_t o, CUdeviceptr ptr, DType dtype, const CaseData& data,
                      int run) const;
  // A visit's baseline run: on private copies of the inputs, after an L2 flush, timed.
  void time_baseline(CaseData& data, const std::string& case_id);
  CaseData make_inputs(const Case& c, std::uint32_t visit);
  // data.device_initial from data.initial (one buffer per output, at least a byte).
  void upload_initial(CaseData& data) const;
  // A host tensor's copy on the device (at least a byte, so even an empty one has an address).
  DeviceBuffer uploaded(const HostTensor& t) const;
  // `plan` (the reference's or a rounded one) run on `inputs` for case `c`: reference_on.
  std::vector<HostTensor> reference_plan_on(const CompiledPlan& plan, const Module& module,
                                            const Case& c, std::vector<HostTensor> inputs);

  const Problem& problem_;
  const CudaContext& context_;
  CompileOptions compile_;
  std::unique_ptr<BuiltinKernels> builtins_;
  std::shared_ptr<BufferPool> output_pool_ = BufferPool::make(std::size_t{1} << 30);
  std::unique_ptr<Module> reference_module_, golden_module_;
  CompiledPlan reference_, golden_;
  bool need_golden_;
  // The rounded references (rounded_reference_on), built on first use.
  RoundedReferences<Module> rounded_;
  DeviceBuffer flush_; // flush_l2's target, made on first use
  // The timed baseline, once enable_baseline made it ready: its plan, or cuBLAS.
  bool baseline_ready_ = false;
  std::unique_ptr<Module> baseline_module_;
  CompiledPlan baseline_;
  std::unique_ptr<Cublas> cublas_;
  std::string cublas_error_;
  PhaseTrace* trace_ = nullptr;
};

} // namespace kj::judge
