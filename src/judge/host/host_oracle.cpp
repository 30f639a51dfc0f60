// The host backend's oracle (host_oracle.hpp): inputs from the host generator, the golden and
// the reference launched in this process. Like the GPU oracle, the golden and the reference
// work on private copies of the master, and a reference that writes its inputs or leaves an
// output unwritten is reported as the problem's fault.
#include "judge/host/host_oracle.hpp"

#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "judge/findings.hpp"
#include "judge/defences.hpp"
#include "launch/launch.hpp"
#include "kjudge/error.hpp"
#include "kjudge/inputs.hpp"

namespace kj::judge {


DeviceInfo host_device_info() {
  DeviceInfo d;
  d.name = "host (CPU)";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647, 65535, 65535};
  d.max_shared_per_block_optin = 227 * 1024;
  return d;
}

void read_symbols(const std::vector<KernelSymbol>& symbols, std::string_view source,
                  HostBuiltModule& out) {
  out.kernels.clear();
  out.index.clear();
  out.lowered.clear();
  for (std::size_t k = 0; k < symbols.size(); ++k) {
    const KernelInfo info = kernel_info(symbols[k], KernelAttributes{});
    out.kernels[symbols[k].expression] = plan_kernel(info, kernel_param_types(info, source));
    out.index[symbols[k].lowered] = static_cast<int>(k);
    out.lowered.push_back(symbols[k].lowered);
  }
}

std::optional<std::string> unsupported_launch(const std::vector<LaunchSpec>& launches) {
  for (const LaunchSpec& l : launches)
    if (!l.cluster.empty() || l.cooperative)
      return fmt::format("unsupported on host backend: a {} launch of '{}' at {}",
                         l.cooperative ? "cooperative" : "thread-block cluster", l.kernel,
                         l.where.describe());
  return std::nullopt;
}

std::unique_ptr<HostBuiltModule> HostOracle::build(const KernelSource& src,
                                                  const std::vector<std::string>& expressions,
                                                  const std::string& role) const {
  auto built = std::make_unique<HostBuiltModule>();
  const std::string file = src.path.filename().string();
  try {
    const CompiledModule compiled = compile_module(src.text, file, expressions, nvrtc_);
    read_symbols(compiled.kernels, src.text, *built);
  } catch (const CompileError& e) {
    throw SpecError(file_location(src.path), fmt::format("the {} does not compile: {}\n{}", role,
                                                         e.what(), first_lines(e.log(), 20)));
  } catch (const PlanError& e) {
    throw SpecError(file_location(src.path), e.what());
  }
  try {
    built->shared_object = build_host_module(src.text, file, expressions, host_compile_);
    built->module = std::make_unique<HostModule>(built->shared_object);
  } catch (const CompileError& e) {
    throw SpecError(file_location(src.path),
                    fmt::format("the {} does not compile for the host backend: {}\n{}", role,
                                e.what(), first_lines(e.log(), 20)));
  }
  return built;
}

HostOracle::HostOracle(const Problem& problem, const CompileOptions& nvrtc,
                       const HostCompileOptions& host, bool need_golden)
    : problem_(problem), need_golden_(need_golden), nvrtc_(nvrtc), host_compile_(host) {
  const DeviceInfo device = host_device_info();
  if (auto why = unsupported_launch(problem.reference.launches)) throw UnsupportedOnHost(*why);
  const std::string float_type(dtype_cxx_name(problem_float_dtype(problem)));
  reference_.launches = instantiate_plan(problem.reference, float_type);
  reference_.context = oracle_plan_context(problem, "reference", false, device);
  const KernelSource& golden_src = problem.golden ? *problem.golden : problem.reference;
  if (need_golden) {
    golden_.launches = instantiate_plan(golden_src, "double");
    golden_.context = oracle_plan_context(problem, "golden", true, device);
  }

  const ReferenceBuilds builds =
      reference_builds(problem, reference_, need_golden ? &golden_ : nullptr);
  reference_module_ = build(problem.reference, builds.reference, "reference");
  if (!builds.golden.empty()) golden_module_ = build(golden_src, builds.golden, "golden");
  bind_plan(reference_, reference_module_->kernels, problem.reference);
  if (need_golden)
    bind_plan(golden_, (golden_module_ ? *golden_module_ : *reference_module_).kernels, golden_src);
}

