// The verdict model: reason names, classes and exit codes as docs/design.md's table gives them, the
// precedence between reasons, and how finalize turns case findings into one verdict.
#include <gtest/gtest.h>

#include "kjudge/verdict.hpp"

namespace kj {
namespace {

const Reason kAll[] = {
    Reason::none,
    Reason::compile_error,
    Reason::launch_error,
    Reason::forbidden_construct,
    Reason::crash,
    Reason::timeout,
    Reason::oob_write,
    Reason::input_modified,
    Reason::unwritten_output,
    Reason::nonfinite,
    Reason::nondeterministic,
    Reason::stale_output,
    Reason::mismatch,
    Reason::impossible_speed,
    Reason::precondition,
    Reason::spec_error,
    Reason::internal,
};

TEST(Reason, NamesAreDesignsSpelling) {
  EXPECT_EQ(reason_name(Reason::none), "none");
  EXPECT_EQ(reason_name(Reason::compile_error), "compile_error");
  EXPECT_EQ(reason_name(Reason::launch_error), "launch_error");
  EXPECT_EQ(reason_name(Reason::forbidden_construct), "forbidden_construct");
  EXPECT_EQ(reason_name(Reason::crash), "crash");
  EXPECT_EQ(reason_name(Reason::timeout), "timeout");
  EXPECT_EQ(reason_name(Reason::oob_write), "oob_write");
  EXPECT_EQ(reason_name(Reason::input_modified), "input_modified");
  EXPECT_EQ(reason_name(Reason::unwritten_output), "unwritten_output");
  EXPECT_EQ(reason_name(Reason::nonfinite), "nonfinite");
  EXPECT_EQ(reason_name(Reason::nondeterministic), "nondeterministic");
  EXPECT_EQ(reason_name(Reason::stale_output), "stale_output");
  EXPECT_EQ(reason_name(Reason::mismatch), "mismatch");
  EXPECT_EQ(reason_name(Reason::impossible_speed), "impossible_speed");
  EXPECT_EQ(reason_name(Reason::precondition), "precondition");
  EXPECT_EQ(reason_name(Reason::spec_error), "spec_error");
  EXPECT_EQ(reason_name(Reason::internal), "internal");
}

TEST(Reason, ParseRoundTripsAndRejectsUnknown) {
  for (Reason r : kAll) {
    auto parsed = parse_reason(reason_name(r));
    ASSERT_TRUE(parsed.has_value()) << reason_name(r);
    EXPECT_EQ(*parsed, r);
  }
  EXPECT_FALSE(parse_reason("Mismatch").has_value());
  EXPECT_FALSE(parse_reason("").has_value());
  EXPECT_FALSE(parse_reason("nan").has_value());
}

TEST(Reason, OutcomeAndExitCodeFollowTheTable) {
  EXPECT_EQ(reason_outcome(Reason::none), Outcome::pass);
  EXPECT_EQ(reason_exit_code(Reason::none), ExitCode::pass);
  for (Reason r : {Reason::compile_error, Reason::launch_error, Reason::forbidden_construct,
                   Reason::crash, Reason::timeout, Reason::oob_write, Reason::input_modified,
                   Reason::unwritten_output, Reason::nonfinite, Reason::nondeterministic,
                   Reason::stale_output, Reason::mismatch, Reason::impossible_speed,
                   Reason::precondition}) {
    EXPECT_EQ(reason_outcome(r), Outcome::fail) << reason_name(r);
    EXPECT_EQ(static_cast<int>(reason_exit_code(r)), 1) << reason_name(r);
  }
  EXPECT_EQ(reason_outcome(Reason::spec_error), Outcome::error);
  EXPECT_EQ(static_cast<int>(reason_exit_code(Reason::spec_error)), 2);
  EXPECT_EQ(reason_outcome(Reason::internal), Outcome::error);
  EXPECT_EQ(static_cast<int>(reason_exit_code(Reason::internal)), 3);
}

TEST(Reason, OutcomeNames) {
  EXPECT_EQ(outcome_name(Outcome::pass), "PASS");
  EXPECT_EQ(outcome_name(Outcome::fail), "FAIL");
  EXPECT_EQ(outcome_name(Outcome::error), "ERROR");
  EXPECT_EQ(outcome_name(Outcome::skip), "SKIP");
}

TEST(Reason, PrecedenceIsDesignsOrder) {
  const Reason order[] = {Reason::crash,
                          Reason::timeout,
                          Reason::oob_write,
                          Reason::input_modified,
                          Reason::unwritten_output,
                          Reason::nonfinite,
                          Reason::nondeterministic,
                          Reason::mismatch};
  for (std::size_t i = 0; i + 1 < std::size(order); ++i) {
    EXPECT_LT(reason_rank(order[i]), reason_rank(order[i + 1]))
        << reason_name(order[i]) << " before " << reason_name(order[i + 1]);
    EXPECT_EQ(worse_reason(order[i], order[i + 1]), order[i]);
    EXPECT_EQ(worse_reason(order[i + 1], order[i]), order[i]);
  }
  EXPECT_EQ(worse_reason(Reason::mismatch, Reason::nonfinite), Reason::nonfinite);
  EXPECT_EQ(worse_reason(Reason::nonfinite, Reason::mismatch), Reason::nonfinite);
  EXPECT_EQ(worse_reason(Reason::mismatch, Reason::crash), Reason::crash);
}

TEST(Reason, NoneRanksLastAndErrorsFirst) {
  for (Reason r : kAll) {
    if (r == Reason::none) continue;
    EXPECT_EQ(worse_reason(Reason::none, r), r) << reason_name(r);
    EXPECT_EQ(worse_reason(r, Reason::none), r) << reason_name(r);
    if (r != Reason::internal) {
      EXPECT_EQ(worse_reason(r, Reason::internal), Reason::internal);
    }
  }
  EXPECT_EQ(worse_reason(Reason::crash, Reason::spec_error), Reason::spec_error);
  EXPECT_EQ(worse_reason(Reason::spec_error, Reason::internal), Reason::internal);
  // Outside docs/design.md's list: before it, in enum order.
  EXPECT_EQ(worse_reason(Reason::crash, Reason::compile_error), Reason::compile_error);
  EXPECT_EQ(worse_reason(Reason::mismatch, Reason::stale_output), Reason::stale_output);
  EXPECT_EQ(worse_reason(Reason::impossible_speed, Reason::launch_error), Reason::launch_error);
  EXPECT_EQ(worse_reason(Reason::mismatch, Reason::mismatch), Reason::mismatch);
}

CaseFinding make_case(const std::string& id, Reason r, const std::string& msg = "") {
  CaseFinding c;
  c.case_id = id;
  c.case_class = "public";
  c.reason = r;
  c.message = msg;
  return c;
}

TEST(Verdict, AllPassing) {
  Verdict v;
  v.cases = {make_case("abcd1234:0:0:id", Reason::none),
             make_case("abcd1234:1:0:id", Reason::none)};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::pass);
  EXPECT_EQ(v.reason, Reason::none);
  EXPECT_FALSE(v.first_failing_case.has_value());
  EXPECT_EQ(v.cases_total, 2);
  EXPECT_EQ(v.cases_passed, 2);
  EXPECT_DOUBLE_EQ(v.fraction_passed(), 1.0);
  EXPECT_EQ(v.exit_code(), ExitCode::pass);
}

// An output the reference cannot compute (excused_by_reference) keeps its reason for the
// record, but neither its case nor the verdict takes it; a counting output beside it does.
TEST(Verdict, AnOutputExcusedByTheReferenceFailsNothing) {
  OutputFinding excused;
  excused.output = "y";
  excused.reason = Reason::nonfinite;
  excused.message = "3 non-finite values";
  excused.excused_by_reference = "the f32 reference cannot compute this case itself";
  Verdict v;
  v.cases = {make_case("h:0:0:x:dtype_max", Reason::none)};
  v.cases[0].outputs = {excused};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::pass);
  EXPECT_EQ(v.cases[0].reason, Reason::none);
  EXPECT_EQ(v.cases[0].outputs[0].reason, Reason::nonfinite);
  EXPECT_EQ(v.cases_passed, 1);

