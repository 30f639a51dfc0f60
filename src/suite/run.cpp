// kj::suite::run_suite and merge_results (kjudge/suite.hpp): samples turned into bench
// requests for serve's engine, each answer into one results.jsonl line (appended and flushed, so
// a killed run keeps what it judged), then the files a reader opens: results.jsonl in the
// suite's order, summary.json, summary.md, junit.xml.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "kjudge/error.hpp"
#include "kjudge/report.hpp"
#include "kjudge/sha256.hpp"
#include "kjudge/suite.hpp"
#include "suite/suite_internal.hpp"
#include "util/child_process.hpp"

namespace kj::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::string source_of(const Sample& s) {
  if (s.path.empty()) return s.source;
  std::ifstream in(s.path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string key_of(const std::string& problem, const std::string& sample) {
  return problem + "\n" + sample;
}

std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + '\n';
}

// Every complete line of DIR/results.jsonl, by sample (the last line of a sample wins); a line
// cut off by a kill (no newline, or not JSON) is dropped.
std::map<std::string, json> read_results(const fs::path& dir) {
  std::map<std::string, json> lines;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break; // no newline after it: cut off
    try {
      json j = json::parse(line);
      // The key first: json's assignment takes its operand by value, moved from before the
      // left side is evaluated.
      const std::string key = key_of(j.value("problem", ""), j.value("sample", ""));
      lines[key] = std::move(j);
    } catch (const json::parse_error&) {
    }
  }
  return lines;
}

// A sample's results line from serve's answer: what the summary reads, with provenance.
json result_line(const Sample& s, const Entry& e, const std::string& sha, const json& answer) {
  json line = {{"problem", s.problem}, {"sample", s.id}, {"category", e.category},
               {"source_sha256", sha}, {"metadata", s.metadata}};
  const std::string stamp = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                                        fmt::gmtime(std::chrono::system_clock::now()));
  if (answer.contains("error")) { // the problem does not load: the suite's fault, never scored
    line.update({{"outcome", "ERROR"}, {"reason", answer["error"].value("kind", "internal")},
                 {"message", answer["error"].value("message", "")}, {"compiled", false},
                 {"correct", false}, {"speedup", nullptr}, {"baseline_speedup", nullptr},
                 {"seconds", nullptr}});
  } else {
    // Read field by field, absent ones null: the verdict may come from another judge (the
    // KernelBench adapter's), which a run's child wrote.
    const json& v = answer["verdict"];
    auto at = [](const json& j, std::initializer_list<const char*> path) {
      const json* node = &j;
      for (const char* key : path) {
        if (!node->is_object() || !node->contains(key)) return json(nullptr);
        node = &(*node)[key];
      }
      return *node;
    };
    auto time = [&](const char* key) { // KernelBench writes -1 for "not measured"
      const json t = at(v, {key});
      return t.is_number() && t.get<double>() >= 0 ? t : json(nullptr);
    };
    std::string message = at(v, {"message"}).is_string() ? v["message"].get<std::string>() : "";
    if (message.size() > 600) message = message.substr(0, 600) + "...";
    line.update({{"outcome", at(v, {"outcome"})}, {"reason", at(v, {"reason"})},
                 {"message", message}, {"compiled", at(v, {"compiled"}).is_boolean() && v["compiled"]},
                 {"correct", at(v, {"correctness"}).is_boolean() && v["correctness"]},
                 {"runtime_ms", time("runtime")}, {"ref_runtime_ms", time("ref_runtime")},
                 {"speedup", at(v, {"speedup"})}, {"baseline_speedup", at(v, {"baseline_speedup"})},
                 {"timer", at(v, {"timer"})}, {"hardware", at(v, {"metadata", "hardware"})},
                 {"backend", at(v, {"metadata", "backend"})},
                 {"problem_hash", at(v, {"manifest", "problem_hash"})},
                 {"kjudge_version", at(v, {"manifest", "kjudge_version"})},
                 // What was not judged, said: hidden shapes without a secret, a budget run out.
                 {"skips", at(v, {"skips"}).is_array() ? v["skips"] : json::array()}});
    // The judge's own time for the sample (kjudge's verdict, or the adapter's): requests are
    // queued ahead, so a clock around the request would hold the wait. Split into the
    // candidate's start (compile), the check, and bench's timing.
    const json wall_ms = at(v, {"judge_time", "wall_ms"});
    const bool kjudge_time = wall_ms.is_number();
    const json seconds = kjudge_time ? json(wall_ms.get<double>() / 1e3) : at(v, {"seconds"});
    line["seconds"] = seconds;
    line["phase_seconds"] = nullptr;
    if (seconds.is_number()) {
      auto number = [&](std::initializer_list<const char*> path, double scale) {
        const json n = at(v, path);
        return n.is_number() ? n.get<double>() * scale : 0.0;
      };
      const double compile = kjudge_time ? number({"judge_time", "start_ms"}, 1e-3)
                                         : number({"compile_seconds"}, 1);
      const double bench = kjudge_time ? number({"judge_time", "timing_ms"}, 1e-3)
                                       : number({"metadata", "judge_seconds", "timing_sets"}, 1) +
                                             number({"metadata", "judge_seconds", "time"}, 1);
      line["phase_seconds"] = {{"compile", compile},
                               {"check", std::max(0.0, seconds.get<double>() - compile - bench)},
                               {"bench", bench}};
    }
  }
  line["judged_at"] = stamp;
  return line;
}