HostOracle::~HostOracle() = default;

void HostOracle::make_plan_outputs(const CompiledPlan& plan, const HostBuiltModule& module,
                                   CaseData& data, bool golden, const std::string& case_id,
                                   int timed_runs) const {
  const std::string role = golden ? "golden" : "reference";
  const std::size_t n_in = problem_.inputs.size(), n_out = problem_.outputs.size();
  std::vector<LaunchRequest> launches;
  try {
    launches = marshal_launches(plan.launches, plan.per_launch, plan.context, data.env);
  } catch (const PlanError& e) {
    throw SpecError({}, fmt::format("case {}: {}", case_id, e.what()));
  }

  // Private copies of the master, as this plan sees the inputs.
  std::vector<HostTensor> inputs;
  for (std::size_t i = 0; i < n_in; ++i) {
    const HostTensor& master = data.host_master[i];
    inputs.push_back(golden && is_float(master.dtype()) ? master.converted(DType::f64) : master);
  }
  const std::vector<HostTensor> pristine = inputs;
  auto dtype_of = [&](std::size_t o) {
    const DType d = problem_.outputs[o].dtype;
    return golden && is_float(d) ? DType::f64 : d;
  };
  std::vector<HostTensor> outputs;
  for (std::size_t o = 0; o < n_out; ++o)
    outputs.emplace_back(dtype_of(o), data.output_shapes[o]);
  std::vector<HostTensor> stages = stage_buffers(problem_, data.env, golden);

  // One run on fresh poison; returns its launches' CPU time (bench's reference timing).
  auto run = [&](int poison_run) {
    std::map<std::string, void*> pointers;
    for (std::size_t i = 0; i < n_in; ++i)
      pointers[problem_.inputs[i].name] = inputs[i].bytes().data();
    for (std::size_t o = 0; o < n_out; ++o) {
      HostTensor& t = outputs[o];
      switch (problem_.outputs[o].init) {
      case InitRule::zero:
        std::memset(t.bytes().data(), 0, t.nbytes());
        break;
      case InitRule::poison:
        fill_pattern(t.bytes(), poison_pattern(poison_run, dtype_of(o)));
        break;
      case InitRule::drawn:
        t = t.dtype() == data.initial[o].dtype() ? data.initial[o]
                                                 : data.initial[o].converted(t.dtype());
        break;
      }
      pointers[problem_.outputs[o].name] = t.bytes().data();
    }
    for (std::size_t s = 0; s < stages.size(); ++s) {
      fill_pattern(stages[s].bytes(), poison_pattern(poison_run, stages[s].dtype()));
      pointers[problem_.stages[s].name] = stages[s].bytes().data();
    }
    double cpu_ms = 0;
    const std::string failed =
        launch_on_host(*module.module, module.index, launches, pointers, &cpu_ms);
    if (!failed.empty())
      throw SpecError({}, fmt::format("case {}: the {} fails at {}", case_id, role, failed));
    return cpu_ms;
  };

  // The reference's CPU time (summed over the CPU threads that ran its blocks), from which the
  // candidate's deadline, in the worker's CPU time, is derived: neither moves with the machine's
  // load, as wall-clock time would.
  const double seconds = run(0) / 1e3;
  for (std::size_t i = 0; i < n_in; ++i) {
    const std::uint64_t changed = count_changed_bytes(inputs[i].bytes(), pristine[i].bytes());
    if (changed > 0)
      throw SpecError({}, fmt::format("case {}: the {} writes its input '{}' ({} bytes changed)",
                                      case_id, role, problem_.inputs[i].name, changed));
  }

  std::vector<double> timed;
  for (int k = 0; k < timed_runs; ++k)
    timed.push_back(run(0));

  // A copy of the first run's outputs: a second run refills `outputs` in place.
  outputs = checked_reference_outputs(problem_, role, case_id, data.output_shapes, golden, outputs,
                                     [&] {
                                       run(1);
                                       return outputs;
                                     });

  if (golden) {
    data.golden.clear();
    for (auto& t : outputs)
      data.golden.push_back(t.dtype() == DType::f64 ? std::move(t) : t.converted(DType::f64));
  } else {
    data.reference = std::move(outputs);
    data.reference_s = seconds;
    data.reference_cpu_ms = std::move(timed);
  }
}