  OutputFinding counted = excused;
  counted.output = "z";
  counted.reason = Reason::mismatch;
  counted.message = "1 of 8 elements beyond the bound";
  counted.excused_by_reference.clear();
  v.cases[0].outputs.push_back(counted);
  v.finalize();
  EXPECT_EQ(v.reason, Reason::mismatch);
  EXPECT_EQ(v.message, "z: 1 of 8 elements beyond the bound");
}

TEST(Verdict, FirstFailingCaseInCanonicalOrderDecides) {
  Verdict v;
  v.cases = {make_case("h:0:0:id", Reason::none),
             make_case("h:1:0:id", Reason::mismatch, "y: 3 of 8 elements beyond the bound"),
             make_case("h:2:0:id", Reason::crash, "crashed"), make_case("h:3:0:id", Reason::none)};
  v.finalize();
  // crash ranks above mismatch within a case, but across cases the first one in order wins.
  EXPECT_EQ(v.outcome, Outcome::fail);
  EXPECT_EQ(v.reason, Reason::mismatch);
  EXPECT_EQ(v.message, "y: 3 of 8 elements beyond the bound");
  ASSERT_TRUE(v.first_failing_case.has_value());
  EXPECT_EQ(*v.first_failing_case, "h:1:0:id");
  EXPECT_EQ(v.cases_total, 4);
  EXPECT_EQ(v.cases_passed, 2);
  EXPECT_DOUBLE_EQ(v.fraction_passed(), 0.5);
  EXPECT_EQ(static_cast<int>(v.exit_code()), 1);
}

