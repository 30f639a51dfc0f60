// The oracle (oracle.hpp): reference and golden compiled in this process, and per case the
// master inputs, the golden's and the reference's outputs. The reference and the golden work on
// private copies of the master (widened to f64 for the golden's float tensors), so even a
// reference that writes its inputs cannot change what the candidate is given; such a reference,
// one that leaves poison in an output, or one that crashes, is reported as the problem's fault.
// For the GPU bench it also times the problem's timed baseline on each visit: a trusted plan
// built like the reference, or cuBLAS (kjudge/cublas.hpp).
#include "judge/cuda/cuda_oracle.hpp"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "judge/findings.hpp"
#include "judge/defences.hpp"
#include "launch/launch.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/error.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/lex.hpp"

namespace kj::judge {

struct CudaOracle::Module {
  std::unique_ptr<CudaLibrary> library;
  std::map<std::string, CUfunction> functions; // by lowered name
  std::map<std::string, PlanKernel> kernels;   // by expression
  std::string build_key;                       // CompiledModule::cache_key
};

CudaOracle::CudaOracle(const Problem& problem, const CudaContext& context,
                       const CompileOptions& compile, bool need_golden)
    : problem_(problem), context_(context), compile_(compile), need_golden_(need_golden) {
  builtins_ = std::make_unique<BuiltinKernels>(compile);

  const std::string float_type(dtype_cxx_name(problem_float_dtype(problem)));
  reference_.launches = instantiate_plan(problem.reference, float_type);
  reference_.context = oracle_plan_context(problem, "reference", false, context.info());
  const KernelSource& golden_src = problem.golden ? *problem.golden : problem.reference;
  if (need_golden) {
    golden_.launches = instantiate_plan(golden_src, "double");
    golden_.context = oracle_plan_context(problem, "golden", true, context.info());
  }

  const ReferenceBuilds builds =
      reference_builds(problem, reference_, need_golden ? &golden_ : nullptr);
  reference_module_ = compile_trusted(problem.reference, builds.reference, compile, "reference");
  if (!builds.golden.empty())
    golden_module_ = compile_trusted(golden_src, builds.golden, compile, "golden");
  bind_plan(reference_, reference_module_->kernels, problem.reference);
  if (need_golden)
    bind_plan(golden_, (golden_module_ ? *golden_module_ : *reference_module_).kernels, golden_src);
}

std::unique_ptr<CudaOracle::Module> CudaOracle::compile_trusted(const KernelSource& src,
                                                       const std::vector<std::string>& expressions,
                                                       const CompileOptions& compile,
                                                       const std::string& role) {
  auto module = std::make_unique<Module>();
  CompiledModule compiled;
  try {
    compiled = compile_module(src.text, src.path.filename().string(), expressions, compile);
  } catch (const CompileError& e) {
    throw SpecError(file_location(src.path), fmt::format("the {} does not compile: {}\n{}", role,
                                                         e.what(), first_lines(e.log(), 20)));
  }
  module->build_key = compiled.cache_key;
  try {
    module->library = std::make_unique<CudaLibrary>(compiled.cubin);
  } catch (const CudaError& e) {
    throw SpecError(file_location(src.path),
                    fmt::format("the {}'s compiled module does not load: {}", role, e.what()));
  }
  for (const KernelSymbol& k : compiled.kernels) {
    const CUfunction f = module->library->function(k.lowered);
    module->functions[k.lowered] = f;
    const KernelInfo info = kernel_info(k, kernel_attributes(f));
    try {
      module->kernels[k.expression] = plan_kernel(info, kernel_param_types(info, src.text));
    } catch (const PlanError& e) {
      throw SpecError(file_location(src.path), e.what());
    }
  }
  return module;
}

CudaOracle::~CudaOracle() = default;

void CudaOracle::run_plan(const CompiledPlan& plan, const Module& module, const CaseData& data,
                      const std::vector<CUdeviceptr>& inputs,
                      const std::vector<CUdeviceptr>& outputs, const std::string& role,
                      const std::string& case_id, double* timed_ms) {
  std::vector<LaunchRequest> launches;
  try {
    launches = marshal_launches(plan.launches, plan.per_launch, plan.context, data.env);
  } catch (const PlanError& e) {
    throw SpecError({}, fmt::format("case {}: {}", case_id, e.what()));
  }
  std::map<std::string, CUdeviceptr> pointers;
  for (std::size_t i = 0; i < problem_.inputs.size(); ++i)
    pointers[problem_.inputs[i].name] = inputs[i];
  for (std::size_t o = 0; o < problem_.outputs.size(); ++o)
    pointers[problem_.outputs[o].name] = outputs[o];
  // The stages between the plan's launches: buffers of the oracle's own, poisoned.
  std::vector<DeviceBuffer> stages;
  for (const StageSpec& s : problem_.stages) {
    const DType dtype = role == "golden" ? DType::f64 : s.dtype;
    const std::size_t bytes = tensor_bytes(dtype, eval_shape(s.shape, data.env, s.name, s.where));
    stages.emplace_back(std::max<std::size_t>(bytes, 1));
    builtins_->fill_pattern(stages.back().ptr(), bytes, poison_pattern(0, dtype), context_.stream());
    pointers[s.name] = stages.back().ptr();
  }
  std::size_t failed = 0;
  try {
    std::optional<CudaEvent> start, end;
    if (timed_ms) {
      start.emplace();
      end.emplace();
      start->record(context_.stream());
    }
    launch_all(launches, module.functions, pointers, context_.stream(), &failed);
    if (timed_ms) {
      end->record(context_.stream());
      *timed_ms = CudaEvent::elapsed_ms(*start, *end);
    }
    context_.synchronize();
  } catch (const CudaError& e) {
    const std::string where =
        failed < launches.size() ? launches[failed].label : std::string("after its launches");
    throw SpecError({},
                    fmt::format("case {}: the {} fails at {}: {}{}", case_id, role, where, e.name(),
                                e.sticky() ? " (the oracle's CUDA context is lost)" : ""));
  }
}

void CudaOracle::make_plan_outputs(const CompiledPlan& plan, const Module& module, CaseData& data,
                                   bool golden, const std::string& case_id, const Visit* visit) {
  const CUstream stream = context_.stream();
  const std::string role = golden ? "golden" : "reference";
  const std::size_t n_in = problem_.inputs.size(), n_out = problem_.outputs.size();

  const std::vector<DeviceBuffer> inputs = private_inputs(data, golden);
  // What `inputs` must still hold afterwards.
  const std::vector<DeviceBuffer> pristine =
      visit ? std::vector<DeviceBuffer>{} : private_inputs(data, golden);
  std::vector<CUdeviceptr> input_ptrs;
  for (const auto& b : inputs)
    input_ptrs.push_back(b.ptr());

  auto dtype_of = [&](std::size_t o) { return plan_output_dtype(o, golden); };
  std::vector<DeviceBuffer> outputs;
  std::vector<CUdeviceptr> output_ptrs;
  for (std::size_t o = 0; o < n_out; ++o) {
    outputs.emplace_back(
        std::max<std::size_t>(tensor_bytes(dtype_of(o), data.output_shapes[o]), 1));
    output_ptrs.push_back(outputs.back().ptr());
  }
  auto fill_outputs = [&](int run) {
    for (std::size_t o = 0; o < n_out; ++o)
      prepare_output(o, output_ptrs[o], dtype_of(o), data, run);
  };
  auto read_outputs = [&] { return outputs_on_host(outputs, data, golden); };

  fill_outputs(0);
  if (visit) {
    // Timed as the candidate's runs are (the golden's run is not timed, nor flushed).
    double ms = 0;
    if (!golden) flush_l2();
    run_plan(plan, module, data, input_ptrs, output_ptrs, role, case_id, golden ? nullptr : &ms);
    if (visit->host_copies) keep_host_copies(data, golden, read_outputs());
    if (!golden) data.reference_ms = ms;
    (golden ? data.device_golden : data.device_reference) = std::move(outputs);
    return;
  }
  context_.synchronize();
  const auto start = std::chrono::steady_clock::now();
  {
    const PhaseTrace::Scope timed(trace_, golden ? "oracle: golden run" : "oracle: reference run");
    run_plan(plan, module, data, input_ptrs, output_ptrs, role, case_id);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PhaseTrace::Scope checks(trace_, "oracle: input and poison checks (device)");

  // Its inputs as they were, and every output written: counted where they lie, so a case's
  // tensors reach the host only when a host comparison needs them (complete_host_copies).
  std::vector<BuiltinKernels::ByteCount> counts;
  for (std::size_t i = 0; i < n_in; ++i) {
    const std::size_t bytes =
        golden && is_float(problem_.inputs[i].dtype)
            ? static_cast<std::size_t>(checked_numel(data.input_shapes[i])) * 8
            : tensor_bytes(problem_.inputs[i].dtype, data.input_shapes[i]);
    counts.push_back(BuiltinKernels::mismatched_bytes(inputs[i].ptr(), pristine[i].ptr(), bytes));
  }
  for (std::size_t o = 0; o < n_out; ++o)
    if (problem_.outputs[o].init == InitRule::poison)
      counts.push_back(BuiltinKernels::pattern_elements(
          output_ptrs[o], checked_numel(data.output_shapes[o]), dtype_of(o),
          poison_pattern(0, dtype_of(o))));
  const std::vector<std::uint64_t> counted = builtins_->count_all(counts, stream);
  for (std::size_t i = 0; i < n_in; ++i)
    if (counted[i] > 0)
      throw SpecError({}, fmt::format("case {}: the {} writes its input '{}' ({} bytes changed)",
                                      case_id, role, problem_.inputs[i].name, counted[i]));
  const bool poison_left = std::any_of(counted.begin() + static_cast<std::ptrdiff_t>(n_in),
                                       counted.end(), [](std::uint64_t n) { return n > 0; });
  if (poison_left) {
    // Elements equal to the poison may be legitimate values: a second run with the other poison
    // decides, on the host, and its outputs (now on the device too) are the case's.
    std::vector<HostTensor> host = checked_reference_outputs(
        problem_, role, case_id, data.output_shapes, golden, read_outputs(), [&] {
          fill_outputs(1);
          run_plan(plan, module, data, input_ptrs, output_ptrs, role, case_id);
          return read_outputs();
        });
    keep_host_copies(data, golden, std::move(host));
  }
  (golden ? data.device_golden : data.device_reference) = std::move(outputs);
  if (!golden) data.reference_s = seconds;
}

void CudaOracle::keep_host_copies(const CaseData& data, bool golden,
                                  std::vector<HostTensor> host) const {
  if (golden) {
    data.golden.clear();
    for (auto& t : host)
      data.golden.push_back(t.dtype() == DType::f64 ? std::move(t) : t.converted(DType::f64));
  } else {
    data.reference = std::move(host);
  }
}

DType CudaOracle::plan_output_dtype(std::size_t o, bool golden) const {
  const DType d = problem_.outputs[o].dtype;
  return golden && is_float(d) ? DType::f64 : d;
}

std::vector<HostTensor> CudaOracle::outputs_on_host(const std::vector<DeviceBuffer>& device,
                                                    const CaseData& data, bool golden) const {
  std::vector<HostTensor> host;
  for (std::size_t o = 0; o < device.size(); ++o)
    host.push_back(to_host({device[o].ptr(), plan_output_dtype(o, golden)}, data.output_shapes[o],
                           context_.stream()));
  return host;
}

void CudaOracle::complete_host_copies(const CaseData& data) const {
  const PhaseTrace::Scope timed(trace_, "oracle: golden and reference copied to the host");
  const std::lock_guard<std::mutex> lock(*data.host_copies_mutex);
  if (data.golden.size() != data.device_golden.size())
    keep_host_copies(data, true, outputs_on_host(data.device_golden, data, true));
  if (data.reference.size() != data.device_reference.size())
    keep_host_copies(data, false, outputs_on_host(data.device_reference, data, false));
}

CaseData CudaOracle::prepare(const Case& c) { return make_case(c, 0, nullptr); }

std::vector<HostTensor> CudaOracle::reference_plan_on(const CompiledPlan& plan,
                                                      const Module& module, const Case& c,
                                                      std::vector<HostTensor> inputs) {
  CaseData data = case_frame(problem_, c);
  for (const HostTensor& t : inputs) data.master.push_back(uploaded(t));
  data.initial = initial_outputs(problem_, data, c, 0);
  upload_initial(data);
  make_plan_outputs(plan, module, data, false, c.id, nullptr);
  return outputs_on_host(data.device_reference, data, false);
}

CaseData CudaOracle::prepare_on(const Case& c, std::vector<HostTensor> inputs) {
  CaseData data = case_frame(problem_, c);
  for (const HostTensor& t : inputs) data.master.push_back(uploaded(t));
  data.initial = initial_outputs(problem_, data, c, 0);
  upload_initial(data);
  if (need_golden_)
    make_plan_outputs(golden_, golden_module_ ? *golden_module_ : *reference_module_, data, true,
                      c.id, nullptr);
  make_plan_outputs(reference_, *reference_module_, data, false, c.id, nullptr);
  return data;
}

std::vector<HostTensor> CudaOracle::reference_on(const Case& c, std::vector<HostTensor> inputs) {
  return reference_plan_on(reference_, *reference_module_, c, std::move(inputs));
}

std::optional<std::vector<HostTensor>>
CudaOracle::rounded_reference_on(const Case& c, std::vector<HostTensor> inputs,
                                 std::string_view format) {
  const CompiledPlan* plan =
      rounded_.plan(format, problem_, reference_, [&](const std::vector<std::string>& expressions) {
        return compile_trusted(problem_.reference, expressions, compile_, "reference in rounded types");
      });
  if (!plan) return std::nullopt;
  return reference_plan_on(*plan, *rounded_.module, c, std::move(inputs));
}

std::vector<HostTensor> CudaOracle::inputs_on_host(const CaseData& data) const {
  std::vector<HostTensor> host;
  for (std::size_t i = 0; i < data.master.size(); ++i)
    host.push_back(to_host({data.master[i].ptr(), problem_.inputs[i].dtype}, data.input_shapes[i],
                           context_.stream()));
  return host;
}

CaseData CudaOracle::prepare_visit(const Case& c, std::uint32_t visit, bool host_copies) {
  const Visit v{host_copies};
  return make_case(c, visit, &v);
}

CaseData CudaOracle::make_case(const Case& c, std::uint32_t visit_id, const Visit* visit) {
  CaseData data = make_inputs(c, visit_id);
  if (need_golden_)
    make_plan_outputs(golden_, golden_module_ ? *golden_module_ : *reference_module_, data, true,
                      c.id, visit);
  make_plan_outputs(reference_, *reference_module_, data, false, c.id, visit);
  if (visit && baseline_ready_) time_baseline(data, c.id);
  return data;
}

Cublas* CudaOracle::cublas(std::string* why) {
  if (!cublas_ && cublas_error_.empty())
    cublas_ = Cublas::open(context_.stream(), &cublas_error_);
  if (!cublas_ && why) *why = cublas_error_;
  return cublas_.get();
}

std::optional<std::string> CudaOracle::enable_baseline() {
  if (!problem_.timed_baseline || baseline_ready_) return std::nullopt;
  const TimedBaseline& b = *problem_.timed_baseline;
  if (b.plan) {
    baseline_.launches =
        instantiate_plan(*b.plan, dtype_cxx_name(problem_float_dtype(problem_)));
    baseline_.context = oracle_plan_context(problem_, "baseline", false, context_.info());
    std::vector<std::size_t> unused;
    baseline_module_ = compile_trusted(*b.plan, distinct_expressions(baseline_.launches, unused),
                                       compile_, "baseline");
    bind_plan(baseline_, baseline_module_->kernels, *b.plan);
  } else {
    std::string why;
    if (!cublas(&why)) return fmt::format("the baseline '{}' needs cuBLAS: {}", b.name, why);
  }
  baseline_ready_ = true;
  return std::nullopt;
}

std::vector<DeviceBuffer> CudaOracle::private_inputs(const CaseData& data, bool golden) const {
  const CUstream stream = context_.stream();
  std::vector<DeviceBuffer> copies;
  for (std::size_t i = 0; i < problem_.inputs.size(); ++i) {
    const InputSpec& in = problem_.inputs[i];
    const std::int64_t numel = checked_numel(data.input_shapes[i]);
    if (golden && is_float(in.dtype)) {
      copies.emplace_back(std::max<std::size_t>(static_cast<std::size_t>(numel) * 8, 1));
      builtins_->widen_to_f64(copies.back().ptr(), data.master[i].ptr(), in.dtype, numel, stream);
    } else {
      const std::size_t bytes = tensor_bytes(in.dtype, data.input_shapes[i]);
      copies.emplace_back(std::max<std::size_t>(bytes, 1));
      copy_device(copies.back().ptr(), data.master[i].ptr(), bytes, stream);
    }
  }
  return copies;
}

void CudaOracle::prepare_output(std::size_t o, CUdeviceptr ptr, DType dtype, const CaseData& data,
                                int run) const {
  const OutputSpec& spec = problem_.outputs[o];
  const std::size_t bytes = tensor_bytes(dtype, data.output_shapes[o]);
  switch (spec.init) {
  case InitRule::zero:
    fill_bytes(ptr, 0, bytes, context_.stream());
    break;
  case InitRule::poison:
    builtins_->fill_pattern(ptr, bytes, poison_pattern(run, dtype), context_.stream());
    break;
  case InitRule::drawn:
    if (dtype == spec.dtype)
      copy_device(ptr, data.device_initial[o].ptr(), bytes, context_.stream());
    else // the golden's f64 copy
      builtins_->widen_to_f64(ptr, data.device_initial[o].ptr(), spec.dtype,
                              checked_numel(data.output_shapes[o]), context_.stream());
    break;
  }
}

void CudaOracle::time_baseline(CaseData& data, const std::string& case_id) {
  const TimedBaseline& b = *problem_.timed_baseline;
  const CUstream stream = context_.stream();
  // Private copies of the inputs: the master stays untouched whatever the baseline does.
  const std::vector<DeviceBuffer> inputs = private_inputs(data, false);
  std::vector<CUdeviceptr> input_ptrs;
  for (const auto& buffer : inputs)
    input_ptrs.push_back(buffer.ptr());
  std::vector<PooledBuffer> outputs;
  std::vector<CUdeviceptr> output_ptrs;
  for (std::size_t o = 0; o < problem_.outputs.size(); ++o) {
    const DType dtype = problem_.outputs[o].dtype;
    outputs.push_back(
        output_pool_->take(std::max<std::size_t>(tensor_bytes(dtype, data.output_shapes[o]), 1)));
    output_ptrs.push_back(outputs.back().ptr());
    prepare_output(o, output_ptrs.back(), dtype, data, 0);
  }
  flush_l2();
  double ms = 0;
  if (b.plan) {
    run_plan(baseline_, *baseline_module_, data, input_ptrs, output_ptrs, "baseline", case_id,
             &ms);
  } else {
    const GemmCall call = b.gemm_call(data.env);
    auto pointer_of = [&](const std::string& name) {
      for (std::size_t i = 0; i < problem_.inputs.size(); ++i)
        if (problem_.inputs[i].name == name) return input_ptrs[i];
      for (std::size_t o = 0; o < problem_.outputs.size(); ++o)
        if (problem_.outputs[o].name == name) return output_ptrs[o];
      throw InternalError("a built-in baseline's tensor was checked at load");
    };
    const DType operand = problem_.find_input(call.tensors[0])->dtype;
    const DType result = problem_.find_output(call.tensors[2])->dtype;
    CudaEvent start, end;
    start.record(stream);
    cublas_->gemm(pointer_of(call.tensors[0]), pointer_of(call.tensors[1]),
                  pointer_of(call.tensors[2]), operand, result, call.m, call.n, call.k);
    end.record(stream);
    ms = CudaEvent::elapsed_ms(start, end);
  }
  data.baseline_ms = ms;
  data.device_baseline = std::move(outputs);
}

std::size_t CudaOracle::flush_bytes() const {
  return 2 * static_cast<std::size_t>(std::max(context_.info().l2_bytes, 1 << 20));
}

void CudaOracle::flush_l2() {
  if (flush_.bytes() == 0) flush_ = DeviceBuffer(flush_bytes());
  fill_u32(flush_.ptr(), 0, flush_.bytes() / 4, context_.stream());
}

CaseData CudaOracle::make_inputs(const Case& c, std::uint32_t visit) {
  CaseData data = case_frame(problem_, c);
  const CUstream stream = context_.stream();
  const SpecialValues* special = c.special ? &*c.special : nullptr;
  for (std::size_t i = 0; i < problem_.inputs.size(); ++i) {
    const InputSpec& in = problem_.inputs[i];
    const Shape& shape = data.input_shapes[i];
    const std::int64_t numel = checked_numel(shape);
    const std::size_t bytes = tensor_bytes(in.dtype, shape);
    // An allocation of at least one byte, so even an empty tensor can be staged and exported.
    DeviceBuffer master(std::max<std::size_t>(bytes, 1));
    const StreamId stream_id{c.seed, static_cast<std::uint32_t>(i), visit};
    if (in.dist.kind == Distribution::Kind::file) {
      const HostTensor t = generate_input(in, shape, stream_id, c.transform, special, problem_.dir);
      copy_to_device(master.ptr(), t.bytes().data(), t.nbytes(), stream);
      context_.synchronize(); // `t` goes out of scope
    } else {
      builtins_->generate(master.ptr(), in, numel, stream_id, c.transform, special, stream);
    }
    data.master.push_back(std::move(master));
  }
  data.initial = initial_outputs(problem_, data, c, visit);
  upload_initial(data);
  context_.synchronize();
  return data;
}

DeviceBuffer CudaOracle::uploaded(const HostTensor& t) const {
  DeviceBuffer b(std::max<std::size_t>(t.nbytes(), 1));
  if (t.nbytes() > 0) copy_to_device(b.ptr(), t.bytes().data(), t.nbytes(), context_.stream());
  return b;
}

void CudaOracle::upload_initial(CaseData& data) const {
  for (const HostTensor& t : data.initial)
    data.device_initial.push_back(uploaded(t));
}

std::string CudaOracle::builds_identity() const {
  return fmt::format("reference {} golden {}", reference_module_->build_key,
                     golden_module_ ? golden_module_->build_key : "-");
}

std::string CudaOracle::encode_case(const CaseData& data) const {
  std::vector<HostTensor> master;
  for (std::size_t i = 0; i < problem_.inputs.size(); ++i)
    master.push_back(to_host({data.master[i].ptr(), problem_.inputs[i].dtype},
                             data.input_shapes[i], context_.stream()));
  return encode_case_image(data, master, outputs_on_host(data.device_golden, data, true),
                           outputs_on_host(data.device_reference, data, false));
}

std::optional<CaseData> CudaOracle::decode_case(CaseImage image) const {
  const std::size_t n_out = problem_.outputs.size();
  if (image.golden.size() != (need_golden_ ? n_out : 0)) return std::nullopt;
  for (std::size_t o = 0; o < n_out; ++o)
    if (image.reference[o].dtype() != plan_output_dtype(o, false) ||
        (need_golden_ && image.golden[o].dtype() != plan_output_dtype(o, true)))
      return std::nullopt;
  CaseData data = std::move(image.frame);
  for (const HostTensor& t : image.master)
    data.master.push_back(uploaded(t));
  upload_initial(data);
  for (const HostTensor& t : image.golden)
    data.device_golden.push_back(uploaded(t));
  for (const HostTensor& t : image.reference)
    data.device_reference.push_back(uploaded(t));
  context_.synchronize(); // the host tensors go out of scope
  return data;
}

} // namespace kj::judge
