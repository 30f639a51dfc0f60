// The command tree of kjudge: the CLI11 parser with every subcommand and option, the values
// they bind, and the functions that carry each subcommand out. Kept apart from run() so the
// help test can walk the same parser the user gets and compare it with docs/cli.md.
#pragma once

#include <filesystem>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kjudge/judge.hpp"

#include <CLI/CLI.hpp>

namespace kj::cli {

struct ValidateArgs {
  std::vector<std::string> problems;
  bool json = false;
};

struct ExportArgs {
  std::string problem;
  std::string output;  // empty: the TOML goes to standard output
};

struct CasesArgs {
  std::string problem;
  bool json = false;
  std::string secret_file;  // empty: $KJUDGE_SECRET, else no drawn hidden sets
};

struct CompareArgs {
  CompareFiles files;
  std::string json;  // empty: no JSON; "-": standard output
};

struct CheckArgs {
  // The options that reach kj::check as the user wrote them, bound by the parser in place; the
  // fields below are those the command turns into options (paths, the secret, the backend).
  CheckOptions options;
  std::string problem;
  std::string candidate;
  std::string case_id;   // empty: every case
  bool redact_hidden = false;
  std::string secret;       // refused: /proc shows a command line (use secret_file)
  std::string secret_file;  // empty: $KJUDGE_SECRET
  std::string against;   // empty: judge against the problem's reference
  std::string json;      // empty: no JSON; "-": standard output
  std::string junit;     // empty: no JUnit XML
  std::string cache;     // empty: $XDG_CACHE_HOME/kjudge or ~/.cache/kjudge
  std::string case_cache_dir;   // empty: default_case_cache_dir(); "off": none
  std::uint64_t case_cache_dir_mib = CheckOptions{}.case_cache_dir_bytes >> 20;
  std::string backend = "auto"; // auto | cuda | host
  bool no_race_detection = false;
  bool unsafe_test_switches = false; // honour KJ_TEST_DISABLE (the verdict then says so)
  int runs = 0;          // bench: timed runs per public case (0: check, no timing)
  TimingOptions timing;  // bench on the GPU
  std::optional<double> slo_p99_ms; // bench --slo-p99: the candidate's p99 latency at most this
  bool allow_loosen = false; // a policy looser than the problem's card.toml records
};

struct ServeArgs {
  std::string backend = "auto"; // what a request that names none gets
  std::string cache;            // empty: $XDG_CACHE_HOME/kjudge or ~/.cache/kjudge
  std::string case_cache_dir;   // as CheckArgs'
  std::uint64_t case_cache_dir_mib = CheckOptions{}.case_cache_dir_bytes >> 20;
  int device = 0;
  std::vector<int> devices;     // several: one judge per device, requests spread over them
  std::uint64_t case_cache_mib = 8192; // the oracle's cases kept between requests
  bool no_spare_workers = false;        // start each check's worker when the check needs it
  int jobs = 1;                         // judges per device (ServeOptions::jobs)
  bool unordered = false;               // answers as they are ready
  bool allow_loosen = false;            // serve problems whose policy is looser than their card
  std::string secret_file;              // empty: $KJUDGE_SECRET
  std::string http;                     // [HOST:]PORT: serve over HTTP instead of stdin/stdout
  std::string token_file;               // --http: the bearer token requests must carry
  double max_idle = 0;                  // --http: stop after this many idle seconds (0: never)
};

// `kjudge cache stats|clear`: the NVRTC cache's and the case cache's folders.
struct CacheArgs {
  std::string action;          // stats | clear
  std::string cache;           // as CheckArgs'
  std::string case_cache_dir;  // as CheckArgs'
  bool json = false;
};

// `kjudge mutate`: a mutation campaign over problems' bundled solutions.
struct MutateArgs {
  std::vector<std::string> problems;
  std::vector<std::string> checkers;   // builtin names or .toml files (empty: every builtin)
  std::vector<std::string> operators;  // catalogue ids or categories (empty: all)
  int budget = 0;
  int jobs = 0;                        // 0: the machine's cores
  std::string backend = "auto";
  std::string state;                   // the campaign's folder (default under --cache's)
  std::string cache;                   // as CheckArgs'
  std::string html, json, jsonl;       // report files
  std::string campaign;                // the campaign's raw JSON (campaign_json)
  std::string emit_cases;              // folder for the [[case]]s the problems should adopt
  bool fresh = false;                  // forget the kept results
  std::string kernelbench;             // a folder of KernelBench-format problems instead
  std::string sites;                   // --kernelbench: cuda, triton or both
  std::string ray;                     // --kernelbench: a Ray cluster's address, or local
};

struct AuditArgs {
  std::vector<std::string> problems;
  std::vector<std::string> policies; // checker names or .toml files beside "kjudge"
  std::string backend = "auto";
  std::string json;                  // report file, or - for stdout
  bool ladder = false;               // the validity ladder on the solutions
  std::string html;                  // the HTML page
  std::string kernelbench;           // a folder of KernelBench-format problems instead
};

// Parsed for --help and for the words' syntax only: the Python adapter gets the user's own
// arguments (run_python_module).
struct KernelbenchArgs {
  std::string problem;
  std::vector<std::string> candidates;
  bool json = false, bench = false, backward = false, allow_torch = false, unconfined = false;
  std::string policy, seeds, scalings, device, record;
  std::vector<std::string> forbid;
  int trials = 100;
  double kernelbench_tolerance = 1e-2, timeout = 60;
};

// `kjudge run SUITE` and `kjudge merge SUITE FOLDER...` (run_command.cpp).
struct RunArgs {
  std::string suite;
  std::string samples;                 // empty: the problems' own solutions/ and traps/
  std::vector<std::string> only;
  bool debug = false;
  std::vector<int> devices;
  int jobs = 1;
  int build_jobs = -1;                 // KernelBench suites: build workers (-1: the cores less one)
  std::string shard;                   // "i/n"
  std::string out, resume;             // the result folder (default runs/<suite>-<time>)
  std::string backend = "auto";
  std::string cache;
  int runs = 10;                       // the host bench's timed runs
  double min_time = TimingOptions{}.min_time_s;
  bool all_cases = false;              // judge every case of a failing sample
  std::string ray;                     // a Ray cluster's address ("local": one started here)
  int actors = 0;                      // its judges (0: kjudge.ray's default)
  std::string secret_file;             // the secret hidden shapes are drawn with
};

struct MergeArgs {
  std::string suite;
  std::vector<std::string> folders;
  std::string out;
};

struct LocalizeArgs {
  std::string problem, candidate;
  std::string backend = "auto";
  std::string cache;
  std::string case_id;     // --case ID: that case alone
  int max_cases = 8;
  std::string baseline;    // --baseline OLD.cu: the untouched-leaf control
  std::string fixed;       // --fixed STAGE
  std::string price;       // --price NEW.cu: the fix priced by the problem's [score]
  std::string json;        // FILE, or - for stdout
  std::string html;        // FILE: the page with the plots
};

struct WhatifArgs {
  std::string problem, scheme;
  std::string cache;
  int max_cases = 64;
  std::string json; // FILE, or - for stdout
};

struct CardArgs {
  std::string problem;
  std::string backend = "auto";
};

// Everything the parser fills in.
struct Invocation {
  ValidateArgs validate;
  ExportArgs export_;
  CasesArgs cases;
  CompareArgs compare;
  CheckArgs check;
  CheckArgs bench; // runs: 10 unless --runs says (make_app)
  ServeArgs serve;
  CacheArgs cache;
  MutateArgs mutate;
  AuditArgs audit;
  CardArgs card;
  LocalizeArgs localize;
  WhatifArgs whatif;
  KernelbenchArgs kernelbench;
  RunArgs run;
  MergeArgs merge;
  std::vector<std::string> words; // the command line as given, for the Python commands
};

// The parser, bound to `into`. Its formatter prints docs/cli.md's sections as --help.
std::unique_ptr<CLI::App> make_app(Invocation& into);

// The subcommands. Each returns docs/design.md's exit code and throws SpecError on bad input (run()
// turns that into a message and exit 2).
int run_validate(const ValidateArgs& args, std::ostream& out, std::ostream& err);
// Runs `python -m MODULE ARGS` (KJUDGE_PYTHON, else python3) and returns its exit status; 2 when
// that Python lacks the kjudge package or torch (python_command.cpp).
int run_python_module(const std::string& command, const std::string& module,
                      const std::vector<std::string>& args, std::ostream& err);
int run_export(const ExportArgs& args, std::ostream& out, std::ostream& err);
int run_cases(const CasesArgs& args, std::ostream& out, std::ostream& err);
int run_compare(const CompareArgs& args, std::ostream& out, std::ostream& err);
// `check`, and `bench` when args.runs > 0.
int run_check(const CheckArgs& args, std::ostream& out, std::ostream& err);
// `kjudge mutate`.
int run_mutate(const MutateArgs& args, std::ostream& out, std::ostream& err);
int run_audit(const AuditArgs& args, std::ostream& out, std::ostream& err);
int run_card(const CardArgs& args, std::ostream& out, std::ostream& err);
int run_localize(const LocalizeArgs& args, std::ostream& out, std::ostream& err);
int run_whatif(const WhatifArgs& args, std::ostream& out, std::ostream& err);
// `kjudge run` and `kjudge merge`.
int run_run(const RunArgs& args, std::ostream& out, std::ostream& err);
int run_merge(const MergeArgs& args, std::ostream& out, std::ostream& err);
// `kjudge cache`.
int run_cache(const CacheArgs& args, std::ostream& out, std::ostream& err);
// Requests from `in` (standard input), answers to `out`.
int run_serve(const ServeArgs& args, std::istream& in, std::ostream& out, std::ostream& err);

// The secret of hidden shapes drawn from ranges: the file's bytes (one trailing newline
// dropped), else $KJUDGE_SECRET, else none. Either way KJUDGE_SECRET leaves this process's
// environment, so nothing kjudge starts inherits it; a secret under kMinSecretBytes or an
// unreadable file is a SpecError naming where.
std::optional<std::string> read_secret(const std::string& secret_file);

// The caches' folders: --cache's default ($XDG_CACHE_HOME/kjudge, else ~/.cache/kjudge; empty
// where neither is set), and --case-cache-dir's value as a folder ("off": empty, none; empty:
// the cases/ folder under --cache's default).
std::filesystem::path default_cache_dir();
std::filesystem::path case_cache_dir_of(const std::string& option_value);

// This executable's path (/proc/self/exe): the workers' program and where its kernels lie.
std::filesystem::path self_executable();

}  // namespace kj::cli
