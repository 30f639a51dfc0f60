// The shape plan: the perturbation rules (d-1, d+1, prime, 1) with exact ids, deduplication
// against every earlier set, constraint and overflow rejections with their reasons, the cap, and
// the hidden flag of sets derived from hidden ones.
#include <gtest/gtest.h>

#include "kjudge/validate.hpp"
#include "unit/validate/problem_builder.hpp"

namespace kj {
namespace {

using test::ProblemBuilder;

std::vector<std::string> ids(const ShapePlan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.sets) out.push_back(s.id);
  return out;
}

std::vector<std::string> rejections(const ShapePlan& plan) {
  std::vector<std::string> out;
  for (const auto& r : plan.rejected) {
    out.push_back(fmt::format("{}~{}={} ({}): {}", r.base_id, r.perturbation.dim,
                              r.perturbation.value, r.perturbation.rule, r.why));
  }
  return out;
}

TEST(SmallestPrimeAbove, Values) {
  EXPECT_EQ(smallest_prime_above(0), 2);
  EXPECT_EQ(smallest_prime_above(1), 2);
  EXPECT_EQ(smallest_prime_above(2), 3);
  EXPECT_EQ(smallest_prime_above(9), 11);
  EXPECT_EQ(smallest_prime_above(4097), 4099);
  EXPECT_EQ(smallest_prime_above(1000000000), 1000000007);
  // The largest prime below 2^63 is 2^63 - 25.
  EXPECT_EQ(smallest_prime_above(std::numeric_limits<std::int64_t>::max() - 30),
            std::numeric_limits<std::int64_t>::max() - 24);
  EXPECT_EQ(smallest_prime_above(std::numeric_limits<std::int64_t>::max() - 24), std::nullopt);
}

TEST(PlanShapes, RulesInOrderWithExactIds) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}}).vary({"R", "C"}).input("x", DType::f32, {"R", "C"});
  const ShapePlan plan = plan_shapes(b.build());
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "public0~R=3", "public0~R=5",
                                                 "public0~R=7", "public0~R=1", "public0~C=7",
                                                 "public0~C=9", "public0~C=11", "public0~C=1"}));
  EXPECT_TRUE(plan.rejected.empty());
  ASSERT_TRUE(plan.sets[3].perturbation);
  EXPECT_EQ(plan.sets[3].perturbation->dim, "R");
  EXPECT_EQ(plan.sets[3].perturbation->value, 7);
  EXPECT_EQ(plan.sets[3].perturbation->rule, "prime");
  EXPECT_EQ(plan.sets[4].perturbation->rule, "one");
  EXPECT_EQ(plan.sets[1].perturbation->rule, "d-1");
  EXPECT_EQ(plan.sets[2].perturbation->rule, "d+1");
  // Only the perturbed dim changes.
  EXPECT_EQ(plan.sets[3].dims, (Env{{"R", 7}, {"C", 8}}));
  EXPECT_FALSE(plan.sets[0].perturbation);
  for (const auto& s : plan.sets) EXPECT_FALSE(s.hidden) << s.id;
}

TEST(PlanShapes, SmallDimsDropZeroAndDeduplicateOne) {
  ProblemBuilder b;
  b.public_set({{"N", 1}}).public_set({{"N", 2}}).vary({"N"}).input("x", DType::f32, {"N"});
  const ShapePlan plan = plan_shapes(b.build());
  // N = 1: d-1 = 0 is no shape; d+1 = 2 is public1; prime > 2 is 3; 1 is public0 itself.
  // N = 2: d-1 = 1 is public0; d+1 = 3 repeats public0~N=3; prime > 3 is 5; 1 is public0.
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "public1", "public0~N=3",
                                                 "public1~N=5"}));
  EXPECT_EQ(rejections(plan), (std::vector<std::string>{
                                  "public0~N=2 (d+1): duplicate of public1",
                                  "public0~N=1 (one): duplicate of public0",
                                  "public1~N=1 (d-1): duplicate of public0",
                                  "public1~N=3 (d+1): duplicate of public0~N=3",
                                  "public1~N=1 (one): duplicate of public0",
                              }));
}

