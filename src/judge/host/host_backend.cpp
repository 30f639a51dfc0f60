// The host backend (backend.hpp): the oracle in this process on the CPU, candidates in confined
// host workers, and the smallest unperturbed cases screened for races by the checked build.
#include "judge/host/host_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "judge/backend.hpp"
#include "judge/case_loop.hpp"
#include "judge/host/host_oracle.hpp"
#include "judge/host/host_runner.hpp"
#include "kjudge/error.hpp"
#include "util/private_folder.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj::judge {

namespace fs = std::filesystem;

namespace {

// "publicN..." as "hostN...": the shape set of a host plan is one of the problem's host sets.
std::string host_set_name(std::string_view set) {
  return set.starts_with("public") ? "host" + std::string(set.substr(6)) : std::string(set);
}

// A case of the host plan named by its host set: `<hash8>:<set>:<seed>:<transform>`.
void name_host_case(Case& c) {
  const std::size_t from = c.id.find(':'), to = c.id.find(':', from + 1);
  if (from == std::string::npos || to == std::string::npos) return;
  c.id = c.id.substr(0, from + 1) + host_set_name(c.id.substr(from + 1, to - from - 1)) +
         c.id.substr(to);
  c.shapes.id = host_set_name(c.shapes.id);
}

} // namespace

CasePlan host_case_plan(const Problem& problem, CaseOptions options, std::string& budget) {
  constexpr std::size_t kHostPerturbed = 16;
  Problem host = problem;
  const bool host_shapes = !problem.dims.host_sets.empty();
  if (host_shapes) {
    host.dims.public_sets = problem.dims.host_sets;
    options.include_hidden = false;
  }
  const int seeds = options.seeds;
  options.seeds = std::min(options.seeds, 1);
  options.max_perturbed = std::min(options.max_perturbed, kHostPerturbed);
  CasePlan plan = enumerate_cases(host, options);
  if (host_shapes) {
    for (Case& c : plan.cases)
      name_host_case(c);
    for (CaseSkip& skip : plan.skipped)
      skip.what = host_set_name(skip.what);
  }
  std::stable_partition(plan.cases.begin(), plan.cases.end(),
                        [](const Case& c) { return c.case_class() == "perturbed"; });
  budget = fmt::format("{} cases: {}, {} seed{} per shape set (of {}), at most {} perturbed "
                       "shape sets, run first",
                       plan.cases.size(),
                       host_shapes ? "the problem's host shapes (no hidden ones)"
                                   : "the public and hidden shapes",
                       options.seeds, options.seeds == 1 ? "" : "s", seeds, kHostPerturbed);
  return plan;
}

CasePlan host_coverage_plan(const Problem& problem, const CaseOptions& options) {
  CasePlan out;
  if (problem.dims.host_sets.empty()) return out;
  Problem host = problem;
  host.dims.public_sets = problem.dims.host_sets;
  host.dims.hidden_sets.clear();
  CaseOptions one = options;
  one.seeds = 1;
  one.transforms = one.special_values = one.include_hidden = false;
  one.max_perturbed = 0;
  std::uint64_t largest_host = 0;
  const CasePlan host_plan = enumerate_cases(host, one);
  for (const Case& c : host_plan.cases)
    largest_host = std::max(largest_host, largest_case_elements(problem, {&c}));
  Problem public_only = problem;
  public_only.dims.hidden_sets.clear();
  std::vector<std::pair<std::uint64_t, Case>> larger;
  for (Case& c : enumerate_cases(public_only, one).cases)
    if (const std::uint64_t n = largest_case_elements(problem, {&c}); n > largest_host)
      larger.emplace_back(n, std::move(c));
  std::stable_sort(larger.begin(), larger.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [n, c] : larger)
    out.cases.push_back(std::move(c));
  return out;
}

namespace {

// The CPU's model name (/proc/cpuinfo): a stored case's key names the machine that made it.
std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.starts_with("model name"))
      if (const auto colon = line.find(':'); colon != std::string::npos)
        return line.substr(colon + 1);
  return "unknown CPU";
}

class HostBackend final : public CheckBackend {
public:
  HostBackend(CheckSettings& settings, const Problem& problem, Verdict& v);

