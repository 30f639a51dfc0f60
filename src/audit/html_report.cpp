// The audit's HTML page (audit_html): the table of problems and policies (id "audit") and, per
// policy that ran the ladder, its plot (ids "ladder-0", "ladder-1", ...): per family, each
// solution's log10 error over bound rung by rung against the bound at 0. Self-contained, no
// script; tools/check-html-report renders it in headless Chromium.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "audit/audit_internal.hpp"
#include "mutate/report_internal.hpp"

namespace kj::audit {

namespace {

using mutate::detail::html_escape;

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; color: #1d232b; background: #f6f7f9; margin: 24px; }
table { border-collapse: collapse; background: #fff; border: 1px solid #d5dae1; margin: 6px 0; }
th, td { border: 1px solid #e1e5ea; padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: #eceff3; font-weight: 600; font-size: 13px; }
td.bad { color: #b3261e; font-weight: 600; } td.good { color: #1b7f3b; font-weight: 600; }
svg { background: #fff; border: 1px solid #d5dae1; margin: 4px 0 16px; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
)";

constexpr const char* kColours[] = {"#1f5fbf", "#e07b00", "#2e8b57", "#8e44ad", "#c0392b", "#555"};

std::string num(double x) { return fmt::format("{:.1f}", x); }

// One policy's ladder: a panel per family, rungs along x, log10 error over bound up (clamped to
// [-8, 4]), the bound dashed at 0, a polyline and points per solution (red where it fails).
std::string ladder_svg(const PolicyAudit& p, int index) {
  std::vector<std::string> families, candidates;
  for (const LadderStep& s : p.ladder) {
    if (std::find(families.begin(), families.end(), s.family) == families.end()) families.push_back(s.family);
    if (std::find(candidates.begin(), candidates.end(), s.candidate) == candidates.end())
      candidates.push_back(s.candidate);
  }
  const double pw = 260, ph = 160, left = 48, top = 28, gap = 56, pad = 30;
  const double width = left + static_cast<double>(families.size()) * (pw + gap);
  const double height = top + ph + 44 + 18 * static_cast<double>(candidates.size());
  auto Y = [&](double m) { return top + ph * (4 - std::clamp(m, -8.0, 4.0)) / 12; };
  std::string s = fmt::format("<svg id=\"ladder-{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                              "role=\"img\" aria-label=\"validity ladder\">\n",
                              index, num(width), num(height), num(width), num(height));
  for (std::size_t f = 0; f < families.size(); ++f) {
    const double x0 = left + static_cast<double>(f) * (pw + gap);
    std::vector<std::string> rungs;
    for (const LadderStep& st : p.ladder)
      if (st.family == families[f] && std::find(rungs.begin(), rungs.end(), st.rung) == rungs.end())
        rungs.push_back(st.rung);
    auto X = [&](std::size_t r) {
      return x0 + (rungs.size() < 2 ? pw / 2
                                    : pad + (pw - 2 * pad) * static_cast<double>(r) /
                                                static_cast<double>(rungs.size() - 1));
    };
    s += fmt::format("<text x=\"{}\" y=\"{}\">{} (log10 error / bound)</text>\n", num(x0), top - 10,
                     html_escape(families[f]));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d5dae1\"/>\n",
                     num(x0), top, pw, ph);
    for (const double m : {4.0, 0.0, -4.0, -8.0})
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:g}</text>\n", num(x0 - 4), num(Y(m) + 4), m);
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#b3261e\" stroke-dasharray=\"4 3\"/>\n",
                     num(x0), num(x0 + pw), num(Y(0)), num(Y(0)));
    for (std::size_t r = 0; r < rungs.size(); ++r)
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(X(r)),
                       num(top + ph + 16), html_escape(rungs[r]));
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const char* colour = kColours[c % std::size(kColours)];
      std::string points, marks;
      for (const LadderStep& st : p.ladder) {
        if (st.family != families[f] || st.candidate != candidates[c]) continue;
        const std::size_t r = static_cast<std::size_t>(std::find(rungs.begin(), rungs.end(), st.rung) - rungs.begin());
        points += fmt::format("{},{} ", num(X(r)), num(Y(st.margin)));
        marks += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"><title>{} {}: {:+.2f}{}</title></circle>\n",
                             num(X(r)), num(Y(st.margin)), st.pass ? colour : "#b3261e",
                             html_escape(st.candidate), html_escape(st.rung), st.margin,
                             st.note.empty() ? "" : " (" + html_escape(st.note) + ")");
      }
      s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n{}",
                       points, colour, marks);
    }
  }
  for (std::size_t c = 0; c < candidates.size(); ++c)
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" style=\"fill:{}\">&#9632; {}</text>\n", left,
                     num(top + ph + 40 + 18 * static_cast<double>(c)), kColours[c % std::size(kColours)],
                     kColours[c % std::size(kColours)], html_escape(candidates[c]));
  return s + "</svg>\n";
}

} // namespace

std::string audit_html(const std::vector<ProblemAudit>& audits) {
  std::string h = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                              "<title>kjudge audit</title><style>{}</style></head><body>\n"
                              "<h1>kjudge audit</h1>\n<table id=\"audit\"><thead><tr><th>problem</th>"
                              "<th>policy</th><th>findings</th><th>cases</th><th>signal / bound</th>"
                              "<th>ceiling</th></tr></thead><tbody>\n",
                              kStyle);
  for (const ProblemAudit& a : audits)
    for (const PolicyAudit& p : a.policies) {
      std::string signal, ceiling;
      for (const auto& [output, sb] : p.signal_over_bound)
        signal += fmt::format("{}{} {:.3g}", signal.empty() ? "" : ", ", html_escape(output), sb);
      for (const auto& [family, rung] : p.ceiling)
        ceiling += fmt::format("{}{} at {}", ceiling.empty() ? "" : ", ", html_escape(family), html_escape(rung));
      const bool ok = p.status.size() == 1 && p.status[0] == Status::ok;
      h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       html_escape(a.problem), html_escape(p.policy), ok ? "good" : "bad",
                       html_escape(detail::status_text(p)), p.cases, signal.empty() ? "n/a" : signal,
                       p.ladder.empty() ? "not run" : ceiling.empty() ? "none" : ceiling);
    }
  h += "</tbody></table>\n";
  int index = 0;
  for (const ProblemAudit& a : audits)
    for (const PolicyAudit& p : a.policies) {
      if (p.ladder.empty()) continue;
      h += fmt::format("<h2>{} under {}: the validity ladder</h2>\n<p>log10 of the error over the "
                       "bound per solution and rung; above the dashed line it fails.</p>\n",
                       html_escape(a.problem), html_escape(p.policy));
      h += ladder_svg(p, index++);
    }
  return h + "</body></html>\n";
}

} // namespace kj::audit
