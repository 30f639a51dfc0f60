// The campaign of `kjudge mutate` (mutate.hpp) in four named stages: generate the mutants of
// every bundled solution, compile and deduplicate them by normalised PTX (processes, no GPU),
// run the solutions and controls on the pool to set each input's error baseline (and drop the
// inputs they fail on), then run each mutant on the whole pool once and decide, from the same
// runs, the strong oracle's kill and every checker's verdict. Finished mutants are appended to
// the state folder as they end, so an interrupted campaign resumes where it stopped.
#include "kjudge/mutate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "judge/backend.hpp"
#include "judge/case_oracle.hpp"
#include "judge/check_settings.hpp"
#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/output_judging.hpp"
#include "judge/trace.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/sha256.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::mutate {

namespace fs = std::filesystem;

std::vector<fs::path> detail::solution_files(const fs::path& problem_dir) {
  std::vector<fs::path> files;
  const fs::path solutions = problem_dir / "solutions";
  if (fs::is_directory(solutions))
    for (const auto& e : fs::directory_iterator(solutions))
      if (e.path().extension() == ".cu") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
using namespace kj::judge;
using namespace kj::mutate::detail;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---- Mutants: generate, compile, dedup ---------------------------------------------------

struct Original {
  std::string problem_dir, label; // label: "softmax/solutions/basic.cu"
  fs::path path;
  std::string source;
};

struct Planned {
  MutantResult result;
  std::string text; // the mutated source
  const Original* original = nullptr;
};

std::vector<Original> originals_of(const Problem& problem, const std::string& dir) {
  std::vector<Original> out;
  for (const fs::path& f : detail::solution_files(dir)) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    out.push_back({dir, problem.name + "/solutions/" + f.filename().string(), f, std::move(text)});
  }
  return out;
}

// Round-robin over the categories, each in id order: a budget samples every category.
std::vector<Planned*> in_sampling_order(std::vector<Planned>& all) {
  std::map<Category, std::vector<Planned*>> by;
  for (Planned& p : all) by[p.result.mutant.category].push_back(&p);
  for (auto& [cat, list] : by)
    std::sort(list.begin(), list.end(),
              [](const Planned* a, const Planned* b) { return a->result.mutant.id < b->result.mutant.id; });
  std::vector<Planned*> order;
  for (std::size_t k = 0;; ++k) {
    bool any = false;
    for (auto& [cat, list] : by)
      if (k < list.size()) {
        order.push_back(list[k]);
        any = true;
      }
    if (!any) break;
  }
  return order;
}

struct CompileOutcome {
  bool ok = false;
  std::string hash, error;
};

// Compile `sources` in `jobs` child processes (NVRTC does not scale across threads); each
// child writes one line per source: index, ok, the normalised PTX's hash or the error. With the
// options a worker's start compiles with (`options` plus the candidate's own), each CUBIN lands
// in the compile cache, and the execution stage's starts find it there instead of compiling
// one at a time.
std::vector<CompileOutcome> compile_all(const std::vector<std::pair<std::string, Candidate>>& sources,
                                        const CompileOptions& options, int jobs) {
  std::vector<CompileOutcome> out(sources.size());
  if (sources.empty()) return out;
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(sources.size())));
  std::vector<std::pair<pid_t, int>> children;
  for (int j = 0; j < jobs; ++j) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("mutate: pipe() failed");
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      FILE* w = fdopen(fds[1], "w");
      for (std::size_t i = static_cast<std::size_t>(j); i < sources.size();
           i += static_cast<std::size_t>(jobs)) {
        const Candidate& c = sources[i].second;
        std::string line;
        try {
          std::vector<std::size_t> index;
          CompileOptions own = options;
          own.options = c.options;
          const CompiledModule m =
              compile_module(sources[i].first, c.path.filename().string(),
                             distinct_expressions(c.source.launches, index), own);
          line = fmt::format("{}\t1\t{}", i, sha256_hex(normalize_ptx(m.ptx)).substr(0, 16));
        } catch (const std::exception& e) {
          std::string why = e.what();
          std::replace(why.begin(), why.end(), '\n', ' ');
          std::replace(why.begin(), why.end(), '\t', ' ');
          line = fmt::format("{}\t0\t{}", i, why.substr(0, 300));
        }
        std::fprintf(w, "%s\n", line.c_str());
      }
      std::fclose(w);
      _exit(0);
    }
    close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  for (auto [pid, fd] : children) {
    FILE* r = fdopen(fd, "r");
    char* buf = nullptr;
    std::size_t cap = 0;
    while (getline(&buf, &cap, r) > 0) {
      std::string line(buf);
      if (!line.empty() && line.back() == '\n') line.pop_back();
      const auto t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
      if (t1 == std::string::npos || t2 == std::string::npos) continue;
      const std::size_t i = std::stoul(line.substr(0, t1));
      if (i >= out.size()) continue;
      out[i].ok = line.substr(t1 + 1, t2 - t1 - 1) == "1";
      (out[i].ok ? out[i].hash : out[i].error) = line.substr(t2 + 1);
    }
    std::free(buf);
    std::fclose(r);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return out;
}