json request_for(const Sample& s, const Entry& e, long place, const RunOptions& o) {
  json r = {{"id", place}, {"op", "bench"}, {"problem", e.dir.string()}, {"runs", o.runs},
            {"min_time", o.timing.min_time_s}, {"max_time", o.timing.max_time_s},
            {"fail_fast", o.fail_fast}};
  if (s.path.empty()) {
    r["source"] = s.source;
    r["name"] = s.id + ".cu";
  } else {
    r["candidate"] = s.path.string();
  }
  return r;
}

std::string junit_xml(const std::string& suite, const std::vector<json>& lines) {
  std::size_t failures = 0, errors = 0;
  std::string cases;
  for (const json& l : lines) {
    const std::string outcome = l.value("outcome", "ERROR");
    const json seconds = l.contains("seconds") ? l["seconds"] : json(nullptr);
    cases += fmt::format("  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">",
                         xml_escape(l.value("problem", "")), xml_escape(l.value("sample", "")),
                         seconds.is_number() ? seconds.get<double>() : 0.0);
    const std::string what = xml_escape(l.value("reason", "") + ": " + l.value("message", ""));
    if (outcome == "FAIL") {
      ++failures;
      cases += fmt::format("<failure message=\"{}\"/>", what);
    } else if (outcome != "PASS") {
      ++errors;
      cases += fmt::format("<error message=\"{}\"/>", what);
    }
    cases += "</testcase>\n";
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" "
                     "tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}</testsuite>\n",
                     xml_escape(suite), lines.size(), failures, errors, cases);
}

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream f(file, std::ios::binary);
  f << text;
  if (!f) throw SpecError({file.string(), "", 0, 0}, "cannot write the file");
}

// results.jsonl replaced whole: written beside, then renamed over, so a kill loses no line.
void replace_results(const fs::path& dir, const std::string& text) {
  write_file(dir / "results.jsonl.tmp", text);
  fs::rename(dir / "results.jsonl.tmp", dir / "results.jsonl");
}

// results.jsonl rewritten in the suite's order (problem, then sample), and the summaries.
RunReport write_summaries(const Suite& suite, const std::map<std::string, json>& by_key,
                          const fs::path& dir) {
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < suite.problems.size(); ++i) rank[suite.problems[i].name] = i;
  std::vector<json> lines;
  for (const auto& [key, line] : by_key)
    if (rank.contains(line.value("problem", ""))) lines.push_back(line);
  std::sort(lines.begin(), lines.end(), [&](const json& a, const json& b) {
    return std::pair(rank[a["problem"]], a["sample"].get<std::string>()) <
           std::pair(rank[b["problem"]], b["sample"].get<std::string>());
  });
  std::string text;
  std::vector<Outcome> outcomes;
  for (const json& l : lines) {
    text += dump_line(l);
    outcomes.push_back(outcome_of(l));
  }
  replace_results(dir, text);
  RunReport report;
  report.dir = dir;
  report.summary = summarize(suite, outcomes);
  write_file(dir / "summary.json", report.summary.dump(1) + "\n");
  write_file(dir / "summary.md", summary_markdown(report.summary));
  write_file(dir / "junit.xml", junit_xml(suite.name, lines));
  write_file(dir / "report.html", detail::run_html(report.summary, lines));
  return report;
}