TEST(PlanShapes, DeduplicatesAcrossBasesAndMarksHidden) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}})
      .hidden_set({{"R", 5}, {"C", 8}})
      .vary({"R"})
      .input("x", DType::f32, {"R", "C"});
  const ShapePlan plan = plan_shapes(b.build());
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "hidden0", "public0~R=3", "public0~R=7",
                                                 "public0~R=1", "hidden0~R=6"}));
  EXPECT_EQ(rejections(plan), (std::vector<std::string>{
                                  "public0~R=5 (d+1): duplicate of hidden0",
                                  "hidden0~R=4 (d-1): duplicate of public0",
                                  "hidden0~R=7 (prime): duplicate of public0~R=7",
                                  "hidden0~R=1 (one): duplicate of public0~R=1",
                              }));
  for (const auto& s : plan.sets) {
    EXPECT_EQ(s.hidden, s.id.rfind("hidden0", 0) == 0) << s.id;
  }
}

TEST(PlanShapes, ConstraintsRejectWithTheConstraintText) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}})
      .vary({"R", "C"})
      .constraint("C % 4 == 0")
      .constraint("R <= 5")
      .input("x", DType::f32, {"R", "C"});
  const ShapePlan plan = plan_shapes(b.build());
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "public0~R=3", "public0~R=5",
                                                 "public0~R=1"}));
  EXPECT_EQ(rejections(plan), (std::vector<std::string>{
                                  "public0~R=7 (prime): fails constraint 'R <= 5'",
                                  "public0~C=7 (d-1): fails constraint 'C % 4 == 0'",
                                  "public0~C=9 (d+1): fails constraint 'C % 4 == 0'",
                                  "public0~C=11 (prime): fails constraint 'C % 4 == 0'",
                                  "public0~C=1 (one): fails constraint 'C % 4 == 0'",
                              }));
}

TEST(PlanShapes, ShapesThatOverflowAreRejected) {
  ProblemBuilder b;
  // 2^60 f32 elements are 2^62 bytes; R = 2 and the prime R = 3 pass 2^63 bytes.
  b.public_set({{"R", 1}, {"C", std::int64_t{1} << 60}})
      .vary({"R"})
      .input("x", DType::f32, {"R", "C"});
  const ShapePlan plan = plan_shapes(b.build());
  ASSERT_EQ(plan.rejected.size(), 3u);
  EXPECT_EQ(plan.rejected[0].perturbation.value, 2);
  EXPECT_NE(plan.rejected[0].why.find("input 'x'"), std::string::npos) << plan.rejected[0].why;
  EXPECT_NE(plan.rejected[0].why.find("overflow"), std::string::npos) << plan.rejected[0].why;
  EXPECT_EQ(plan.rejected[1].perturbation.value, 3);
  EXPECT_NE(plan.rejected[1].why.find("input 'x'"), std::string::npos) << plan.rejected[1].why;
  EXPECT_EQ(plan.rejected[2].why, "duplicate of public0");
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0"}));
}

TEST(PlanShapes, CapKeepsTheFirstInCanonicalOrder) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}}).vary({"R", "C"}).input("x", DType::f32, {"R", "C"});
  const ShapePlan plan = plan_shapes(b.build(), 2);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "public0~R=3", "public0~R=5"}));
  ASSERT_EQ(plan.rejected.size(), 6u);
  for (const auto& r : plan.rejected) EXPECT_EQ(r.why, "over the cap (2 perturbed shape sets)");
  EXPECT_EQ(plan.rejected[0].perturbation.value, 7);
  EXPECT_EQ(plan.rejected[0].base_id, "public0");
}

TEST(PlanShapes, ScalarsAreVisibleToConstraints) {
  ProblemBuilder b;
  b.public_set({{"N", 8}})
      .vary({"N"})
      .scalar("G", DType::i32, "4")
      .constraint("N % G == 0")
      .input("x", DType::f32, {"N"});
  const ShapePlan plan = plan_shapes(b.build());
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0"}));
  EXPECT_EQ(plan.rejected.size(), 4u);
}

TEST(PlanShapes, BaseSetsAreNeverDropped) {
  ProblemBuilder b;
  b.public_set({{"C", 3}}).hidden_set({{"C", 3}}).constraint("C % 4 == 0").input(
      "x", DType::f32, {"C"});
  const ShapePlan plan = plan_shapes(b.build());
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"public0", "hidden0"}));
}

}  // namespace
}  // namespace kj
