// kj::Judge and kj::serve (kjudge/serve.hpp): the request format, its checking (every field
// known and of its type, so a typo is an answer, not a silently ignored option), the problem
// cache, and the loop. Judging itself is kj::check's and kj::bench's.
#include "kjudge/serve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <istream>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <shared_mutex>
#include <thread>

#include <fmt/format.h>

#include "judge/python_adapter.hpp"
#include "kjudge/card.hpp"
#include "kjudge/error.hpp"
#include "kjudge/report.hpp"

namespace kj {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A request that cannot be carried out as written.
struct BadRequest : ErrorOfKind<ErrorKind::spec> {
  using ErrorOfKind::ErrorOfKind;
};

const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields = {
      "id",      "op",           "problem",        "candidate",         "source",
      "name",    "case",         "fail_fast",      "redact_hidden",     "runs",
      "backend", "exact_bounds", "race_detection", "exact_percentiles", "min_time",
      "max_time", "noise",       "rotation",       "stats",           "against",
      "slo_p99"};
  return fields;
}

template <class T>
std::optional<T> field(const json& request, const char* name, const char* type) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return std::nullopt;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw BadRequest(fmt::format("field '{}' must be {}", name, type));
  }
}

json error_answer(const json& id, std::string_view kind, const std::string& message) {
  return {{"id", id}, {"error", {{"kind", kind}, {"message", message}}}};
}

} // namespace

struct Judge::CachedProblem {
  fs::file_time_type toml_time;
  Problem problem;
};

Judge::Judge(ServeOptions options) : options_(std::move(options)) {
  if (!options_.defaults.case_cache && options_.case_cache_bytes > 0)
    options_.defaults.case_cache = make_case_cache(options_.case_cache_bytes);
  if (!options_.defaults.spare_workers && options_.spare_workers)
    options_.defaults.spare_workers = make_spare_workers();
}
Judge::~Judge() = default;

// A KernelBench request, answered by the adapter on this judge's device (the CPU on the host
// backend), its builds in the NVRTC cache's folder.
json Judge::kernelbench(const json& request) {
  if (!kernelbench_) {
    const char* python = std::getenv("KJUDGE_PYTHON");
    std::vector<std::string> command = {python && *python ? python : "python3", "-m",
                                        "kjudge.kernelbench.serve", "--device",
                                        options_.defaults.backend == Backend::host
                                            ? std::string("cpu")
                                            : fmt::format("cuda:{}", options_.defaults.device)};
    if (!options_.defaults.cache_dir.empty())
      command.insert(command.end(), {"--build-cache", options_.defaults.cache_dir.string()});
    kernelbench_ = std::make_unique<judge::PythonAdapter>(std::move(command));
  }
  return kernelbench_->ask(request);
}

CaseCacheStats Judge::case_cache_stats() const {
  return options_.defaults.case_cache ? kj::case_cache_stats(*options_.defaults.case_cache)
                                      : CaseCacheStats{};
}

SpareWorkerStats Judge::spare_worker_stats() const {
  return options_.defaults.spare_workers ? kj::spare_worker_stats(*options_.defaults.spare_workers)
                                         : SpareWorkerStats{};
}

const Problem& Judge::problem(const fs::path& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  const fs::path toml = fs::is_directory(canonical) ? canonical / "problem.toml" : canonical;
  const fs::file_time_type time = fs::last_write_time(toml, ec);
  auto& slot = problems_[canonical.string()];
  if (!slot || slot->toml_time != time)
    slot = std::make_unique<CachedProblem>(CachedProblem{time, load_problem(path)});
  // Read on every request: a card written or edited while serving counts from the next one.
  if (!options_.allow_loosen)
    if (const auto why = card_refusal(slot->problem))
      throw SpecError({(slot->problem.dir / "card.toml").string(), "policy", 0, 0}, *why);
  return slot->problem;
}

