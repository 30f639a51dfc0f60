// The Philox stream: the published known-answer vectors of Random123's philox4x32_10, the
// element-to-block layout inputs.hpp documents, and the open-interval uniforms built on it.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "kjudge/inputs.hpp"

namespace kj {
namespace {

using Words = std::array<std::uint32_t, 4>;

TEST(Philox, KnownAnswerZero) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, KnownAnswerAllOnes) {
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, KnownAnswerPiDigits) {
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, ElementOwnsTheBlockOfItsCounter) {
  const StreamId stream{0x0123456789abcdefull, 5, 2};
  for (const std::int64_t e : {std::int64_t{0}, std::int64_t{1}, std::int64_t{12345},
                               std::int64_t{0x1'0000'0003}}) {
    const Words expect = philox4x32_10(
        {static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(e >> 32), 5, 2},
        {0x89abcdef, 0x01234567});
    EXPECT_EQ(element_words(stream, e), expect) << "element " << e;
  }
}

TEST(Philox, StreamsDifferInEveryCoordinate) {
  const Words base = element_words({1, 0, 0}, 0);
  EXPECT_NE(element_words({2, 0, 0}, 0), base);
  EXPECT_NE(element_words({1ull << 32 | 1, 0, 0}, 0), base);
  EXPECT_NE(element_words({1, 1, 0}, 0), base);
  EXPECT_NE(element_words({1, 0, 1}, 0), base);
  EXPECT_NE(element_words({1, 0, 0}, 1), base);
}

TEST(UniformOpen, EndsOfTheGridStayInside) {
  EXPECT_EQ(uniform_open01(0, 0), 0x1p-53);
  EXPECT_EQ(uniform_open01(0xffffffff, 0xffffffff), 1.0 - 0x1p-53);
  EXPECT_EQ(uniform_open01(0x80000000, 0), 0.5 + 0x1p-53);
  // Only the top 52 bits count.
  EXPECT_EQ(uniform_open01(0, 0xfff), uniform_open01(0, 0));
  EXPECT_EQ(uniform_open01(0, 0x1000), 3 * 0x1p-53);
}

TEST(UniformOpen, SymmetricGrid) {
  // 1 - u lies on the same grid: u(~a, ~b) == 1 - u(a, b).
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const Words w = element_words({77, 0, 0}, i);
    EXPECT_EQ(uniform_open01(~w[0], ~w[1]), 1.0 - uniform_open01(w[0], w[1]));
  }
}

}  // namespace
}  // namespace kj
