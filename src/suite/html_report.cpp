// report.html of `kjudge run` (detail::run_html): the summary as tables and three SVG plots drawn
// here, so the page opens on a machine with no network; tools/check-html-report renders it in
// headless Chromium.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kjudge/report.hpp"
#include "suite/suite_internal.hpp"

namespace kj::suite::detail {

using nlohmann::json;

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; color: #1d232b; background: #f6f7f9; margin: 24px; }
table { border-collapse: collapse; background: #fff; border: 1px solid #d5dae1; margin: 6px 0; }
th, td { border: 1px solid #e1e5ea; padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: #eceff3; font-weight: 600; font-size: 13px; }
td.how { color: #5a6472; font-size: 12px; max-width: 560px; }
svg { background: #fff; border: 1px solid #d5dae1; margin: 4px 16px 16px 0; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
)";

std::string cell(const json& v, const char* format = "{:.3f}") {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return fmt::format(fmt::runtime(format), v.get<double>());
  return xml_escape(v.is_string() ? v.get<std::string>() : v.dump());
}

// Correct samples' speedups over the reference, log2 binned by halves from 1/16x to 64x (the
// ends collect what lies beyond), the 1x line dashed.
std::string speedup_svg(const std::vector<json>& lines) {
  constexpr double lo = -4, hi = 6, width = 0.5;
  constexpr int bins = static_cast<int>((hi - lo) / width);
  std::vector<int> count(bins, 0);
  for (const json& l : lines) {
    const auto it = l.find("speedup");
    if (!l.value("correct", false) || it == l.end() || !it->is_number()) continue;
    const double s = it->get<double>();
    if (!(s > 0)) continue;
    const int b = std::clamp(static_cast<int>(std::floor((std::log2(s) - lo) / width)), 0, bins - 1);
    ++count[static_cast<std::size_t>(b)];
  }
  const int most = std::max(1, *std::max_element(count.begin(), count.end()));
  const double x0 = 40, y0 = 190, w = 520, h = 160, bw = w / bins;
  std::string svg = fmt::format(R"(<svg id="speedups" width="580" height="230" xmlns="http://www.w3.org/2000/svg">)"
                                R"(<text x="{}" y="18">correct samples by speedup over the reference (log scale)</text>)",
                                x0);
  for (int b = 0; b < bins; ++b) {
    const double bh = h * count[static_cast<std::size_t>(b)] / most;
    if (bh > 0)
      svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#1f5fbf"/>)",
                         x0 + b * bw + 1, y0 - bh, bw - 2, bh);
  }
  for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); e += 2) {
    const double x = x0 + (e - lo) / width * bw;
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)", x, y0 + 18,
                       e >= 0 ? fmt::format("{}x", 1 << e) : fmt::format("1/{}x", 1 << -e));
  }
  const double one = x0 + (0 - lo) / width * bw;
  svg += fmt::format(R"(<line x1="{0:.1f}" y1="30" x2="{0:.1f}" y2="{1}" stroke="#b3261e" stroke-dasharray="4 3"/>)"
                     R"(<line x1="{2}" y1="{1}" x2="{3}" y2="{1}" stroke="#1d232b"/>)"
                     R"(<text x="{2}" y="42">{4} at most</text></svg>)",
                     one, y0, x0, x0 + w, most);
  return svg;
}

