// Reporters: the ways a verdict leaves kjudge. They share one interface (google/benchmark
// style) and only read Verdict values: the console for a person, JSON for a trainer or a
// dashboard (schema_version, manifest, KernelBench field names, reward-grade fields), JUnit XML
// for CI, and a JSON Lines log that is appended and flushed as results arrive.
#pragma once

#include <cstdio>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kjudge/verdict.hpp"

namespace kj {

// Version of the JSON layout; bump on any incompatible change.
inline constexpr int kJsonSchemaVersion = 1;

struct ReportOptions {
  bool redact_hidden = false;  // hidden cases: reason and case class only
  bool color = false;          // console only
  int max_cases_shown = 3;     // console: failing cases shown in full
};

class Reporter {
public:
  virtual ~Reporter() = default;
  virtual void report(const Verdict& verdict) = 0;
};

std::unique_ptr<Reporter> make_console_reporter(std::ostream& out, ReportOptions options = {});
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out, ReportOptions options = {});
std::unique_ptr<Reporter> make_junit_reporter(std::ostream& out, ReportOptions options = {});

nlohmann::json to_json(const Manifest& manifest);
nlohmann::json to_json(const OutputFinding& finding);
nlohmann::json to_json(const CaseFinding& finding, const ReportOptions& options = {});
nlohmann::json to_json(const Verdict& verdict, const ReportOptions& options = {});

// Appends one JSON object per line, flushing each, behind a first line holding the manifest
// and schema_version. Opening an existing log resumes it only when its manifest line matches;
// otherwise it throws SpecError (a changed problem or candidate must not mix with old results).
class JsonlWriter {
public:
  JsonlWriter(const std::filesystem::path& path, const nlohmann::json& manifest);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  void append(const nlohmann::json& record);
  // Records already in the log when it was resumed (empty for a new log).
  const std::vector<nlohmann::json>& resumed() const { return resumed_; }

private:
  std::FILE* file_ = nullptr;
  std::vector<nlohmann::json> resumed_;
};

}  // namespace kj
