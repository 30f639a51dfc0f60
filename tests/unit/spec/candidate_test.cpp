// Candidate front-matter: finding the /* kjudge ... */ comment, line numbers of the .cu file in
// every error, options against the problem's allowed_options, scratch tensors, output init, and
// evaluation on the public shape sets only.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kjudge/spec.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(KJ_CASES_DIR) / "spec";

const Problem& softmax() {
  static const Problem p = load_problem(fs::path(KJ_SOURCE_DIR) / "problems" / "softmax");
  return p;
}
const Problem& full() {
  static const Problem p = load_problem(kCases / "good" / "full");
  return p;
}

// A plan for softmax in a comment that opens on line 2. `extra` (top-level keys and tables)
// starts on line 3, before the [[launch]] table; `launch_extra` goes into that table, after its
// args line (line 7 when `extra` is empty).
std::string plan(const std::string& extra, const std::string& launch_extra = "") {
  return "// header\n/* kjudge\n" + extra +
         "[[launch]]\nkernel = \"k\"\ngrid = [\"R\"]\nblock = [256]\n"
         "args = [\"x\", \"y\", \"R\", \"C\"]\n" +
         launch_extra + "*/\n__global__ void k() {}\n";
}

SpecError error_of(const std::string& source, const Problem& problem = softmax()) {
  try {
    parse_candidate(source, "cand.cu", problem);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error";
  return SpecError(Location{}, "none");
}

TEST(Candidate, LoadsAFile) {
  const fs::path file = kCases / "candidates" / "softmax_good.cu";
  const Candidate c = load_candidate(file, softmax());
  EXPECT_EQ(c.path, file);
  EXPECT_EQ(c.source.path, file);
  EXPECT_NE(c.source.text.find("softmax_rows"), std::string::npos);
  ASSERT_EQ(c.source.launches.size(), 2u);
  const LaunchSpec& l = c.source.launches[0];
  EXPECT_EQ(l.kernel, "softmax_rows<4>");
  EXPECT_EQ(l.kernel_base_name(), "softmax_rows");
  EXPECT_EQ(l.grid[0].eval({{"R", 10}}), 3);
  EXPECT_EQ(l.args.back(), "partial");
  EXPECT_FALSE(l.arg_exprs.back()); // a scratch tensor
  EXPECT_EQ(l.where.line, 5);       // the [[launch]] header's line in the .cu file
  EXPECT_EQ(l.where.file, file.string());
  EXPECT_EQ(l.grid[0].where().line, 7);
  EXPECT_EQ(l.grid[0].where().field, "launch[0].grid[0]");
  const LaunchSpec& fin = c.source.launches[1];
  ASSERT_TRUE(fin.repeat);
  EXPECT_EQ(fin.arg_exprs[1]->text(), "i");
  ASSERT_EQ(c.scratch.size(), 1u);
  EXPECT_EQ(c.scratch[0].name, "partial");
  EXPECT_EQ(c.scratch[0].dtype, DType::f32);
  EXPECT_EQ(c.scratch[0].init, InitRule::zero);
  EXPECT_EQ(c.scratch[0].where.line, 19);
  EXPECT_TRUE(c.options.empty());
}

TEST(Candidate, MissingPlan) {
  const fs::path file = kCases / "candidates" / "softmax_no_plan.cu";
  try {
    load_candidate(file, softmax());
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.bare_message(), "no /* kjudge ... */ launch plan at the top of " + file.string());
    EXPECT_EQ(e.where().file, file.string());
  }
  EXPECT_EQ(error_of("").bare_message(), "no /* kjudge ... */ launch plan at the top of cand.cu");
  // An ordinary comment that merely starts with the letters is not a plan.
  EXPECT_EQ(error_of("/* kjudgement day */\n").bare_message(),
            "no /* kjudge ... */ launch plan at the top of cand.cu");
  EXPECT_EQ(error_of("// kjudge\n[[launch]]\n").bare_message(),
            "no /* kjudge ... */ launch plan at the top of cand.cu");
  EXPECT_THROW(load_candidate(kCases / "candidates" / "nope.cu", softmax()), SpecError);
}