// Horizontal bars in [0, 1], one per (label, value); a null value is said, not drawn.
std::string bars_svg(const char* id, const std::string& title,
                     const std::vector<std::pair<std::string, json>>& bars) {
  const double x0 = 150, w = 360, row = 24;
  const double height = 40 + row * static_cast<double>(bars.size());
  std::string svg = fmt::format(R"(<svg id="{}" width="580" height="{:.0f}" xmlns="http://www.w3.org/2000/svg">)"
                                R"(<text x="10" y="18">{}</text>)",
                                id, height, xml_escape(title));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = 30 + row * static_cast<double>(i);
    svg += fmt::format(R"(<text x="10" y="{:.0f}">{}</text>)", y + 15, xml_escape(bars[i].first));
    svg += fmt::format(R"(<rect x="{}" y="{:.0f}" width="{}" height="18" fill="#eceff3"/>)", x0, y, w);
    if (bars[i].second.is_number()) {
      const double v = std::clamp(bars[i].second.get<double>(), 0.0, 1.0);
      svg += fmt::format(R"(<rect x="{}" y="{:.0f}" width="{:.1f}" height="18" fill="#2e8b57"/>)"
                         R"(<text x="{:.0f}" y="{:.0f}">{:.3f}</text>)",
                         x0, y, w * v, x0 + w + 8, y + 15, v);
    } else {
      svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}">n/a (fewer samples than k)</text>)", x0 + 8, y + 15);
    }
  }
  return svg + "</svg>";
}

} // namespace

std::string run_html(const json& summary, const std::vector<json>& lines) {
  const json& s = summary["suite_figures"];
  const json& how = s["aggregation"];
  std::string html = fmt::format("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>kjudge run: {0}"
                                 "</title><style>{1}</style></head><body><h1>kjudge run: {0}</h1>"
                                 "<p>{2} samples over {3} problems.</p>",
                                 cell(summary["suite"]), kStyle, summary["samples"].dump(), s["problems"].dump());
  html += "<table id=\"summary\"><thead><tr><th>figure</th><th>value</th><th>how</th></tr></thead><tbody>";
  auto row = [&](const std::string& name, const json& value, const json& text, const char* format = "{:.3f}") {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"how\">{}</td></tr>", xml_escape(name),
                        cell(value, format), cell(text));
  };
  row("accuracy", s["accuracy"], how["accuracy"]);
  for (const char* k : {"pass@1", "pass@5", "pass@10"}) row(k, s["pass_at_k"][k], how["pass_at_k"]);
  for (const auto& [k, v] : s["fast_p"].items()) row(k, v, how["fast_p"]);
  row("speedup, geometric mean", s["speedup_geometric_mean"], how["speedup_geometric_mean"], "{:.3f}x");
  row("speedup, arithmetic mean", s["speedup_arithmetic_mean"], how["speedup_arithmetic_mean"], "{:.3f}x");
  html += "</tbody></table>";

  std::vector<std::pair<std::string, json>> pass = {{"accuracy", s["accuracy"]}};
  for (const char* k : {"pass@1", "pass@5", "pass@10"}) pass.emplace_back(k, s["pass_at_k"][k]);
  std::vector<std::pair<std::string, json>> categories;
  for (const auto& [name, c] : summary["categories"].items()) categories.emplace_back(name, c["accuracy"]);
  html += "<div>" + speedup_svg(lines) + bars_svg("pass-at-k", "accuracy and pass@k", pass) +
          bars_svg("category-accuracy", "accuracy per category", categories) + "</div>";

  html += "<table id=\"categories\"><thead><tr><th>category</th><th>problems</th><th>accuracy</th>"
          "<th>pass@1</th><th>geometric mean speedup</th></tr></thead><tbody>";
  for (const auto& [name, c] : summary["categories"].items())
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", xml_escape(name),
                        c["problems"].dump(), cell(c["accuracy"]), cell(c["pass_at_k"]["pass@1"]),
                        cell(c["speedup_geometric_mean"], "{:.3f}x"));
  html += "</tbody></table><table id=\"problems\"><thead><tr><th>problem</th><th>samples</th><th>compiled</th>"
          "<th>correct</th><th>fastest correct</th><th>speedup</th></tr></thead><tbody>";
  for (const json& p : summary["problems"])
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        cell(p["problem"]), p["samples"].dump(), p["compiled"].dump(), p["correct"].dump(),
                        cell(p["fastest_correct"]), cell(p["speedup"], "{:.3f}x"));
  return html + "</tbody></table></body></html>\n";
}

} // namespace kj::suite::detail
