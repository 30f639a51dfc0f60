// The canonical case enumeration: exact ids in exact order for a small problem, the recorded
// skips (transforms leaving a domain, special values a domain or dtype cannot hold), the
// options, the hidden-free plan, case classes, and find_case's refusals.
#include <gtest/gtest.h>

#include "kjudge/cases.hpp"
#include "unit/validate/problem_builder.hpp"

namespace kj {
namespace {

using test::ProblemBuilder;

Problem small_problem() {
  ProblemBuilder b;
  b.public_set({{"R", 2}, {"C", 3}})
      .hidden_set({{"R", 2}, {"C", 4}})
      .vary({"C"})
      .input("x", DType::f32, {"R", "C"})
      .input("w", DType::f32, {"C"}, Domain::positive)
      .input("idx", DType::i32, {"R"})
      .output("y", DType::f32, {"R", "C"});
  return b.build();
}

std::vector<std::string> ids(const CasePlan& plan) {
  std::vector<std::string> out;
  for (const auto& c : plan.cases) out.push_back(c.id);
  return out;
}

std::vector<std::string> skips(const CasePlan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.skipped) out.push_back(s.what + ": " + s.why);
  return out;
}

TEST(EnumerateCases, CanonicalOrderAndIds) {
  CaseOptions options;
  options.seeds = 2;
  const CasePlan plan = enumerate_cases(small_problem(), options);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{
                           "ab12cd34:public0:0:id",
                           "ab12cd34:public0:1:id",
                           "ab12cd34:public0:0:x*3",
                           "ab12cd34:public0:0:x*0.01",
                           "ab12cd34:public0:0:x*-1",
                           "ab12cd34:public0:0:w*3",
                           "ab12cd34:public0:0:w*0.01",
                           "ab12cd34:hidden0:0:id",
                           "ab12cd34:hidden0:1:id",
                           "ab12cd34:hidden0:0:x*3",
                           "ab12cd34:hidden0:0:x*0.01",
                           "ab12cd34:hidden0:0:x*-1",
                           "ab12cd34:hidden0:0:w*3",
                           "ab12cd34:hidden0:0:w*0.01",
                           // public0~C=4 duplicates hidden0; hidden0's 3, 5 and 1 repeat
                           // earlier sets.
                           "ab12cd34:public0~C=2:0:id",
                           "ab12cd34:public0~C=5:0:id",
                           "ab12cd34:public0~C=1:0:id",
                           "ab12cd34:hidden0~C=7:0:id",
                           "ab12cd34:public0:0:x:nan",
                           "ab12cd34:public0:0:x:pos_inf",
                           "ab12cd34:public0:0:x:neg_inf",
                           "ab12cd34:public0:0:x:neg_zero",
                           "ab12cd34:public0:0:x:subnormal",
                           "ab12cd34:public0:0:x:dtype_max",
                           "ab12cd34:public0:0:w:pos_inf",
                           "ab12cd34:public0:0:w:subnormal",
                           "ab12cd34:public0:0:w:dtype_max",
                       }));
  EXPECT_EQ(skips(plan), (std::vector<std::string>{
                             "public0 w*-1 on w: leaves domain positive",
                             "hidden0 w*-1 on w: leaves domain positive",
                             "public0 w:nan: domain positive does not admit nan",
                             "public0 w:neg_inf: domain positive does not admit neg_inf",
                             "public0 w:neg_zero: domain positive does not admit neg_zero",
                         }));
}

