// Reporters: the ways a verdict leaves kjudge. They share one interface (google/benchmark
// style) and only read Verdict values: the console for a person, JSON for a trainer or a
// dashboard (schema_version, manifest, KernelBench field names, reward-grade fields), JUnit XML
// for CI, and a JSON Lines log that is appended and flushed as results arrive. The renderings
// of `kjudge validate` and `kjudge cases` live here too, so the CLI stays wiring only.
// docs/cli.md ("JSON reports") documents the JSON layout.
#pragma once

#include <cstdio>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/cases.hpp"
#include "kjudge/validate.hpp"
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
  // Ends the document (JUnit's closing tag); the destructor calls it when nobody did.
  virtual void finish() {}
};

std::unique_ptr<Reporter> make_console_reporter(std::ostream& out, ReportOptions options = {});
// One indented JSON object per verdict (for many verdicts in one file, use JsonlWriter).
std::unique_ptr<Reporter> make_json_reporter(std::ostream& out, ReportOptions options = {});
// One <testsuite> per verdict inside one <testsuites> document, closed by finish().
std::unique_ptr<Reporter> make_junit_reporter(std::ostream& out, ReportOptions options = {});

// JSON has no NaN or Inf, and nlohmann silently writes them as null. Every double of a report
// goes through json_number: finite values stay numbers, NaN becomes the string "nan" and the
// infinities "inf" / "-inf" (Python's float() reads all three back). number_from_json inverts
// it and throws SpecError on anything else.
nlohmann::json json_number(double x);
double number_from_json(const nlohmann::json& j);

// Whether a case's details must be withheld under these options.
bool is_redacted(const CaseFinding& finding, const ReportOptions& options);
// Who is at fault, for reward code: "none" (pass), "candidate" (FAIL), "problem" (spec_error),
// "kjudge" (internal), "skip".
std::string_view fault_class(Reason reason, Outcome outcome);

// A word a POSIX shell reads back unchanged, for the replay commands in verdicts.
std::string shell_quote(const std::string& word);

nlohmann::json to_json(const Manifest& manifest);
nlohmann::json to_json(const OutputFinding& finding);
nlohmann::json to_json(const CaseFinding& finding, const ReportOptions& options = {});
nlohmann::json to_json(const Verdict& verdict, const ReportOptions& options = {});

// `kjudge validate` and `kjudge cases` output. Validation's diagnostics go to `diagnostics`
// (standard error), compiler-style through format_diagnostic (validate.hpp), so editors and CI
// annotators can parse them; the shape plan to `out`.
void print_validation(std::ostream& out, std::ostream& diagnostics, const Problem& problem,
                      const ValidationReport& report);
nlohmann::json validation_json(const Problem& problem, const ValidationReport& report);
void print_case_plan(std::ostream& out, const Problem& problem, const CasePlan& plan);
nlohmann::json case_plan_json(const Problem& problem, const CasePlan& plan);

// Appends one JSON object per line, flushing each, behind a first line holding the manifest
// and schema_version. Opening an existing log resumes it only when its manifest line matches;
// otherwise it throws SpecError (a changed problem or candidate must not mix with old results).
// A last line cut short by a crash is dropped (and cut from the file); a damaged line before it
// is a SpecError.
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
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<nlohmann::json> resumed_;
};

// Text for XML and HTML (JUnit files, the HTML reports): the five entities escaped, control
// characters replaced by U+FFFD; in an attribute (the default) line breaks and tabs as
// character references too.
std::string xml_escape(std::string_view s, bool attribute = true);

}  // namespace kj
