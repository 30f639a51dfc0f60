// Tests of the mutation campaign on the host backend (no GPU): the sanity step, the strong
// oracle against the checkers on real mutants of a bundled solution, the kept results a second
// campaign reuses, and the checker descriptions a user writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kjudge/error.hpp"
#include "kjudge/mutate.hpp"

namespace kj::mutate {
namespace {

namespace fs = std::filesystem;

fs::path problem_dir(const char* name) { return fs::path(KJ_SOURCE_DIR) / "problems" / name; }

struct CampaignTest : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kj_mutate_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  CampaignOptions options(std::vector<std::string> problems, int budget) const {
    CampaignOptions o;
    o.problems = std::move(problems);
    o.checkers = builtin_checkers();
    o.budget = budget;
    o.jobs = 2;
    o.backend = "host";
    o.state_dir = (dir / "state").string();
    o.self_exe = KJ_KJUDGE_EXE;
    o.cache_dir = (dir / "cache").string();
    return o;
  }
};

std::size_t count_status(const Campaign& c, Status s) {
  return static_cast<std::size_t>(std::count_if(c.mutants.begin(), c.mutants.end(),
                                                [&](const MutantResult& m) { return m.status == s; }));
}

TEST_F(CampaignTest, ReluMutantsAreKilledControlsAcceptedAndResultsKept) {
  const Campaign c = run_campaign(options({problem_dir("relu").string()}, 12));
  EXPECT_EQ(c.backend, "host");
  EXPECT_TRUE(c.forced_fail_killed);
  ASSERT_FALSE(c.pool.empty());
  // The two bundled solutions are controls; every checker accepts them.
  ASSERT_GE(c.controls.size(), 2u);
  for (const ControlResult& k : c.controls)
    for (const auto& [checker, accepted] : k.accepted)
      EXPECT_TRUE(accepted) << k.name << " rejected by " << checker;
  const std::size_t executed = count_status(c, Status::killed) + count_status(c, Status::not_killable);
  EXPECT_GT(executed, 0u);
  EXPECT_LE(executed, 12u);
  EXPECT_GT(count_status(c, Status::killed), 0u);
  for (const MutantResult& m : c.mutants) {
    if (m.status != Status::killed) continue;
    ASSERT_TRUE(m.witness) << m.mutant.id;
    EXPECT_LT(*m.witness, c.pool.size());
    EXPECT_FALSE(m.killed_on.empty());
    EXPECT_EQ(m.killed_on.front(), *m.witness);
    EXPECT_EQ(m.accepted.size(), c.checkers.size());
  }
  for (const EscapeRates& e : escape_rates(c)) {
    EXPECT_GE(e.overall.rate, 0.0);
    EXPECT_LE(e.overall.rate, 1.0);
    EXPECT_EQ(e.false_rejections, 0) << e.checker;
  }

  // Run again: every executed mutant comes from the state folder, with the same verdicts.
  const Campaign again = run_campaign(options({problem_dir("relu").string()}, 12));
  ASSERT_EQ(again.mutants.size(), c.mutants.size());
  for (std::size_t i = 0; i < c.mutants.size(); ++i) {
    EXPECT_EQ(again.mutants[i].mutant.id, c.mutants[i].mutant.id);
    EXPECT_EQ(again.mutants[i].status, c.mutants[i].status);
    EXPECT_EQ(again.mutants[i].accepted, c.mutants[i].accepted);
    EXPECT_EQ(again.mutants[i].killed_on, c.mutants[i].killed_on);
  }
  std::ifstream kept(dir / "state" / "results.jsonl");
  std::size_t lines = 0;
  for (std::string line; std::getline(kept, line);) ++lines;
  EXPECT_EQ(lines, executed); // the second campaign appended nothing
}

// bias_add's float4.cu requires C % 4 == 0: the inputs whose C does not meet it are not run for
// it (a check does not run them either), so they are neither dropped for every other kernel
// nor witnesses against its mutants.
TEST_F(CampaignTest, InputsASolutionsPreconditionsExcludeAreSkippedNotDropped) {
  const Campaign c = run_campaign(options({problem_dir("bias_add").string()}, 2));
  EXPECT_TRUE(c.dropped_inputs.empty()) << c.dropped_inputs.front().second;
  for (const ControlResult& k : c.controls)
    EXPECT_TRUE(k.broken.empty()) << k.name << ": " << k.broken;
}

TEST_F(CampaignTest, AnInterruptedStateLineIsRunAgainNotTrusted) {
  CampaignOptions o = options({problem_dir("relu").string()}, 3);
  const Campaign first = run_campaign(o);
  const fs::path results = dir / "state" / "results.jsonl";
  // Cut the last line in half, as a killed process may leave it.
  std::ifstream in(results);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  in.close();
  ASSERT_GT(all.size(), 40u);
  std::ofstream(results, std::ios::trunc) << all.substr(0, all.size() - 30);
  const Campaign second = run_campaign(o);
  ASSERT_EQ(second.mutants.size(), first.mutants.size());
  for (std::size_t i = 0; i < first.mutants.size(); ++i)
    EXPECT_EQ(second.mutants[i].status, first.mutants[i].status);
}

TEST(Checkers, TheBuiltinFiveAreNamedAndResolved) {
  const std::vector<Checker> all = builtin_checkers();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].name, "kjudge");
  EXPECT_EQ(all[0].judge, Checker::Judge::problem_policy);
  EXPECT_EQ(all[1].name, "kernelbench-v0");
  EXPECT_EQ(all[1].seeds, 5);
  EXPECT_EQ(all[1].rtol, 1e-2);
  EXPECT_EQ(all[2].name, "kernelbench");
  EXPECT_EQ(all[2].atol, 1e-4);
  EXPECT_EQ(all[2].atol_half, 1e-2);
  EXPECT_EQ(all[3].name, "torch-defaults");
  EXPECT_TRUE(all[3].torch_defaults);
  EXPECT_EQ(all[4].name, "llmc");
  EXPECT_EQ(all[4].atol, 1e-4);
  EXPECT_EQ(all[4].atol_half, 1e-4);
  EXPECT_TRUE(all[4].dtype_epsilon_rtol);
  EXPECT_TRUE(all[4].skip_nonfinite_reference);
  EXPECT_EQ(resolve_checkers({"llmc", "kjudge"})[0].name, "llmc");
  EXPECT_THROW(resolve_checkers({"kernelbnech"}), std::invalid_argument);
}

