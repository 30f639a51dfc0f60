// What every backend's oracle shares (case_oracle.hpp): the trusted plans instantiated and bound
// to their builds, the reference's outputs checked for poison, a case's frame.
#include "judge/case_oracle.hpp"

#include <fmt/format.h>

#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "kjudge/error.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/lex.hpp"

namespace kj::judge {
Location file_location(const std::filesystem::path& path) {
  return Location{path.filename().string(), "", 0, 0};
}

namespace {

// Whether `kernel` (a launch's name without template arguments) is a one-parameter template in
// `source`, which the reference may launch bare ("softmax_ref" for "softmax_ref<T>").
bool bare_one_parameter_template(std::string_view source, std::string_view kernel) {
  if (kernel.find('<') != std::string_view::npos) return false;
  const auto colons = kernel.rfind("::");
  const std::string_view name =
      colons == std::string_view::npos ? kernel : kernel.substr(colons + 2);
  const lex::LexResult lexed = lex::tokenize(source);
  for (const lex::Function& f : lex::find_functions(source, lexed))
    if (f.kind == lex::FunctionKind::global && f.name == name)
      return f.is_template && f.template_params.size() == 1;
  return false;
}

} // namespace

std::vector<LaunchSpec> instantiate_plan(const KernelSource& src, std::string_view type) {
  std::vector<LaunchSpec> out = src.launches;
  for (LaunchSpec& l : out)
    l.kernel = instantiate_kernel(l.kernel, type,
                                  bare_one_parameter_template(src.text, l.kernel_base_name()));
  return out;
}

PlanContext oracle_plan_context(const Problem& problem, const std::string& owner, bool golden,
                                const DeviceInfo& device) {
  PlanContext ctx;
  ctx.owner = owner;
  for (const auto& in : problem.inputs)
    ctx.tensors.push_back({in.name, golden && is_float(in.dtype) ? DType::f64 : in.dtype});
  for (const auto& out : problem.outputs)
    ctx.tensors.push_back({out.name, golden && is_float(out.dtype) ? DType::f64 : out.dtype});
  for (const auto& s : problem.stages) // the oracle's own buffers between its launches
    ctx.tensors.push_back({s.name, golden ? DType::f64 : s.dtype});
  ctx.scalars = problem.scalars;
  ctx.device = device;
  return ctx;
}

std::uint64_t CaseData::input_bytes() const {
  std::uint64_t n = 0;
  for (const auto& b : master)
    n += b.bytes();
  for (const auto& t : host_master)
    n += t.nbytes();
  for (const auto& t : initial)
    n += t.nbytes();
  for (const auto& b : device_initial)
    n += b.bytes();
  return n;
}

std::uint64_t CaseData::resident_bytes() const {
  std::uint64_t n = input_bytes();
  for (const auto* tensors : {&golden, &reference})
    for (const HostTensor& t : *tensors)
      n += t.nbytes();
  for (const auto* buffers : {&device_golden, &device_reference})
    for (const DeviceBuffer& b : *buffers)
      n += b.bytes();
  if (golden.empty()) // host copies still to make
    for (const DeviceBuffer& b : device_golden)
      n += b.bytes();
  if (reference.empty())
    for (const DeviceBuffer& b : device_reference)
      n += b.bytes();
  return n;
}

std::vector<std::string> distinct_expressions(const std::vector<LaunchSpec>& launches,
                                              std::vector<std::size_t>& index_of_launch) {
  std::vector<std::string> out;
  index_of_launch.clear();
  for (const LaunchSpec& l : launches) {
    auto it = std::find(out.begin(), out.end(), l.kernel);
    if (it == out.end()) {
      out.push_back(l.kernel);
      it = out.end() - 1;
    }
    index_of_launch.push_back(static_cast<std::size_t>(it - out.begin()));
  }
  return out;
}

std::vector<HostTensor> stage_buffers(const Problem& problem, const Env& env, bool golden) {
  std::vector<HostTensor> buffers;
  for (const StageSpec& s : problem.stages)
    buffers.emplace_back(golden ? DType::f64 : s.dtype, eval_shape(s.shape, env, s.name, s.where));
  return buffers;
}

ReferenceBuilds reference_builds(const Problem& problem, const CompiledPlan& reference,
                                 const CompiledPlan* golden) {
  auto expressions_of = [](const std::vector<LaunchSpec>& launches) {
    std::vector<std::size_t> unused;
    return distinct_expressions(launches, unused);
  };
  ReferenceBuilds out;
  out.reference = expressions_of(reference.launches);
  if (!golden) return out;
  const KernelSource& golden_src = problem.golden ? *problem.golden : problem.reference;
  const bool shared_source =
      golden_src.text == problem.reference.text && golden_src.path == problem.reference.path;
  if (!shared_source) {
    out.golden = expressions_of(golden->launches);
    return out;
  }
  // One compile for both instantiations of the same template.
  for (const auto& e : expressions_of(golden->launches))
    if (std::find(out.reference.begin(), out.reference.end(), e) == out.reference.end())
      out.reference.push_back(e);
  return out;
}

RoundedPlans rounded_plans(const Problem& problem, const CompiledPlan& reference,
                           const PlanContext& context) {
  RoundedPlans out;
  if (problem_float_dtype(problem) != DType::f32) {
    out.unavailable = "only an f32 reference is built in rounded types";
    return out;
  }
  for (const std::string format : {"tf32", "bf16", "f16"}) {
    CompiledPlan plan;
    plan.launches = instantiate_plan(problem.reference, fmt::format("kj::rounded<float, kj::{}>", format));
    plan.context = context;
    for (const std::string& e : reference_builds(problem, plan, nullptr).reference)
      if (std::find(out.expressions.begin(), out.expressions.end(), e) == out.expressions.end())
        out.expressions.push_back(e);
    out.plans.emplace(format, std::move(plan));
  }
  // A reference with no template over T would run as itself: no downgrade at all.
  const CompiledPlan& any = out.plans.begin()->second;
  bool instantiated = false;
  for (std::size_t l = 0; l < any.launches.size(); ++l)
    instantiated = instantiated || any.launches[l].kernel != reference.launches[l].kernel;
  if (!instantiated) {
    out.plans.clear();
    out.expressions.clear();
    out.unavailable = "the reference's kernels are no templates over T";
  }
  return out;
}

void bind_plan(CompiledPlan& plan, const std::map<std::string, PlanKernel>& kernels,
               const KernelSource& src) {
  for (const LaunchSpec& l : plan.launches) {
    const auto it = kernels.find(l.kernel);
    KJ_EXPECTS(it != kernels.end(), "every launch's expression was compiled");
    plan.kernels.push_back(it->second);
  }
  for (const PlanKernel& k : plan.kernels)
    plan.per_launch.push_back(&k);
  try {
    check_plan_types(plan.launches, plan.per_launch, plan.context);
  } catch (const PlanError& e) {
    throw SpecError(file_location(src.path), e.what());
  }
}

std::vector<HostTensor> checked_reference_outputs(
    const Problem& problem, const std::string& role, const std::string& case_id,
    const std::vector<Shape>& shapes, bool golden, std::vector<HostTensor> first,
    const std::function<std::vector<HostTensor>()>& rerun) {
  auto pattern = [&](std::size_t o, int run) {
    const DType d = problem.outputs[o].dtype;
    return poison_pattern(run, golden && is_float(d) ? DType::f64 : d);
  };
  bool suspicious = false;
  for (std::size_t o = 0; o < first.size() && !suspicious; ++o)
    if (problem.outputs[o].init == InitRule::poison)
      suspicious = find_unwritten(first[o], pattern(o, 0), nullptr, 0).count > 0;
  if (!suspicious) return first;
  std::vector<HostTensor> again = rerun();
  for (std::size_t o = 0; o < first.size(); ++o) {
    if (problem.outputs[o].init != InitRule::poison) continue;
    const Unwritten u = find_unwritten(first[o], pattern(o, 0), &again[o], pattern(o, 1));
    if (u.count > 0)
      throw SpecError({}, fmt::format("case {}: the {} leaves {} of {} elements of output '{}' "
                                      "unwritten (first at flat index {} of {})",
                                      case_id, role, u.count, checked_numel(shapes[o]),
                                      problem.outputs[o].name, u.first.front(),
                                      shape_string(shapes[o])));
  }
  return again;
}

CaseData case_frame(const Problem& problem, const Case& c) {
  CaseData data;
  data.env = shape_env(problem, c.shapes.dims);
  for (const auto& in : problem.inputs)
    data.input_shapes.push_back(eval_shape(in.shape, data.env, in.name, in.where));
  for (const auto& out : problem.outputs)
    data.output_shapes.push_back(eval_shape(out.shape, data.env, out.name, out.where));
  data.nan_in_inputs = c.special && c.special->kind == SpecialKind::nan;
  data.extreme_in_inputs = c.special && (c.special->kind == SpecialKind::dtype_max ||
                                         c.special->kind == SpecialKind::pos_inf ||
                                         c.special->kind == SpecialKind::neg_inf);
  return data;
}

std::vector<HostTensor> initial_outputs(const Problem& problem, const CaseData& data, const Case& c,
                                        std::uint32_t visit) {
  std::vector<HostTensor> out(problem.outputs.size());
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const OutputSpec& spec = problem.outputs[o];
    if (spec.init != InitRule::drawn) continue;
    InputSpec as_input;
    as_input.name = spec.name;
    as_input.dtype = spec.dtype;
    as_input.shape = spec.shape;
    as_input.dist = spec.initial;
    as_input.where = spec.where;
    const StreamId stream{c.seed, static_cast<std::uint32_t>(problem.inputs.size() + o), visit};
    out[o] = generate_input(as_input, data.output_shapes[o], stream, {}, nullptr, problem.dir);
  }
  return out;
}

const Precondition* unmet_precondition(const Problem& problem, const Candidate& candidate,
                                       const Case& c) {
  const Env env = shape_env(problem, c.shapes.dims);
  for (const Precondition& r : candidate.requirements) {
    try {
      if (!r.holds(env)) return &r;
    } catch (const SpecError&) {
      return &r;
    }
  }
  return nullptr;
}

std::uint64_t largest_case_elements(const Problem& problem, const std::vector<const Case*>& cases) {
  std::uint64_t largest = 0;
  for (const Case* c : cases) {
    try {
      const Env env = shape_env(problem, c->shapes.dims);
      std::uint64_t sum = 0;
      for (const auto& out : problem.outputs)
        sum += static_cast<std::uint64_t>(checked_numel(eval_shape(out.shape, env)));
      largest = std::max(largest, sum);
    } catch (const SpecError&) {
      // The oracle reports the bad shape when it reaches the case.
    }
  }
  return largest;
}

} // namespace kj::judge
