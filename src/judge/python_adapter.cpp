#include "judge/python_adapter.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "util/child_process.hpp"

namespace kj::judge {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_kernelbench_problem(const std::string& problem) {
  std::error_code ec;
  const fs::path p(problem);
  if (fs::is_regular_file(p, ec)) return p.extension() == ".py";
  return fs::is_directory(p, ec) && fs::is_regular_file(p / "problem.py", ec) &&
         !fs::exists(p / "problem.toml", ec);
}

namespace {

json answer_of(const json& id, const json& verdict_or_error, bool verdict) {
  return {{"id", id}, {verdict ? "verdict" : "error", verdict_or_error}};
}

} // namespace

PythonAdapter::PythonAdapter(std::vector<std::string> command) : command_(std::move(command)) {}

PythonAdapter::~PythonAdapter() { stop(); }

bool PythonAdapter::start(std::string& why) {
  const std::optional<util::LineChild> child = util::spawn_line_child(command_);
  if (!child) {
    why = fmt::format("cannot start {}", command_[0]);
    return false;
  }
  child_ = child->pid;
  to_ = child->input;
  from_ = child->output;
  const std::optional<std::string> first = util::read_line(from_);
  bool ready = false;
  try {
    ready = first && json::parse(*first).value("ready", false);
  } catch (const json::exception&) {
  }
  if (!ready) {
    stop();
    why = fmt::format("{} -m kjudge.kernelbench.serve did not start (is the kjudge Python "
                      "package installed for it, with torch? KJUDGE_PYTHON names the Python)",
                      command_[0]);
    return false;
  }
  return true;
}

void PythonAdapter::stop() {
  if (to_ >= 0) ::close(to_);
  if (from_) std::fclose(from_);
  to_ = -1;
  from_ = nullptr;
  // Its standard input closed, the child ends after the request it is on; one that has not
  // within 10 s (builds under way) is killed, and its workers follow it (they watch it).
  if (child_ > 0) {
    int status = 0;
    for (int waited = 0; ::waitpid(child_, &status, WNOHANG) == 0; ++waited) {
      if (waited == 100) ::kill(child_, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  child_ = -1;
}

json PythonAdapter::ask(const json& request) {
  const json id = request.contains("id") ? request["id"] : json(nullptr);
  if (child_ < 0) {
    std::string why;
    if (!start(why))
      return answer_of(id, {{"kind", "internal"}, {"message", why}}, false);
  }
  json forwarded = request;
  forwarded["id"] = ++asked_;
  const std::string line = forwarded.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const bool sent = util::send_all(to_, line);
  while (sent) {
    const std::optional<std::string> got = util::read_line(from_);
    if (!got) break;
    json answer;
    try {
      answer = json::parse(*got);
    } catch (const json::exception&) {
      continue; // not an answer: a line the child printed
    }
    if (!answer.is_object() || answer.value("id", json()) != json(asked_)) continue;
    answer["id"] = id;
    return answer;
  }
  // The child ended while judging this request: the candidate's FAIL, and a new child next time.
  ::kill(child_, SIGKILL);
  stop();
  return answer_of(id,
                   {{"outcome", "FAIL"},
                    {"reason", "runtime_error"},
                    {"compiled", false},
                    {"correctness", false},
                    {"message", "the KernelBench judge process ended while judging this "
                                "candidate; the next request starts a new one"}},
                   true);
}

} // namespace kj::judge
