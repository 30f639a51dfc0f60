// The reports of a finished mutation campaign (src/mutate/reports.cpp, html_report.cpp) on one small synthetic
// campaign with a mutant of every status: the survivors' compiler-style lines exactly, the
// console's table cells and sections, the mutation-testing-report-schema JSON parsed back
// (status mapping, reasons, locations, killedBy), the JSON Lines sidecar field by field, and
// the HTML page: escaped text, the ids the browser check looks for, and no network reference.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kjudge/error.hpp"
#include "kjudge/mutate.hpp"

namespace kj::mutate {
namespace {

using nlohmann::json;

const char* const kSource =
    "__global__ void k(const float* a, float* s, int n) {\n"   // line 1
    "  int i = threadIdx.x;\n"                                   // line 2
    "  if (i < n && a[i] > 0) { s[i] = expf(a[i]) + 1.0f; }\n" // line 3
    "}\n";

MutantResult result(const std::string& id, Status status, const std::string& op, Category category,
                    const std::string& original, const std::string& replacement, int line, int column) {
  MutantResult r;
  r.mutant.id = id;
  r.mutant.op = op;
  r.mutant.category = category;
  r.mutant.rewrite = original + " -> " + replacement;
  r.mutant.description = original + " -> " + replacement + " in k";
  r.mutant.file = "p/solutions/basic.cu";
  r.mutant.original = original;
  r.mutant.replacement = replacement;
  r.mutant.line = line;
  r.mutant.column = column;
  r.mutant.function = "k";
  const std::string src = kSource;
  // The offset of (line, column) in kSource.
  std::size_t offset = 0;
  for (int l = 1; l < line; ++l) offset = src.find('\n', offset) + 1;
  r.mutant.offset = offset + static_cast<std::size_t>(column - 1);
  r.mutant.length = original.size();
  r.problem = "p";
  r.status = status;
  return r;
}

// Mutants of every status. fm (expf -> __expf) and ge (< -> <=) are killed and accepted by
// kjudge: the survivors. ad is killed and accepted by kernelbench only. dl (a multi-line
// deletion) was not shown killable.
Campaign campaign() {
  Campaign c;
  c.checkers = {"kernelbench", "kjudge"};
  c.backend = "host";
  c.pool = {{"p", "case-0", "public:id"}, {"p", "case-1", "special:x:nan"}, {"p", "case-2", "public:x*-1"}};
  c.sources["p/solutions/basic.cu"] = kSource;

  MutantResult fm = result("00000000000000f1", Status::killed, "PR-FASTMATH", Category::precision, "expf",
                           "__expf", 3, 35);
  fm.mutant.equivalence_prone = true;
  fm.status_reason = "error 40x the controls'";
  fm.killed_on = {1, 2};
  fm.witness = 1;
  fm.replay = "kjudge check p --candidate m.cu --case case-1";
  fm.accepted = {{"kjudge", true}, {"kernelbench", true}};
  fm.error_ratios = {{0, 0.5}, {1, 40.0}, {2, HUGE_VAL}};
  fm.ptx_hash = "aa";
  fm.equivalence_class = "aa";

  MutantResult ge = result("00000000000000b2", Status::killed, "BD-ROR", Category::boundary, "<", "<=", 3, 9);
  ge.status_reason = "crash on case-2: illegal address";
  ge.killed_on = {2};
  ge.witness = 2;
  ge.accepted = {{"kjudge", true}, {"kernelbench", false}};

  MutantResult ad = result("00000000000000a3", Status::killed, "AR-AOR", Category::arithmetic, "+", "-", 3, 46);
  ad.status_reason = "error 3x the controls'";
  ad.killed_on = {0};
  ad.witness = 0;
  ad.accepted = {{"kjudge", false}, {"kernelbench", true}};
  ad.error_ratios = {{0, 3.0}, {1, 2.0}};

  MutantResult dl = result("00000000000000d4", Status::not_killable, "SE-SDL", Category::semantic,
                           "{ s[i] = expf(a[i]) + 1.0f; }", "", 3, 26);
  dl.accepted = {{"kjudge", true}, {"kernelbench", true}};

  MutantResult ce = result("00000000000000c5", Status::compile_error, "IX-DIM", Category::indexing, ".x", ".y", 2, 20);
  ce.status_reason = "error: no member y";
  MutantResult eq = result("00000000000000e6", Status::equivalent, "AR-CONST", Category::arithmetic, "1.0f",
                           "1.001f", 3, 48);
  MutantResult du = result("00000000000000e7", Status::duplicate, "AR-CONST", Category::arithmetic, "1.0f",
                           "0.0f", 3, 48);
  du.equivalence_class = "bb";
  MutantResult nr = result("00000000000000e8", Status::not_run, "AR-AOR", Category::arithmetic, "+", "*", 3, 46);

  c.mutants = {fm, ge, ad, dl, ce, eq, du, nr};
  c.controls = {{"p", "ctrl-fma", {{"kjudge", true}, {"kernelbench", false}}, ""},
                {"p", "basic.cu", {{"kjudge", true}, {"kernelbench", true}}, ""}};
  c.dropped_inputs = {{{"p", "case-9", "public:x+100"}, "the original failed: inf in output"}};
  c.forced_fail_killed = true;
  c.generate_s = 0.5;
  c.compile_s = 2;
  c.dedup_s = 0.25;
  c.execute_s = 2; // 4 mutants ran (killed or not killable): 2.0 mutants/s
  return c;
}

// ---- survivor_lines ----

TEST(ReportSurvivorLines, KjudgesEscapesAsWarningsAndUnkillableAsNotes) {
  const std::vector<std::string> lines = survivor_lines(campaign());
  const std::vector<std::string> want = {
      "p/solutions/basic.cu:3:35: warning: Survived: expf -> __expf [PR-FASTMATH] (accepted by kjudge; "
      "witness case-1; equivalence-prone operator)",
      "p/solutions/basic.cu:3:9: warning: Survived: < -> <= [BD-ROR] (accepted by kjudge; witness case-2)",
      "p/solutions/basic.cu:3:26: note: not shown killable: { s[i] = expf(a[i]) + 1.0f; } -> \"\" [SE-SDL]",
  };
  EXPECT_EQ(lines, want);
}

TEST(ReportSurvivorLines, WithoutKjudgeTheFirstCheckerDecides) {
  Campaign c = campaign();
  c.checkers = {"kernelbench"};
  for (MutantResult& m : c.mutants) m.accepted.erase("kjudge");
  const std::vector<std::string> lines = survivor_lines(c);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "p/solutions/basic.cu:3:35: warning: Survived: expf -> __expf [PR-FASTMATH] (accepted by "
            "kernelbench; witness case-1; equivalence-prone operator)");
  EXPECT_EQ(lines[1], "p/solutions/basic.cu:3:46: warning: Survived: + -> - [AR-AOR] (accepted by kernelbench; "
                      "witness case-0)");
}

TEST(ReportSurvivorLines, AKilledMutantWithoutAWitnessSaysSo) {
  Campaign c = campaign();
  c.mutants[1].witness.reset();
  EXPECT_EQ(survivor_lines(c)[1],
            "p/solutions/basic.cu:3:9: warning: Survived: < -> <= [BD-ROR] (accepted by kjudge; witness none recorded)");
}

// ---- write_console ----

TEST(ReportConsole, HasTheTableControlsStagesDroppedInputsSanityAndSurvivors) {
  std::ostringstream out;
  write_console(out, campaign());
  const std::string text = out.str();
  EXPECT_NE(text.find("8 mutants: 3 killed, 1 not shown killable, 1 compile errors, 1 equivalent, "
                      "1 duplicates, 1 not run"),
            std::string::npos)
      << text;
  // kjudge accepted fm and ge of the three killed; one precision mutant, accepted.
  EXPECT_NE(text.find("100.0% [100.0, 100.0] (n=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.0% [0.0, 0.0] (n=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("(n=3)"), std::string::npos) << text;
  EXPECT_NE(text.find("- (n=0)"), std::string::npos) << text; // synchronization
  EXPECT_NE(text.find("False rejections of the 2 controls: kernelbench 1 of 2, kjudge 0 of 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kernelbench rejected control ctrl-fma of p"), std::string::npos) << text;
  EXPECT_NE(text.find("execute 2.00 s (4 executed, 2.0 mutants/s)"), std::string::npos) << text;
  EXPECT_NE(text.find("Dropped inputs: 1 of 4"), std::string::npos) << text;
  EXPECT_NE(text.find("p case-9 (public:x+100): the original failed: inf in output"), std::string::npos) << text;
  EXPECT_NE(text.find("Forced-fail mutant: killed"), std::string::npos) << text;
  for (const std::string& line : survivor_lines(campaign())) EXPECT_NE(text.find(line + "\n"), std::string::npos);
}

TEST(ReportConsole, AForcedFailMutantThatLivedIsShouted) {
  Campaign c = campaign();
  c.forced_fail_killed = false;
  std::ostringstream out;
  write_console(out, c);
  EXPECT_NE(out.str().find("Forced-fail mutant: NOT killed"), std::string::npos);
}

// ---- mutation_report_json ----

TEST(ReportSchemaJson, LayoutAndStatusMapping) {
  const json doc = json::parse(mutation_report_json(campaign()));
  EXPECT_EQ(doc.at("schemaVersion"), "2");
  EXPECT_EQ(doc.at("thresholds").at("high"), 80);
  EXPECT_EQ(doc.at("thresholds").at("low"), 60);
  ASSERT_EQ(doc.at("files").size(), 1u);
  const json& file = doc.at("files").at("p/solutions/basic.cu");
  EXPECT_EQ(file.at("language"), "cpp");
  EXPECT_EQ(file.at("source"), kSource);
  const json& mutants = file.at("mutants");
  ASSERT_EQ(mutants.size(), 8u);
  std::vector<std::string> statuses;
  for (const json& m : mutants) statuses.push_back(m.at("status"));
  EXPECT_EQ(statuses, (std::vector<std::string>{"Killed", "Killed", "Killed", "Survived", "CompileError", "Ignored",
                                                "Ignored", "Ignored"}));
  EXPECT_EQ(mutation_report_json(campaign()).find("RuntimeError"), std::string::npos);
}

TEST(ReportSchemaJson, MutantFields) {
  const json doc = json::parse(mutation_report_json(campaign()));
  const json& mutants = doc.at("files").at("p/solutions/basic.cu").at("mutants");
  const json& fm = mutants.at(0);
  EXPECT_EQ(fm.at("id"), "00000000000000f1");
  EXPECT_EQ(fm.at("mutatorName"), "PR-FASTMATH");
  EXPECT_EQ(fm.at("replacement"), "__expf");
  EXPECT_EQ(fm.at("description"), "expf -> __expf in k");
  EXPECT_EQ(fm.at("location"), json::parse(R"({"start": {"line": 3, "column": 35},
                                                 "end": {"line": 3, "column": 39}})"));
  EXPECT_EQ(fm.at("statusReason"), "error 40x the controls'");
  // The witness first, then the other inputs that kill it.
  EXPECT_EQ(fm.at("killedBy"), json::parse(R"(["case-1", "case-2"])"));
  // A crash is a kill, its reason kept.
  EXPECT_EQ(mutants.at(1).at("statusReason"), "crash on case-2: illegal address");
  EXPECT_FALSE(mutants.at(3).contains("killedBy"));
  EXPECT_EQ(mutants.at(3).at("replacement"), "");
  EXPECT_EQ(mutants.at(4).at("statusReason"), "error: no member y");
  // Ignored folds three statuses: the reason names which.
  EXPECT_EQ(mutants.at(5).at("statusReason").get<std::string>().rfind("equivalent: ", 0), 0u);
  EXPECT_EQ(mutants.at(6).at("statusReason").get<std::string>().rfind("duplicate: ", 0), 0u);
  EXPECT_NE(mutants.at(6).at("statusReason").get<std::string>().find("bb"), std::string::npos);
  EXPECT_EQ(mutants.at(7).at("statusReason"), "not_run: outside the budget");
}

TEST(ReportSchemaJson, AMultiLineOriginalEndsOnALaterLine) {
  Campaign c = campaign();
  c.mutants[3].mutant.original = "{\n    x;\n  }";
  const json doc = json::parse(mutation_report_json(c));
  const json& loc = doc.at("files").at("p/solutions/basic.cu").at("mutants").at(3).at("location");
  EXPECT_EQ(loc.at("end"), json::parse(R"({"line": 5, "column": 4})"));
}

// ---- mutants_jsonl ----

TEST(ReportJsonl, OneObjectPerMutantWithItsFields) {
  const std::string text = mutants_jsonl(campaign());
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(text.back(), '\n');

  const json& fm = lines[0];
  EXPECT_EQ(fm.at("id"), "00000000000000f1");
  EXPECT_EQ(fm.at("problem"), "p");
  EXPECT_EQ(fm.at("file"), "p/solutions/basic.cu");
  EXPECT_EQ(fm.at("line"), 3);
  EXPECT_EQ(fm.at("column"), 35);
  EXPECT_EQ(fm.at("operator"), "PR-FASTMATH");
  EXPECT_EQ(fm.at("category"), "precision");
  EXPECT_EQ(fm.at("rewrite"), "expf -> __expf");
  EXPECT_EQ(fm.at("status"), "killed");
  EXPECT_EQ(fm.at("status_reason"), "error 40x the controls'");
  EXPECT_EQ(fm.at("ptx_hash"), "aa");
  EXPECT_EQ(fm.at("equivalence_class"), "aa");
  EXPECT_EQ(fm.at("equivalence_prone"), true);
  EXPECT_EQ(fm.at("accepted"), json::parse(R"({"kjudge": true, "kernelbench": true})"));
  EXPECT_EQ(fm.at("escapes"), json::parse(R"(["kernelbench", "kjudge"])"));
  EXPECT_EQ(fm.at("witness"), json::parse(R"({"case_id": "case-1", "recipe": "special:x:nan"})"));
  EXPECT_EQ(fm.at("replay"), "kjudge check p --candidate m.cu --case case-1");
  EXPECT_EQ(fm.at("flaky"), false);
  EXPECT_EQ(fm.at("max_error_ratio"), "inf"); // JSON has no Inf: json_number's string
  EXPECT_EQ(fm.at("error_ratios").size(), 3u);

  EXPECT_EQ(lines[1].at("escapes"), json::parse(R"(["kjudge"])"));
  EXPECT_EQ(lines[2].at("max_error_ratio"), 3.0);
  EXPECT_EQ(lines[2].at("escapes"), json::parse(R"(["kernelbench"])"));
  // Not killed: accepting it is no escape; no witness; no ratios.
  EXPECT_EQ(lines[3].at("status"), "not_killable");
  EXPECT_EQ(lines[3].at("escapes"), json::array());
  EXPECT_TRUE(lines[3].at("witness").is_null());
  EXPECT_TRUE(lines[3].at("max_error_ratio").is_null());
  EXPECT_EQ(lines[4].at("category"), "indexing");
  EXPECT_EQ(lines[6].at("status"), "duplicate");
  EXPECT_EQ(lines[7].at("status"), "not_run");
}

TEST(ReportJsonl, AnEmptyCampaignIsAnEmptyFile) {
  EXPECT_EQ(mutants_jsonl(Campaign{}), "");
}

// ---- html_report ----

TEST(ReportHtml, HasTheSectionsTheBrowserCheckLooksFor) {
  const std::string html = html_report(campaign());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("id=\"escapes\""), std::string::npos);
  EXPECT_NE(html.find("id=\"survivors\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"cover-curve\""), std::string::npos);
  EXPECT_NE(html.find("id=\"held-out\""), std::string::npos);
  EXPECT_NE(html.find("id=\"controls\""), std::string::npos);
  EXPECT_NE(html.find("id=\"dropped\""), std::string::npos);
  // The three escapes (two of kjudge, one of kernelbench) are rows with their anchors.
  EXPECT_NE(html.find("href=\"#m-00000000000000f1\""), std::string::npos);
  EXPECT_NE(html.find("id=\"m-00000000000000f1\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#m-00000000000000a3\""), std::string::npos);
  // expf also lies inside the not-killable block dl: its mark names both, the survivor first, and
  // is a survivor's (red) mark.
  EXPECT_NE(html.find("<mark title=\"PR-FASTMATH: expf -&gt; __expf; accepted by kernelbench, kjudge; "
                      "witness case-1\nSE-SDL: { s[i] = expf(a[i]) + 1.0f; } -&gt; &quot;&quot;; not shown "
                      "killable\">expf</mark>"),
            std::string::npos)
      << html;
  // Outside every survivor, the block is a grey mark.
  EXPECT_NE(html.find("<mark class=\"nk\" title=\"SE-SDL: "), std::string::npos);
}

TEST(ReportHtml, IsSelfContained) {
  const std::string html = html_report(campaign());
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
}

TEST(ReportHtml, EscapesEveryText) {
  Campaign c = campaign();
  c.checkers.push_back("<b>evil</b>");
  c.pool[1].case_id = "<script>alert(1)</script>";
  c.dropped_inputs[0].second = "a & b";
  c.sources["p/helpers.cuh"] = "template <int N> __device__ int odd(int x) { return x & N; }\n";
  const std::string html = html_report(c);
  // The sources' < and && stay text, in the listings and in the table cells.
  EXPECT_NE(html.find("template &lt;int N&gt; __device__ int odd(int x) { return x &amp; N; }"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;</mark> n &amp;&amp; a[i] &gt; 0) "), std::string::npos);
  EXPECT_EQ(html.find("i < n &&"), std::string::npos);
  EXPECT_EQ(html.find("<int N>"), std::string::npos);
  EXPECT_NE(html.find("<code>&lt;</code> &rarr; <code>&lt;=</code>"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>evil</b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;evil&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("a &amp; b"), std::string::npos);
}

TEST(ReportHtml, MarksStayOnTheirLinesAndOverlapsNameEveryMutant) {
  Campaign c = campaign();
  // A survivor spanning lines 2 and 3, overlapping ge's "<".
  MutantResult wide = result("00000000000000f9", Status::killed, "SE-SDL", Category::semantic,
                             "threadIdx.x;\n  if (i <", "0;\n  if (i <", 2, 11);
  wide.killed_on = {0};
  wide.witness = 0;
  wide.accepted = {{"kjudge", true}};
  c.mutants.push_back(wide);
  const std::string html = html_report(c);
  // The mark closes before the newline and reopens after the line number.
  EXPECT_NE(html.find("threadIdx.x;</mark>\n<span class=\"ln\">3</span><mark"), std::string::npos) << html;
  // The "<" carries both mutants in its title.
  const std::size_t lt = html.find("&lt;</mark> n &amp;&amp;");
  ASSERT_NE(lt, std::string::npos);
  const std::size_t open = html.rfind("<mark", lt);
  const std::string tag = html.substr(open, lt - open);
  EXPECT_NE(tag.find("SE-SDL"), std::string::npos) << tag;
  EXPECT_NE(tag.find("BD-ROR"), std::string::npos) << tag;
}

// ---- campaign_json, campaign_from_json ----

TEST(ReportFromJson, ACampaignWrittenAndReadBackGivesTheSameReports) {
  const Campaign c = campaign();
  const Campaign back = campaign_from_json(campaign_json(c), "c.json");
  std::ostringstream before, after;
  write_console(before, c);
  write_console(after, back);
  EXPECT_EQ(after.str(), before.str());
  EXPECT_EQ(html_report(back), html_report(c));
  EXPECT_EQ(mutants_jsonl(back), mutants_jsonl(c));
  EXPECT_EQ(mutation_report_json(back), mutation_report_json(c));
  EXPECT_EQ(back.mutants.at(0).error_ratios.at(2).second, HUGE_VAL); // written null
}

TEST(ReportFromJson, AMalformedCampaignIsNamedWithWhatIsWrong) {
  const auto message = [](const std::string& text) {
    try {
      (void)campaign_from_json(text, "c.json");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{").find("c.json"), std::string::npos);
  json j = json::parse(campaign_json(campaign()));
  EXPECT_EQ(message(j.dump()), "no error");
  j["mutants"][0]["witness"] = 3;
  EXPECT_NE(message(j.dump()).find("mutant 00000000000000f1: pool input 3 of 3"), std::string::npos);
  j = json::parse(campaign_json(campaign()));
  j["mutants"][1]["status"] = "sleeping";
  EXPECT_NE(message(j.dump()).find("an unknown category or status"), std::string::npos);
}

TEST(ReportHtml, AnEmptyCampaignStillRenders) {
  const std::string html = html_report(Campaign{});
  EXPECT_NE(html.find("id=\"survivors\""), std::string::npos);
  EXPECT_NE(html.find("No killed mutant was accepted by any checker."), std::string::npos);
  EXPECT_NE(html.find("no killed mutants: nothing to cover"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
}

} // namespace
} // namespace kj::mutate