TEST_F(CampaignTest, ACheckerFileIsReadAndItsMistakesNamed) {
  const fs::path f = dir / "strict.toml";
  std::ofstream(f) << "name = \"strict\"\ndraw = \"first-shape\"\nseeds = 3\nrtol = 1e-6\n"
                      "atol = 1e-7\n";
  const Checker c = load_checker(f.string());
  EXPECT_EQ(c.name, "strict");
  EXPECT_EQ(c.draw, Checker::Draw::first_shape_seeds);
  EXPECT_EQ(c.seeds, 3);
  EXPECT_EQ(c.judge, Checker::Judge::tolerance);
  EXPECT_EQ(c.rtol, 1e-6);
  EXPECT_EQ(c.atol_half, 1e-7); // defaults to atol
  auto message_of = [&](const std::string& text) {
    std::ofstream(f, std::ios::trunc) << text;
    try {
      load_checker(f.string());
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of("name = \"x\"\nrtoll = 1\n").find("unknown key 'rtoll'"), std::string::npos);
  EXPECT_NE(message_of("draw = \"default\"\n").find("'name' is required"), std::string::npos);
  EXPECT_NE(message_of("name = \"x\"\nseeds = 0\n").find("seeds must be in [1, 64]"),
            std::string::npos);
  EXPECT_NE(message_of("name = \"x\"\nrtol = -1\n").find("'rtol' must be a number >= 0"),
            std::string::npos);
  EXPECT_NE(message_of("name = [\n").find(f.string()), std::string::npos);
}

} // namespace
} // namespace kj::mutate
