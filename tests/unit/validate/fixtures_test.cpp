// validate_problem on problem folders read by load_problem: the bundled problems are valid, and
// the fixtures of tests/cases/validate/ give their diagnostics at file, field and position.
#include <filesystem>

#include <gtest/gtest.h>

#include "kjudge/validate.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

const fs::path cases_dir = fs::path(KJ_CASES_DIR) / "validate";

std::vector<std::string> render(const ValidationReport& report) {
  std::vector<std::string> out;
  for (const auto& d : report.diagnostics) {
    // The file as a name only: the loader may give it relative or absolute.
    Diagnostic shown = d;
    shown.where.file = fs::path(d.where.file).filename().string();
    out.push_back(format_diagnostic(shown));
  }
  return out;
}

TEST(ValidateFixtures, BundledProblemsAreValid) {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(KJ_SOURCE_DIR) / "problems")) {
    if (!fs::exists(entry.path() / "problem.toml")) continue;
    ++seen;
    const ValidationReport report = validate_problem(load_problem(entry.path()));
    EXPECT_EQ(render(report), std::vector<std::string>{}) << entry.path();
    EXPECT_TRUE(report.ok()) << entry.path();
  }
  EXPECT_GT(seen, 0);
}

TEST(ValidateFixtures, LintFindingsCarryTheSourcePosition) {
  const ValidationReport report = validate_problem(load_problem(cases_dir / "lint_dirty"));
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(render(report),
            (std::vector<std::string>{
                "reference.cu:5:11: error: f-suffixed literal '0.5f' caps the golden at f32; "
                "write kj::c<T>(0.5)",
                "reference.cu:6:52: error: f32-only math function 'expf' caps the golden at f32; "
                "write kj::exp(...) (kjudge/device.cuh) or the overloaded form",
                "reference.cu:7:10: error: '__shfl_down_sync' in the reference: references "
                "accumulate sequentially (docs/design.md); shuffle/atomic reductions change the "
                "yardstick",
                "reference.cu:8:25: error: 'atomicAdd' in the reference: references accumulate "
                "sequentially (docs/design.md); shuffle/atomic reductions change the yardstick",
            }));
}

TEST(ValidateFixtures, VaryDimWithNothingLeft) {
  const ValidationReport report = validate_problem(load_problem(cases_dir / "vary_starved"));
  ASSERT_EQ(report.diagnostics.size(), 1u) << ::testing::PrintToString(render(report));
  const Diagnostic& d = report.diagnostics[0];
  EXPECT_EQ(d.severity, Diagnostic::Severity::error);
  EXPECT_EQ(d.where.field, "dims.vary[1]");
  EXPECT_EQ(fs::path(d.where.file).filename(), "problem.toml");
  EXPECT_EQ(d.message,
            "vary dim 'C' keeps no perturbation: every one fails constraint 'C % 4 == 0'");
  // R still varies.
  std::vector<std::string> ids;
  for (const auto& s : report.shapes.sets) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"public0", "public0~R=63", "public0~R=65",
                                           "public0~R=67", "public0~R=1"}));
}

TEST(ValidateFixtures, LaunchesThatDoNotFitTheirKernel) {
  const ValidationReport report =
      validate_problem(load_problem(cases_dir / "signature_mismatch"));
  EXPECT_FALSE(report.ok());
  ASSERT_EQ(report.diagnostics.size(), 3u) << ::testing::PrintToString(render(report));
  EXPECT_EQ(report.diagnostics[0].message,
            "the launch gives 3 arguments, kernel 'scale_ref' takes 4 parameters (x, y, R, C)");
  EXPECT_EQ(report.diagnostics[1].message,
            "argument 3 'x' is a tensor, but parameter 3 'C' (int) of 'scale_ref' is not a "
            "pointer");
  EXPECT_EQ(report.diagnostics[2].message,
            "kernel 'scale_rows' is not defined in reference.cu; kernels defined: scale_ref");
  for (const auto& d : report.diagnostics) {
    EXPECT_EQ(fs::path(d.where.file).filename(), "problem.toml") << format_diagnostic(d);
    EXPECT_EQ(d.where.field.rfind("reference.launch[", 0), 0u) << format_diagnostic(d);
  }
}

}  // namespace
}  // namespace kj