// ---- One problem's execution --------------------------------------------------------------

struct ProblemRun {
  const Problem& problem;
  const CampaignOptions& options;
  Campaign& campaign;
  CheckBackend& backend;           // its smallest inputs' first runs race-screened (host)
  CheckBackend& unscreened;        // the same without the screen's checked build (host: 3x
                                   // faster to start), for mutants that cannot add a race
  ProblemPool& pool;
  std::size_t pool_base = 0;       // this problem's first index in Campaign::pool
  std::vector<CaseData> data;      // per pool case
  std::vector<Baseline> baseline;  // per pool case
  std::vector<bool> dropped;       // per pool case

  // Run `kernel` on every input not dropped whose shapes meet the preconditions `cand` declares
  // (`requires`: a check does not run the others either); `each` sees (input, observation). A
  // timeout ends the walk (as it ends a check): a kernel that hangs would cost a deadline per
  // input. Returns whether it timed out.
  template <typename F>
  bool on_pool(KernelUnderTest& kernel, const Candidate& cand, F&& each) {
    for (std::size_t i = 0; i < pool.cases.size(); ++i) {
      if (dropped[i] || unmet_precondition(problem, cand, pool.cases[i])) continue;
      Observation ob = observe(backend, kernel, problem, pool.cases[i], data[i]);
      const bool timed_out = ob.fault == Reason::timeout;
      each(i, std::move(ob));
      if (timed_out) return true;
    }
    return false;
  }
  // Every input not dropped: a kernel that cannot run at all is killed on each.
  std::vector<std::size_t> all_inputs() const {
    std::vector<std::size_t> all;
    for (std::size_t i = 0; i < pool.cases.size(); ++i)
      if (!dropped[i]) all.push_back(pool_base + i);
    return all;
  }

  std::map<std::string, bool> accepted_by(const std::vector<std::vector<bool>>& accepts) const {
    std::map<std::string, bool> out;
    for (std::size_t k = 0; k < options.checkers.size(); ++k) {
      bool all = true;
      for (std::size_t i : pool.draws[k])
        if (!dropped[i] && !accepts[k][i]) all = false;
      out[options.checkers[k].name] = all;
    }
    return out;
  }
  // Each checker whose draw holds input i: its verdict on this observation.
  void judge_by_checkers(std::size_t i, const Observation& ob,
                         std::vector<std::vector<bool>>& accepts) const {
    for (std::size_t k = 0; k < options.checkers.size(); ++k)
      if (std::find(pool.draws[k].begin(), pool.draws[k].end(), i) != pool.draws[k].end())
        accepts[k][i] = checker_accepts(options.checkers[k], problem, data[i], ob);
  }
  std::vector<std::vector<bool>> fresh_accepts() const {
    return std::vector<std::vector<bool>>(options.checkers.size(),
                                          std::vector<bool>(pool.cases.size(), true));
  }
};