TEST(Verdict, AnErrorAnywhereMakesTheOutcomeError) {
  Verdict v;
  v.cases = {make_case("h:0:0:id", Reason::mismatch, "bad"), make_case("h:1:0:id", Reason::none),
             make_case("h:2:0:id", Reason::internal, "oracle died")};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::error);
  EXPECT_EQ(v.reason, Reason::internal);
  EXPECT_EQ(v.message, "oracle died");
  EXPECT_EQ(*v.first_failing_case, "h:2:0:id");
  EXPECT_EQ(static_cast<int>(v.exit_code()), 3);
  EXPECT_EQ(v.cases_passed, 1);
  EXPECT_NEAR(v.fraction_passed(), 1.0 / 3.0, 1e-15);

  Verdict s;
  s.cases = {make_case("h:0:0:id", Reason::nonfinite), make_case("h:1:0:id", Reason::spec_error)};
  s.finalize();
  EXPECT_EQ(s.outcome, Outcome::error);
  EXPECT_EQ(s.reason, Reason::spec_error);
  EXPECT_EQ(static_cast<int>(s.exit_code()), 2);
}

TEST(Verdict, CaseReasonIsTheWorstOfItsOutputs) {
  Verdict v;
  CaseFinding c = make_case("h:0:0:id", Reason::none);
  OutputFinding a;
  a.output = "y";
  a.reason = Reason::mismatch;
  a.message = "2 of 8 elements beyond the bound";
  OutputFinding b;
  b.output = "z";
  b.reason = Reason::nonfinite;
  b.message = "1 non-finite value";
  OutputFinding ok;
  ok.output = "w";
  c.outputs = {a, b, ok};
  v.cases = {c};
  v.finalize();
  EXPECT_EQ(v.cases[0].reason, Reason::nonfinite);
  EXPECT_EQ(v.cases[0].message, "z: 1 non-finite value");
  EXPECT_EQ(v.reason, Reason::nonfinite);
  EXPECT_EQ(v.message, "z: 1 non-finite value");
  EXPECT_EQ(v.cases_passed, 0);
}

TEST(Verdict, CaseOwnReasonOfHigherPrecedenceStays) {
  Verdict v;
  CaseFinding c = make_case("h:0:0:id", Reason::crash, "worker crashed");
  OutputFinding a;
  a.output = "y";
  a.reason = Reason::mismatch;
  c.outputs = {a};
  v.cases = {c};
  v.finalize();
  EXPECT_EQ(v.cases[0].reason, Reason::crash);
  EXPECT_EQ(v.message, "worker crashed");
}

