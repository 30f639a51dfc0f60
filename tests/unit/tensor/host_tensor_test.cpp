// Shapes (overflow-checked element counts, printing, unravel) and HostTensor: zero-filled
// storage, get/set through round_to for every dtype, the raw storage layout device buffers
// share (narrow floats as bits, bool as a 0/1 byte), and converted().
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr DType all_dtypes[] = {DType::f64,     DType::f32,     DType::f16, DType::bf16,
                                DType::fp8e4m3, DType::fp8e5m2, DType::i64, DType::i32,
                                DType::i16,     DType::i8,      DType::u8,  DType::boolean};

TEST(Shape, CheckedNumel) {
  EXPECT_EQ(checked_numel({}), 1);  // a scalar
  EXPECT_EQ(checked_numel({4096, 4096}), 4096 * 4096);
  EXPECT_EQ(checked_numel({0, 5}), 0);
  EXPECT_EQ(checked_numel({std::int64_t{1} << 31, std::int64_t{1} << 31}), std::int64_t{1} << 62);
  EXPECT_EQ(checked_numel({std::numeric_limits<std::int64_t>::max(), 1}),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(checked_numel({std::int64_t{1} << 32, std::int64_t{1} << 32}), kj::SizeOverflow);
  EXPECT_THROW(checked_numel({std::numeric_limits<std::int64_t>::max(), 2}), kj::SizeOverflow);
  EXPECT_THROW(checked_numel({3, -1}), kj::SizeOverflow);
  EXPECT_THROW(checked_numel({0, -1}), kj::SizeOverflow);  // negative even after a zero
}

TEST(Shape, ShapeString) {
  EXPECT_EQ(shape_string({4096, 4096}), "[4096, 4096]");
  EXPECT_EQ(shape_string({}), "[]");
  EXPECT_EQ(shape_string({7}), "[7]");
}

TEST(Shape, Unravel) {
  EXPECT_EQ(unravel({2, 3, 4}, 0), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(unravel({2, 3, 4}, 23), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(unravel({2, 3, 4}, 13), (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(unravel({}, 0), (std::vector<std::int64_t>{}));
  EXPECT_THROW(unravel({2, 3, 4}, 24), InternalError);
  EXPECT_THROW(unravel({2, 3, 4}, -1), InternalError);
}

TEST(HostTensor, ZeroFilledForEveryDtype) {
  for (DType t : all_dtypes) {
    const HostTensor x(t, {2, 3});
    EXPECT_EQ(x.dtype(), t);
    EXPECT_EQ(x.numel(), 6);
    EXPECT_EQ(x.nbytes(), 6 * dtype_size(t));
    for (std::byte b : x.bytes()) ASSERT_EQ(b, std::byte{0});
    for (std::int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(x.get(i), 0.0);
      EXPECT_FALSE(std::signbit(x.get(i)));
    }
  }
}

TEST(HostTensor, SetStoresRoundToForEveryDtype) {
  const double probes[] = {1.5, 1.0 / 3.0, -2.5, 1e30, -1e30, 0x1p-20, 100.5, -0.0, inf, -inf, nan};
  for (DType t : all_dtypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    HostTensor x(t, {static_cast<std::int64_t>(std::size(probes))});
    for (std::size_t k = 0; k < std::size(probes); ++k) x.set(static_cast<std::int64_t>(k), probes[k]);
    for (std::size_t k = 0; k < std::size(probes); ++k) {
      const double got = x.get(static_cast<std::int64_t>(k));
      const double want = round_to(t, probes[k]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << probes[k];
      } else {
        EXPECT_EQ(got, want) << probes[k];
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << probes[k];
      }
    }
  }
}

template <class T>
T raw(const HostTensor& x, std::int64_t i) {
  T v;
  std::memcpy(&v, x.bytes().data() + static_cast<std::size_t>(i) * sizeof(T), sizeof v);
  return v;
}

TEST(HostTensor, StorageLayoutMatchesDeviceTypes) {
  HostTensor h(DType::f16, {3});
  h.set(0, 1.0);
  h.set(1, -2.0);
  h.set(2, 65520.0);
  EXPECT_EQ(raw<std::uint16_t>(h, 0), 0x3c00u);
  EXPECT_EQ(raw<std::uint16_t>(h, 1), 0xc000u);
  EXPECT_EQ(raw<std::uint16_t>(h, 2), 0x7c00u);

  HostTensor b(DType::bf16, {2});
  b.set(0, 1.0);
  b.set(1, nan);
  EXPECT_EQ(raw<std::uint16_t>(b, 0), 0x3f80u);
  EXPECT_EQ(raw<std::uint16_t>(b, 1), 0x7fc0u);

  HostTensor e4(DType::fp8e4m3, {3});
  e4.set(0, 1.0);
  e4.set(1, 1e9);
  e4.set(2, nan);
  EXPECT_EQ(raw<std::uint8_t>(e4, 0), 0x38u);
  EXPECT_EQ(raw<std::uint8_t>(e4, 1), 0x7eu);  // saturated to 448
  EXPECT_EQ(raw<std::uint8_t>(e4, 2), 0x7fu);

  HostTensor e5(DType::fp8e5m2, {2});
  e5.set(0, 1.0);
  e5.set(1, -inf);
  EXPECT_EQ(raw<std::uint8_t>(e5, 0), 0x3cu);
  EXPECT_EQ(raw<std::uint8_t>(e5, 1), 0xfcu);

  HostTensor f(DType::f32, {1});
  f.set(0, 0.1);
  EXPECT_EQ(raw<float>(f, 0), 0.1f);
  EXPECT_EQ(f.data<float>()[0], 0.1f);

  HostTensor bo(DType::boolean, {3});
  bo.set(0, 5.0);
  bo.set(1, 0.0);
  bo.set(2, -0.25);
  EXPECT_EQ(raw<std::uint8_t>(bo, 0), 1u);
  EXPECT_EQ(raw<std::uint8_t>(bo, 1), 0u);
  EXPECT_EQ(raw<std::uint8_t>(bo, 2), 1u);
}

TEST(HostTensor, IntegersSaturate) {
  HostTensor x(DType::i8, {4});
  x.set(0, 1000.0);
  x.set(1, -1000.0);
  x.set(2, 2.5);
  x.set(3, nan);
  EXPECT_EQ(raw<std::int8_t>(x, 0), 127);
  EXPECT_EQ(raw<std::int8_t>(x, 1), -128);
  EXPECT_EQ(raw<std::int8_t>(x, 2), 2);
  EXPECT_EQ(raw<std::int8_t>(x, 3), 0);

  HostTensor u(DType::u8, {2});
  u.set(0, -3.0);
  u.set(1, 256.0);
  EXPECT_EQ(raw<std::uint8_t>(u, 0), 0u);
  EXPECT_EQ(raw<std::uint8_t>(u, 1), 255u);

  HostTensor w(DType::i64, {3});
  w.set(0, 1e30);
  w.set(1, -1e30);
  w.set(2, 0x1p53);
  EXPECT_EQ(raw<std::int64_t>(w, 0), std::numeric_limits<std::int64_t>::max() - 1023);
  EXPECT_EQ(raw<std::int64_t>(w, 1), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(raw<std::int64_t>(w, 2), std::int64_t{1} << 53);

  HostTensor s(DType::i16, {1});
  s.set(0, 40000.0);
  EXPECT_EQ(raw<std::int16_t>(s, 0), 32767);
  HostTensor v(DType::i32, {1});
  v.set(0, -3e9);
  EXPECT_EQ(raw<std::int32_t>(v, 0), std::numeric_limits<std::int32_t>::min());
}

TEST(HostTensor, OutOfRangeIndexIsAnInternalError) {
  HostTensor x(DType::f32, {2});
  EXPECT_THROW(x.get(2), InternalError);
  EXPECT_THROW(x.set(-1, 0.0), InternalError);
}

TEST(HostTensor, HugeShapesThrowBeforeAllocating) {
  EXPECT_THROW(HostTensor(DType::f64, {std::int64_t{1} << 62}), kj::SizeOverflow);
  EXPECT_THROW(HostTensor(DType::f32, {-1}), kj::SizeOverflow);
}

TEST(HostTensor, Converted) {
  HostTensor x(DType::f32, {2, 2});
  x.set(0, 0.1);
  x.set(1, 70000.0);
  x.set(2, -0.0);
  x.set(3, 3.7);
  const HostTensor h = x.converted(DType::f16);
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.shape(), x.shape());
  EXPECT_EQ(h.get(0), round_to(DType::f16, x.get(0)));
  EXPECT_EQ(h.get(1), inf);
  EXPECT_TRUE(std::signbit(h.get(2)));
  const HostTensor i = x.converted(DType::i32);
  EXPECT_EQ(i.get(1), 70000.0);
  EXPECT_EQ(i.get(3), 4.0);
  const HostTensor same = x.converted(DType::f32);
  EXPECT_EQ(std::memcmp(same.bytes().data(), x.bytes().data(), x.nbytes()), 0);
}

TEST(HostTensor, ConvertedFromI64RoundsOnce) {
  HostTensor x(DType::i64, {3});
  // 2^60 + 2^36 + 1: just above the f32 midpoint between 2^60 and 2^60 + 2^37. A plain
  // conversion to double drops the +1 and then ties to even (2^60); rounding once goes up.
  const std::int64_t big = (std::int64_t{1} << 60) + (std::int64_t{1} << 36) + 1;
  std::memcpy(x.bytes().data(), &big, sizeof big);
  const std::int64_t odd = (std::int64_t{1} << 62) + 1;  // not a double
  std::memcpy(x.bytes().data() + 8, &odd, sizeof odd);
  const std::int64_t neg = -big;
  std::memcpy(x.bytes().data() + 16, &neg, sizeof neg);
  const HostTensor f = x.converted(DType::f32);
  EXPECT_EQ(f.get(0), 0x1p60 + 0x1p37);
  EXPECT_EQ(f.get(2), -(0x1p60 + 0x1p37));
  const HostTensor d = x.converted(DType::f64);
  EXPECT_EQ(d.get(0), static_cast<double>(big));
  const HostTensor copy = x.converted(DType::i64);
  EXPECT_EQ(raw<std::int64_t>(copy, 1), odd);  // same dtype: bits, not doubles
}

}  // namespace
}  // namespace kj
