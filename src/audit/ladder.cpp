// The validity ladder (audit_internal.hpp): the bundled solutions run once per rung, their
// outputs judged by every policy, so that each policy's ceiling (the first rung a correct
// kernel fails) comes from the same runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "audit/audit_internal.hpp"
#include "judge/case_oracle.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/mutate.hpp"
#include "kjudge/validate.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::audit::detail {

using namespace kj::judge;

namespace {

constexpr std::int64_t kMaxLadderElements = std::int64_t{1} << 26;

// The first float input and the dim its shape's last entry names (empty: not a plain dim).
std::pair<const InputSpec*, std::string> ladder_input(const Problem& problem) {
  for (const InputSpec& in : problem.inputs)
    if (is_float(in.dtype)) {
      if (in.shape.empty()) return {&in, ""};
      const std::set<std::string> names = in.shape.back().names();
      const bool plain = names.size() == 1 && *names.begin() == in.shape.back().text();
      return {&in, plain ? *names.begin() : ""};
    }
  return {nullptr, ""};
}

// The elements of all inputs of case `c`, its shapes evaluated as the oracle does.
std::int64_t input_elements(const Problem& problem, const Case& c) {
  std::int64_t n = 0;
  for (const Shape& s : case_frame(problem, c).input_shapes) n += checked_numel(s);
  return n;
}


// A correct variant the ladder runs: a solution, a CTRL mutant of one (a must-pass rewrite of
// the mutation catalogue: contraction, re-association) or, on the GPU, one built --fmad=false.
struct Variant : AuditKernel {
  bool solution = false; // a bundled file as written
};

constexpr std::size_t kControlsPerSolution = 2;

// The solutions and their variants, started; those this backend cannot run (tensor cores on
// the host) left out. Throws std::runtime_error for a variant that does not start otherwise.
std::vector<Variant> started_variants(const Problem& problem, CheckBackend& be, Backend backend) {
  std::vector<Variant> out;
  auto add = [&](std::string name, bool solution, Candidate c) {
    if (std::optional<AuditKernel> k = start_kernel(be, std::move(name), std::move(c))) {
      Variant v;
      static_cast<AuditKernel&>(v) = std::move(*k);
      v.solution = solution;
      out.push_back(std::move(v));
    }
  };
  for (const std::filesystem::path& f : mutate::detail::solution_files(problem.dir)) {
    const std::string label = "solutions/" + f.filename().string();
    const Candidate original = load_candidate(f, problem);
    add(label, true, original);
    if (backend == Backend::cuda) {
      Candidate plain = original;
      plain.options.push_back("--fmad=false");
      add(label + " --fmad=false", false, std::move(plain));
    }
    // The first and the last CTRL site: the two ends of the kernel's arithmetic.
    std::vector<mutate::Mutant> controls =
        mutate::generate_mutants(label, original.source.text, {"control"});
    if (controls.size() > kControlsPerSolution) controls.erase(controls.begin() + 1, controls.end() - 1);
    for (const mutate::Mutant& m : controls) {
      Candidate control = original;
      control.source.text = mutate::apply_mutant(original.source.text, m);
      add(fmt::format("{} CTRL line {}", label, m.line), false, std::move(control));
    }
  }
  return out;
}

// Each solution's error over the golden's scale per output on the base case (the card's
// best solution comes from them).
void record_solution_errors(const Problem& problem, CheckBackend& be, const Case& first,
                            std::vector<Variant>& variants, ProblemAudit& audit) {
  CaseData d = be.oracle().prepare(first);
  be.complete_host_copies(d);
  for (Variant& v : variants) {
    if (!v.solution || unmet_precondition(problem, *v.candidate, first)) continue;
    const mutate::detail::Observation ob = mutate::detail::observe(be, *v.kernel, problem, first, d);
    if (!run_fault(problem, ob).empty()) continue;
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      if (!is_float(problem.outputs[o].dtype) || d.golden.size() <= o || d.golden[o].numel() == 0) continue;
      if (const auto e = error_over_golden_scale(problem.outputs[o].dtype, d.golden[o], ob.out0[o]))
        audit.solution_errors.push_back({v.name, problem.outputs[o].name, e->max, e->rms});
    }
  }
}

} // namespace

