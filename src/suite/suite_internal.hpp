// What run.cpp and html_report.cpp share inside the suite library.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kj::suite::detail {

// report.html of a run: the summary's tables (ids "summary", "categories", "problems") and three
// plots (SVG ids "speedups": the correct samples' speedups over the reference, "pass-at-k",
// "category-accuracy"), self-contained, no script.
std::string run_html(const nlohmann::json& summary, const std::vector<nlohmann::json>& lines);

} // namespace kj::suite::detail
