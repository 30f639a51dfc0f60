// The HTML report of a finished mutation campaign (include/kjudge/mutate.hpp, html_report): one
// self-contained page (inline style and SVG, no script, no network) for a person to read after
// `kjudge mutate`. It holds the summary cards, the escape-rate table per checker and category,
// the survivors (primary checker's first) and the mutants not shown killable, the greedy
// set-cover curve against random suites, the dropped inputs and controls, and each kernel's
// source with the survivors marked. tools/check-html-report renders it in a browser and looks
// for the ids "survivors", "cover-curve" and "escapes". The text reports are reports.cpp, and
// the helpers both share are report_internal.hpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kjudge/mutate.hpp"
#include "kjudge/report.hpp"
#include "mutate/report_internal.hpp"

namespace kj::mutate {

using namespace detail;

// Text and attribute values alike: a kernel's source is full of < and &, and a title
// attribute holds quotes; line breaks stay literal (a title's tooltip shows them).
std::string detail::html_escape(std::string_view text) { return xml_escape(text, false); }



namespace {

// An anchor name from a mutant id (hex digits already; anything else is dropped, so a strange
// id cannot break out of the attribute).
std::string anchor(const Mutant& m) {
  std::string out = "m-";
  for (const char ch : m.id)
    if (std::isalnum(static_cast<unsigned char>(ch))) out += ch;
  return out;
}

// The cells the survivors and not-killable tables share: where (linked to the mark in the
// source), and the equivalence-prone tag and the mutation itself.
std::string where_cell(const Mutant& m) {
  return fmt::format("<td><a href=\"#{}\"><code>{}:{}</code></a></td>", anchor(m), html_escape(m.file), m.line);
}

const char* prone_tag(const Mutant& m) {
  return m.equivalence_prone ? " <span class=\"tag\">equivalence-prone</span>" : "";
}

std::string mutation_code(const Mutant& m) {
  return "<code>" + html_escape(shown_on_one_line(m.original)) + "</code> &rarr; <code>" + html_escape(shown_on_one_line(m.replacement)) + "</code>";
}

constexpr const char* kStyle = R"(
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d232b;
       background: #f6f7f9; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; border-bottom: 2px solid #d5dae1; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
h3.file { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
p.lead { color: #4a5563; margin: 0 0 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; }
.card { background: #fff; border: 1px solid #d5dae1; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 22px; }
.card span { color: #4a5563; font-size: 13px; }
.bad { color: #b3261e; font-weight: 600; }
.good { color: #1b7f3b; font-weight: 600; }
table { border-collapse: collapse; background: #fff; border: 1px solid #d5dae1; margin: 6px 0; }
th, td { border: 1px solid #e1e5ea; padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: #eceff3; font-weight: 600; font-size: 13px; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td small, .muted { color: #5b6573; font-size: 12px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px;
       background: #eef1f5; padding: 0 3px; border-radius: 3px; }
.tag { font-size: 11px; background: #fff1c2; border: 1px solid #e6cf7a; border-radius: 3px; padding: 0 4px; }
pre.src { background: #fff; border: 1px solid #d5dae1; padding: 8px 0; overflow-x: auto;
          font: 13px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
pre.src .ln { display: inline-block; width: 4em; padding-right: 10px; margin-right: 8px; text-align: right;
              color: #8a94a3; border-right: 1px solid #e1e5ea; user-select: none; }
mark { background: #ffb4ab; border-bottom: 2px solid #b3261e; color: inherit; padding: 0; }
mark.other { background: #ffd9a8; border-bottom: 2px solid #c26a00; }
mark.nk { background: #dde3ea; border-bottom: 2px dashed #6b7785; }
td b.primary { color: #b3261e; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
)";

// The rate as a cell whose background reddens with it, so the worst categories stand out.
std::string rate_td(const Rate& r) {
  if (r.total == 0) return "<td class=\"num muted\">&ndash; <small>n=0</small></td>";
  return fmt::format("<td class=\"num\" style=\"background: rgba(214, 54, 40, {:.2f})\">"
                     "<b>{:.1f}%</b><br><small>[{:.1f}, {:.1f}] n={}</small></td>",
                     0.08 + 0.55 * r.rate, 100 * r.rate, 100 * r.low, 100 * r.high, r.total);
}

std::string escape_table(const Campaign& c, const std::vector<EscapeRates>& rates) {
  std::string h = "<table id=\"escapes\"><thead><tr><th>checker</th><th>overall</th>";
  for (const Category cat : kScoredCategories) h += "<th>" + html_escape(category_name(cat)) + "</th>";
  h += "<th>false rejections of controls</th></tr></thead><tbody>\n";
  for (const EscapeRates& e : rates) {
    h += "<tr><th>" + html_escape(e.checker) + "</th>" + rate_td(e.overall);
    for (const Category cat : kScoredCategories) h += rate_td(e.by_category.at(cat));
    h += fmt::format("<td class=\"num{}\">{} of {}</td></tr>\n",
                     e.false_rejections > 0 ? " bad" : "", e.false_rejections, e.controls);
  }
  if (c.checkers.empty()) h += "<tr><td colspan=\"9\">No checker was run.</td></tr>\n";
  return h + "</tbody></table>\n";
}

std::string survivors_table(const Campaign& c) {
  std::string h =
      "<table id=\"survivors\"><thead><tr><th>where</th><th>operator</th><th>mutation</th>"
      "<th>witness</th><th>accepted by</th></tr></thead><tbody>\n";
  const std::string primary = primary_checker(c);
  // The primary checker's escapes first (those are the ones to fix), each group in campaign order.
  std::vector<const MutantResult*> shown;
  for (const MutantResult& r : c.mutants)
    if (r.status == Status::killed && accepted_by(r, primary)) shown.push_back(&r);
  for (const MutantResult& r : c.mutants)
    if (!escapes_of(c, r).empty() && !accepted_by(r, primary)) shown.push_back(&r);
  std::size_t rows = 0;
  for (const MutantResult* rp : shown) {
    const MutantResult& r = *rp;
    const std::vector<std::string> through = escapes_of(c, r);
    ++rows;
    const Mutant& m = r.mutant;
    const PoolInput* w = witness_input(c, r);
    std::vector<std::string> checkers;
    for (const std::string& name : through)
      checkers.push_back(name == primary ? "<b class=\"primary\">" + html_escape(name) + "</b>" : html_escape(name));
    h += fmt::format(
        "<tr>{}<td><code>{}</code> <small>{}</small>{}</td><td>{}<br><small>{}</small></td>"
        "<td>{}</td><td>{}</td></tr>\n",
        where_cell(m), html_escape(m.op), html_escape(category_name(m.category)), prone_tag(m), mutation_code(m),
        html_escape(r.status_reason),
        w ? "<code>" + html_escape(w->case_id) + "</code><br><small>" + html_escape(w->recipe) + "</small>"
          : std::string("<span class=\"muted\">none recorded</span>"),
        fmt::join(checkers, ", "));
  }
  // A row even when empty, so "no survivors" reads as a finding rather than a broken page.
  if (rows == 0)
    h += "<tr><td colspan=\"5\" class=\"good\">No killed mutant was accepted by any checker."
         "</td></tr>\n";
  return h + "</tbody></table>\n";
}

std::string not_killable_table(const Campaign& c) {
  std::string h;
  for (const MutantResult& r : c.mutants) {
    if (r.status != Status::not_killable) continue;
    const Mutant& m = r.mutant;
    h += fmt::format("<tr>{}<td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>\n", where_cell(m),
                     html_escape(m.op), prone_tag(m), mutation_code(m),
                     html_escape(r.status_reason.empty() ? "no pool input exposed it" : r.status_reason));
  }
  if (h.empty()) return "<p class=\"muted\">None: every mutant that ran was exposed by some input.</p>\n";
  return "<table id=\"not-killable\"><thead><tr><th>where</th><th>operator</th><th>mutation</th>"
         "<th>reason</th></tr></thead><tbody>\n" +
         h + "</tbody></table>\n";
}

// ---- The set-cover curve ----

std::string svg_number(double x) {
  return fmt::format("{:.1f}", x);
}

// The markers of the figures at k inputs per problem (greedy, random, held-out mutants), at
// (x, y) as given: with a title as a point of the plot, without one in the legend.
std::string svg_marker(std::string_view tag, const std::string& attributes, const std::string& title) {
  if (title.empty()) return fmt::format("<{} {}/>", tag, attributes);
  return fmt::format("<{} {}><title>{}</title></{}>", tag, attributes, title, tag);
}

std::string greedy_marker(const std::string& x, const std::string& y, const std::string& title = {}) {
  return svg_marker("rect", fmt::format("x=\"{}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"#1f5fbf\"", x, y), title);
}

std::string random_marker(const std::string& x, const std::string& y, const std::string& title = {}) {
  return svg_marker("circle", fmt::format("cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#e07b00\"", x, y), title);
}

std::string held_out_marker(const std::string& x, const std::string& y, const std::string& title = {}) {
  return svg_marker("path",
                    fmt::format("d=\"M{} {} l6 6 l-6 6 l-6 -6 z\" fill=\"none\" stroke=\"#1b7f3b\" stroke-width=\"2\"", x, y),
                    title);
}

std::string cover_svg(const Campaign& c, const CoverCurve& cover) {
  std::set<std::string> problems;
  for (const MutantResult& r : c.mutants)
    if (r.status == Status::killed && r.mutant.category != Category::control) problems.insert(r.problem);
  const std::size_t n_problems = std::max<std::size_t>(problems.size(), 1);

  constexpr double W = 760, H = 340, left = 56, right = 190, top = 16, bottom = 44;
  const double pw = W - left - right, ph = H - top - bottom;
  const auto last = static_cast<double>(std::max<std::size_t>({cover.detection.size(), 5 * n_problems, 1}));
  // About eight ticks at round steps, and the range rounded up past the last point so that no
  // marker sits on the frame.
  double step = 1;
  for (const double cand : {1.0, 2.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0})
    if (cand >= last / 8) {
      step = cand;
      break;
    }
  const double xmax = std::ceil((last + 0.5) / step) * step;
  auto X = [&](double x) { return left + pw * x / xmax; };
  auto Y = [&](double y) { return top + ph * (1 - y); };

  std::string s = fmt::format("<svg id=\"cover-curve\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                              "role=\"img\" aria-label=\"set cover detection curve\">\n",
                              W, H, W, H);
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#c3cad3\"/>\n",
                   left, top, pw, ph);
  for (int pct = 0; pct <= 100; pct += 25) {
    const double y = Y(pct / 100.0);
    s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#e6e9ee\"/>"
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}%</text>\n",
                     left, left + pw, svg_number(y), svg_number(y), left - 6, svg_number(y + 4), pct);
  }
  for (double x = 0; x <= xmax + 1e-9; x += step)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", svg_number(X(x)),
                     svg_number(top + ph + 16), x);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">inputs in the suite (all {} "
                   "problem{})</text>\n",
                   svg_number(left + pw / 2), svg_number(H - 6), problems.size(),
                   problems.size() == 1 ? "" : "s");

  if (cover.detection.empty()) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no killed mutants: nothing to "
                     "cover</text>\n",
                     svg_number(left + pw / 2), svg_number(top + ph / 2));
  } else {
    std::string points = fmt::format("{},{}", svg_number(X(0)), svg_number(Y(0)));
    for (std::size_t k = 0; k < cover.detection.size(); ++k)
      points += fmt::format(" {},{}", svg_number(X(static_cast<double>(k + 1))),
                            svg_number(Y(cover.detection[k])));
    s += "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"2.5\" points=\"" + points +
         "\"><title>greedy cover over all inputs</title></polyline>\n";
  }
  // The per-problem suites sit at k inputs per problem, that is k x problems in all.
  for (const int k : kSuiteSizes) {
    const double x = X(static_cast<double>(k) * static_cast<double>(n_problems));
    const auto title = [k](const char* what, double share) {
      return fmt::format("{}, {} per problem: {}", what, k, percent(share));
    };
    if (const auto g = cover.greedy_at.find(k); g != cover.greedy_at.end())
      s += greedy_marker(svg_number(x - 4.5), svg_number(Y(g->second) - 4.5), title("greedy", g->second)) + "\n";
    if (const auto r = cover.random_at.find(k); r != cover.random_at.end())
      s += random_marker(svg_number(x), svg_number(Y(r->second)), title("random", r->second)) + "\n";
    if (const auto h = cover.held_out_mutants_at.find(k);
        h != cover.held_out_mutants_at.end() && !std::isnan(h->second))
      s += held_out_marker(svg_number(x), svg_number(Y(h->second) - 6), title("held-out mutants", h->second)) +
           "\n";
  }
  // The legend, right of the plot.
  const double lx = left + pw + 16;
  const auto num = [](double v) { return fmt::format("{}", v); };
  const auto label = [&](double y, const char* text) {
    return fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", lx + 26, y, text);
  };
  s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#1f5fbf\" stroke-width=\"2.5\"/>",
                   lx, lx + 20, top + 12, top + 12) +
       label(top + 16, "greedy, all inputs");
  s += greedy_marker(num(lx + 5.5), num(top + 30)) + label(top + 38, "greedy, k per problem");
  s += random_marker(num(lx + 10), num(top + 56)) + label(top + 60, "random, k per problem");
  s += held_out_marker(num(lx + 10), num(top + 72)) + label(top + 82, "held-out mutants");
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"muted\">k = {}</text>\n", lx, top + 106,
                   fmt::join(kSuiteSizes, ", "));
  return s + "</svg>\n";
}

std::string cover_table(const CoverCurve& cover) {
  std::string h = "<table id=\"held-out\"><thead><tr><th>inputs per problem</th><th>greedy</th>"
                  "<th>random (mean of 200)</th><th>held-out mutants</th><th>held-out recipes "
                  "(k recipes)</th></tr></thead><tbody>\n";
  auto cell = [](const std::map<int, double>& m, int k) {
    return "<td class=\"num\">" + html_escape(share_at(m, k)) + "</td>";
  };
  for (const int k : kSuiteSizes)
    h += fmt::format("<tr><td class=\"num\">{}</td>{}{}{}{}</tr>\n", k, cell(cover.greedy_at, k),
                     cell(cover.random_at, k), cell(cover.held_out_mutants_at, k),
                     cell(cover.held_out_recipes_at, k));
  return h + "</tbody></table>\n";
}

// ---- Sources with the survivors marked ----

struct Span {
  std::size_t begin, end; // bytes of the original source
  const MutantResult* result;
  bool survivor; // an escape of some checker (else: not shown killable)
  bool primary;  // an escape of the primary checker: the ones to fix
};

std::string span_title(const Campaign& c, const Span& s) {
  const Mutant& m = s.result->mutant;
  std::string t = m.op + ": " + edit_text(m);
  if (s.survivor) {
    t += fmt::format("; accepted by {}; witness {}", fmt::join(escapes_of(c, *s.result), ", "),
                     witness_case(c, *s.result));
  } else {
    t += "; not shown killable";
  }
  return t;
}

// The source as numbered lines, each stretch covered by survivor or not-killable spans wrapped
// in a <mark> whose title names every mutant there. Marks close at line ends and reopen on the
// next line, so a multi-line span never swallows the line numbers.
std::string source_listing(const Campaign& c, const std::string& source, const std::vector<Span>& spans) {
  std::set<std::size_t> cuts{0, source.size()};
  for (const Span& s : spans) {
    cuts.insert(s.begin);
    cuts.insert(s.end);
  }
  std::string h = "<pre class=\"src\">";
  int line = 1;
  h += fmt::format("<span class=\"ln\">{}</span>", line);
  std::set<const MutantResult*> anchored;
  for (auto it = cuts.begin(); it != cuts.end() && std::next(it) != cuts.end(); ++it) {
    const std::size_t a = *it, b = *std::next(it);
    std::vector<const Span*> here;
    for (const Span& s : spans)
      if (s.begin <= a && b <= s.end) here.push_back(&s);
    // Anchors for the survivors table's links, where each mutant starts.
    for (const Span* s : here)
      if (s->begin == a && anchored.insert(s->result).second)
        h += "<span id=\"" + anchor(s->result->mutant) + "\"></span>";
    std::string open;
    if (!here.empty()) {
      auto any = [&](bool Span::*flag) {
        return std::any_of(here.begin(), here.end(), [&](const Span* s) { return s->*flag; });
      };
      // The most urgent mutant there decides the colour; the title names them all.
      const char* cls = any(&Span::primary) ? "" : any(&Span::survivor) ? " class=\"other\"" : " class=\"nk\"";
      std::string title;
      for (const Span* s : here) title += (title.empty() ? "" : "\n") + span_title(c, *s);
      open = std::string("<mark") + cls + " title=\"" + html_escape(title) + "\">";
    }
    std::string_view text(source.data() + a, b - a);
    h += open;
    for (std::size_t k = 0; k < text.size(); ++k) {
      const char ch = text[k];
      if (ch == '\n') {
        if (!open.empty()) h += "</mark>";
        h += "\n";
        // No number for the empty line after the file's last newline.
        if (a + k + 1 == source.size()) continue;
        h += fmt::format("<span class=\"ln\">{}</span>", ++line);
        h += open;
      } else {
        h += html_escape(std::string_view(&ch, 1));
      }
    }
    if (!open.empty()) h += "</mark>";
  }
  return h + "</pre>\n";
}

std::string sources_section(const Campaign& c) {
  const std::string primary = primary_checker(c);
  std::map<std::string, std::vector<Span>> spans;
  for (const MutantResult& r : c.mutants) {
    const bool survivor = !escapes_of(c, r).empty();
    const bool is_primary = survivor && accepted_by(r, primary);
    if (!survivor && r.status != Status::not_killable) continue;
    const auto src = c.sources.find(r.mutant.file);
    if (src == c.sources.end()) continue;
    const Mutant& m = r.mutant;
    if (m.offset > src->second.size()) continue;
    // An insertion has no text of its own: mark the character it goes before.
    std::size_t end = std::min(src->second.size(), m.offset + std::max<std::size_t>(m.length, 1));
    if (end == m.offset) continue;
    spans[m.file].push_back({m.offset, end, &r, survivor, is_primary});
  }
  std::string h;
  for (const auto& [file, source] : c.sources) {
    const auto& marks = spans[file];
    const auto n_surv = std::count_if(marks.begin(), marks.end(), [](const Span& s) { return s.survivor; });
    h += fmt::format("<h3 class=\"file\">{}</h3><p class=\"muted\">{} escape{} marked (red: accepted by {}, "
                     "orange: by other checkers only), {} not shown killable in grey; hover a mark for "
                     "the mutation.</p>\n",
                     html_escape(file), n_surv, n_surv == 1 ? "" : "s", html_escape(primary), marks.size() - static_cast<std::size_t>(n_surv));
    h += source_listing(c, source, marks);
  }
  if (h.empty()) h = "<p class=\"muted\">No source was recorded.</p>\n";
  return h;
}

std::string controls_table(const Campaign& c) {
  if (c.controls.empty()) return "<p class=\"muted\">No controls were run.</p>\n";
  std::string h = "<table id=\"controls\"><thead><tr><th>problem</th><th>control</th>";
  for (const std::string& checker : c.checkers) h += "<th>" + html_escape(checker) + "</th>";
  h += "</tr></thead><tbody>\n";
  for (const ControlResult& ctl : c.controls) {
    h += "<tr><td>" + html_escape(ctl.problem) + "</td><td><code>" + html_escape(ctl.name) + "</code></td>";
    if (!ctl.broken.empty()) { // a faulty CTRL rewrite: not scored
      h += "<td class=\"muted\" colspan=\"" + std::to_string(c.checkers.size()) +
           "\">not a control: the strong oracle rejects it (" + html_escape(ctl.broken) + ")</td></tr>\n";
      continue;
    }
    for (const std::string& checker : c.checkers) {
      const auto it = ctl.accepted.find(checker);
      if (it == ctl.accepted.end()) h += "<td class=\"muted\">not run</td>";
      else if (it->second) h += "<td class=\"good\">accepted</td>";
      else h += "<td class=\"bad\">REJECTED</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table>\n";
}

std::string dropped_table(const Campaign& c) {
  if (c.dropped_inputs.empty()) return "<p class=\"muted\">None: the original and every control passed on every input.</p>\n";
  std::string h = "<table id=\"dropped\"><thead><tr><th>problem</th><th>case</th><th>recipe</th>"
                  "<th>why</th></tr></thead><tbody>\n";
  for (const auto& [input, why] : c.dropped_inputs)
    h += "<tr><td>" + html_escape(input.problem) + "</td><td><code>" + html_escape(input.case_id) +
         "</code></td><td>" + html_escape(input.recipe) + "</td><td>" + html_escape(why) + "</td></tr>\n";
  return h + "</tbody></table>\n";
}

std::string card(const std::string& value, const std::string& label, const char* cls = "") {
  return fmt::format("<div class=\"card\"><b class=\"{}\">{}</b><span>{}</span></div>", cls, html_escape(value), html_escape(label));
}

} // namespace

std::string html_report(const Campaign& c) {
  const auto n = status_counts(c);
  const CoverCurve cover = set_cover(c);
  const std::vector<EscapeRates> rates = escape_rates(c);
  const std::string checker = primary_checker(c);
  const std::string checkers = fmt::to_string(fmt::join(c.checkers, ", "));

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<title>kjudge mutate: mutation analysis of " +
                  html_escape(checkers.empty() ? std::string("no checker") : checkers) + "</title>\n<style>" +
                  kStyle + "</style></head><body><main>\n";
  h += "<h1>Mutation analysis of the checkers</h1>\n";
  h += "<p class=\"lead\">" +
       html_escape(fmt::format("Checkers {} on the {} backend. {}.", checkers.empty() ? "none" : checkers,
                       c.backend.empty() ? "unknown" : c.backend, status_summary(c))) +
       "</p>\n";

  h += "<h2>Summary</h2>\n<div class=\"cards\">";
  h += card(std::to_string(c.mutants.size()), "mutants");
  h += card(std::to_string(n.at(Status::killed)), "killed (strong oracle)");
  h += card(std::to_string(n.at(Status::not_killable)), "not shown killable");
  h += card(std::to_string(n.at(Status::compile_error)), "compile errors");
  h += card(std::to_string(n.at(Status::equivalent) + n.at(Status::duplicate)), "equivalent or duplicate");
  h += card(std::to_string(n.at(Status::not_run)), "not run");
  for (const EscapeRates& e : rates)
    if (e.checker == checker)
      h += card(e.overall.total ? percent(e.overall.rate) : "-", "escape rate of " + e.checker, "bad");
  h += card(c.forced_fail_killed ? "killed" : "NOT killed", "forced-fail mutant",
            c.forced_fail_killed ? "good" : "bad");
  h += "</div>\n";
  h += "<p>" + html_escape(fmt::format("Stages: {} ({} mutants executed, {}). Pool: {} inputs, {} dropped.",
                               stage_times(c), executed_count(c), throughput(c), c.pool.size(),
                               c.dropped_inputs.size())) +
       "</p>\n";
  if (!c.forced_fail_killed)
    h += "<p class=\"bad\">The forced-fail mutant (outputs written as NaN) was not killed: the "
         "strong oracle is broken and no figure on this page can be trusted.</p>\n";

  h += "<h2>Escape rates</h2>\n<p class=\"lead\">Of the mutants the strong oracle killed, the "
       "share each checker accepted, with a bootstrap 95% interval. Control mutants are not "
       "scored; a control a checker rejects is a false rejection.</p>\n";
  h += escape_table(c, rates);

  h += "<h2>Survivors</h2>\n<p class=\"lead\">" +
       html_escape(fmt::format("Killed mutants some checker let through, {}'s first (those are the ones to "
                       "fix); the witness is the first input that exposes the mutant.",
                       checker.empty() ? "no checker" : checker)) +
       "</p>\n";
  h += survivors_table(c);
  h += "<h3>Not shown killable</h3>\n<p class=\"muted\">No pool input exposed these; they are "
       "never counted as escapes and are listed for review.</p>\n";
  h += not_killable_table(c);

  h += "<h2>Input suites: greedy set cover</h2>\n<p class=\"lead\">Detection (share of the killed "
       "mutants caught) of the greedy cover as inputs are added, against random suites of the same "
       "size per problem.</p>\n";
  h += cover_svg(c, cover);
  h += cover_table(cover);
  h += "<p>Recipes in greedy order: " +
       (cover.chosen_recipes.empty()
            ? std::string("<span class=\"muted\">none</span>")
            : "<code>" + html_escape(fmt::to_string(fmt::join(cover.chosen_recipes, ", "))) + "</code>") +
       "</p>\n";

  h += "<h2>Dropped inputs</h2>\n" + dropped_table(c);
  h += "<h2>Controls</h2>\n" + controls_table(c);
  h += "<h2>Sources</h2>\n" + sources_section(c);
  return h + "</main></body></html>\n";
}


} // namespace kj::mutate
