// kj::serve_http (kjudge/serve.hpp): `kjudge serve --http`, the JSON Lines protocol's requests
// and answers over HTTP for trainers that expect an endpoint. cpp-httplib (Debian's) parses HTTP
// and runs each connection on its fixed thread pool; each request goes to serve's JudgePool and
// the handler waits for its answers, with no thread of its own per request. Every request needs
// the token, on loopback too: on a machine others log into, any local user could otherwise have
// kjudge build and run their problem's reference. Bodies and batches are bounded (413).
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "kjudge/error.hpp"
#include "kjudge/serve.hpp"

namespace kj {

using nlohmann::json;

namespace {

// What /v1/metrics counts (Prometheus text format).
struct Metrics {
  std::mutex mutex;
  std::map<std::string, long> answers; // by outcome, or "error:<kind>"
  long in_flight = 0;
  double seconds = 0;
  long requests = 0;

  std::string text() {
    const std::lock_guard<std::mutex> lock(mutex);
    std::string t = "# HELP kjudge_answers_total Answers given, by verdict outcome or error kind.\n"
                    "# TYPE kjudge_answers_total counter\n";
    for (const auto& [label, n] : answers)
      t += fmt::format("kjudge_answers_total{{outcome=\"{}\"}} {}\n", label, n);
    t += fmt::format("# TYPE kjudge_requests_in_flight gauge\nkjudge_requests_in_flight {}\n"
                     "# TYPE kjudge_request_seconds summary\nkjudge_request_seconds_sum {:.6f}\n"
                     "kjudge_request_seconds_count {}\n",
                     in_flight, seconds, requests);
    return t;
  }
};

std::string outcome_label(const json& answer) {
  if (answer.contains("error")) return "error:" + answer["error"].value("kind", "internal");
  return answer.contains("verdict") ? answer["verdict"].value("outcome", "?") : "?";
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// An answer that is an error, as the JSON Lines protocol gives one (its message may quote the
// client's bytes: dump replaces what is not UTF-8).
std::string error_body(std::string_view kind, const std::string& message) {
  return dump({{"id", nullptr}, {"error", {{"kind", kind}, {"message", message}}}});
}

} // namespace

int serve_http(const HttpOptions& http, const ServeOptions& options) {
  if (http.token.empty())
    throw SpecError({"--http", "", 0, 0},
                    "give --token-file, a token every request must carry (Authorization: Bearer "
                    "TOKEN): without one, any user of this machine could have kjudge build and run "
                    "their problem's reference, on loopback too");
  JudgePool pool(options);
  Metrics metrics;
  std::atomic<long> place{0};
  std::atomic<std::int64_t> last_seen{std::chrono::steady_clock::now().time_since_epoch().count()};
  httplib::Server server;
  server.set_payload_max_length(kHttpMaxBodyBytes); // larger: 413 from cpp-httplib

  auto authorized = [&](const httplib::Request& req, httplib::Response& res) {
    last_seen = std::chrono::steady_clock::now().time_since_epoch().count();
    if (req.get_header_value("Authorization") == "Bearer " + http.token) return true;
    res.status = 401;
    res.set_content(error_body("unauthorized", "a bearer token is required"), "application/json");
    return false;
  };
  // One request object submitted to the judges: its answer, exactly as a JSON Lines answer,
  // when the future is ready. No thread waits per request: the judges' own threads answer.
  auto submit = [&](std::string text) {
    auto answer = std::make_shared<std::promise<json>>();
    std::future<json> ready = answer->get_future();
    {
      const std::lock_guard<std::mutex> lock(metrics.mutex);
      ++metrics.in_flight;
    }
    const auto began = std::chrono::steady_clock::now();
    pool.submit({place++, 1, std::move(text)}, [&metrics, answer, began](long, json a) {
      {
        const std::lock_guard<std::mutex> lock(metrics.mutex);
        --metrics.in_flight;
        ++metrics.requests;
        ++metrics.answers[outcome_label(a)];
        metrics.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      }
      answer->set_value(std::move(a));
    });
    return ready;
  };

  server.Post("/v1/judge", [&](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::parse_error& e) {
      res.status = 400;
      res.set_content(error_body("bad_request", fmt::format("not JSON: {}", e.what())),
                      "application/json");
      return;
    }
    if (!body.is_array()) {
      res.set_content(dump(submit(dump(body)).get()), "application/json");
      return;
    }
    if (body.size() > kHttpMaxBatch) {
      res.status = 413;
      res.set_content(error_body("bad_request", fmt::format("a batch of {} requests: at most {}",
                                                            body.size(), kHttpMaxBatch)),
                      "application/json");
      return;
    }
    // A batch: its requests judged side by side, the answers in the batch's order.
    std::vector<std::future<json>> answers;
    for (const json& r : body) answers.push_back(submit(dump(r)));
    json out = json::array();
    for (auto& a : answers) out.push_back(a.get());
    res.set_content(dump(out), "application/json");
  });
  server.Get("/v1/health", [&](const httplib::Request&, httplib::Response& res) {
    const std::lock_guard<std::mutex> lock(metrics.mutex);
    res.set_content(dump({{"status", "ok"}, {"in_flight", metrics.in_flight}, {"answered", metrics.requests}}),
                    "application/json");
  });
  server.Get("/v1/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    if (authorized(req, res)) res.set_content(metrics.text(), "text/plain; version=0.0.4");
  });

  const int port = http.port == 0 ? server.bind_to_any_port(http.host) : http.port;
  if (port < 0 || (http.port != 0 && !server.bind_to_port(http.host, http.port)))
    throw SpecError({"--http", "", 0, 0}, fmt::format("cannot listen on {}:{}", http.host, http.port));
  if (http.listening) http.listening(port);
  // --max-idle: the server stops itself after that long without a request (tests rely on it).
  std::thread idle_watch;
  std::atomic<bool> stopping{false};
  if (http.max_idle_s > 0)
    idle_watch = std::thread([&] {
      while (!stopping) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const auto seen = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(last_seen.load()));
        bool busy;
        {
          const std::lock_guard<std::mutex> lock(metrics.mutex);
          busy = metrics.in_flight > 0;
        }
        if (!busy && std::chrono::steady_clock::now() - seen > std::chrono::duration<double>(http.max_idle_s)) {
          server.stop();
          return;
        }
      }
    });
  server.listen_after_bind();
  stopping = true;
  if (idle_watch.joinable()) idle_watch.join();
  return 0;
}

} // namespace kj