namespace {

// What a request asks, read and checked field by field (a BadRequest names the first field that
// is wrong).
struct CheckRequest {
  std::string op = "check";
  std::string problem;
  std::optional<std::string> candidate_path, source;
  std::string name;  // the candidate's, as the verdict names it
  CheckOptions options;
  int runs = 10;
  TimingOptions timing; // the GPU bench's loop, as `kjudge bench --min-time ...` sets it
  std::optional<double> slo_p99_ms; // bench: `kjudge bench --slo-p99`
  ReportOptions report;
};

CheckRequest read_request(const json& request, const CheckOptions& defaults) {
  if (!request.is_object()) throw BadRequest("a request is a JSON object");
  for (const auto& [key, value] : request.items())
    if (!known_fields().contains(key)) throw BadRequest(fmt::format("unknown field '{}'", key));
  CheckRequest r;
  r.op = field<std::string>(request, "op", "a string").value_or("check");
  if (r.op != "check" && r.op != "bench")
    throw BadRequest(fmt::format("op '{}' is neither \"check\" nor \"bench\"", r.op));
  const auto problem_path = field<std::string>(request, "problem", "a string");
  if (!problem_path) throw BadRequest("field 'problem' is missing (a problem folder)");
  r.problem = *problem_path;
  r.candidate_path = field<std::string>(request, "candidate", "a string");
  r.source = field<std::string>(request, "source", "a string");
  if (r.candidate_path.has_value() == r.source.has_value())
    throw BadRequest("give the candidate as 'candidate' (a path) or as 'source' (its text), "
                     "one of the two");
  r.name = r.candidate_path
               ? *r.candidate_path
               : field<std::string>(request, "name", "a string").value_or("candidate.cu");

  CheckOptions& o = r.options;
  o = defaults;
  if (const auto b = field<std::string>(request, "backend", "a string")) {
    const auto backend = parse_backend(*b);
    if (!backend) throw BadRequest(fmt::format("backend '{}' is not auto, cuda or host", *b));
    o.backend = *backend;
  }
  if (const auto c = field<std::string>(request, "case", "a string")) o.only_case = *c;
  o.fail_fast = field<bool>(request, "fail_fast", "true or false").value_or(o.fail_fast);
  o.exact_bounds = field<bool>(request, "exact_bounds", "true or false").value_or(o.exact_bounds);
  o.exact_percentiles =
      field<bool>(request, "exact_percentiles", "true or false").value_or(o.exact_percentiles);
  o.race_detection =
      field<bool>(request, "race_detection", "true or false").value_or(o.race_detection);
  o.statistics = field<bool>(request, "stats", "true or false").value_or(o.statistics);
  if (const auto old = field<std::string>(request, "against", "a string (the old kernel's path)")) {
    std::error_code ec;
    if (!fs::is_regular_file(*old, ec))
      throw BadRequest(fmt::format("against '{}': no such file", *old));
    o.against = *old;
  }
  if (const auto v = field<double>(request, "slo_p99", "a number of milliseconds")) {
    if (!(*v > 0) || !std::isfinite(*v))
      throw BadRequest("field 'slo_p99' must be a positive number of milliseconds");
    if (r.op != "bench") throw BadRequest("field 'slo_p99' is for \"op\": \"bench\"");
    r.slo_p99_ms = *v;
  }
  r.runs = field<int>(request, "runs", "a number").value_or(10);
  if (r.runs < 1) throw BadRequest("field 'runs' must be at least 1");
  auto seconds = [&](const char* name, double& into) {
    if (const auto v = field<double>(request, name, "a number of seconds")) {
      if (!(*v >= 0 && *v <= 3600))
        throw BadRequest(fmt::format("field '{}' must be 0 to 3600 seconds", name));
      into = *v;
    }
  };
  seconds("min_time", r.timing.min_time_s);
  seconds("max_time", r.timing.max_time_s);
  if (const auto v = field<double>(request, "noise", "a number")) {
    if (!(*v > 0 && *v < 1)) throw BadRequest("field 'noise' must be between 0 and 1");
    r.timing.noise = *v;
  }
  if (const auto v = field<int>(request, "rotation", "a number")) {
    if (*v < 1 || *v > 8) throw BadRequest("field 'rotation' must be 1 to 8");
    r.timing.rotation = *v;
  }
  r.report.redact_hidden = field<bool>(request, "redact_hidden", "true or false").value_or(false);
  return r;
}

} // namespace

json Judge::handle(const json& request, DeviceTurn* device_turn) {
  const json id = request.is_object() && request.contains("id") ? request["id"] : json(nullptr);
  if (request.is_object() && request.contains("problem") && request["problem"].is_string() &&
      judge::is_kernelbench_problem(request["problem"].get<std::string>()))
    return kernelbench(request);
  try {
    CheckRequest r = read_request(request, options_.defaults);
    r.options.device_turn = device_turn;
    const Problem& p = problem(r.problem);
    // Past problem(): a card that refuses the policy was allowed (--allow-loosen); say so.
    r.options.loosened_card = card_refusal(p).value_or("");
    Verdict v;
    std::optional<Candidate> candidate;
    try {
      if (r.candidate_path) {
        std::error_code ec;
        if (!fs::is_regular_file(*r.candidate_path, ec))
          throw BadRequest(fmt::format("candidate '{}': no such file", *r.candidate_path));
        candidate = load_candidate(*r.candidate_path, p);
      } else {
        candidate = parse_candidate(*r.source, r.name, p);
      }
    } catch (const SpecError& e) {
      v = unloadable_candidate_verdict(p, r.name, e.what());
    }
    if (candidate)
      v = r.op == "bench"
              ? bench(p, *candidate, BenchOptions{r.options, r.runs, r.timing, r.slo_p99_ms})
              : check(p, *candidate, r.options);
    v.manifest.kjudge_version = KJUDGE_VERSION;
    return {{"id", id}, {"verdict", to_json(v, r.report)}};
  } catch (const BadRequest& e) {
    return error_answer(id, "bad_request", e.what());
  } catch (const SpecError& e) {
    return error_answer(id, "spec_error", e.what());
  } catch (const std::exception& e) {
    return error_answer(id, "internal", e.what());
  }
}