  CaseOracle& oracle() override { return *oracle_; }
  std::unique_ptr<KernelUnderTest> make_runner(std::string role, const Candidate& kernel) override {
    // The candidate's plain build counts the lines it runs; not for bench, whose times must
    // be the kernel's, nor for the --against kernel, which is not judged.
    HostCompileOptions compile = compile_;
    compile.coverage = role == "candidate" && settings_.asked.timed_runs == 0;
    compile.one_program = settings_.defences.one_program;
    if (role == "candidate") candidate_ = &kernel;
    auto runner =
        std::make_unique<HostKernelRunner>(std::move(role), kernel, problem_, settings_, compile);
    runner->set_race_screened(&screened_);
    return runner;
  }
  void order_cases(std::vector<const Case*>& cases) override;
  std::string case_identity() const override {
    return fmt::format("cpu{} | {}", cpu_model(), oracle_->builds_identity());
  }
  // Every tensor of a host case is on the host already.
  std::optional<std::string> encode_case(const CaseData& data) override {
    return encode_case_image(data, data.host_master, data.golden, data.reference);
  }
  std::optional<CaseData> decode_case(CaseImage image) override {
    CaseData data = std::move(image.frame);
    data.host_master = std::move(image.master);
    data.golden = std::move(image.golden);
    data.reference = std::move(image.reference);
    return data;
  }
  void reach_unrun_lines(const CaseLoop& loop, const JudgedCases& judged,
                         const std::vector<const Case*>& cases, Verdict& v) override;

private:
  const CheckSettings& settings_;
  const Problem& problem_;
  HostCompileOptions compile_;
  std::unique_ptr<HostOracle> oracle_;
  std::set<const Case*> screened_; // the cases whose first run is the race-detecting build's
  const Candidate* candidate_ = nullptr; // its `requires` keep added cases out as the plan's
};

HostBackend::HostBackend(CheckSettings& settings, const Problem& problem, Verdict& v)
    : settings_(settings), problem_(problem) {
  const CheckOptions& asked = settings.asked;
  compile_.kjudge_include = settings.kjudge_include;
  const std::vector<fs::path> toolkit = toolkit_include_dirs();
  if (toolkit.empty())
    throw InternalError("the host backend needs the CUDA toolkit's headers (cuda_fp16.h, ...): "
                        "none found; set CUDA_HOME");
  compile_.cuda_include = toolkit.front();
  // Built modules are loaded and run as this user: the folder must be no one else's (a shared
  // /tmp default let another user's module run in the unconfined oracle).
  compile_.cache_dir = asked.cache_dir.empty() ? util::per_user_temp_path("kjudge-host-cache")
                                               : asked.cache_dir;
  util::require_private_folder(compile_.cache_dir, asked.cache_dir.empty() ? "host build cache"
                                                                           : "--cache");
  settings.memory_cap = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
  // The checked build runs several times slower than the reference it is timed against.
  settings.slowdown = 30;
  settings.deadline_min_s = std::max(settings.deadline_min_s, 5.0);
  v.manifest.gpu = fmt::format("none: {} CPU threads", std::thread::hardware_concurrency());
  if (asked.exact_bounds)
    v.manifest.case_budget += asked.race_detection
                                  ? "; every run checked for out-of-bounds accesses and races"
                                  : "; every run checked for out-of-bounds accesses";
  else if (asked.race_detection)
    v.manifest.case_budget += fmt::format("; races screened on the first run of the {} "
                                          "smallest unperturbed cases, which run first",
                                          HostKernelRunner::kRaceScreenedCases);
  if (!asked.race_detection) v.skips.push_back("SKIP(--no-race-detection) race detection");
  CompileOptions nvrtc;
  nvrtc.arch = 90;
  nvrtc.kjudge_include = settings.kjudge_include;
  nvrtc.cache_dir = asked.cache_dir;
  try {
    oracle_ = std::make_unique<HostOracle>(problem, nvrtc, compile_, !asked.against.has_value());
  } catch (const UnsupportedOnHost& e) {
    throw UnsupportedOnHost(fmt::format("the reference: {}", e.what()));
  }
  oracle_->time_reference(asked.timed_runs);
}

// The checked build runs the smallest cases (it is several times slower) of the problem's own
// shapes: a perturbed shape can be degenerate (one row, one block), where a race between blocks
// cannot show. They run first: a race is the finding a kernel engineer wants before any
// mismatch.
void HostBackend::order_cases(std::vector<const Case*>& cases) {
  if (!settings_.asked.race_detection) return;
  std::vector<std::pair<std::uint64_t, const Case*>> by_size;
  for (const Case* c : cases)
    if (c->case_class() != "perturbed")
      by_size.emplace_back(largest_case_elements(problem_, {c}), c);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < by_size.size() && k < HostKernelRunner::kRaceScreenedCases; ++k)
    screened_.insert(by_size[k].second);
  std::stable_partition(cases.begin(), cases.end(),
                        [&](const Case* c) { return screened_.contains(c); });
}

