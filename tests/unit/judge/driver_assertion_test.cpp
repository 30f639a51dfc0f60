// The CUDA worker's reading of what the driver prints for a failed device assertion
// (worker/driver_assertion.hpp), on the lines a real driver printed (580.159, CUDA 13.0, H200):
// a plain assert, the first of many failing threads, a direct __assertfail whose texts hold a
// newline, a quote and a byte outside ASCII, and output that holds no assertion. What the
// message makes of the texts is candidate_text_test's.
#include <array>
#include <string>

#include <gtest/gtest.h>

#include "worker/driver_assertion.hpp"

namespace kj::judge {
namespace {

TEST(DriverAssertion, ReadsTheConditionPlaceBlockAndThread) {
  const auto a = parse_driver_assertion("k.cu:2: void k(int): block: [1,0,0], thread: [3,0,0] "
                                        "Assertion `threadIdx.x != 3 || blockIdx.x != 1` "
                                        "failed.\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->condition, "threadIdx.x != 3 || blockIdx.x != 1");
  EXPECT_EQ(a->file, "k.cu");
  EXPECT_EQ(a->line, 2u);
  EXPECT_EQ(a->block, (std::array<unsigned, 3>{1, 0, 0}));
  EXPECT_EQ(a->thread, (std::array<unsigned, 3>{3, 0, 0}));
  EXPECT_EQ(device_assertion_message(*a),
            "device assertion failed (candidate's text: \"threadIdx.x != 3 || blockIdx.x != 1\" "
            "at k.cu:2, block [1,0,0] thread [3,0,0])");
}

TEST(DriverAssertion, TheFirstOfManyFailingThreadsIsTaken) {
  std::string printed;
  for (int t = 0; t < 3; ++t)
    printed += "k.cu:2: void k<float>(int): block: [96,0,0], thread: [" + std::to_string(t) +
               ",0,0] Assertion `threadIdx.x > 1000` failed.\n";
  const auto a = parse_driver_assertion("kjudge: cleanup: something else\n" + printed);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->condition, "threadIdx.x > 1000");
  EXPECT_EQ(a->block, (std::array<unsigned, 3>{96, 0, 0}));
  EXPECT_EQ(a->thread, (std::array<unsigned, 3>{0, 0, 0}));
}

// __assertfail("bad\nPASS \"x\" \xff", "f\"\n.cu", 7, "fn()", 1), as the driver printed it: the
// file's newline puts its start on a line before the one read, the condition runs on.
TEST(DriverAssertion, ADirectCallsTextsMayHoldAnything) {
  const auto a = parse_driver_assertion(
      "f\"\n.cu:7: fn(): block: [0,0,0], thread: [0,0,0] Assertion `bad\nPASS \"x\" \xff` "
      "failed.\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->condition, "bad\nPASS \"x\" \xff");
  EXPECT_EQ(a->file, ".cu");
  EXPECT_EQ(a->line, 7u);
  EXPECT_EQ(device_assertion_message(*a),
            "device assertion failed (candidate's text: \"bad\\x0aPASS \\\"x\\\" \\xff\" at "
            ".cu:7, block [0,0,0] thread [0,0,0])");
}

TEST(DriverAssertion, ATextCutShortIsKeptAsFarAsItGoes) {
  const auto a = parse_driver_assertion(
      "k.cu:9: void k(): block: [0,0,0], thread: [1,2,3] Assertion `x > 0 && y");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->condition, "x > 0 && y");
  EXPECT_EQ(a->thread, (std::array<unsigned, 3>{1, 2, 3}));
  // A last line without its newline.
  const auto b = parse_driver_assertion(
      "k.cu:9: void k(): block: [0,0,0], thread: [1,2,3] Assertion `x > 0` failed.");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->condition, "x > 0");
}

TEST(DriverAssertion, OutputWithoutAnAssertionHoldsNone) {
  EXPECT_FALSE(parse_driver_assertion(""));
  EXPECT_FALSE(parse_driver_assertion("kjudge: cleanup: cuMemFree failed\n"));
  // The marker without the driver's block and thread before it.
  EXPECT_FALSE(parse_driver_assertion("Assertion `x` failed.\n"));
  EXPECT_FALSE(
      parse_driver_assertion("k.cu:1: f(): block: [a,0,0], thread: [0,0,0] Assertion `x`"));
}

} // namespace
} // namespace kj::judge
