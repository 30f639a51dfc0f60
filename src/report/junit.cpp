// JUnit XML, the format CI systems already display: one <testsuite> per verdict (named after the
// problem), one <testcase> per case, a <failure> for the candidate's faults and an <error> for
// the problem's or kjudge's, <skipped> for checks that could not run. The document is opened
// at the first verdict and closed by finish(), so several verdicts share one file.
#include <ostream>

#include <fmt/format.h>

#include "kjudge/report.hpp"

namespace kj {

// XML 1.0 text and attribute values: the five entities, and control characters (which XML 1.0
// cannot carry at all, not even escaped) become U+FFFD. A compiler log can contain anything.
// Attributes also encode line breaks and tabs, which a parser would otherwise normalise away;
// text keeps them literal so a raw file stays readable.
std::string xml_escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    case '\n':
      out += attribute ? "&#10;" : "\n";
      break;
    case '\t':
      out += attribute ? "&#9;" : "\t";
      break;
    case '\r':
      out += attribute ? "&#13;" : "\r";
      break;
    default:
      if (u < 0x20 || u == 0x7f)
        out += "\xef\xbf\xbd";
      else
        out += ch;
    }
  }
  return out;
}

namespace {

std::string failure_text(const CaseFinding& c) {
  std::string s = c.message;
  for (const auto& o : c.outputs) {
    if (o.pass()) continue;
    s += fmt::format("\noutput {}: {} {}", o.output, reason_name(o.reason), o.message);
    s += fmt::format("\n  mismatches {} of {}, bound {} (max {:.3g}, rms {:.3g}), reached max "
                     "{:.3g}, rms {:.3g}",
                     o.mismatches, o.count, o.bound.policy, o.bound.max_bound, o.bound.rms_bound,
                     o.bound.max_error, o.bound.rms_error);
    if (o.worst)
      s += fmt::format("\n  worst #{} value {:.9g} expected {:.9g} error {:.3g}", o.worst->flat,
                       o.worst->value, o.worst->expected, o.worst->error);
  }
  return s;
}

class JunitReporter final : public Reporter {
public:
  JunitReporter(std::ostream& out, ReportOptions options) : out_(out), options_(options) {}
  ~JunitReporter() override { finish(); }

  void report(const Verdict& v) override {
    if (!opened_) {
      out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kjudge\">\n";
      opened_ = true;
    }
    struct Entry {
      std::string name;
      std::string element;  // "", "failure", "error", "skipped"
      std::string message;  // the reason (attribute)
      std::string body;
    };
    std::vector<Entry> entries;
    int hidden_seen = 0;
    for (const auto& c : v.cases) {
      Entry e;
      const bool redact = is_redacted(c, options_);
      e.name = redact ? fmt::format("hidden case {}", hidden_seen) : c.case_id;
      if (c.hidden) ++hidden_seen;
      // A case the candidate's preconditions kept out was not run.
      const Outcome o = c.excluded ? Outcome::skip : reason_outcome(c.reason);
      e.element = o == Outcome::fail    ? "failure"
                  : o == Outcome::error ? "error"
                  : o == Outcome::skip  ? "skipped"
                                        : "";
      e.message = std::string(reason_name(c.excluded ? Reason::precondition : c.reason));
      if (!redact) e.body = failure_text(c);
      entries.push_back(std::move(e));
    }
    // A verdict reached before any case ran (compile_error, spec_error) still needs a
    // testcase, or CI would show an empty, green suite.
    if (v.cases.empty() && v.outcome != Outcome::pass) {
      const bool error = v.outcome == Outcome::error;
      entries.push_back({"verdict",
                         error                        ? "error"
                         : v.outcome == Outcome::skip ? "skipped"
                                                      : "failure",
                         std::string(reason_name(v.reason)), v.message});
    }
    for (const auto& s : v.skips)
      entries.push_back({s, "skipped", s, ""});

    int failures = 0, errors = 0, skipped = 0;
    for (const auto& e : entries) {
      failures += e.element == "failure";
      errors += e.element == "error";
      skipped += e.element == "skipped";
    }
    const std::string suite = xml_escape(v.manifest.problem);
    out_ << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
                        "skipped=\"{}\">\n",
                        suite, entries.size(), failures, errors, skipped);
    out_ << "    <properties>\n";
    const std::pair<const char*, const std::string*> props[] = {
        {"problem_hash", &v.manifest.problem_hash},
        {"candidate", &v.manifest.candidate},
        {"candidate_hash", &v.manifest.candidate_hash},
        {"backend", &v.manifest.backend},
        {"gpu", &v.manifest.gpu},
        {"kjudge_version", &v.manifest.kjudge_version}};
    for (const auto& [name, value] : props)
      if (!value->empty())
        out_ << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name,
                            xml_escape(*value));
    out_ << "    </properties>\n";
    for (const auto& e : entries) {
      out_ << fmt::format("    <testcase classname=\"{}\" name=\"{}\"", suite, xml_escape(e.name));
      if (e.element.empty()) {
        out_ << "/>\n";
        continue;
      }
      out_ << fmt::format(">\n      <{} message=\"{}\"", e.element, xml_escape(e.message));
      if (e.element != "skipped") out_ << fmt::format(" type=\"{}\"", xml_escape(e.message));
      if (e.body.empty())
        out_ << "/>\n";
      else
        out_ << fmt::format(">{}</{}>\n", xml_escape(e.body, false), e.element);
      out_ << "    </testcase>\n";
    }
    out_ << "  </testsuite>\n";
    out_.flush();
  }

  void finish() override {
    if (finished_) return;
    finished_ = true;
    // An empty run is still a well-formed document.
    if (!opened_)
      out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kjudge\">\n";
    out_ << "</testsuites>\n";
    out_.flush();
  }

private:
  std::ostream& out_;
  ReportOptions options_;
  bool opened_ = false;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Reporter> make_junit_reporter(std::ostream& out, ReportOptions options) {
  return std::make_unique<JunitReporter>(out, options);
}

}  // namespace kj