TEST(EnumerateCases, CaseFields) {
  CaseOptions options;
  options.seeds = 2;
  const CasePlan plan = enumerate_cases(small_problem(), options);
  const Case& seed1 = plan.cases[1];
  EXPECT_EQ(seed1.seed, 1u);
  EXPECT_TRUE(seed1.transform.input.empty());
  EXPECT_EQ(seed1.case_class(), "public");
  const Case& x3 = plan.cases[2];
  EXPECT_EQ(x3.transform.input, "x");
  EXPECT_EQ(x3.transform.factor, 3.0);
  EXPECT_EQ(x3.seed, 0u);
  EXPECT_EQ(plan.cases[7].case_class(), "hidden");
  EXPECT_TRUE(plan.cases[7].shapes.hidden);
  EXPECT_EQ(plan.cases[14].case_class(), "perturbed");
  EXPECT_EQ(plan.cases[14].shapes.dims, (Env{{"R", 2}, {"C", 2}}));
  EXPECT_FALSE(plan.cases[14].shapes.hidden);
  EXPECT_TRUE(plan.cases[17].shapes.hidden);  // derived from hidden0
  EXPECT_EQ(plan.cases[17].case_class(), "perturbed");
  const Case& nan = plan.cases[18];
  EXPECT_EQ(nan.case_class(), "special");
  ASSERT_TRUE(nan.special);
  EXPECT_EQ(nan.special->input, "x");
  EXPECT_EQ(nan.special->kind, SpecialKind::nan);
  EXPECT_TRUE(nan.transform.input.empty());
  EXPECT_EQ(nan.shapes.id, "public0");
}

TEST(EnumerateCases, WithoutHiddenThePlanIsDrawnAsIfTheyDidNotExist) {
  CaseOptions options;
  options.seeds = 1;
  options.transforms = false;
  options.special_values = false;
  options.include_hidden = false;
  const CasePlan plan = enumerate_cases(small_problem(), options);
  // public0~C=4 is back: its absence would reveal hidden0's dims.
  EXPECT_EQ(ids(plan), (std::vector<std::string>{
                           "ab12cd34:public0:0:id",
                           "ab12cd34:public0~C=2:0:id",
                           "ab12cd34:public0~C=4:0:id",
                           "ab12cd34:public0~C=5:0:id",
                           "ab12cd34:public0~C=1:0:id",
                       }));
  EXPECT_TRUE(plan.skipped.empty());
  for (const auto& c : plan.cases) EXPECT_FALSE(c.shapes.hidden) << c.id;
}

TEST(EnumerateCases, SeedCountsAndCap) {
  CaseOptions options;
  options.seeds = 1;
  options.perturbed_seeds = 2;
  options.transforms = false;
  options.special_values = false;
  options.max_perturbed = 1;
  const CasePlan plan = enumerate_cases(small_problem(), options);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{
                           "ab12cd34:public0:0:id",
                           "ab12cd34:hidden0:0:id",
                           "ab12cd34:public0~C=2:0:id",
                           "ab12cd34:public0~C=2:1:id",
                       }));
}

TEST(EnumerateCases, TransformDomains) {
  ProblemBuilder b;
  b.public_set({{"N", 4}})
      .input("p", DType::f32, {"N"}, Domain::nonnegative)
      .input("u", DType::f16, {"N"}, Domain::unit)
      .input("q", DType::fp8e4m3, {"N"});
  CaseOptions options;
  options.seeds = 1;
  const CasePlan plan = enumerate_cases(b.build(), options);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{
                           "ab12cd34:public0:0:id",
                           "ab12cd34:public0:0:p*3",
                           "ab12cd34:public0:0:p*0.01",
                           "ab12cd34:public0:0:u*0.01",
                           "ab12cd34:public0:0:q*3",
                           "ab12cd34:public0:0:q*0.01",
                           "ab12cd34:public0:0:q*-1",
                           "ab12cd34:public0:0:p:pos_inf",
                           "ab12cd34:public0:0:p:neg_zero",
                           "ab12cd34:public0:0:p:subnormal",
                           "ab12cd34:public0:0:p:dtype_max",
                           "ab12cd34:public0:0:u:subnormal",
                           "ab12cd34:public0:0:q:nan",
                           "ab12cd34:public0:0:q:neg_zero",
                           "ab12cd34:public0:0:q:subnormal",
                           "ab12cd34:public0:0:q:dtype_max",
                       }));
  EXPECT_EQ(skips(plan), (std::vector<std::string>{
                             "public0 p*-1 on p: leaves domain nonnegative",
                             "public0 u*3 on u: leaves domain unit",
                             "public0 u*-1 on u: leaves domain unit",
                             "public0 p:nan: domain nonnegative does not admit nan",
                             "public0 p:neg_inf: domain nonnegative does not admit neg_inf",
                             "public0 u:nan: domain unit does not admit nan",
                             "public0 u:pos_inf: domain unit does not admit pos_inf",
                             "public0 u:neg_inf: domain unit does not admit neg_inf",
                             "public0 u:neg_zero: domain unit does not admit neg_zero",
                             "public0 u:dtype_max: domain unit does not admit dtype_max",
                             "public0 q:pos_inf: fp8e4m3 cannot hold pos_inf",
                             "public0 q:neg_inf: fp8e4m3 cannot hold neg_inf",
                         }));
}

