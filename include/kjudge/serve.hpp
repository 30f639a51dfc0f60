// `kjudge serve`: a judge that stays up. It reads requests as JSON Lines (one object per line:
// which problem, which candidate, by path or as source text, and the options of `check` or
// `bench`) and answers each with one line: the verdict, as `check --json` writes it, or an
// error saying what was wrong with the request. Problems are loaded once (again when their
// problem.toml changes); the compile caches stay warm across requests. A case's inputs, golden
// and reference are made once per problem and kept (ServeOptions::case_cache_bytes). The judges
// (JudgePool) also serve `kjudge run` and the same requests over HTTP (serve_http).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace kj {

namespace judge {
class PythonAdapter;
}

struct ServeOptions {
  // What a request does not say: backend, device, cache folder, the worker executable, the
  // include folder, deadlines. Requests may set their own backend, case, fail_fast, runs, ...
  CheckOptions defaults;
  // The oracle's cases kept between requests (inputs, golden, reference per problem and case),
  // at most this many bytes of host and device memory; 0 keeps none.
  std::uint64_t case_cache_bytes = std::uint64_t{8} << 30;
  // Workers started ahead of need, so a request's check does not wait for a worker's process
  // and CUDA context to start (each is used by one check, never by two candidates).
  bool spare_workers = true;
  // The GPUs requests are spread over (`kjudge serve --devices 0,1`): one judge per device, each
  // with its own thread and workers, taking the next request when it is free; the judges of a
  // device share its case cache. The answers still come in the order of the requests. Empty or
  // one: defaults.device alone.
  std::vector<int> devices;
  // Judges per device (`--jobs`), each on its own thread with its own workers, sharing the
  // device's case cache of case_cache_bytes (a case two judges need at once is made once): a
  // new candidate's compile and worker start overlap the GPU work of the others'. Checks share the GPU; a bench request
  // waits for the device's other requests and holds it alone, so its timings see no neighbour.
  int jobs = 1;
  // Answers as they are ready instead of in the order of the requests (`--unordered`); each
  // carries its request's id either way.
  bool unordered = false;
  // Judge a problem whose policy is looser than its card.toml records (`--allow-loosen`);
  // without it such a request is answered with a spec_error naming the card.
  bool allow_loosen = false;
};

class Judge {
public:
  explicit Judge(ServeOptions options);
  ~Judge();
  Judge(const Judge&) = delete;
  Judge& operator=(const Judge&) = delete;

  // One request, its answer: {"id", "verdict"} or {"id", "error": {"kind", "message"}}, where
  // kind is "bad_request" (not an object, a field missing, of the wrong type or unknown) or
  // "spec_error" (the problem does not load, the candidate file does not exist). A candidate
  // whose launch plan does not parse is the candidate's failure: a FAIL(launch_error) verdict.
  // "id" is the request's own, echoed (null when it had none). Never throws.
  // `device_turn`: judges sharing the device (CheckOptions::device_turn); null: none.
  nlohmann::json handle(const nlohmann::json& request, DeviceTurn* device_turn = nullptr);

  // The kept cases: hits, misses, entries, bytes (all zero without a cache).
  CaseCacheStats case_cache_stats() const;
  // Workers taken ready and started on demand (all zero without spares).
  SpareWorkerStats spare_worker_stats() const;

private:
  struct CachedProblem;
  const Problem& problem(const std::filesystem::path& path);
  nlohmann::json kernelbench(const nlohmann::json& request);

  ServeOptions options_;
  std::map<std::string, std::unique_ptr<CachedProblem>> problems_; // by canonical path
  // KernelBench-format requests go to the Python adapter, started at the first one.
  std::unique_ptr<judge::PythonAdapter> kernelbench_;
};

// One request of a stream: its place (0, 1, ...), the line it came from (for messages), its text.
struct RequestLine {
  long place = 0, line_number = 0;
  std::string text;
};

// The judges of serve's --devices and --jobs: options.devices x options.jobs judges on threads
// of their own, each taking the next queued request when it is free. `serve --http` submits each
// request as it arrives; judge_stream a whole stream.
class JudgePool {
public:
  explicit JudgePool(const ServeOptions& options);
  // Judges everything submitted, then ends the judges' threads.
  ~JudgePool();
  JudgePool(const JudgePool&) = delete;
  JudgePool& operator=(const JudgePool&) = delete;
  // Queues one request; `done(place, answer)` is called on a judge's thread once it is judged.
  void submit(RequestLine request, std::function<void(long, nlohmann::json)> done);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The engine of serve's --devices and --jobs, for callers with their own requests (`kjudge run`):
// options.devices x options.jobs judges on threads of their own; `next` is called on this thread
// until it gives nothing, and `answered` on a judge's thread with each request's place and
// answer, in completion order (calls may overlap: it locks what it shares). Returns when every
// request has its answer.
void judge_stream(const ServeOptions& options,
                  const std::function<std::optional<RequestLine>()>& next,
                  const std::function<void(long place, nlohmann::json answer)>& answered);

// Reads requests from `in` until it ends, answers each on `out` (one line each, flushed, in
// the order of the requests, as soon as it and every earlier answer are ready, or as soon as it
// is ready under ServeOptions::unordered); a line that is not JSON gets a bad_request answer
// naming the line. Blank lines are skipped. With several ServeOptions::devices or jobs,
// requests are judged concurrently, `jobs` judges per device. Returns 0.
int serve(std::istream& in, std::ostream& out, ServeOptions options);

// `kjudge serve --http`: POST /v1/judge takes one request object (or an array of them, judged
// side by side) and answers as the JSON Lines protocol does; GET /v1/health and /v1/metrics
// (Prometheus text). Bound to 127.0.0.1 unless told, on any address with a token every request
// but /v1/health must carry as "Authorization: Bearer TOKEN". Its bounds: a larger body or
// batch than these is a 413. Connections wait for one of cpp-httplib's fixed pool of threads,
// each of which waits for its requests' answers, judged by serve's judges (no thread per
// request).
inline constexpr std::size_t kHttpMaxBodyBytes = std::size_t{64} << 20;
inline constexpr std::size_t kHttpMaxBatch = 1024;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;               // 0: any free port (`listening` is told which)
  std::string token;             // required: every request carries it
  double max_idle_s = 0;         // > 0: stop after this long without a request
  std::function<void(int port)> listening;
};
// Serves until stopped (max_idle_s) and returns 0; no token or a port it cannot bind is a
// SpecError.
int serve_http(const HttpOptions& http, const ServeOptions& options);

} // namespace kj