TEST(Candidate, LineNumbersAreThoseOfTheCuFile) {
  try {
    load_candidate(kCases / "candidates" / "softmax_bad_key.cu", softmax());
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().line, 8);
    EXPECT_EQ(e.where().column, 1);
    EXPECT_EQ(e.where().field, "launch[0].blok");
    EXPECT_NE(std::string(e.what()).find("softmax_bad_key.cu:8:1: launch[0].blok: unknown field "
                                         "'blok' in launch[0]; did you mean 'block'?"),
              std::string::npos)
        << e.what();
  }
  // A TOML syntax error on the 3rd line of the plan's text (line 4 of the file).
  SpecError e = error_of("\n/* kjudge\n[[launch]]\nkernel = \"k\n*/\n");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_NE(e.bare_message().find("malformed TOML in the launch plan"), std::string::npos);
  // TOML on the comment's own first line keeps its column.
  e = error_of("/* kjudge  x = 1\n*/\n");
  EXPECT_EQ(e.where().line, 1);
  EXPECT_EQ(e.where().column, 12);
  EXPECT_EQ(e.where().field, "x");
  // An unknown name inside an expression: the .cu line, and the column in the expression.
  try {
    parse_candidate(plan("", "cluster = [\"ceil_div(Rows, 2)\"]\n"), "cand.cu", softmax());
    ADD_FAILURE();
  } catch (const ExprError& err) {
    EXPECT_EQ(err.where().line, 8);
    EXPECT_EQ(err.where().field, "launch[0].cluster[0]");
    EXPECT_EQ(err.expr_column(), 10);
  }
}

TEST(Candidate, WherePlanMayBe) {
  // After blank lines, line comments, block comments and preprocessor lines: fine.
  const std::string ok = "\n\n// a\n/* licence */\n#include <cuda_fp16.h>\n" + plan("").substr(10);
  EXPECT_NO_THROW(parse_candidate(ok, "cand.cu", softmax()));
  // After code: refused, so a plan cannot hide below a kernel.
  SpecError e = error_of("__global__ void k() {}\n" + plan("").substr(10));
  EXPECT_EQ(e.where().line, 2);
  EXPECT_NE(e.bare_message().find("must come before any code (code starts at line 1)"),
            std::string::npos);
  // Two plans: refused.
  e = error_of(plan("") + "/* kjudge\n*/\n");
  EXPECT_NE(e.bare_message().find("a second /* kjudge ... */ launch plan"), std::string::npos);
  // Unterminated.
  e = error_of("/* kjudge\n[[launch]]\n");
  EXPECT_NE(e.bare_message().find("not closed"), std::string::npos);
  // "/*kjudge" and a keyword on the next line are accepted.
  const std::string after_keyword = plan("").substr(std::string("// header\n/* kjudge").size());
  EXPECT_NO_THROW(parse_candidate("/*kjudge" + after_keyword, "c.cu", softmax()));
  EXPECT_NO_THROW(parse_candidate("/*\nkjudge" + after_keyword, "c.cu", softmax()));
  // CRLF line ends.
  std::string crlf;
  for (char ch : plan("")) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  EXPECT_NO_THROW(parse_candidate(crlf, "c.cu", softmax()));
}

TEST(Candidate, Options) {
  const Candidate c = parse_candidate(plan("options = [\"-use_fast_math\"]\n"), "cand.cu", full());
  EXPECT_EQ(c.options, (std::vector<std::string>{"-use_fast_math"}));
  SpecError e = error_of(plan("options = [\"-DFAST=1\", \"-G\"]\n"), full());
  EXPECT_EQ(e.where().field, "options[1]");
  EXPECT_EQ(e.where().line, 3);
  EXPECT_EQ(e.bare_message(),
            "option '-G' is not allowed by problem 'full' (allowed: -use_fast_math -DFAST=1)");
  e = error_of(plan("options = [\"-use_fast_math\"]\n"));
  EXPECT_EQ(e.bare_message(),
            "option '-use_fast_math' is not allowed by problem 'softmax' (allowed: none)");
  e = error_of(plan("options = \"-O3\"\n"));
  EXPECT_NE(e.bare_message().find("expected an array"), std::string::npos);
}