TEST(Verdict, PresetReasonWithoutCasesIsKept) {
  Verdict v;
  v.reason = Reason::compile_error;
  v.message = "error: expected ';'";
  v.compiled = false;
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::fail);
  EXPECT_EQ(v.reason, Reason::compile_error);
  EXPECT_EQ(v.message, "error: expected ';'");
  EXPECT_EQ(v.cases_total, 0);
  EXPECT_DOUBLE_EQ(v.fraction_passed(), 0.0);
  EXPECT_EQ(static_cast<int>(v.exit_code()), 1);

  Verdict e;
  e.reason = Reason::spec_error;
  e.finalize();
  EXPECT_EQ(e.outcome, Outcome::error);
  EXPECT_EQ(static_cast<int>(e.exit_code()), 2);
}

TEST(Verdict, PresetFailIsOverriddenByACaseError) {
  Verdict v;
  v.reason = Reason::impossible_speed;
  v.cases = {make_case("h:0:0:id", Reason::none), make_case("h:1:0:id", Reason::internal, "oom")};
  v.finalize();
  EXPECT_EQ(v.reason, Reason::internal);
  EXPECT_EQ(v.outcome, Outcome::error);
}

TEST(Verdict, NothingJudgedIsASkipNotAPass) {
  Verdict v;
  v.skips = {"SKIP(no GPU)"};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::skip);
  EXPECT_EQ(v.reason, Reason::none);
  EXPECT_DOUBLE_EQ(v.fraction_passed(), 0.0);
}

TEST(Verdict, FinalizeIsIdempotent) {
  Verdict v;
  v.cases = {make_case("h:0:0:id", Reason::none), make_case("h:1:0:id", Reason::timeout, "t"),
             make_case("h:2:0:id", Reason::mismatch, "m")};
  v.finalize();
  const Reason r = v.reason;
  const std::string m = v.message;
  v.finalize();
  EXPECT_EQ(v.reason, r);
  EXPECT_EQ(v.reason, Reason::timeout);
  EXPECT_EQ(v.message, m);
  EXPECT_EQ(*v.first_failing_case, "h:1:0:id");
  EXPECT_EQ(v.cases_passed, 1);
  EXPECT_EQ(v.cases_total, 3);
}

// A bench's statistics: quartiles by linear interpolation between ranks, whatever the order the
// runs came in; nothing for no runs.
TEST(SampleStats, MedianQuartilesAndExtremes) {
  const SampleStats s = sample_stats({5, 1, 4, 2, 3});
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.q1, 2);
  EXPECT_EQ(s.q3, 4);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.samples, 5);
  const SampleStats even = sample_stats({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.q1, 1.75);
  EXPECT_DOUBLE_EQ(even.q3, 3.25);
  EXPECT_EQ(sample_stats({}).samples, 0);
  EXPECT_EQ(sample_stats({7}).median, 7);
}

} // namespace
} // namespace kj

namespace kj {
namespace {

// A case the candidate's preconditions excluded counts as not passed but never decides the
// verdict; a verdict of excluded cases alone judged nothing.
TEST(Verdict, ExcludedCasesCountAsNotPassedAndDecideNothing) {
  Verdict v;
  CaseFinding ran, kept_out;
  ran.case_id = "h:public0:0:id";
  kept_out.case_id = "h:public0~C=1:0:id";
  kept_out.excluded = true;
  v.cases = {ran, kept_out};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::pass);
  EXPECT_EQ(v.reason, Reason::none);
  EXPECT_FALSE(v.first_failing_case);
  EXPECT_EQ(v.cases_total, 2);
  EXPECT_EQ(v.cases_passed, 1);
  EXPECT_EQ(v.cases_excluded, 1);
  EXPECT_DOUBLE_EQ(v.fraction_passed(), 0.5);
  v.cases = {kept_out};
  v.finalize();
  EXPECT_EQ(v.outcome, Outcome::skip);
}

} // namespace
} // namespace kj
