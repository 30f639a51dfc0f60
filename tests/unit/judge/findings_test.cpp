// The judge's rules that need no GPU: the two poisons (NaN in every float dtype, different in
// every element of every dtype), what counts as unwritten, damaged red zones, nondeterminism,
// the deadline of a run, and the KJ_TEST_DISABLE switches.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "judge/findings.hpp"
#include "judge/defences.hpp"
#include "kjudge/judge.hpp"

namespace {

using namespace kj;
using namespace kj::judge;

constexpr DType kAll[] = {DType::f64,     DType::f32,     DType::f16, DType::bf16,
                          DType::fp8e4m3, DType::fp8e5m2, DType::i64, DType::i32,
                          DType::i16,     DType::i8,      DType::u8,  DType::boolean};

// A tensor whose bytes are `pattern` repeated from the start, as the worker fills it.
HostTensor filled(DType dtype, std::int64_t n, std::uint32_t pattern) {
  HostTensor t(dtype, {n});
  auto b = t.bytes();
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<std::byte>((pattern >> (8 * (i % 4))) & 0xFFu);
  return t;
}

OutputSpec output(DType dtype, const std::string& name = "y") {
  OutputSpec s;
  s.name = name;
  s.dtype = dtype;
  return s;
}

// ---- poison ----------------------------------------------------------------------------------

TEST(Poison, NaNInEveryFloatDtypeInBothRuns) {
  for (const DType d : kAll) {
    if (!is_float(d)) continue;
    for (int run = 0; run < 2; ++run) {
      const HostTensor t = filled(d, 8, poison_pattern(run, d));
      for (std::int64_t i = 0; i < t.numel(); ++i)
        EXPECT_TRUE(std::isnan(t.get(i))) << dtype_name(d) << " run " << run << " element " << i;
    }
  }
}

TEST(Poison, TheTwoRunsDifferInEveryElementOfEveryDtype) {
  for (const DType d : kAll) {
    const HostTensor a = filled(d, 8, poison_pattern(0, d));
    const HostTensor b = filled(d, 8, poison_pattern(1, d));
    const Differences diff = find_differences(a, b);
    EXPECT_EQ(diff.count, 8) << dtype_name(d);
  }
}

TEST(Poison, HoldsPatternIsPerElement) {
  HostTensor t = filled(DType::f16, 4, poison_pattern(1, DType::f16));
  for (std::int64_t i = 0; i < 4; ++i)
    EXPECT_TRUE(holds_pattern(t, i, poison_pattern(1, DType::f16)));
  t.set(2, 1.5);
  EXPECT_FALSE(holds_pattern(t, 2, poison_pattern(1, DType::f16)));
  EXPECT_TRUE(holds_pattern(t, 3, poison_pattern(1, DType::f16)));
  EXPECT_FALSE(holds_pattern(t, 0, poison_pattern(0, DType::f16)));
}

// ---- unwritten ------------------------------------------------------------------------------

TEST(Unwritten, OnlyElementsPoisonedInBothRuns) {
  const DType d = DType::f32;
  HostTensor a = filled(d, 6, poison_pattern(0, d));
  HostTensor b = filled(d, 6, poison_pattern(1, d));
  for (std::int64_t i : {0, 1, 2}) { // written in both runs
    a.set(i, 1.0 + static_cast<double>(i));
    b.set(i, 1.0 + static_cast<double>(i));
  }
  b.set(4, 7.0); // written in run 1 only: a race, not unwritten
  const Unwritten u = find_unwritten(a, poison_pattern(0, d), &b, poison_pattern(1, d));
  EXPECT_EQ(u.count, 2);
  EXPECT_EQ(u.first, (std::vector<std::int64_t>{3, 5}));

  // A kernel that writes the value run 0 used as poison is not unwritten: run 1 tells.
  HostTensor ints0 = filled(DType::i32, 3, 0), ints1 = filled(DType::i32, 3, 0);
  for (std::int64_t i = 0; i < 3; ++i) {
    ints0.set(i, -1);
    ints1.set(i, -1);
  }
  EXPECT_EQ(
      find_unwritten(ints0, poison_pattern(0, DType::i32), &ints1, poison_pattern(1, DType::i32))
          .count,
      0);
  // With one run only (the rerun switch off) the same -1 is indistinguishable from poison.
  EXPECT_EQ(find_unwritten(ints0, poison_pattern(0, DType::i32), nullptr, 0).count, 3);
}

TEST(Unwritten, FindingNamesTheFirstIndex) {
  const DType d = DType::f32;
  HostTensor a = filled(d, 12, poison_pattern(0, d));
  for (std::int64_t i = 0; i < 12; ++i)
    if (i != 5 && i != 11) a.set(i, 0.5);
  const Unwritten u = find_unwritten(a, poison_pattern(0, d), nullptr, 0);
  HostTensor golden(DType::f64, {3, 4});
  golden.set(5, 2.0);
  const OutputFinding f = unwritten_finding(output(d), {3, 4}, u, a, &golden);
  EXPECT_EQ(f.reason, Reason::unwritten_output);
  EXPECT_EQ(f.message, "2 of 12 elements never written (first at [1, 1])");
  EXPECT_EQ(f.count, 12);
  EXPECT_EQ(f.mismatches, 2);
  EXPECT_DOUBLE_EQ(f.mismatch_fraction, 2.0 / 12.0);
  ASSERT_EQ(f.first.size(), 2u);
  EXPECT_EQ(f.first[0].index, (std::vector<std::int64_t>{1, 1}));
  EXPECT_TRUE(std::isnan(f.first[0].value));
  EXPECT_EQ(f.first[0].expected, 2.0);
  EXPECT_GT(f.log_error_ratio, 0);
  ASSERT_TRUE(f.worst);
}

TEST(Unwritten, FirstIsCapped) {
  const HostTensor a = filled(DType::u8, 100, poison_pattern(0, DType::u8));
  const Unwritten u = find_unwritten(a, poison_pattern(0, DType::u8), nullptr, 0);
  EXPECT_EQ(u.count, 100);
  EXPECT_EQ(u.first.size(), kFirstShown);
}

// ---- nondeterminism -------------------------------------------------------------------------

TEST(Nondeterminism, BitwiseDifferences) {
  HostTensor a(DType::f32, {2, 3}), b(DType::f32, {2, 3});
  for (std::int64_t i = 0; i < 6; ++i) {
    a.set(i, 1.0 / static_cast<double>(i + 1));
    b.set(i, 1.0 / static_cast<double>(i + 1));
  }
  EXPECT_EQ(find_differences(a, b).count, 0);
  b.set(4, b.get(4) + 1e-6); // one ulp-ish
  a.set(1, 0.0);
  b.set(1, -0.0); // ±0 differ bitwise: a race that flips a sign is still a race
  const Differences d = find_differences(a, b);
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.first, (std::vector<std::int64_t>{1, 4}));
  const OutputFinding f = nondeterministic_finding(output(DType::f32), {2, 3}, d, a, b);
  EXPECT_EQ(f.reason, Reason::nondeterministic);
  EXPECT_NE(f.message.find("2 of 6 elements differ between two runs"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("first at [0, 1]"), std::string::npos) << f.message;
}

// ---- red zones ------------------------------------------------------------------------------

TEST(Redzone, CleanAndDamaged) {
  std::vector<std::byte> before(64, std::byte{0xA5}), after(64, std::byte{0xA5});
  EXPECT_FALSE(scan_redzones(before, after, 0xA5).damaged());
  after[0] = std::byte{0};
  after[1] = std::byte{0};
  after[40] = std::byte{1};
  before[63] = std::byte{3}; // the byte just before the tensor
  before[10] = std::byte{3};
  const RedzoneScan s = scan_redzones(before, after, 0xA5);
  EXPECT_TRUE(s.damaged());
  EXPECT_EQ(s.after, 3u);
  EXPECT_EQ(s.first_after, 0u);
  EXPECT_EQ(s.before, 2u);
  EXPECT_EQ(s.nearest_before, 1u);
  EXPECT_EQ(redzone_message("output", "y", s),
            "output 'y': 3 bytes written past its end (the first 0 bytes after it) and 2 bytes "
            "written before its start (the nearest 1 byte before it)");
  const RedzoneScan only_after = scan_redzones({}, after, 0xA5);
  EXPECT_EQ(redzone_message("scratch", "p", only_after),
            "scratch 'p': 3 bytes written past its end (the first 0 bytes after it)");
  EXPECT_NE(redzone_byte(0), redzone_byte(1));
}

TEST(DiffBytes, CountsAndFirst) {
  const std::vector<std::byte> a(10, std::byte{1});
  std::vector<std::byte> b = a;
  EXPECT_EQ(diff_bytes(a, b).count, 0u);
  b[7] = std::byte{2};
  b[9] = std::byte{2};
  const ByteDiff d = diff_bytes(a, b);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.first, 7u);
}