std::vector<Rung> ladder_rungs(const Problem& problem, const Case& first) {
  std::vector<Rung> out;
  const auto [input, dim] = ladder_input(problem);
  if (!input) return out;
  auto with = [&](std::string family, Transform t, bool is_first) {
    Case c = first;
    t.input = input->name;
    c.transform = t;
    c.id = case_id(problem, c.shapes, c.seed, t.label());
    out.push_back({std::move(family), t.label(), std::move(c), is_first});
  };
  for (const double factor : {3.0, 1e2, 1e4, 1e8}) with("magnitude", {"", factor, 0}, factor == 3);
  for (const double offset : {10.0, 1e2, 1e3, 1e4}) with("mean offset", {"", 1, offset}, offset == 10);
  if (dim.empty() || !first.shapes.dims.count(dim)) return out;
  for (const std::int64_t times : {1, 4, 16}) {
    Case c = first;
    c.shapes.dims[dim] *= times;
    if (input_elements(problem, c) > kMaxLadderElements) break;
    if (times > 1) c.shapes.id = perturbed_set_id(first.shapes.id, dim, c.shapes.dims[dim]);
    c.id = case_id(problem, c.shapes, c.seed, c.transform.label());
    out.push_back({"long rows", fmt::format("{}*{}", dim, times), std::move(c), times == 1});
  }
  return out;
}

std::string run_fault(const Problem& problem, const mutate::detail::Observation& ob) {
  if (ob.fault != Reason::none) return fmt::format("{}: {}", reason_name(ob.fault), ob.message);
  if (ob.unwritten) return "unwritten_output";
  if (ob.differs && !problem.allow_nondeterministic) return "nondeterministic";
  return "";
}

std::optional<AuditKernel> start_kernel(CheckBackend& be, std::string name, Candidate candidate) {
  AuditKernel k{std::move(name), std::make_unique<const Candidate>(std::move(candidate)), nullptr};
  k.kernel = be.make_runner("candidate", *k.candidate);
  if (auto failed = k.kernel->start()) {
    if (failed->unsupported) return std::nullopt;
    throw std::runtime_error(fmt::format("audit: {} does not start: {}", k.name, failed->message));
  }
  return k;
}

void run_ladder(const Problem& problem, CheckBackend& be, Backend backend, const Case& first,
                const std::vector<mutate::Checker>& checkers, ProblemAudit& audit) {
  const std::vector<Rung> rungs = ladder_rungs(problem, first);
  std::vector<Variant> kernels = started_variants(problem, be, backend);
  record_solution_errors(problem, be, first, kernels, audit);
  std::vector<PolicyAudit>& audits = audit.policies;
  for (const Rung& r : rungs) {
    CaseData d = be.oracle().prepare(r.c);
    be.complete_host_copies(d);
    for (Variant& s : kernels) {
      if (unmet_precondition(problem, *s.candidate, r.c)) continue;
      const mutate::detail::Observation ob = mutate::detail::observe(be, *s.kernel, problem, r.c, d);
      const std::string fault = run_fault(problem, ob);
      for (std::size_t k = 0; k < checkers.size(); ++k) {
        LadderStep step{r.family, r.label, s.name, false, 12, fault};
        if (fault.empty())
          std::tie(step.pass, step.margin) =
              judge_outputs(checkers[k], problem, d, ob.out0, device_judge(checkers[k], be));
        PolicyAudit& pa = audits[k];
        if (!step.pass && !pa.ceiling.count(r.family)) {
          pa.ceiling[r.family] = r.label;
          if (r.first && std::find(pa.status.begin(), pa.status.end(), Status::ceiling_crossed) ==
                             pa.status.end()) {
            std::erase(pa.status, Status::ok);
            pa.status.push_back(Status::ceiling_crossed);
          }
        }
        pa.ladder.push_back(std::move(step));
      }
    }
  }
}

} // namespace kj::audit::detail