// What one judge child did with the requests it was given.
struct ChildRun {
  bool ready = false;  // it said it was up (serve.py's {"ready": true} line)
  int status = 0;      // waitpid's status
  std::size_t sent = 0, received = 0;
};

// One judge child over `requests`: each written to its input on a thread of its own, answers
// read here and matched to their request by id, until the child ends.
ChildRun run_judge_child(const std::vector<std::string>& command,
                         const std::vector<const RequestLine*>& requests,
                         const std::function<void(long, json)>& answered) {
  const std::optional<util::LineChild> child = util::spawn_line_child(command);
  if (!child) throw SpecError({command[0], "", 0, 0}, "cannot start the judge command");
  ChildRun run;
  std::thread writer([&] {
    for (const RequestLine* r : requests) {
      if (!util::send_all(child->input, r->text + "\n")) break; // gone; the reader says so
      ++run.sent;
    }
    ::close(child->input);
  });
  while (const std::optional<std::string> line = util::read_line(child->output)) {
    try {
      json answer = json::parse(*line);
      if (answer.value("ready", false)) {
        run.ready = true;
      } else {
        const long place = answer.at("id").get<long>();
        ++run.received;
        answered(place, std::move(answer));
      }
    } catch (const json::exception&) {
      // not an answer (a line the child printed): ignored
    }
  }
  std::fclose(child->output);
  writer.join();
  while (::waitpid(child->pid, &run.status, 0) < 0) {
  }
  return run;
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

// judge_stream's contract through a child that speaks serve's protocol (RunOptions::
// judge_command). A child that said it was up and then ended while judging a sample (a
// candidate that broke the judge) gives that sample a FAIL naming it, and a new child judges
// the rest: every sample gets its answer. A child that ends before it is up is the judge
// command's fault, an error; what was answered is kept (a resume judges the rest).
void judge_through_process(const std::vector<std::string>& command,
                           const std::vector<RequestLine>& requests,
                           const std::function<void(long, json)>& answered) {
  std::set<long> done;
  const auto record = [&](long place, json answer) {
    if (done.insert(place).second) answered(place, std::move(answer));
  };
  for (;;) {
    std::vector<const RequestLine*> todo;
    for (const RequestLine& r : requests)
      if (!done.contains(r.place)) todo.push_back(&r);
    if (todo.empty()) return;
    const ChildRun run = run_judge_child(command, todo, record);
    const auto unanswered = std::find_if(todo.begin(), todo.end(), [&](const RequestLine* r) {
      return !done.contains(r->place);
    });
    if (unanswered == todo.end()) return;
    if (!run.ready || run.sent == 0)
      throw InternalError(fmt::format("the judge command ({}) ended after {} of {} answers; the "
                                      "result folder keeps them: --resume it",
                                      command[0], run.received, todo.size()));
    // Answers come in order: the first one missing is the sample the child died on.
    record((*unanswered)->place,
           json{{"id", (*unanswered)->place},
                {"verdict", {{"outcome", "FAIL"}, {"reason", "runtime_error"},
                             {"compiled", false}, {"correctness", false},
                             {"message", fmt::format("the judge process {} while judging this "
                                                     "sample; the rest were judged by a new one",
                                                     how_it_ended(run.status))}}}});
  }
}

// The requests dealt to the commands in turn, each command's share judged through it
// (judge_through_process) side by side with the others'.
void judge_through_processes(const std::vector<std::vector<std::string>>& commands,
                             const std::function<std::optional<RequestLine>()>& next,
                             const std::function<void(long, json)>& answered) {
  std::vector<std::vector<RequestLine>> shares(commands.size());
  for (std::size_t i = 0; auto r = next(); ++i)
    shares[i % commands.size()].push_back(std::move(*r));
  std::vector<std::exception_ptr> failed(commands.size());
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < commands.size(); ++k)
    threads.emplace_back([&, k] {
      try {
        judge_through_process(commands[k], shares[k], answered);
      } catch (...) {
        failed[k] = std::current_exception();
      }
    });
  for (std::thread& t : threads)
    t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

} // namespace