// A backend of its own for one thread: the settings it holds references to live beside it.
struct OpenBackend {
  bool race_detection = true;
  CheckOptions options;
  CheckSettings settings{options};
  PhaseTrace trace;
  Verdict verdict;
  std::unique_ptr<CheckBackend> backend;
};
std::unique_ptr<OpenBackend> open_backend(const Problem& problem, Backend backend,
                                          const CampaignOptions& options, ProblemPool& pool,
                                          const std::shared_ptr<SpareWorkers>& spares,
                                          bool race_detection) {
  auto b = std::make_unique<OpenBackend>();
  b->options.spare_workers = spares;
  b->options.kept_worker = make_kept_worker(); // its runners are kjudge's own, one at a time
  b->options.race_detection = race_detection;
  b->options.backend = backend;
  b->options.self_exe = options.self_exe;
  b->options.cache_dir = options.cache_dir;
  b->settings.backend = backend;
  b->settings.trace = &b->trace;
  if (auto refused = resolve_check_settings(b->settings, b->verdict))
    throw std::runtime_error("mutate: " + *refused);
  CaseCache* no_cache = nullptr;
  b->backend = make_backend(b->settings, problem, no_cache, b->verdict);
  std::vector<const Case*> order;
  for (const Case& c : pool.cases) order.push_back(&c);
  b->backend->order_cases(order); // which cases the screen runs on (the order is the pool's)
  return b;
}

// The two backends of one thread: screened for synchronization and indexing mutants (their
// races), the other for the rest; one and the same on the GPU, where nothing is screened.
struct ThreadBackends {
  std::unique_ptr<OpenBackend> screened, unscreened;
  CheckBackend& unscreened_or_screened() { return *(unscreened ? unscreened : screened)->backend; }
};
// Mutants are kjudge's own, not adversarial: their workers may start ahead of need (spares,
// shared by every thread), so a mutant's start does not wait for a process and its context.
ThreadBackends open_thread_backends(const Problem& problem, Backend backend,
                                    const CampaignOptions& options, ProblemPool& pool,
                                    const std::shared_ptr<SpareWorkers>& spares) {
  ThreadBackends t;
  t.screened = open_backend(problem, backend, options, pool, spares, true);
  if (backend == Backend::host)
    t.unscreened = open_backend(problem, backend, options, pool, spares, false);
  return t;
}

bool may_add_a_race(Category c) {
  return c == Category::synchronization || c == Category::indexing;
}

std::string replay_of(const ProblemRun& run, const std::string& mutant_file, std::size_t i) {
  const Case& c = run.pool.cases[i];
  // `--case` replays every pool input (check.cpp's append_witness_cases), on either backend.
  std::string cmd = fmt::format("kjudge check {} --candidate {} --case '{}'", run.problem.dir.string(),
                                mutant_file, c.id);
  if (run.campaign.backend == "host") cmd += " --backend host";
  return cmd;
}

// Start mutant `pl` in a worker of `run`'s backend and judge it on the whole pool: the strong
// oracle's kills (the first is the witness), every checker's verdict, its error ratios.
void judge_mutant(ProblemRun& run, Planned& pl, const std::string& file) {
  MutantResult& r = pl.result;
  const Candidate cand = parse_candidate(pl.text, pl.original->path.string(), run.problem);
  CheckBackend& backend = may_add_a_race(r.mutant.category) ? run.backend : run.unscreened;
  std::unique_ptr<KernelUnderTest> k = backend.make_runner("candidate", cand);
  if (auto failed = k->start()) {
    if (failed->unsupported) {
      r.status_reason = failed->message;
    } else if (failed->reason == Reason::compile_error) {
      r.status = Status::compile_error;
      r.status_reason = failed->message.substr(0, 300);
    } else {
      r.status = Status::killed; // it cannot run at all: every checker rejects it
      r.status_reason =
          fmt::format("{}: {}", reason_name(failed->reason), failed->message.substr(0, 200));
      for (const Checker& c : run.options.checkers) r.accepted[c.name] = false;
      r.killed_on = run.all_inputs();
      if (!r.killed_on.empty()) r.witness = r.killed_on.front();
    }
    return;
  }
  auto accepts = run.fresh_accepts();
  const bool hung = run.on_pool(*k, cand, [&](std::size_t i, const Observation& ob) {
    if (ob.differs) r.flaky = true;
    if (const auto ratio = error_ratio(ob, run.baseline[i]))
      r.error_ratios.emplace_back(run.pool_base + i, *ratio);
    if (auto killed = kill_reason(ob, run.baseline[i], run.problem)) {
      r.killed_on.push_back(run.pool_base + i);
      if (!r.witness) {
        r.witness = run.pool_base + i;
        r.status_reason = fmt::format("{} on {}", *killed, run.pool.cases[i].id);
        r.replay = replay_of(run, file, i);
      }
    }
    run.judge_by_checkers(i, ob, accepts);
  });
  r.accepted = run.accepted_by(accepts);
  // A hang is caught by any checker with a deadline, on whichever input it draws.
  if (hung)
    for (auto& [name, accepted] : r.accepted) accepted = false;
  r.status = r.witness ? Status::killed : Status::not_killable;
  if (!r.witness) r.status_reason = "no pool input exposes it";
}

} // namespace