namespace {

// A request line's answer: the judge's, or a bad_request for a line that is not JSON. With
// `turn` (judges sharing a device), the check takes its turn (CheckOptions::device_turn).
json answer_to(Judge& judge, const std::string& line, long number, DeviceTurn* turn = nullptr) {
  json request;
  try {
    request = json::parse(line);
  } catch (const json::parse_error& e) {
    return error_answer(nullptr, "bad_request",
                        fmt::format("line {}: not JSON: {}", number, e.what()));
  }
  return judge.handle(request, turn);
}

void write_answer(std::ostream& out, const json& answer) {
  // Compiler messages in a verdict may hold bytes that are not UTF-8: replaced, not thrown.
  out << answer.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
}

} // namespace

// `jobs` judges per device, each on its own thread (its CUDA context is current there), each
// taking the next request when it is free. On each device checks run side by side and a bench's
// timing alone (DeviceTurn), so no neighbour's kernels land in its timings.
struct JudgePool::Impl {
  struct Job {
    RequestLine request;
    std::function<void(long, json)> done;
  };
  std::mutex mutex;
  std::condition_variable more;
  std::deque<Job> queue;
  bool closing = false;
  std::map<int, DeviceTurn> turns; // per device
  std::map<int, std::shared_ptr<CaseCache>> case_caches; // per device, shared by its judges
  std::vector<std::thread> judges;
};

JudgePool::JudgePool(const ServeOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  const std::vector<int> devices =
      options.devices.empty() ? std::vector<int>{options.defaults.device} : options.devices;
  const int jobs = std::max(1, options.jobs);
  for (const int device : devices) {
    p.turns[device];
    if (!options.defaults.case_cache && options.case_cache_bytes > 0 &&
        !p.case_caches.contains(device))
      p.case_caches[device] = make_case_cache(options.case_cache_bytes);
  }
  for (const int device : devices)
    for (int job = 0; job < jobs; ++job)
      // The device's lock and cache found here, on one thread: map::operator[] is no reader's.
      p.judges.emplace_back([&p, options, device, turn = &p.turns[device],
                             cases = p.case_caches[device]] {
        ServeOptions own = options;
        own.devices.clear();
        own.jobs = 1;
        own.defaults.device = device;
        if (cases) own.defaults.case_cache = cases;
        Judge judge(std::move(own));
        for (;;) {
          Impl::Job next;
          {
            std::unique_lock<std::mutex> lock(p.mutex);
            p.more.wait(lock, [&] { return !p.queue.empty() || p.closing; });
            if (p.queue.empty()) return;
            next = std::move(p.queue.front());
            p.queue.pop_front();
          }
          next.done(next.request.place,
                    answer_to(judge, next.request.text, next.request.line_number, turn));
        }
      });
}

JudgePool::~JudgePool() {
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->closing = true;
  }
  impl_->more.notify_all();
  for (auto& t : impl_->judges)
    t.join();
}

void JudgePool::submit(RequestLine request, std::function<void(long, json)> done) {
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->queue.push_back({std::move(request), std::move(done)});
  }
  impl_->more.notify_one();
}

void judge_stream(const ServeOptions& options,
                  const std::function<std::optional<RequestLine>()>& next,
                  const std::function<void(long place, json answer)>& answered) {
  JudgePool pool(options);
  while (auto request = next())
    pool.submit(std::move(*request), answered);
} // the pool's end waits for every answer

namespace {

// Whoever finishes an answer writes it (unordered) or every answer that is ready in order from
// the next one due.
int serve_concurrently(std::istream& in, std::ostream& out, const ServeOptions& options) {
  std::mutex mutex;
  std::map<long, json> ready;
  long next_due = 0, place = 0, number = 0;
  std::string line;
  auto next = [&]() -> std::optional<RequestLine> {
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") != std::string::npos)
        return RequestLine{place++, number, std::move(line)};
    }
    return std::nullopt;
  };
  auto answered = [&](long at, json answer) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (options.unordered) {
      write_answer(out, answer);
      return;
    }
    ready.emplace(at, std::move(answer));
    for (auto it = ready.find(next_due); it != ready.end(); it = ready.find(next_due)) {
      write_answer(out, it->second);
      ready.erase(it);
      ++next_due;
    }
  };
  judge_stream(options, next, answered);
  return 0;
}

} // namespace

int serve(std::istream& in, std::ostream& out, ServeOptions options) {
  if (options.devices.size() > 1 || options.jobs > 1) return serve_concurrently(in, out, options);
  if (options.devices.size() == 1) options.defaults.device = options.devices.front();
  Judge judge(std::move(options));
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    write_answer(out, answer_to(judge, line, number));
  }
  return 0;
}

} // namespace kj
