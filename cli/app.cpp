// The parser of kjudge's command line. Only syntax is checked here (required arguments, the
// words an enum option accepts); meaning (a dtype name, a policy, a file) is checked by the
// library, which names the argument in its SpecError.
#include "app.hpp"

#include <cmath>
#include <cstdlib>

#include "help.hpp"

namespace kj::cli {

std::unique_ptr<CLI::App> make_app(Invocation& into) {
  auto app = std::make_unique<CLI::App>("kjudge: judges GPU kernels against a reference", "kjudge");
  // Set before the subcommands exist: they inherit the parent's formatter.
  app->formatter(std::make_shared<MarkdownFormatter>());
  app->set_version_flag("--version", std::string("kjudge ") + KJUDGE_VERSION);
  app->require_subcommand(1);

  auto* validate = app->add_subcommand("validate", "check problem folders (no GPU needed)");
  validate->add_option("PROBLEM", into.validate.problems, "problem folders or problem.toml")
      ->required();
  validate->add_flag("--json", into.validate.json, "print JSON");

  auto* exp = app->add_subcommand("export", "a problem without its hidden shapes");
  exp->add_option("PROBLEM", into.export_.problem, "a problem folder or problem.toml")->required();
  exp->add_option("-o,--output", into.export_.output, "the folder to write");

  auto* cases = app->add_subcommand("cases", "the canonical case ids of a problem");
  cases->add_option("PROBLEM", into.cases.problem, "a problem folder or problem.toml")->required();
  cases->add_flag("--json", into.cases.json, "print JSON");
  cases->add_option("--secret-file", into.cases.secret_file,
                    "list the hidden sets drawn with this secret (also $KJUDGE_SECRET)");

  auto* compare = app->add_subcommand("compare", "judge one output file against a golden");
  CompareArgs& c = into.compare;
  compare->add_option("ACTUAL", c.files.actual, "the output to judge (.npy)")->required();
  compare->add_option("EXPECTED", c.files.expected, "the golden (.npy)")->required();
  compare->add_option("--policy", c.files.policy, "the comparison policy")->required();
  compare->add_option("--reference", c.files.reference, "the same-precision reference (.npy)");
  compare->add_option("--dtype", c.files.dtype, "the output dtype");
  compare->add_option("--expected", c.files.expected_kind, "golden or reference")
      ->check(CLI::IsMember({"golden", "reference"}));
  compare->add_option("--slice", c.files.slice, "axis judged slice by slice")
      ->check(CLI::NonNegativeNumber);
  compare->add_option("--nan", c.files.nan, "propagate, ignore or exempt")
      ->check(CLI::IsMember({"propagate", "ignore", "exempt"}));
  compare->add_option("--json", c.json, "write the JSON report to FILE, or - for stdout");
  compare->add_flag("--exact-percentiles", c.files.exact_percentiles,
                    "exact error percentiles (a selection) instead of binned ones");

  // The on-disk case cache, alike in check, bench and serve.
  auto add_case_cache_options = [](CLI::App* sub, std::string& dir, std::uint64_t& mib) {
    sub->add_option("--case-cache-dir", dir,
                    "the oracle's cases kept on disk (default $XDG_CACHE_HOME/kjudge/cases; off: "
                    "none)");
    sub->add_option("--case-cache-dir-mib", mib, "MiB that folder may hold (default 4096)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
  };
  // `check` and `bench` judge alike: the same options, bench adds --runs.
  auto add_judge_options = [&add_case_cache_options](CLI::App* sub, CheckArgs& k) {
    sub->add_option("PROBLEM", k.problem, "a problem folder or problem.toml")->required();
    sub->add_option("--candidate", k.candidate, "the candidate .cu file")->required();
    sub->add_option("--case", k.case_id, "run this case alone (an id of `kjudge cases`)");
    sub->add_flag("--fail-fast", k.options.fail_fast, "stop at the first failing case");
    sub->add_flag("--redact-hidden", k.redact_hidden, "hidden cases: reason and class only");
    sub->add_option("--secret-file", k.secret_file,
                    "the secret hidden shapes are drawn with (also $KJUDGE_SECRET)");
    sub->add_option("--secret", k.secret, "refused: use --secret-file")->group("");
    sub->add_option("--json", k.json, "write the JSON report to FILE, or - for stdout");
    sub->add_option("--junit", k.junit, "write a JUnit XML report to FILE");
    sub->add_option("--cache", k.cache, "the NVRTC cache folder");
    add_case_cache_options(sub, k.case_cache_dir, k.case_cache_dir_mib);
    sub->add_option("--device", k.options.device, "the CUDA device ordinal")->check(CLI::NonNegativeNumber);
    sub->add_option("--backend", k.backend,
                    "where kernels run: auto (the GPU, else the CPU), cuda, host")
        ->check(CLI::IsMember({"auto", "cuda", "host"}));
    sub->add_flag("--no-race-detection", k.no_race_detection,
                  "host backend: no race screening (faster, races unseen)");
    sub->add_flag("--allow-loosen", k.allow_loosen,
                  "judge by a policy looser than the problem's card.toml records");
    sub->add_flag("--exact-bounds", k.options.exact_bounds,
                  "host backend: every run checked, every out-of-bounds read or write exact");
    sub->add_flag("--exact-percentiles", k.options.exact_percentiles,
                  "exact error percentiles (a selection) instead of binned ones");
    sub->add_flag("--stats", k.options.statistics,
                  "error percentiles of passing outputs too (failing ones always have them)");
    sub->add_option("--time-budget", k.options.time_budget_s,
                    "seconds of the candidate's run time over all cases (default 10 on the GPU, "
                    "120 on the host; 0: none)")
        ->check(CLI::Range(0.0, 1e6));
    sub->add_flag("--unsafe-test-switches", k.unsafe_test_switches,
                  "honour KJ_TEST_DISABLE (defences off, for kjudge's own tests; the verdict "
                  "lists them)");
  };
  auto* check = app->add_subcommand("check", "judge a candidate kernel against a problem");
  add_judge_options(check, into.check);
  check->add_option("--against", into.check.against, "judge bit-exactly against an old kernel");

  auto* bench = app->add_subcommand("bench", "judge a candidate, then time it against the reference");
  add_judge_options(bench, into.bench);
  into.bench.runs = 10;
  bench->add_option("--against", into.bench.against,
                    "a tuning-only change: bit-identical to an old kernel, both timed side by "
                    "side");
  // CLI11's PositiveNumber lets NaN through (NaN <= 0 is false) and takes inf.
  const CLI::Validator positive_ms(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double ms = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(ms) || !(ms > 0))
          return "must be a positive number of milliseconds, got '" + text + "'";
        return "";
      },
      "MS > 0");
  bench->add_option("--slo-p99", into.bench.slo_p99_ms,
                    "fail unless the candidate's p99 latency is at most MS milliseconds")
      ->check(positive_ms);