Campaign run_campaign(const CampaignOptions& options) {
  Campaign campaign;
  for (const Checker& c : options.checkers) campaign.checkers.push_back(c.name);
  const Backend backend = machine_backend(options.backend, "mutate");
  campaign.backend = std::string(backend_name(backend));
  const fs::path include = find_kjudge_include(options.self_exe);

  // 1. Generate: every bundled solution of every problem, then the sampling order.
  auto started = Clock::now();
  std::vector<Problem> problems;
  std::vector<std::vector<Original>> originals;
  std::vector<Planned> planned;
  for (const std::string& dir : options.problems) {
    problems.push_back(load_problem(dir));
    originals.push_back(originals_of(problems.back(), dir));
    if (originals.back().empty())
      throw SpecError(Location{dir, "", 0, 0}, "mutate: the problem has no solutions/*.cu to mutate");
  }
  for (std::size_t p = 0; p < problems.size(); ++p)
    for (const Original& o : originals[p]) {
      campaign.sources[o.label] = o.source;
      std::set<std::string> texts{o.source};
      for (Mutant& m : generate_mutants(o.label, o.source, options.operators)) {
        Planned pl;
        pl.text = apply_mutant(o.source, m);
        pl.result.problem = problems[p].name;
        pl.result.mutant = std::move(m);
        pl.original = &o;
        if (!texts.insert(pl.text).second) continue; // the same text as an earlier one
        planned.push_back(std::move(pl));
      }
    }
  campaign.generate_s = seconds_since(started);

  // 2. Compile and deduplicate, in sampling order until the budget is met (controls always).
  started = Clock::now();
  CompileOptions compile;
  compile.kjudge_include = include;
  compile.cache_dir = options.cache_dir;
  compile.header_set_hash = header_set_hash(include);
  if (backend == Backend::cuda) { // the architecture the CUDA runner's start compiles for
    const CudaContext device(0);
    compile.arch = device.info().cc_major * 10 + device.info().cc_minor;
    compile.arch_specific = device.info().cc_major >= 9;
  }
  std::vector<Planned*> order = in_sampling_order(planned);
  std::vector<Planned*> chosen;
  std::map<std::string, std::string> ptx_owner; // normalised PTX hash -> first mutant id
  std::map<std::string, std::string> original_ptx;  // original label -> hash
  {
    std::vector<std::pair<std::string, Candidate>> sources;
    std::vector<const Original*> origs;
    for (std::size_t p = 0; p < problems.size(); ++p)
      for (const Original& o : originals[p]) {
        sources.emplace_back(o.source, parse_candidate(o.source, o.path.string(), problems[p]));
        origs.push_back(&o);
      }
    const std::vector<CompileOutcome> done = compile_all(sources, compile, options.jobs);
    for (std::size_t k = 0; k < done.size(); ++k)
      if (done[k].ok) original_ptx[origs[k]->label] = done[k].hash;
  }
  std::size_t scored = 0;
  const std::size_t budget = options.budget > 0 ? static_cast<std::size_t>(options.budget)
                                                : order.size();
  const std::size_t batch = static_cast<std::size_t>(std::max(1, options.jobs) * 8);
  for (std::size_t at = 0; at < order.size() && scored < budget; at += batch) {
    std::vector<Planned*> slice(order.begin() + static_cast<std::ptrdiff_t>(at),
                                order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), at + batch)));
    std::vector<std::pair<std::string, Candidate>> sources;
    std::vector<Planned*> compiled;
    for (Planned* pl : slice) {
      const std::size_t p = static_cast<std::size_t>(
          std::find_if(problems.begin(), problems.end(),
                       [&](const Problem& q) { return q.name == pl->result.problem; }) -
          problems.begin());
      try {
        sources.emplace_back(pl->text, parse_candidate(pl->text, pl->original->path.string(),
                                                       problems[p]));
        compiled.push_back(pl);
      } catch (const SpecError& e) {
        pl->result.status = Status::compile_error;
        pl->result.status_reason = e.what();
        chosen.push_back(pl);
      }
    }
    const std::vector<CompileOutcome> done = compile_all(sources, compile, options.jobs);
    for (std::size_t k = 0; k < compiled.size(); ++k) {
      Planned* pl = compiled[k];
      MutantResult& r = pl->result;
      if (!done[k].ok) {
        r.status = Status::compile_error;
        r.status_reason = done[k].error;
      } else {
        r.ptx_hash = done[k].hash;
        const auto orig = original_ptx.find(pl->original->label);
        const auto [owner, fresh] = ptx_owner.emplace(r.ptx_hash, r.mutant.id);
        r.equivalence_class = ptx_owner[r.ptx_hash];
        if (orig != original_ptx.end() && orig->second == r.ptx_hash) {
          r.status = Status::equivalent;
          r.status_reason = "its normalised PTX equals the original's";
        } else if (!fresh) {
          r.status = Status::duplicate;
          r.status_reason = "its normalised PTX equals mutant " + owner->second + "'s";
        } else if (r.mutant.category == Category::control || scored < budget) {
          if (r.mutant.category != Category::control) ++scored;
          r.status = Status::not_run; // until it runs
        } else {
          r.status_reason = "outside the budget";
        }
      }
      chosen.push_back(pl);
    }
  }
  campaign.compile_s = seconds_since(started);
  campaign.dedup_s = 0; // the PTX comparison is part of the compile stage's pass

  // 3-4. Per problem: the pool, the baseline from solutions and controls, then the mutants.
  started = Clock::now();
  const std::string context =
      catalogue_fingerprint() + checkers_fingerprint(options.checkers) + campaign.backend;
  std::map<std::string, MutantResult> kept;
  std::ofstream state;
  if (!options.state_dir.empty()) {
    fs::create_directories(fs::path(options.state_dir) / "mutants");
    kept = load_state(options.state_dir);
    state.open(fs::path(options.state_dir) / "results.jsonl", std::ios::app);
  }
  std::size_t executed = 0, kills = 0;
  std::size_t to_run = 0;
  const std::shared_ptr<SpareWorkers> spares = make_spare_workers();
  PhaseTrace trace; // KJUDGE_TRACE=1: where the execution stage's time goes
  for (Planned* pl : chosen)
    if (pl->result.status == Status::not_run && pl->result.status_reason.empty() &&
        pl->result.mutant.category != Category::control)
      ++to_run;

  for (std::size_t p = 0; p < problems.size(); ++p) {
    const Problem& problem = problems[p];
    std::optional<PhaseTrace::Scope> phase(std::in_place, trace, "mutate: backend and pool data");
    ProblemPool pool = make_pool(problem, options.checkers);
    ThreadBackends opened = open_thread_backends(problem, backend, options, pool, spares);
    CheckBackend* be = opened.screened->backend.get();
    ProblemRun run{problem, options, campaign, *be, opened.unscreened_or_screened(), pool, 0, {},
                   {}, {}};
    run.pool_base = campaign.pool.size();
    for (std::size_t i = 0; i < pool.cases.size(); ++i) {
      campaign.pool.push_back(pool_input(problem, pool, i));
      run.data.push_back(be->oracle().prepare(pool.cases[i]));
      be->complete_host_copies(run.data.back());
    }
    run.baseline.resize(pool.cases.size());
    run.dropped.assign(pool.cases.size(), false);
    phase.emplace(trace, "mutate: solutions and controls");
    std::string pool_context = context + fmt::format("|{}|", run.pool_base);
    for (const Case& c : pool.cases) pool_context += c.id + ',';

    // The solutions and the controls: each input's baseline; inputs a correct kernel fails on
    // are dropped.
    struct ControlRun {
      std::string name;
      std::vector<std::vector<bool>> accepts;
      std::string broken; // why the strong oracle rejects a CTRL mutant (empty: a control)
    };
    std::vector<ControlRun> control_runs;
    std::optional<std::vector<Observation>> first_solution;
    // A bundled solution drops the inputs it fails on and sets the baseline.
    auto run_solution = [&](const std::string& name, const Candidate& cand) {
      std::unique_ptr<KernelUnderTest> k = be->make_runner("candidate", cand);
      if (auto failed = k->start())
        throw std::runtime_error(fmt::format("mutate: solution {} does not start: {}", name,
                                             failed->message));
      ControlRun cr{name, run.fresh_accepts(), {}};
      std::vector<Observation> seen(pool.cases.size());
      run.on_pool(*k, cand, [&](std::size_t i, Observation ob) {
        if (ob.fault != Reason::none || ob.unwritten ||
            (ob.differs && !problem.allow_nondeterministic)) {
          if (!run.dropped[i])
            campaign.dropped_inputs.push_back(
                {campaign.pool[run.pool_base + i],
                 fmt::format("{} fails on it: {}", name,
                             ob.fault != Reason::none ? std::string(reason_name(ob.fault))
                             : ob.unwritten           ? "unwritten_output"
                                                      : "nondeterministic")});
          run.dropped[i] = true;
          return;
        }
        run.baseline[i].widen(ob);
        run.judge_by_checkers(i, ob, cr.accepts);
        seen[i] = std::move(ob);
      });
      if (!first_solution) first_solution = std::move(seen);
      control_runs.push_back(std::move(cr));
    };
    for (const Original& o : originals[p])
      run_solution(o.label, parse_candidate(o.source, o.path.string(), problem));
    // A CTRL mutant is held to the solutions' baseline first: one the strong oracle would kill
    // is a fault of the catalogue's rewrite, not a correct kernel, and must not widen the
    // baseline (a NaN-writing "control" would let every mutant through). The others widen it.
    auto run_control_mutant = [&](const std::string& name, const Candidate& cand) {
      std::unique_ptr<KernelUnderTest> k = be->make_runner("candidate", cand);
      ControlRun cr{name, run.fresh_accepts(), {}};
      if (auto failed = k->start()) {
        cr.broken = fmt::format("does not start: {}", failed->message.substr(0, 200));
        control_runs.push_back(std::move(cr));
        return;
      }
      std::vector<std::pair<std::size_t, Observation>> seen;
      run.on_pool(*k, cand, [&](std::size_t i, Observation ob) {
        if (cr.broken.empty())
          if (auto killed = kill_reason(ob, run.baseline[i], problem))
            cr.broken = fmt::format("{} on {}", *killed, pool.cases[i].id);
        run.judge_by_checkers(i, ob, cr.accepts);
        seen.emplace_back(i, std::move(ob));
      });
      if (cr.broken.empty())
        for (const auto& [i, ob] : seen) run.baseline[i].widen(ob);
      control_runs.push_back(std::move(cr));
    };
    for (Planned* pl : chosen)
      if (pl->result.problem == problem.name && pl->result.mutant.category == Category::control &&
          pl->result.status == Status::not_run)
        run_control_mutant(pl->result.mutant.id,
                           parse_candidate(pl->text, pl->original->path.string(), problem));
    const auto n_dropped = std::count(run.dropped.begin(), run.dropped.end(), true);
    if (2 * static_cast<std::size_t>(n_dropped) > pool.cases.size())
      throw std::runtime_error(fmt::format(
          "mutate: {}: a bundled solution fails on {} of the {} pool inputs (more than half): "
          "first: {}",
          problem.name, n_dropped, pool.cases.size(), campaign.dropped_inputs.front().second));
    for (const ControlRun& cr : control_runs)
      campaign.controls.push_back({problem.name, cr.name, run.accepted_by(cr.accepts), cr.broken});
    for (Planned* pl : chosen)
      if (pl->result.problem == problem.name && pl->result.mutant.category == Category::control &&
          pl->result.status == Status::not_run)
        pl->result.status_reason = "a control: run to set the baseline";

    // The sanity mutant: the first solution's outputs made NaN must be killed on every input
    // where that is visible.
    std::size_t visible = 0, forced_kills = 0;
    for (std::size_t i = 0; i < pool.cases.size(); ++i) {
      if (run.dropped[i]) continue;
      const Observation& good = (*first_solution)[i];
      const Observation forced = forced_fail(good, run.data[i]);
      if (!forced_fail_shows(good, forced)) continue;
      ++visible;
      if (kill_reason(forced, run.baseline[i], problem)) ++forced_kills;
    }
    if (visible == 0 || forced_kills < visible)
      throw std::runtime_error(fmt::format(
          "mutate: {}: the forced-fail mutant (outputs written as NaN) survives the strong "
          "oracle on {} of the {} inputs where a finite golden shows it: the oracle cannot be "
          "trusted to kill",
          problem.name, visible - forced_kills, visible));

    // The mutants, on `threads` backends side by side (the first is this one).
    phase.emplace(trace, "mutate: mutants");
    std::vector<Planned*> mine;
    for (Planned* pl : chosen)
      if (pl->result.problem == problem.name && pl->result.status == Status::not_run &&
          pl->result.status_reason.empty())
        mine.push_back(pl);
    std::atomic<std::size_t> next{0};
    std::mutex finished;
    auto judge_mutants = [&](ProblemRun& on) {
      for (std::size_t n = next++; n < mine.size(); n = next++) {
        Planned& pl = *mine[n];
        const std::string key = state_key(pl.text, pool_context);
        const auto it = kept.find(key);
        if (it != kept.end()) {
          pl.result = it->second;
        } else {
          const std::string file =
              options.state_dir.empty()
                  ? pl.original->path.string()
                  : (fs::path(options.state_dir) / "mutants" / (pl.result.mutant.id + ".cu")).string();
          if (!options.state_dir.empty()) std::ofstream(file, std::ios::binary) << pl.text;
          const PhaseTrace::Scope timed(trace, "mutate: one mutant (a thread's)");
          judge_mutant(on, pl, file);
        }
        const std::lock_guard lock(finished);
        if (it == kept.end() && state.is_open()) {
          state << result_line(key, pl.result) << '\n';
          state.flush();
        }
        ++executed;
        if (pl.result.status == Status::killed) ++kills;
        if (options.on_progress) options.on_progress(executed, to_run, kills);
      }
    };
    // On the GPU every thread's worker is a context of its own, and the device time-slices
    // between them (serve's measurement): a few keep it busy, more only queue.
    const std::size_t cap = backend == Backend::cuda ? 4 : static_cast<std::size_t>(options.jobs);
    const std::size_t threads = std::min<std::size_t>(
        {static_cast<std::size_t>(std::max(1, options.jobs)), cap, mine.size()});
    std::vector<std::exception_ptr> failures(threads);
    std::vector<std::thread> side;
    for (std::size_t t = 1; t < threads; ++t)
      side.emplace_back([&, t] {
        try {
          std::optional<PhaseTrace::Scope> opening(std::in_place, trace,
                                                   "mutate: a side thread's backend and data");
          ThreadBackends own = open_thread_backends(problem, backend, options, pool, spares);
          ProblemRun other{problem,      options, campaign,      *own.screened->backend,
                           own.unscreened_or_screened(), pool, run.pool_base, {},
                           run.baseline, run.dropped};
          for (const Case& c : pool.cases) {
            other.data.push_back(own.screened->backend->oracle().prepare(c));
            own.screened->backend->complete_host_copies(other.data.back());
          }
          opening.reset();
          judge_mutants(other);
        } catch (...) {
          failures[t] = std::current_exception();
          next = mine.size(); // the others stop too
        }
      });
    try {
      judge_mutants(run);
    } catch (...) {
      failures[0] = std::current_exception();
      next = mine.size();
    }
    for (std::thread& t : side) t.join();
    phase.reset();
    for (const std::exception_ptr& e : failures)
      if (e) std::rethrow_exception(e);
  }
  campaign.execute_s = seconds_since(started);
  campaign.forced_fail_killed = true; // else the campaign stopped above
  for (Planned& pl : planned) {
    if (pl.result.mutant.category == Category::control && pl.result.status == Status::not_run)
      continue; // in Campaign::controls
    if (pl.result.status == Status::not_run && pl.result.status_reason.empty())
      pl.result.status_reason = "outside the budget";
    campaign.mutants.push_back(std::move(pl.result));
  }
  return campaign;
}

} // namespace kj::mutate