TEST(EnumerateCases, SpecialsListsTheValuesAnInputTakes) {
  ProblemBuilder b;
  b.public_set({{"N", 4}}).input("B", DType::f32, {"N"});
  Problem p = b.build();
  p.inputs[0].specials = {"nan", "neg_zero"};
  p.inputs[0].specials_given = true;
  CaseOptions options;
  options.seeds = 1;
  options.transforms = false;
  const CasePlan plan = enumerate_cases(p, options);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"ab12cd34:public0:0:id",
                                                 "ab12cd34:public0:0:B:nan",
                                                 "ab12cd34:public0:0:B:neg_zero"}));
  EXPECT_EQ(skips(plan).size(), 4u);
  EXPECT_EQ(skips(plan).back(), "public0 B:dtype_max: not in the specials of input 'B'");
  // An empty list given: no special-value case for the input at all.
  p.inputs[0].specials.clear();
  EXPECT_EQ(ids(enumerate_cases(p, options)),
            (std::vector<std::string>{"ab12cd34:public0:0:id"}));
}

TEST(EnumerateCases, NoPublicSetMeansNoSpecialCases) {
  ProblemBuilder b;
  b.hidden_set({{"N", 4}}).input("x", DType::f32, {"N"});
  CaseOptions options;
  options.seeds = 1;
  options.transforms = false;
  const CasePlan plan = enumerate_cases(b.build(), options);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"ab12cd34:hidden0:0:id"}));
  EXPECT_EQ(skips(plan), (std::vector<std::string>{
                             "special values: the problem has no public shape set"}));
}

TEST(FindCase, FindsEveryCaseByItsId) {
  const Problem p = small_problem();
  const CasePlan plan = enumerate_cases(p);
  for (const Case& c : plan.cases) EXPECT_EQ(&find_case(plan, p, c.id), &c) << c.id;
  EXPECT_EQ(find_case(plan, p, "ab12cd34:public0:0:x:nan").special->kind, SpecialKind::nan);
}

std::string error_of(const CasePlan& plan, const Problem& p, std::string_view id) {
  try {
    find_case(plan, p, id);
  } catch (const SpecError& e) {
    return e.bare_message();
  }
  return "no error";
}

TEST(FindCase, RefusesAnotherProblemsHash) {
  const Problem p = small_problem();
  const CasePlan plan = enumerate_cases(p);
  EXPECT_EQ(error_of(plan, p, "ef56ab78:public0:0:id"),
            "replay refused: case id is for problem hash ef56ab78, this problem is ab12cd34 "
            "(the problem changed since the id was printed)");
}

TEST(FindCase, MalformedAndUnknownIds) {
  const Problem p = small_problem();
  const CasePlan plan = enumerate_cases(p);
  for (const char* bad : {"", "ab12cd34", "ab12cd34:public0:0", "ab12cd34:public0:x:id",
                          "ab12cd34::0:id", "ab12cd34:public0:0:", ":public0:0:id",
                          "ab12cd34:public0:-1:id"}) {
    EXPECT_EQ(error_of(plan, p, bad).rfind("malformed case id", 0), 0u) << bad;
  }
  const std::string unknown = error_of(plan, p, "ab12cd34:public9:0:id");
  EXPECT_EQ(unknown.rfind("no case 'ab12cd34:public9:0:id' in the ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("`kjudge cases problems/test` lists the valid ids"), std::string::npos)
      << unknown;
  // A hidden case is unknown to a plan drawn without hidden sets.
  CaseOptions public_only;
  public_only.include_hidden = false;
  const CasePlan redacted = enumerate_cases(p, public_only);
  EXPECT_EQ(error_of(redacted, p, "ab12cd34:hidden0:0:id").rfind("no case", 0), 0u);
}

}  // namespace
}  // namespace kj
