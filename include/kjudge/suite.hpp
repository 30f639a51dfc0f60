// Suites and their scores (`kjudge run`): a suite is a folder of problems listed by its
// manifest.toml; samples are candidates per problem; the summary turns one result per sample into
// what benchmark papers report (accuracy, pass@k, fast_p, mean speedups), each figure saying how
// it was aggregated.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/serve.hpp"

namespace kj::suite {

struct Entry {
  std::string name;               // the problem's name, as the manifest lists it
  std::filesystem::path dir;      // its folder
  std::string category = "uncategorized";
  // A KernelBench-format problem (a problem.py, judged by the Python adapter: docs/kernelbench.md)
  // rather than a problem.toml.
  bool kernelbench = false;
};

struct Suite {
  std::string name;               // the folder's name
  std::filesystem::path dir;
  std::vector<Entry> problems;    // in the manifest's order
  std::vector<std::string> debug; // the manifest's `debug` subset (problem names)
};

// Reads DIR/manifest.toml: [[problem]] tables with name, path (relative to DIR: a folder with a
// problem.toml, or a KernelBench-format problem.py) and an optional category; a top-level
// `debug = [...]` of problem names. A SpecError names the file and field.
Suite load_suite(const std::filesystem::path& dir);

struct Sample {
  std::string problem;  // an Entry's name
  std::string id;       // unique within its problem
  std::filesystem::path path;  // the candidate's file, or empty when `source` holds its text
  std::string source;
  nlohmann::json metadata = nlohmann::json::object(); // the generator's, carried to the results
};

// The samples in FROM: a folder with a subfolder per problem holding any number of .cu files
// (.py for a KernelBench-format problem; id: the file's stem), or a JSON Lines file of {"problem", "sample_id", "source",
// "metadata"?}. A sample of a problem the suite lacks, a duplicate id or a malformed line is a
// SpecError naming it. Sorted by problem (the suite's order), then id.
std::vector<Sample> load_samples(const std::filesystem::path& from, const Suite& suite);
// Each problem's own candidates (solutions/ and traps/, ids "solutions/x", "traps/y"; a
// KernelBench-format problem's candidates/, "candidates/z").
std::vector<Sample> bundled_samples(const Suite& suite);

// The unbiased pass@k of n samples with c correct: 1 - C(n-c, k) / C(n, k), computed as a
// product so large n does not overflow; none where n < k.
std::optional<double> pass_at_k(int n, int c, int k);

// What the summary needs of one sample's result (a results.jsonl line).
struct Outcome {
  std::string problem, sample;
  bool compiled = false, correct = false;
  std::optional<double> speedup;           // over the problem's reference
  std::optional<double> baseline_speedup;  // over its baseline, where it has one
  // The judge's seconds for the sample, and their split by phase (null where not measured).
  std::optional<double> seconds, compile_seconds, check_seconds, bench_seconds;
};
Outcome outcome_of(const nlohmann::json& result_line);

// The suite's summary over every sample's outcome: per problem (samples, compiled, correct,
// fastest correct and its speedups), per category and over the suite (accuracy, pass@1/5/10,
// fast_p for p = 0, 1, 1.2, 2, the geometric and arithmetic mean speedups over correct samples),
// with an "aggregation" text beside each figure; and the judge's seconds by phase, summed.
nlohmann::json summarize(const Suite& suite, const std::vector<Outcome>& outcomes);
// The same as a Markdown page (summary.md).
std::string summary_markdown(const nlohmann::json& summary);

} // namespace kj::suite

namespace kj::suite {

// Which samples a run takes: --only (problem names), --debug (the manifest's subset), --shard
// i/n (a stable split by the sample's problem and id, so n runs together take each sample once).
struct Selection {
  std::vector<std::string> only;
  bool debug = false;
  int shard_index = 0, shard_count = 1;
};
// The samples of `samples` the selection keeps; a name that is no problem of the suite, or a
// --debug on a manifest without `debug`, is a SpecError.
std::vector<Sample> select_samples(const Suite& suite, std::vector<Sample> samples,
                                   const Selection& selection);

struct RunOptions {
  ServeOptions judge;  // backend, devices, jobs per device: serve's engine
  int runs = 10;       // the host bench's timed runs of each case
  TimingOptions timing;
  // A sample's check stops at its first failing case (its verdict and reason are that case's):
  // a suite needs correct or not, and a crashing sample would otherwise pay a worker's restart
  // per case. `kjudge run --all-cases` judges every case.
  bool fail_fast = true;
  // When set, the samples are judged by these commands instead of in this process, each a
  // program that speaks serve's protocol on its standard input and output and answers in any
  // order (`python -m kjudge.ray`: a Ray cluster's judges; `python -m kjudge.kernelbench.serve`,
  // one per device and job): the samples are dealt to them in turn, and they run side by side.
  std::vector<std::vector<std::string>> judge_commands;
  // Called after each sample with (judged so far, to judge in all), from one thread at a time.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct RunReport {
  std::filesystem::path dir;
  std::size_t judged = 0;  // in this process
  std::size_t resumed = 0; // already in results.jsonl when it started
  nlohmann::json summary;
};

// Judges each sample (check, then bench when it passes) into DIR/results.jsonl, a line per
// sample appended and flushed as it is judged, with its provenance; samples that already have a
// line there for the same source are not judged again (--resume: an interrupted run loses at most
// the samples in flight). Then the summaries: results.jsonl rewritten in the suite's order,
// summary.json, summary.md and junit.xml.
RunReport run_suite(const Suite& suite, const std::vector<Sample>& samples,
                    const std::filesystem::path& dir, const RunOptions& options);

// The summaries of the result lines in the folders `from` (the shards of one run: `kjudge
// merge`), written to `out` with their results.jsonl (a sample judged in two folders counts once,
// its last line).
RunReport merge_results(const Suite& suite, const std::vector<std::filesystem::path>& from,
                        const std::filesystem::path& out);

} // namespace kj::suite