std::string HostOracle::builds_identity() const {
  return fmt::format("reference {} golden {}", reference_module_->shared_object.filename().string(),
                     golden_module_ ? golden_module_->shared_object.filename().string() : "-");
}

CaseData HostOracle::prepare(const Case& c) {
  return prepare_visit(c, 0, c.case_class() == "public" ? timed_runs_ : 0);
}

std::optional<CaseData> HostOracle::prepare_timed_visit(const Case& c, std::uint32_t visit) {
  return prepare_visit(c, visit, 0);
}

CaseData HostOracle::prepare_visit(const Case& c, std::uint32_t visit, int timed_runs) {
  CaseData data = case_frame(problem_, c);
  const SpecialValues* special = c.special ? &*c.special : nullptr;
  for (std::size_t i = 0; i < problem_.inputs.size(); ++i) {
    const StreamId stream_id{c.seed, static_cast<std::uint32_t>(i), visit};
    data.host_master.push_back(generate_input(problem_.inputs[i], data.input_shapes[i], stream_id,
                                              c.transform, special, problem_.dir));
  }
  data.initial = initial_outputs(problem_, data, c, visit);
  if (need_golden_)
    make_plan_outputs(golden_, golden_module_ ? *golden_module_ : *reference_module_, data, true,
                      c.id, 0);
  make_plan_outputs(reference_, *reference_module_, data, false, c.id, timed_runs);
  return data;
}

CaseData HostOracle::prepare_on(const Case& c, std::vector<HostTensor> inputs) {
  CaseData data = case_frame(problem_, c);
  data.host_master = std::move(inputs);
  data.initial = initial_outputs(problem_, data, c, 0);
  if (need_golden_)
    make_plan_outputs(golden_, golden_module_ ? *golden_module_ : *reference_module_, data, true,
                      c.id, 0);
  make_plan_outputs(reference_, *reference_module_, data, false, c.id, 0);
  return data;
}

std::vector<HostTensor> HostOracle::reference_plan_on(const CompiledPlan& plan,
                                                      const HostBuiltModule& module, const Case& c,
                                                      std::vector<HostTensor> inputs) const {
  CaseData data = case_frame(problem_, c);
  data.host_master = std::move(inputs);
  data.initial = initial_outputs(problem_, data, c, 0);
  make_plan_outputs(plan, module, data, false, c.id, 0);
  return std::move(data.reference);
}

std::vector<HostTensor> HostOracle::reference_on(const Case& c, std::vector<HostTensor> inputs) {
  return reference_plan_on(reference_, *reference_module_, c, std::move(inputs));
}

std::optional<std::vector<HostTensor>>
HostOracle::rounded_reference_on(const Case& c, std::vector<HostTensor> inputs,
                                 std::string_view format) {
  const CompiledPlan* plan =
      rounded_.plan(format, problem_, reference_, [&](const std::vector<std::string>& expressions) {
        return build(problem_.reference, expressions, "reference in rounded types");
      });
  if (!plan) return std::nullopt;
  return reference_plan_on(*plan, *rounded_.module, c, std::move(inputs));
}

} // namespace kj::judge
