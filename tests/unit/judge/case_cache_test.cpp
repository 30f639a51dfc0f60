// CaseCache: hits and misses counted; beyond the budget other problems' least recently used
// entries make room, a problem's own cases stay as they came (a check asks for them in the same
// order every time, where plain LRU would keep none); an entry larger than the budget is refused.
// A case that several judges need at once is made by the first; the others wait for it.
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "judge/case_cache.hpp"

namespace {

using kj::CaseCache;
using kj::judge::CaseData;

std::shared_ptr<const CaseData> data() {
  return std::make_shared<const CaseData>();
}

TEST(CaseCache, CountsHitsAndMissesAndKeepsWhatFits) {
  CaseCache cache(100);
  EXPECT_EQ(cache.find("A|host|0|1|c0"), nullptr);
  const auto d = data();
  cache.insert("A|host|0|1|c0", d, 40);
  EXPECT_EQ(cache.find("A|host|0|1|c0"), d);
  const kj::CaseCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, 40u);
  cache.insert("A|host|0|1|huge", data(), 101); // larger than the budget: refused
  EXPECT_EQ(cache.find("A|host|0|1|huge"), nullptr);
  cache.clear();
  EXPECT_EQ(cache.find("A|host|0|1|c0"), nullptr);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(CaseCache, AProblemsOwnCasesStayWhenItsWorkingSetIsLargerThanTheBudget) {
  CaseCache cache(100);
  for (int round = 0; round < 3; ++round)
    for (int c = 0; c < 5; ++c) {
      const std::string key = "A|cuda|0|1|c" + std::to_string(c);
      if (!cache.find(key)) cache.insert(key, data(), 30);
    }
  // The first three fit and stay; rounds two and three hit them.
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().hits, 6u);
  EXPECT_NE(cache.find("A|cuda|0|1|c0"), nullptr);
  EXPECT_EQ(cache.find("A|cuda|0|1|c4"), nullptr);
}

TEST(CaseCache, AnotherProblemTakesTheRoomOfTheLeastRecentlyUsed) {
  CaseCache cache(100);
  cache.insert("A|host|0|1|c0", data(), 30);
  cache.insert("A|host|0|1|c1", data(), 30);
  cache.insert("A|host|0|1|c2", data(), 30);
  EXPECT_NE(cache.find("A|host|0|1|c0"), nullptr); // c1 is now the least recently used
  cache.insert("B|host|0|1|c0", data(), 30);
  EXPECT_NE(cache.find("B|host|0|1|c0"), nullptr);
  EXPECT_EQ(cache.find("A|host|0|1|c1"), nullptr);
  EXPECT_NE(cache.find("A|host|0|1|c0"), nullptr);
  EXPECT_NE(cache.find("A|host|0|1|c2"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 90u);
}

// Whether the second caller asks before or after the first has inserted, it gets the first's
// entry: one miss, one hit, never two makings.
TEST(CaseCache, ASecondCallerOfACaseBeingMadeGetsTheFirstCallersEntry) {
  CaseCache cache(100);
  ASSERT_EQ(cache.find("A|cuda|0|1|c0"), nullptr); // this caller makes it
  std::shared_ptr<const CaseData> second;
  std::thread other([&] { second = cache.find("A|cuda|0|1|c0"); });
  const auto made = data();
  cache.insert("A|cuda|0|1|c0", made, 10);
  other.join();
  EXPECT_EQ(second, made);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
}

// A making that threw ends its claim: the waiter (or a later caller) makes the case itself, and
// its entry is kept.
TEST(CaseCache, AnAbandonedCaseIsMadeByTheCallerThatWaitedForIt) {
  CaseCache cache(100);
  ASSERT_EQ(cache.find("A|cuda|0|1|c0"), nullptr);
  std::shared_ptr<const CaseData> second = data();
  std::thread other([&] { second = cache.find("A|cuda|0|1|c0"); });
  cache.abandon("A|cuda|0|1|c0");
  other.join();
  EXPECT_EQ(second, nullptr);
  const auto made = data();
  cache.insert("A|cuda|0|1|c0", made, 10);
  EXPECT_EQ(cache.find("A|cuda|0|1|c0"), made);
}

} // namespace
