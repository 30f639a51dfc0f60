// The canonical case enumeration: exact ids in exact order for a small problem, the recorded
// skips (transforms leaving a domain, special values a domain or dtype cannot hold), the
// options, the hidden-free plan, case classes, and find_case's refusals.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "kjudge/cases.hpp"
#include "kjudge/sha256.hpp"
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
                           "ab12cd34:public0:0:x+10",
                           "ab12cd34:public0:0:w+10",
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

// A problem's [[case]]s come last, on the first public set, where the transforms are drawn.
TEST(EnumerateCases, AdoptedCasesComeLastOnTheFirstPublicSet) {
  Problem p = small_problem();
  p.adopted_cases = {AdoptedCase{3, "", 1, 0, {}}, AdoptedCase{0, "x", 1, -8.5, {}},
                     AdoptedCase{1, "w", 0.5, 2, {}}};
  CaseOptions options;
  options.seeds = 2;
  const CasePlan plan = enumerate_cases(p, options);
  const std::vector<std::string> all = ids(plan);
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(all.end() - 3, all.end()),
            (std::vector<std::string>{"ab12cd34:public0:3:id", "ab12cd34:public0:0:x-8.5",
                                      "ab12cd34:public0:1:w*0.5+2"}));
  const Case& shifted = plan.cases[plan.cases.size() - 2];
  EXPECT_EQ(shifted.transform.offset, -8.5);
  EXPECT_EQ(shifted.case_class(), "public");
  EXPECT_EQ(all.size(), ids(enumerate_cases(small_problem(), options)).size() + 3);
  options.transforms = false;
  const std::vector<std::string> bare = ids(enumerate_cases(p, options));
  EXPECT_EQ(std::count(bare.begin(), bare.end(), "ab12cd34:public0:3:id"), 0);
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
  const Case& shifted = plan.cases[18]; // x + 10 sigma: the mean offset
  EXPECT_EQ(shifted.case_class(), "public");
  EXPECT_EQ(shifted.transform.factor, 1.0);
  EXPECT_EQ(shifted.transform.offset, 10.0);
  EXPECT_EQ(shifted.shapes.id, "public0");
  const Case& nan = plan.cases[20];
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
                           "ab12cd34:public0:0:p+10",
                           "ab12cd34:public0:0:q+10",
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
                             "public0 u+10 on u: leaves domain unit",
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
  // The values left out for the one reason are one line, not one each.
  EXPECT_EQ(skips(plan), (std::vector<std::string>{"public0 B:{pos_inf, neg_inf, subnormal, "
                                                   "dtype_max}: not in the specials of input "
                                                   "'B'"}));
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

