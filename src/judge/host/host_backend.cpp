// The host backend (backend.hpp): the oracle in this process on the CPU, candidates in confined
// host workers, and the smallest unperturbed cases screened for races by the checked build.
#include "judge/host/host_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "judge/backend.hpp"
#include "judge/host/host_oracle.hpp"
#include "judge/host/host_runner.hpp"
#include "kjudge/error.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj::judge {

namespace fs = std::filesystem;

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

namespace {

class HostBackend final : public CheckBackend {
public:
  HostBackend(CheckSettings& settings, const Problem& problem, Verdict& v);

  CaseOracle& oracle() override { return *oracle_; }
  std::unique_ptr<KernelUnderTest> make_runner(std::string role, const Candidate& kernel) override {
    auto runner =
        std::make_unique<HostKernelRunner>(std::move(role), kernel, problem_, settings_, compile_);
    runner->set_race_screened(&screened_);
    return runner;
  }
  void order_cases(std::vector<const Case*>& cases) override;

private:
  const CheckSettings& settings_;
  const Problem& problem_;
  HostCompileOptions compile_;
  std::unique_ptr<HostOracle> oracle_;
  std::set<const Case*> screened_; // the cases whose first run is the race-detecting build's
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
  compile_.cache_dir =
      asked.cache_dir.empty() ? fs::temp_directory_path() / "kjudge-host-cache" : asked.cache_dir;
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

} // namespace

std::unique_ptr<CheckBackend> make_host_backend(CheckSettings& settings, const Problem& problem,
                                                Verdict& v) {
  return std::make_unique<HostBackend>(settings, problem, v);
}

} // namespace kj::judge