// A case's work, as far as its shapes tell: the product of its dims (N x BINS compares for a
// histogram's reference, M x N x K for a matmul), never less than its largest tensor.
double case_work(const Problem& problem, const Case& c) {
  double work = 1;
  for (const auto& [name, value] : c.shapes.dims)
    work *= static_cast<double>(std::max<std::int64_t>(value, 1));
  return std::max(work, static_cast<double>(largest_case_elements(problem, {&c})));
}

// The largest work of the problem's own shape sets, public and hidden (one case each).
double largest_named_work(const Problem& problem, const CaseOptions& options) {
  CaseOptions named = options;
  named.seeds = 1;
  named.transforms = named.special_values = false;
  named.include_hidden = true;
  named.max_perturbed = 0;
  double work = 1;
  for (const Case& c : enumerate_cases(problem, named).cases)
    work = std::max(work, case_work(problem, c));
  return work;
}

// How far toward the problem's own scale cases of `largest_work` reach: log(largest_work) /
// log(named_work), at most 1 (LinesRun::scale_reached).
double scale_reached(double largest_work, double named_work) {
  if (largest_work >= named_work) return 1.0;
  return std::clamp(std::log(std::max(largest_work, 1.0)) / std::log(named_work), 0.0, 1.0);
}

// The added cases get a quarter of the check's time budget, in wall time: each costs the oracle
// (inputs, the f64 golden and the reference on the CPU) as well as the candidate, and a case is
// only started when the slowest rate seen so far (wall seconds per unit of case_work, the host
// cases' first, whose fixed costs make it an overestimate) says it fits.
void HostBackend::reach_unrun_lines(const CaseLoop& loop, const JudgedCases& judged,
                                    const std::vector<const Case*>& cases, Verdict& v) {
  LinesRun& r = v.lines_run.emplace();
  const double named_work = largest_named_work(problem_, settings_.asked.cases);
  double largest_work = 0;
  for (const Case* c : cases)
    largest_work = std::max(largest_work, case_work(problem_, *c));
  r.scale_reached = scale_reached(largest_work, named_work);
  std::optional<LineCoverage> reached = loop.candidate.lines_reached(r.not_measured);
  if (!reached) return;
  r.measured = true;
  r.lines = reached->lines.size();
  r.unrun = reached->unrun;
  if (r.unrun.empty() || settings_.asked.only_case) return;
  const CasePlan larger = host_coverage_plan(problem_, settings_.asked.cases);
  const double share_s = settings_.time_budget_s > 0 ? settings_.time_budget_s / 4 : 1e300;
  double work = 0;
  for (const Case* c : cases)
    work += case_work(problem_, *c);
  double rate = work > 0 ? judged.wall_s / work : 0;
  double spent_s = judged.spent_s, wall_s = 0;
  for (const Case& c : larger.cases) {
    if (candidate_ && unmet_precondition(problem_, *candidate_, c)) continue;
    const double n = case_work(problem_, c);
    if (wall_s + rate * n > share_s) {
      r.stopped = fmt::format("the next, {}, would take about {:.3g} s, past the {:.3g} s left of "
                              "the added cases' share of the time budget ({:.3g} s)",
                              c.id, rate * n, share_s - wall_s, share_s);
      return;
    }
    JudgedCases added = judge_cases(loop, {&c}, spent_s);
    spent_s = added.spent_s;
    wall_s += added.wall_s;
    rate = std::max(rate, added.wall_s / std::max(n, 1.0));
    if (added.findings.empty()) { // the candidate's run time was over the budget
      r.stopped = fmt::format("the time budget of {} s was spent", settings_.time_budget_s);
      return;
    }
    r.added_cases.push_back(c.id);
    largest_work = std::max(largest_work, n);
    r.scale_reached = scale_reached(largest_work, named_work);
    const bool passed = added.findings.front().pass();
    std::move(added.findings.begin(), added.findings.end(), std::back_inserter(v.cases));
    if (!passed) return; // the verdict is this case's now
    std::string why;
    reached = loop.candidate.lines_reached(why);
    if (!reached) {
      r.stopped = "coverage could not be read after " + c.id + ": " + why;
      return;
    }
    r.unrun = reached->unrun;
    if (r.unrun.empty()) return;
  }
  r.stopped = larger.cases.empty() ? "the problem has no shapes larger than its host ones"
                                   : "every larger shape of the problem was run";
}

} // namespace

std::unique_ptr<CheckBackend> make_host_backend(CheckSettings& settings, const Problem& problem,
                                                Verdict& v) {
  return std::make_unique<HostBackend>(settings, problem, v);
}

} // namespace kj::judge