std::string error_of(const CasePlan& plan, const Problem& p, std::string_view id,
                     const std::optional<std::string>& secret = std::nullopt) {
  try {
    find_case(plan, p, id, secret);
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


// Hidden shapes drawn from ranges with a secret.

const std::string kSecret = "twenty-four bytes secret";

Problem ranged_problem(std::string_view constraint = "R % 2 == 0") {
  ProblemBuilder b;
  b.public_set({{"R", 2}, {"C", 3}})
      .hidden_range({{"R", {1, 1000}}, {"C", {5, 5}}})
      .constraint(constraint)
      .input("x", DType::f32, {"R", "C"})
      .output("y", DType::f32, {"R", "C"});
  return b.build();
}

TEST(Hmac, Rfc4231TestCase2) {
  const auto mac = hmac_sha256("Jefe", "what do ya want for nothing?");
  std::string hex;
  for (unsigned char b : mac) hex += fmt::format("{:02x}", b);
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(DrawHiddenSets, TheSecretDrawsTheShapesAndTagsTheirIds) {
  const DrawnSets d = draw_hidden_sets(ranged_problem(), kSecret);
  EXPECT_TRUE(d.failed.empty());
  ASSERT_EQ(d.sets.size(), 2u);
  EXPECT_EQ(d.sets[0].id, "drawn0.0@25962022");
  EXPECT_EQ(d.sets[1].id, "drawn0.1@25962022");
  // R even, as the constraint asks; C the one value its range holds.
  EXPECT_EQ(d.sets[0].dims, (Env{{"C", 5}, {"R", 404}}));
  EXPECT_EQ(d.sets[1].dims, (Env{{"C", 5}, {"R", 874}}));
  for (const ShapeSet& s : d.sets) {
    EXPECT_TRUE(s.hidden);
    EXPECT_FALSE(s.perturbation);
  }
  // The same secret draws the same shapes; another draws others, under another tag.
  EXPECT_EQ(draw_hidden_sets(ranged_problem(), kSecret).sets[1].dims, d.sets[1].dims);
  const DrawnSets other = draw_hidden_sets(ranged_problem(), "another secret of 24 b.");
  EXPECT_EQ(other.sets[0].id, "drawn0.0@ef4931f3");
  EXPECT_EQ(other.sets[0].dims, (Env{{"C", 5}, {"R", 338}}));
  EXPECT_EQ(secret_tag(kSecret), "25962022");
}

TEST(DrawHiddenSets, DrawsSpreadOverTheRangeAndMeetTheConstraints) {
  ProblemBuilder b;
  b.public_set({{"N", 1}}).constraint("N % 3 != 0").input("x", DType::f32, {"N"});
  for (int r = 0; r < 16; ++r) b.hidden_range({{"N", {1, 1000000}}}, 16);
  const DrawnSets d = draw_hidden_sets(b.build(), kSecret);
  ASSERT_EQ(d.sets.size(), 256u);
  std::int64_t lo = 1000000, hi = 0;
  double sum = 0;
  for (const ShapeSet& s : d.sets) {
    const std::int64_t n = s.dims.at("N");
    EXPECT_NE(n % 3, 0) << s.id;
    lo = std::min(lo, n);
    hi = std::max(hi, n);
    sum += static_cast<double>(n);
  }
  // 256 uniform draws of [1, 10^6]: the extremes near the ends, the mean near the middle.
  EXPECT_EQ(lo, 1084);
  EXPECT_EQ(hi, 999830);
  EXPECT_EQ(static_cast<std::int64_t>(sum / 256), 514154);
}

TEST(DrawHiddenSets, ADrawThatCannotMeetTheConstraintsIsNamedWithoutItsDims) {
  const DrawnSets d = draw_hidden_sets(ranged_problem("R > 5000"), kSecret);
  EXPECT_TRUE(d.sets.empty());
  EXPECT_EQ(d.failed, (std::vector<std::string>{
                          "drawn0.0: none of 64 draws is a new shape set that meets the constraints",
                          "drawn0.1: none of 64 draws is a new shape set that meets the constraints"}));
}

TEST(EnumerateCases, DrawnSetsComeLastSoTheRestOfThePlanIsTheSameWithoutTheSecret) {
  CaseOptions options;
  options.seeds = 1;
  options.transforms = false;
  options.special_values = false;
  const CasePlan without = enumerate_cases(ranged_problem(), options);
  EXPECT_EQ(ids(without), (std::vector<std::string>{"ab12cd34:public0:0:id"}));
  EXPECT_EQ(skips(without), (std::vector<std::string>{
                                "2 hidden shape sets drawn from dims.hidden_ranges: no secret: "
                                "give --secret-file or KJUDGE_SECRET"}));
  options.secret = kSecret;
  const CasePlan with = enumerate_cases(ranged_problem(), options);
  EXPECT_EQ(ids(with), (std::vector<std::string>{"ab12cd34:public0:0:id",
                                                 "ab12cd34:drawn0.0@25962022:0:id",
                                                 "ab12cd34:drawn0.1@25962022:0:id"}));
  EXPECT_TRUE(with.skipped.empty());
  EXPECT_EQ(with.cases[1].case_class(), "hidden");
  // Without hidden cases (the host backend's own shapes), no drawn ones and no skip either.
  options.include_hidden = false;
  const CasePlan public_only = enumerate_cases(ranged_problem(), options);
  EXPECT_EQ(ids(public_only), (std::vector<std::string>{"ab12cd34:public0:0:id"}));
  EXPECT_TRUE(public_only.skipped.empty());
}

TEST(EnumerateCases, AShortSecretIsRefused) {
  CaseOptions options;
  options.secret = std::string(15, 's');
  try {
    enumerate_cases(ranged_problem(), options);
    FAIL() << "a 15-byte secret was taken";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.bare_message(), "the secret is 15 bytes; hidden shapes need at least 16");
  }
}

TEST(FindCase, ADrawnCaseReplaysOnlyWithItsSecret) {
  const Problem p = ranged_problem();
  CaseOptions options;
  options.secret = kSecret;
  const CasePlan plan = enumerate_cases(p, options);
  const std::string id = "ab12cd34:drawn0.1@25962022:0:id";
  EXPECT_EQ(find_case(plan, p, id, options.secret).id, id);
  const std::string other = "another secret of 24 b.";
  options.secret = other;
  EXPECT_EQ(error_of(enumerate_cases(p, options), p, id, other),
            "replay refused: case '" + id + "' was drawn with a secret (tag 25962022) and this "
            "secret's tag is ef4931f3; it replays only with that secret");
  EXPECT_EQ(error_of(enumerate_cases(p), p, id, std::nullopt),
            "replay refused: case '" + id + "' was drawn with a secret (tag 25962022) and no secret "
            "was given; it replays only with that secret");
}

}  // namespace
}  // namespace kj
