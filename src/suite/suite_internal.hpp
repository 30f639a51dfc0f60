// What run.cpp and html_report.cpp share inside the suite library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kj::suite::detail {

// Text for XML and HTML: & < > " escaped, control characters but newline and tab dropped.
std::string xml_escaped(std::string_view text);

// report.html of a run: the summary's tables (ids "summary", "categories", "problems") and three
// plots (SVG ids "speedups": the correct samples' speedups over the reference, "pass-at-k",
// "category-accuracy"), self-contained, no script.
std::string run_html(const nlohmann::json& summary, const std::vector<nlohmann::json>& lines);

} // namespace kj::suite::detail
