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
#include "kjudge/validate.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::audit::detail {

using namespace kj::judge;

namespace {

constexpr std::int64_t kMaxLadderElements = std::int64_t{1} << 26;

struct Rung {
  std::string family, label;
  Case c;
  bool first = false; // the default cases' own aggressiveness
};

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

// What kept a run from a margin: its fault, an unwritten or a nondeterministic output.
std::string run_fault(const Problem& problem, const mutate::detail::Observation& ob) {
  if (ob.fault != Reason::none) return fmt::format("{}: {}", reason_name(ob.fault), ob.message);
  if (ob.unwritten) return "unwritten_output";
  if (ob.differs && !problem.allow_nondeterministic) return "nondeterministic";
  return "";
}

} // namespace

void run_ladder(const Problem& problem, CheckBackend& be, const Case& first,
                const std::vector<mutate::Checker>& checkers, std::vector<PolicyAudit>& audits) {
  const std::vector<Rung> rungs = ladder_rungs(problem, first);
  std::vector<std::filesystem::path> files;
  const std::filesystem::path solutions = problem.dir / "solutions";
  if (std::filesystem::is_directory(solutions))
    for (const auto& e : std::filesystem::directory_iterator(solutions))
      if (e.path().extension() == ".cu") files.push_back(e.path());
  std::sort(files.begin(), files.end());

  struct Solution {
    std::string name;
    std::unique_ptr<const Candidate> candidate; // the runner holds on to it: it must not move
    std::unique_ptr<KernelUnderTest> kernel;
  };
  std::vector<Solution> kernels;
  for (const auto& f : files) {
    Solution s{"solutions/" + f.filename().string(),
               std::make_unique<const Candidate>(load_candidate(f, problem)), nullptr};
    s.kernel = be.make_runner("candidate", *s.candidate);
    if (auto failed = s.kernel->start()) {
      if (failed->unsupported) continue; // this backend cannot run it (tensor cores on the host)
      throw std::runtime_error(fmt::format("audit: solution {} does not start: {}", s.name,
                                           failed->message));
    }
    kernels.push_back(std::move(s));
  }
  for (const Rung& r : rungs) {
    CaseData d = be.oracle().prepare(r.c);
    be.complete_host_copies(d);
    for (Solution& s : kernels) {
      if (unmet_precondition(problem, *s.candidate, r.c)) continue;
      const mutate::detail::Observation ob = mutate::detail::observe(be, *s.kernel, problem, r.c, d);
      const std::string fault = run_fault(problem, ob);
      for (std::size_t k = 0; k < checkers.size(); ++k) {
        LadderStep step{r.family, r.label, s.name, false, 12, fault};
        if (fault.empty()) std::tie(step.pass, step.margin) = judge_outputs(checkers[k], problem, d, ob.out0);
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