// ---- deadlines ------------------------------------------------------------------------------

TEST(Deadline, FactorOfTheReferenceOrTheMinimumPlusCopies) {
  // 20 x 10 ms = 0.2 s < 1 s: the minimum, plus 1 s of allowance.
  EXPECT_DOUBLE_EQ(run_deadline_s(0.010, 20, 1, 0), 2.0);
  // 20 x 0.5 s = 10 s.
  EXPECT_DOUBLE_EQ(run_deadline_s(0.5, 20, 1, 0), 11.0);
  // 2 GB moved: 2 s more.
  EXPECT_DOUBLE_EQ(run_deadline_s(0.5, 20, 1, 2'000'000'000ull), 13.0);
  // A reference time that could not be measured counts as zero.
  EXPECT_DOUBLE_EQ(run_deadline_s(-1, 20, 1, 0), 2.0);
}

// ---- test switches --------------------------------------------------------------------------

TEST(Defences, ParseDisabled) {
  EXPECT_EQ(parse_disabled(""), std::set<std::string>{});
  EXPECT_EQ(parse_disabled("poison"), std::set<std::string>{"poison"});
  EXPECT_EQ(parse_disabled(" poison , redzone,,rerun "),
            (std::set<std::string>{"poison", "redzone", "rerun"}));
  EXPECT_EQ(unknown_defences(parse_disabled("poison,posion")), std::set<std::string>{"posion"});
  EXPECT_TRUE(
      unknown_defences(parse_disabled("isolation,redzone,poison,input_hash,rerun")).empty());
}

// The switches a check resolves once (check.cpp reads KJ_TEST_DISABLE at its start): whole
// names only, and every name of kDefences turns its own defence off.
TEST(Defences, TheSwitchesNamedTurnOffTheirDefencesOnly) {
  EXPECT_TRUE(Defences::all_but(parse_disabled("")).poison);
  const Defences d = Defences::all_but(parse_disabled("redzone, poison"));
  EXPECT_FALSE(d.poison);
  EXPECT_FALSE(d.redzone);
  EXPECT_TRUE(d.rerun);
  EXPECT_TRUE(Defences::all_but(parse_disabled("pois")).poison); // whole names only
  std::set<std::string> every;
  for (const std::string_view name : kDefences)
    every.emplace(name);
  const Defences none = Defences::all_but(every);
  for (const bool on : {none.isolation, none.redzone, none.poison, none.input_hash, none.rerun,
                        none.static_scan, none.regenerate, none.one_program})
    EXPECT_FALSE(on);
}

} // namespace