TEST(Candidate, ScratchAndOutputs) {
  SpecError e = error_of(plan("[[scratch]]\nname = \"x\"\ndtype = \"f32\"\nshape = [1]\n"));
  EXPECT_EQ(e.where().field, "scratch[0].name");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_EQ(e.bare_message(), "name 'x' is already an input of the problem");
  e = error_of(plan("[[scratch]]\nname = \"t\"\ndtype = \"f31\"\nshape = [1]\n"));
  EXPECT_EQ(e.where().field, "scratch[0].dtype");
  e = error_of(plan("[[scratch]]\nname = \"t\"\ndtype = \"f32\"\nshape = [\"K\"]\n"));
  EXPECT_EQ(e.where().field, "scratch[0].shape[0]");
  EXPECT_NE(e.bare_message().find("unknown name 'K'"), std::string::npos);
  e = error_of(plan("[[scratch]]\nname = \"t\"\ndtype = \"f32\"\nshape = [1]\ninit = \"one\"\n"));
  EXPECT_EQ(e.where().field, "scratch[0].init");
  e = error_of(
      plan("[[scratch]]\nname = \"t\"\ndtype = \"f32\"\nshape = [\"R * 4611686018427387904\"]\n"));
  EXPECT_NE(e.bare_message().find("64-bit overflow"), std::string::npos);
  e = error_of(
      plan("[[scratch]]\nname = \"t\"\ndtype = \"f64\"\nshape = [\"R * 1125899906842624\"]\n"));
  EXPECT_NE(e.bare_message().find("shape of 't' overflows 64 bits"), std::string::npos);
  EXPECT_EQ(e.where().field, "scratch[0].shape");
  // The problem owns its outputs' initialisation: `init = "zero"` switched poisoning off, so a
  // ReLU storing only positive values passed.
  const std::string owned = "a candidate cannot change the problem's outputs (their init is the "
                            "problem's): remove the [outputs] table; zero a scratch tensor of "
                            "your own instead";
  for (const char* table : {"[outputs.y]\ninit = \"zero\"\n", "[outputs.yy]\ninit = \"zero\"\n",
                            "[outputs.y]\n", "outputs = 3\n"}) {
    e = error_of(plan(table));
    EXPECT_EQ(e.where().field, "outputs") << table;
    EXPECT_EQ(e.bare_message(), owned) << table;
  }
  // An unknown top-level key.
  e = error_of(plan("option = []\n"));
  EXPECT_EQ(e.bare_message(), "unknown field 'option' at the top level; did you mean 'options'?");
  // A launch argument naming a scratch tensor that is not declared.
  e = error_of(plan("", "").replace(plan("").find("\"C\"]"), 4, "\"C\", \"tmp\"]"));
  EXPECT_EQ(e.where().field, "launch[0].args[4]");
  // No launch at all.
  e = error_of("/* kjudge\noptions = []\n*/\n");
  EXPECT_EQ(e.bare_message(), "missing field 'launch' in the launch plan");
}

TEST(Candidate, OnlyPublicSetsAreEvaluated) {
  // Dividing by R - 3 fails only on the hidden set {R = 3}: the candidate loads, and no message
  // can reveal the hidden set to its author.
  const std::string src = plan("", "").replace(plan("").find("[\"R\"]"), 5, "[\"R / (R - 3)\"]");
  EXPECT_NO_THROW(parse_candidate(src, "cand.cu", softmax()));
  // A public failure is reported, naming the public set.
  const std::string bad = plan("", "").replace(plan("").find("[\"R\"]"), 5, "[\"R / (R - 128)\"]");
  const SpecError e = error_of(bad);
  EXPECT_EQ(e.where().field, "launch[0].grid[0]");
  EXPECT_NE(e.bare_message().find("division by zero at column 3 for dims.public[1]"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.bare_message().find("4099"), std::string::npos);
}

} // namespace
} // namespace kj
