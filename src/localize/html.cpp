// `kjudge localize --html`: the localisation as a self-contained page (no script, no network),
// per stage and output a table of the terms and a plot of their distributions beside the
// reference's; tools/check-html-report renders it in headless Chromium.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kjudge/localize.hpp"
#include "kjudge/report.hpp"

namespace kj::localize {

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; color: #1d232b; background: #f6f7f9; margin: 24px; }
table { border-collapse: collapse; background: #fff; border: 1px solid #d5dae1; margin: 6px 0; }
th, td { border: 1px solid #e1e5ea; padding: 5px 9px; text-align: left; }
th { background: #eceff3; font-weight: 600; font-size: 13px; }
svg { background: #fff; border: 1px solid #d5dae1; margin: 4px 0 18px 0; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
.culprit { font-weight: 600; }
)";

std::string ratio_cell(double kernel, double reference) {
  if (reference > 0) return fmt::format("{:.3g} / {:.3g} = {:.2f}x", kernel, reference, kernel / reference);
  return fmt::format("{:.3g} / {:.3g}", kernel, reference);
}

// Each term's |error| from p50 to max on a log axis, the candidate's bar above the reference's,
// ticks at p99 and p99.9.
std::string terms_svg(const CutAtOutput& c, const std::string& id) {
  double lo = INFINITY, hi = 0;
  for (const Term& t : c.terms)
    for (const TermStats* s : {&t.kernel, &t.reference})
      for (const double v : {s->p50, s->max})
        if (v > 0) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
  if (!(hi > 0)) lo = 1e-9, hi = 1;
  const double l0 = std::floor(std::log10(lo)), l1 = std::max(l0 + 1, std::ceil(std::log10(hi)));
  constexpr double left = 110, width = 520, row = 34;
  const double height = 40 + row * static_cast<double>(c.terms.size());
  auto x = [&](double v) {
    const double lv = v > 0 ? std::log10(v) : l0;
    return left + width * (std::clamp(lv, l0, l1) - l0) / (l1 - l0);
  };
  std::string svg = fmt::format(R"(<svg id="{}" width="{}" height="{}" role="img">)", id,
                                left + width + 30, height);
  for (double e = l0; e <= l1; ++e)
    svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="8" y2="{1:.1f}" stroke="#e1e5ea"/>)"
                       R"(<text x="{0:.1f}" y="{2:.1f}" text-anchor="middle">1e{3:.0f}</text>)",
                       x(std::pow(10.0, e)), height - 24, height - 8, e);
  for (std::size_t k = 0; k < c.terms.size(); ++k) {
    const Term& t = c.terms[k];
    const double y = 14 + row * static_cast<double>(k);
    svg += fmt::format(R"(<text x="8" y="{:.1f}">{}</text>)", y + 14, xml_escape(t.name));
    const std::pair<const TermStats*, const char*> bars[] = {{&t.kernel, "#2f6fde"},
                                                             {&t.reference, "#9aa4b1"}};
    for (int b = 0; b < 2; ++b) {
      const TermStats& s = *bars[b].first;
      const double yb = y + 4 + 12 * b;
      svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="8" fill="{}"/>)",
                         x(s.p50), yb, std::max(1.0, x(s.max) - x(s.p50)), bars[b].second);
      for (const double v : {s.p99, s.p999})
        svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#1d232b"/>)",
                           x(v), yb - 2, yb + 10);
    }
  }
  return svg + "</svg>";
}

} // namespace

std::string localization_html(const Localization& l) {
  const Verdict& v = l.harness;
  std::string h = fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>kjudge localize</title>"
      "<style>{}</style></head><body>\n<h1>kjudge localize: {}</h1>\n<p>harness: {}{} ({} of {} "
      "cases passed): read every figure below with it. Cases decomposed: {}.</p>\n"
      "<p class=\"culprit\">culprit: {} ({})</p>\n",
      kStyle, xml_escape(v.manifest.problem), outcome_name(v.outcome),
      v.reason == Reason::none ? "" : fmt::format("({})", reason_name(v.reason)), v.cases_passed,
      v.cases.size(), l.cases.size(), xml_escape(l.culprit), xml_escape(l.explanation));
  h += "<h2>Each stage against the golden</h2>\n<table id=\"stages\"><thead><tr><th>stage</th>"
       "<th>p99.9, kernel / reference</th><th>max</th></tr></thead><tbody>\n";
  for (const StageError& s : l.stage_errors)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(s.stage),
                     ratio_cell(s.kernel.p999, s.reference.p999),
                     ratio_cell(s.kernel.max, s.reference.max));
  h += "</tbody></table>\n";
  for (std::size_t i = 0; i < l.cuts.size(); ++i) {
    const CutAtOutput& c = l.cuts[i];
    h += fmt::format("<h2>Cut at stage {}, output {} ({} error)</h2>\n<table id=\"cut-{}\"><thead>"
                     "<tr><th>term</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>"
                     "</thead><tbody>\n",
                     xml_escape(c.stage), xml_escape(c.output), xml_escape(c.statistic), i);
    for (const Term& t : c.terms)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       xml_escape(t.name), ratio_cell(t.kernel.p50, t.reference.p50),
                       ratio_cell(t.kernel.p99, t.reference.p99),
                       ratio_cell(t.kernel.p999, t.reference.p999),
                       ratio_cell(t.kernel.max, t.reference.max));
    h += "</tbody></table>\n<p>|error| from p50 to max, ticks at p99 and p99.9: the kernel "
         "(blue) above the reference (grey).</p>\n";
    h += terms_svg(c, fmt::format("cut-{}-plot", i)) + "\n";
    const Orthogonality& o = c.orthogonality;
    h += fmt::format("<p>Diagnostic only: rms(total)^2 {:.3g} against rms(inherited)^2 + "
                     "rms(own)^2 {:.3g}; {}.</p>\n",
                     o.total_sq, o.sum_sq,
                     o.failed.empty() ? std::string("its assumptions hold")
                                      : "its assumptions fail: " + xml_escape(fmt::format(
                                                                       "{}", fmt::join(o.failed, "; "))));
  }
  return h + "</body></html>\n";
}

} // namespace kj::localize
