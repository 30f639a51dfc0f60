// What the reports of a mutation campaign share (include/kjudge/mutate.hpp, "Reports"): the
// console, JSON and JSON Lines reports (reports.cpp) and the HTML page (html_report.cpp) name
// survivors, witnesses, counts and times the same way, and these helpers are that one way.
// Internal to src/mutate: nothing outside the two report files includes this header. The
// definitions are in reports.cpp.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/mutate.hpp"

namespace kj::mutate::detail {

// The checker whose escapes are the survivors: kjudge's own, or the first one given when the
// campaign did not run kjudge.
std::string primary_checker(const Campaign& c);

// Whether `checker` accepted the mutant (false when it did not run on it).
bool accepted_by(const MutantResult& m, const std::string& checker);

// The checkers (in the campaign's order) that accepted a mutant the strong oracle killed.
std::vector<std::string> escapes_of(const Campaign& c, const MutantResult& m);

// A mutant's text on one line (whitespace runs folded, long text cut with "..."): a deleted
// block spans lines, and a description, a diagnostic or a table cell must not.
std::string one_line(std::string_view text);
// one_line, or `""` where that is empty (a deletion shown in a diagnostic or a table cell).
std::string shown_on_one_line(std::string_view text);

// "original -> replacement", each side on one line.
std::string edit_text(const Mutant& m);

// The input that first exposed the mutant, or null when none is recorded.
const PoolInput* witness_input(const Campaign& c, const MutantResult& m);

// The witness's case id, or "none recorded".
std::string witness_case(const Campaign& c, const MutantResult& m);

// The mutants that ran to a verdict of the oracle (for the throughput).
std::size_t executed_count(const Campaign& c);

// How many mutants have each status; every status is present, zero or not.
std::map<Status, std::size_t> status_counts(const Campaign& c);

// "8 mutants: 3 killed, 1 not shown killable, ...": the counts of status_counts in words.
std::string status_summary(const Campaign& c);

// "generate 0.50 s, compile 2.00 s, dedup 0.25 s, execute 2.00 s".
std::string stage_times(const Campaign& c);

// "2.0 mutants/s", or "no execution time recorded".
std::string throughput(const Campaign& c);

// "12.5%"; "n/a" for NaN.
std::string percent(double share);

// A set-cover figure at k inputs per problem as a percent, "n/a" where there is none.
std::string share_at(const std::map<int, double>& figures, int k);

// The suite sizes (inputs per problem) the set-cover figures are given at.
inline constexpr int kSuiteSizes[] = {1, 2, 3, 5};

// Text and attribute values alike, for the HTML reports (mutate's, the audit's).
std::string html_escape(std::string_view text);

} // namespace kj::mutate::detail