  auto* serve = app->add_subcommand("serve", "judge requests read as JSON Lines, one answer a line");
  serve->add_option("--backend", into.serve.backend,
                    "where kernels run unless a request says: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  serve->add_option("--cache", into.serve.cache, "the NVRTC cache folder");
  add_case_cache_options(serve, into.serve.case_cache_dir, into.serve.case_cache_dir_mib);
  const CLI::Range ordinal(0, 1023); // says "not in range 0 to 1023" for "x" too
  auto* device = serve->add_option("--device", into.serve.device, "the CUDA device ordinal")
                     ->check(ordinal);
  serve->add_option("--devices", into.serve.devices,
                    "GPUs to spread requests over, one judge each (e.g. 0,1)")
      ->delimiter(',')
      ->check(ordinal)
      ->excludes(device);
  serve->add_option("--case-cache", into.serve.case_cache_mib,
                    "MiB of inputs, goldens and references kept between requests (0: none)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 30));
  serve->add_option("--secret-file", into.serve.secret_file,
                    "the secret hidden shapes are drawn with (also $KJUDGE_SECRET)");
  serve->add_option("--jobs", into.serve.jobs,
                    "judges per device, side by side (a bench request runs alone); default 1")
      ->check(CLI::Range(1, 64));
  serve->add_flag("--unordered", into.serve.unordered,
                  "answer each request when it is ready, not in request order (ids say which)");
  serve->add_flag("--allow-loosen", into.serve.allow_loosen,
                  "judge problems whose policy is looser than their card.toml records");
  auto* http = serve->add_option("--http", into.serve.http,
                                 "serve over HTTP on [HOST:]PORT (host default 127.0.0.1)");
  serve->add_option("--token-file", into.serve.token_file,
                    "HTTP: the bearer token every request must carry (required)")
      ->needs(http);
  serve->add_option("--max-idle", into.serve.max_idle, "HTTP: stop after S seconds without a request")
      ->check(CLI::Range(0.0, 1e9))
      ->needs(http);
  serve->add_flag("--no-spare-workers", into.serve.no_spare_workers,
                  "start each check's worker when it is needed (no worker waits ready beside "
                  "the judge)");
  auto* run = app->add_subcommand("run", "judge every sample of a suite: pass@k, speedups");
  RunArgs& r = into.run;
  run->add_option("SUITE", r.suite, "a folder of problems with a manifest.toml")->required();
  run->add_option("--samples", r.samples,
                  "a folder with a subfolder of .cu files per problem, or a JSON Lines file "
                  "(default: the problems' solutions/ and traps/)");
  run->add_option("--only", r.only, "judge this problem's samples alone (repeatable)");
  run->add_flag("--debug", r.debug, "judge the manifest's debug subset alone");
  run->add_option("--devices", r.devices, "GPUs to spread samples over, one judge each")
      ->delimiter(',')
      ->check(ordinal);
  run->add_option("--jobs", r.jobs, "judges per device, side by side; default 1")
      ->check(CLI::Range(1, 64));
  run->add_option("--build-jobs", r.build_jobs,
                  "KernelBench suites: load_inline builds made at once by each judge, ahead of "
                  "judging (default: the cores less one, shared among the judges; 0: each "
                  "candidate builds in its judge)")
      ->check(CLI::Range(0, 1024));
  run->add_option("--shard", r.shard, "judge shard i of n (i/n); `kjudge merge` joins them");
  auto* run_out = run->add_option("--out", r.out, "the result folder (default runs/SUITE-TIME)");
  run->add_option("--resume", r.resume, "go on with a result folder: judge what it lacks")
      ->excludes(run_out);
  run->add_option("--backend", r.backend, "where kernels run: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  run->add_option("--cache", r.cache, "the NVRTC cache folder");
  run->add_option("--secret-file", r.secret_file,
                  "the secret hidden shapes are drawn with (also $KJUDGE_SECRET)");
  run->add_option("--runs", r.runs, "host backend: timed runs per case (default 10)")
      ->check(CLI::Range(1, 1000));
  run->add_flag("--all-cases", r.all_cases,
                "judge every case of a failing sample (default: stop at its first failing one)");
  run->add_option("--min-time", r.min_time, "GPU: seconds each timed case runs at least")
      ->check(CLI::Range(0.0, 3600.0));
  auto* ray = run->add_option("--ray", r.ray,
                              "judge on a Ray cluster at ADDRESS (local: one started here)");
  run->add_option("--actors", r.actors, "Ray: judges in the cluster (default one per GPU, else 2)")
      ->check(CLI::Range(1, 4096))
      ->needs(ray);

  auto* merge = app->add_subcommand("merge", "join the result folders of a run's shards");
  merge->add_option("SUITE", into.merge.suite, "the suite the shards ran")->required();
  merge->add_option("FOLDER", into.merge.folders, "the shards' result folders")->required();
  merge->add_option("--out", into.merge.out, "the folder to write")->required();

  auto* cache = app->add_subcommand("cache", "what kjudge's caches on disk hold, or empty them");
  cache->add_option("ACTION", into.cache.action, "stats or clear")
      ->required()
      ->check(CLI::IsMember({"stats", "clear"}));
  cache->add_option("--cache", into.cache.cache, "the NVRTC cache folder");
  cache->add_option("--case-cache-dir", into.cache.case_cache_dir,
                    "the case cache folder (off: leave it out)");
  cache->add_flag("--json", into.cache.json, "print JSON");

  auto* audit = app->add_subcommand("audit", "whether a problem can be judged under its policy");
  AuditArgs& au = into.audit;
  audit->add_option("PROBLEM", au.problems, "problem folders");
  audit->add_option("--policy", au.policies,
                    "more policies beside the problem's own: kernelbench-v0, kernelbench, "
                    "torch-defaults, llmc, or FILE.toml")
      ->delimiter(',');
  audit->add_option("--backend", au.backend, "where the cases are made: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  audit->add_option("--json", au.json, "write the JSON report to FILE, or - for stdout");
  audit->add_flag("--ladder", au.ladder, "run the validity ladder on the problem's solutions");
  audit->add_option("--html", au.html, "write the HTML page (the table and the ladder's plots)");
  audit->add_option("--kernelbench", au.kernelbench,
                    "audit a folder of KernelBench-format problems (Python, torch) instead");

  auto* kb = app->add_subcommand("kernelbench", "judge KernelBench-format candidates (Python, torch)");
  KernelbenchArgs& k = into.kernelbench;
  kb->add_option("PROBLEM", k.problem, "the problem file (Model, get_inputs, get_init_inputs)")
      ->required();
  kb->add_option("CANDIDATE", k.candidates, "candidate files (ModelNew)")->required();
  kb->add_flag("--json", k.json, "one JSON verdict per line");
  kb->add_flag("--bench", k.bench, "time it beside the reference");
  kb->add_flag("--backward", k.backward, "compare the gradients too");
  kb->add_option("--policy", k.policy, "kjudge's policy (default relative)");
  kb->add_option("--seeds", k.seeds, "seeds for get_inputs (default 42,43,44)");
  kb->add_option("--scalings", k.scalings, "factors for cases from the first seed's inputs");
  kb->add_option("--device", k.device, "cuda:N or cpu");
  kb->add_option("--forbid", k.forbid, "a torch op the candidate may not call; repeatable");
  kb->add_flag("--allow-torch", k.allow_torch, "forbid no torch op");
  kb->add_option("--record", k.record, "replay recorded inputs, weights and predictions");
  kb->add_option("--trials", k.trials, "timed trials (default 100)");
  kb->add_option("--kernelbench-tolerance", k.kernelbench_tolerance,
                 "KernelBench's allclose tolerance, reported beside (default 1e-2)");
  kb->add_option("--timeout", k.timeout, "seconds per step of a run (default 60)");
  kb->add_flag("--unconfined", k.unconfined, "run the worker without its sandbox");

  auto* loc = app->add_subcommand("localize", "which stage of a multi-stage kernel owns its error");
  LocalizeArgs& lo = into.localize;
  loc->add_option("PROBLEM", lo.problem, "a problem folder with [[stage]] tables")->required();
  loc->add_option("--candidate", lo.candidate, "the candidate (.cu) whose plan exposes the stages")
      ->required();
  loc->add_option("--backend", lo.backend, "where kernels run: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  loc->add_option("--case", lo.case_id, "decompose this case alone");
  loc->add_option("--cases", lo.max_cases, "decompose at most N cases (default 8)")
      ->check(CLI::PositiveNumber);
  loc->add_option("--baseline", lo.baseline,
                  "the version before a fix: what it should not have moved must not have");
  loc->add_option("--fixed", lo.fixed, "with --baseline: the stage the fix changed");
  loc->add_option("--price", lo.price,
                  "a fix of the candidate, priced by the problem's [score] formula");
  loc->add_option("--cache", lo.cache, "the NVRTC cache folder");
  loc->add_option("--json", lo.json, "write the JSON report to FILE, or - for stdout");
  loc->add_option("--html", lo.html, "write the HTML page (the terms' tables and plots) to FILE");

  auto* wi = app->add_subcommand("whatif", "precision schemes of a staged problem's intermediates");
  WhatifArgs& w = into.whatif;
  wi->add_option("PROBLEM", w.problem, "a problem folder with [[stage]] tables")->required();
  wi->add_option("--scheme", w.scheme, "a TOML file of [[scheme]] tables")->required();
  wi->add_option("--cases", w.max_cases, "replay at most N cases of the host plan (default 64)")
      ->check(CLI::PositiveNumber);
  wi->add_option("--cache", w.cache, "the NVRTC cache folder");
  wi->add_option("--json", w.json, "write the JSON report to FILE, or - for stdout");

  auto* card = app->add_subcommand("card", "write a problem's tolerance card from its audit");
  card->add_option("PROBLEM", into.card.problem, "a problem folder")->required();
  card->add_option("--backend", into.card.backend, "where the cases are made: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));

  auto* mutate = app->add_subcommand("mutate", "measure how many injected bugs each checker lets through");
  MutateArgs& m = into.mutate;
  mutate->add_option("PROBLEM", m.problems, "problem folders (their solutions/*.cu are mutated)");
  mutate->add_option("--checkers", m.checkers,
                     "checkers under test: kjudge, kernelbench-v0, kernelbench, torch-defaults, "
                     "llmc, or FILE.toml (default: the five)")
      ->delimiter(',');
  mutate->add_option("--operators", m.operators, "operator ids or categories (default: all)")
      ->delimiter(',');
  mutate->add_option("--budget", m.budget, "mutants executed at most, sampled across categories")
      ->check(CLI::Range(0, 10000000));
  mutate->add_option("--jobs", m.jobs, "compile processes (default: the cores)")
      ->check(CLI::Range(1, 256));
  mutate->add_option("--backend", m.backend, "where mutants run: auto, cuda, host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  mutate->add_option("--state", m.state,
                     "the campaign's folder: results kept as they finish, reused, resumed "
                     "(default: mutate/ under the cache folder)");
  mutate->add_flag("--fresh", m.fresh, "forget the results kept in the state folder");
  mutate->add_option("--cache", m.cache, "the NVRTC cache folder");
  mutate->add_option("--html", m.html, "write the HTML report to FILE");
  mutate->add_option("--json", m.json, "write the mutation-testing report JSON to FILE");
  mutate->add_option("--jsonl", m.jsonl, "write one JSON line per mutant to FILE");
  mutate->add_option("--campaign", m.campaign,
                     "write the campaign's raw results (JSON, what the reports are made from) to FILE");
  mutate->add_option("--emit-cases", m.emit_cases,
                     "write DIR/PROBLEM.toml: the [[case]]s that expose what the default cases "
                     "miss, to append to the problem");
  mutate->add_option("--kernelbench", m.kernelbench,
                     "mutate the kernels of a folder of KernelBench-format solutions (their "
                     "load_inline sources and @triton.jit functions) instead");
  mutate->add_option("--sites", m.sites, "--kernelbench: which kernels, cuda, triton or both");
  mutate->add_option("--ray", m.ray, "--kernelbench: judge on a Ray cluster (ADDRESS, or local)");

  bench->add_option("--runs", into.bench.runs,
                    "host backend: timed runs per public case (default 10)")
      ->check(CLI::Range(1, 1000000));
  TimingOptions& timing = into.bench.timing;
  bench->add_option("--min-time", timing.min_time_s,
                    "GPU: seconds of samples at least, per timed case (default 0.5)")
      ->check(CLI::Range(0.0, 3600.0));
  bench->add_option("--max-time", timing.max_time_s,
                    "GPU: seconds per timed case at most, warm-up included (default 15)")
      ->check(CLI::Range(0.0, 3600.0));
  bench->add_option("--noise", timing.noise,
                    "GPU: stop once both medians' relative noise is under this (default 0.005)")
      ->check(CLI::Range(0.0, 1.0));
  bench->add_option("--rotation", timing.rotation,
                    "GPU: input sets rotated, each drawn afresh between visits (default 8)")
      ->check(CLI::Range(1, 8));
  return app;
}

}  // namespace kj::cli