std::vector<Sample> select_samples(const Suite& suite, std::vector<Sample> samples,
                                   const Selection& sel) {
  std::set<std::string> keep;
  for (const std::string& name : sel.only) {
    if (std::none_of(suite.problems.begin(), suite.problems.end(),
                     [&](const Entry& e) { return e.name == name; }))
      throw SpecError({"--only", "", 0, 0}, fmt::format("no problem '{}' in suite {}", name, suite.name));
    keep.insert(name);
  }
  if (sel.debug) {
    if (suite.debug.empty())
      throw SpecError({(suite.dir / "manifest.toml").string(), "debug", 0, 0},
                      "--debug: the manifest names no debug subset");
    keep.insert(suite.debug.begin(), suite.debug.end());
  }
  if (sel.shard_count < 1 || sel.shard_index < 0 || sel.shard_index >= sel.shard_count)
    throw SpecError({"--shard", "", 0, 0}, "give i/n with 0 <= i < n");
  std::vector<Sample> kept;
  for (Sample& s : samples) {
    if (!keep.empty() && !keep.contains(s.problem)) continue;
    if (fnv1a(key_of(s.problem, s.id)) % static_cast<std::uint64_t>(sel.shard_count) !=
        static_cast<std::uint64_t>(sel.shard_index))
      continue;
    kept.push_back(std::move(s));
  }
  return kept;
}

RunReport run_suite(const Suite& suite, const std::vector<Sample>& samples, const fs::path& dir,
                    const RunOptions& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw SpecError({dir.string(), "", 0, 0}, "cannot create the result folder");
  std::map<std::string, json> by_key = read_results(dir);
  std::map<std::string, const Entry*> entries;
  for (const Entry& e : suite.problems) entries[e.name] = &e;

  // What is left to judge: samples without a line for their current source.
  struct Pending {
    const Sample* sample;
    std::string sha;
  };
  std::vector<Pending> pending;
  RunReport report;
  for (const Sample& s : samples) {
    std::string sha = sha256_hex(source_of(s));
    const auto it = by_key.find(key_of(s.problem, s.id));
    if (it != by_key.end() && it->second.value("source_sha256", "") == sha) {
      ++report.resumed;
      continue;
    }
    pending.push_back({&s, std::move(sha)});
  }
  {
    // Lines are appended as answers come; the file is reopened in append mode, after a cut-off
    // last line was dropped by rewriting what was read.
    std::string kept;
    for (const auto& [key, line] : by_key) kept += dump_line(line);
    replace_results(dir, kept);
  }
  std::ofstream log(dir / "results.jsonl", std::ios::app | std::ios::binary);
  std::mutex mutex;
  std::size_t next = 0;
  auto next_request = [&]() -> std::optional<RequestLine> {
    if (next == pending.size()) return std::nullopt;
    const std::size_t i = next++;
    const Pending& p = pending[i];
    return RequestLine{static_cast<long>(i), static_cast<long>(i + 1),
                       request_for(*p.sample, *entries.at(p.sample->problem), static_cast<long>(i),
                                   options).dump()};
  };
  auto answered = [&](long place, json answer) {
    const std::lock_guard<std::mutex> lock(mutex);
    const Pending& p = pending[static_cast<std::size_t>(place)];
    json line = result_line(*p.sample, *entries.at(p.sample->problem), p.sha, answer);
    log << dump_line(line) << std::flush;
    by_key[key_of(p.sample->problem, p.sample->id)] = std::move(line);
    ++report.judged;
    if (options.progress) options.progress(report.judged, pending.size());
  };
  if (options.judge_commands.empty())
    judge_stream(options.judge, next_request, answered);
  else
    judge_through_processes(options.judge_commands, next_request, answered);
  log.close();
  RunReport written = write_summaries(suite, by_key, dir);
  written.judged = report.judged;
  written.resumed = report.resumed;
  return written;
}

RunReport merge_results(const Suite& suite, const std::vector<fs::path>& from, const fs::path& out) {
  std::map<std::string, json> by_key;
  for (const fs::path& dir : from) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "results.jsonl", ec))
      throw SpecError({dir.string(), "", 0, 0}, "no results.jsonl in this folder");
    for (auto& [key, line] : read_results(dir)) by_key[key] = std::move(line);
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw SpecError({out.string(), "", 0, 0}, "cannot create the folder");
  return write_summaries(suite, by_key, out);
}

} // namespace kj::suite
