// A KernelBench-format request, judged for serve by the Python adapter: a child process running
// `python -m kjudge.kernelbench.serve` (the same JSON Lines protocol), started at the judge's
// first such request and kept warm for the next. A child that ends after its ready line ended on
// the request it was judging: that request's FAIL(runtime_error), and the next one starts
// another child (verdicts are rewards: nothing a candidate does there is an ERROR).
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kj::judge {

// Whether `problem` (a request's field) names a KernelBench-format problem: a .py file, or a
// folder holding problem.py and no problem.toml.
bool is_kernelbench_problem(const std::string& problem);

class PythonAdapter {
public:
  // `command`: the adapter's argv (KJUDGE_PYTHON or python3, -m kjudge.kernelbench.serve, ...).
  explicit PythonAdapter(std::vector<std::string> command);
  ~PythonAdapter();
  PythonAdapter(const PythonAdapter&) = delete;
  PythonAdapter& operator=(const PythonAdapter&) = delete;

  // The child's answer to `request` ({"id", "verdict"} or {"id", "error"}), with the request's
  // own id. Never throws.
  nlohmann::json ask(const nlohmann::json& request);

private:
  bool start(std::string& why);
  void stop();

  std::vector<std::string> command_;
  pid_t child_ = -1;
  int to_ = -1;                // the child's standard input (a socket)
  std::FILE* from_ = nullptr;  // its standard output
  long asked_ = 0;
};

} // namespace kj::judge
