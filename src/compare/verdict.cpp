// The verdict model of docs/design.md "What kjudge decides": reason names as the JSON and the CLI
// spell them, each reason's class (FAIL is the candidate's fault, ERROR the problem's or kjudge's)
// and exit code, the precedence used when one case shows several reasons, and the aggregation of
// case findings into one verdict in canonical case order. Reporters and rewards only read the
// result, so every rule about what a verdict means lives here.
#include "kjudge/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <array>
#include <utility>

namespace kj {

namespace {

struct ReasonInfo {
  Reason reason;
  std::string_view name;
};

// One table so that name and parse can never disagree.
constexpr std::array<ReasonInfo, 17> kReasons{{
    {Reason::none, "none"},
    {Reason::compile_error, "compile_error"},
    {Reason::launch_error, "launch_error"},
    {Reason::forbidden_construct, "forbidden_construct"},
    {Reason::crash, "crash"},
    {Reason::timeout, "timeout"},
    {Reason::oob_write, "oob_write"},
    {Reason::input_modified, "input_modified"},
    {Reason::unwritten_output, "unwritten_output"},
    {Reason::nonfinite, "nonfinite"},
    {Reason::nondeterministic, "nondeterministic"},
    {Reason::stale_output, "stale_output"},
    {Reason::mismatch, "mismatch"},
    {Reason::impossible_speed, "impossible_speed"},
    {Reason::precondition, "precondition"},
    {Reason::spec_error, "spec_error"},
    {Reason::internal, "internal"},
}};

// docs/design.md's precedence list, highest first.
constexpr std::array<Reason, 8> kPrecedence{
    Reason::crash,
    Reason::timeout,
    Reason::oob_write,
    Reason::input_modified,
    Reason::unwritten_output,
    Reason::nonfinite,
    Reason::nondeterministic,
    Reason::mismatch,
};

} // namespace

std::string_view reason_name(Reason r) {
  for (const auto& info : kReasons)
    if (info.reason == r) return info.name;
  return "internal"; // unreachable for a valid enum value
}

std::optional<Reason> parse_reason(std::string_view name) {
  for (const auto& info : kReasons)
    if (info.name == name) return info.reason;
  return std::nullopt;
}

Outcome reason_outcome(Reason r) {
  switch (r) {
  case Reason::none:
    return Outcome::pass;
  case Reason::spec_error:
  case Reason::internal:
    return Outcome::error;
  default:
    return Outcome::fail;
  }
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
  case Outcome::pass:
    return "PASS";
  case Outcome::fail:
    return "FAIL";
  case Outcome::error:
    return "ERROR";
  case Outcome::skip:
    return "SKIP";
  }
  return "ERROR";
}

ExitCode reason_exit_code(Reason r) {
  switch (r) {
  case Reason::none:
    return ExitCode::pass;
  case Reason::spec_error:
    return ExitCode::spec_error;
  case Reason::internal:
    return ExitCode::internal;
  default:
    return ExitCode::fail;
  }
}

// Ranks, lower wins:
//   0, 1      internal, spec_error: a verdict kjudge or the problem cannot stand behind says so
//             before any candidate fault, so an ERROR is never reported as a FAIL (a reward
//             must not punish a candidate for a broken problem).
//   2 ..      the other reasons outside docs/design.md's list, in enum order (compile_error,
//             launch_error, forbidden_construct, stale_output, impossible_speed, precondition):
//             they stop or overrule a case as a whole.
//   100 ..    docs/design.md's list in its order: crash > timeout > ... > mismatch.
//   1000      none.
int reason_rank(Reason r) {
  if (r == Reason::none) return 1000;
  if (r == Reason::internal) return 0;
  if (r == Reason::spec_error) return 1;
  for (std::size_t i = 0; i < kPrecedence.size(); ++i)
    if (kPrecedence[i] == r) return 100 + static_cast<int>(i);
  return 2 + static_cast<int>(r);
}

Reason worse_reason(Reason a, Reason b) {
  return reason_rank(b) < reason_rank(a) ? b : a;
}

SampleStats sample_stats(std::vector<double> values) {
  SampleStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    const double rank = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(rank);
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
  };
  s.median = at(0.5);
  s.q1 = at(0.25);
  s.q3 = at(0.75);
  s.min = values.front();
  s.max = values.back();
  s.samples = static_cast<int>(values.size());
  return s;
}

double median_noise(const SampleStats& s) {
  if (s.samples < 4 || !(s.median > 0)) return std::numeric_limits<double>::infinity();
  const double sigma = (s.q3 - s.q1) / 1.349;
  return 1.2533 * sigma / std::sqrt(static_cast<double>(s.samples)) / s.median;
}

bool not_worth_timing(const std::vector<double>& candidate_ms,
                      const std::vector<double>& reference_ms) {
  if (candidate_ms.empty() || reference_ms.empty()) return false;
  return sample_stats(candidate_ms).median > kStopEarlyFactor * sample_stats(reference_ms).median;
}

void CaseFinding::take_worst_output_reason() {
  for (const auto& out : outputs) {
    const Reason worse = worse_reason(reason, out.reason);
    if (out.counts() && worse != reason) {
      reason = worse;
      message = out.output.empty() ? out.message : out.output + ": " + out.message;
    }
  }
}

void Verdict::finalize() {
  cases_total = static_cast<std::int64_t>(cases.size());
  cases_passed = 0;
  cases_excluded = 0;

  for (auto& c : cases) {
    c.take_worst_output_reason();
    if (c.pass()) ++cases_passed;
    if (c.excluded) ++cases_excluded;
  }

  // The first failing case in canonical order decides, except that an ERROR anywhere decides
  // first: a run with a broken case cannot be scored as the candidate's failure.
  const CaseFinding* decisive = nullptr;
  for (const auto& c : cases) {
    if (reason_outcome(c.reason) == Outcome::error) {
      decisive = &c;
      break;
    }
  }
  if (!decisive) {
    for (const auto& c : cases) {
      if (!c.pass() && !c.excluded) {
        decisive = &c;
        break;
      }
    }
  }

  // A reason set before any case ran (compile_error, a spec_error found while loading) or
  // after all of them (impossible_speed from bench) is kept unless a case shows an ERROR it
  // does not; calling finalize twice gives the same verdict.
  const bool preset = reason != Reason::none;
  const bool case_error_overrides = decisive &&
                                    reason_outcome(decisive->reason) == Outcome::error &&
                                    reason_outcome(reason) != Outcome::error;
  if (decisive && (!preset || case_error_overrides ||
                   (first_failing_case && *first_failing_case == decisive->case_id))) {
    reason = decisive->reason;
    message = decisive->message;
    first_failing_case = decisive->case_id;
  }

  outcome = reason_outcome(reason);
  // Nothing judged and nothing wrong is not a pass: docs/design.md's "a check that cannot run says
  // SKIP, it never passes silently".
  if (reason == Reason::none && cases_excluded == cases_total) outcome = Outcome::skip;
}

ExitCode Verdict::exit_code() const {
  return reason_exit_code(reason);
}

double Verdict::fraction_passed() const {
  if (cases_total <= 0) return 0.0;
  return static_cast<double>(cases_passed) / static_cast<double>(cases_total);
}

} // namespace kj
