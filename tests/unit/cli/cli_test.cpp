// kj::cli::run end to end, in-process: exit codes for good and bad arguments, the messages of
// bad input (which must name the file), `compare` on .npy files written here at run time,
// `validate` on problems/softmax and on broken fixtures (tests/cases/cli), `cases` and
// `export`.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "judge/case_disk_cache.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"
#include "kjudge/validate.hpp"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

Result kjudge(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = kj::cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::string problem_dir(const char* name) {
  return std::string(KJ_SOURCE_DIR) + "/problems/" + name;
}
std::string fixture(const char* name) {
  return std::string(KJ_CASES_DIR) + "/cli/" + name;
}

// A per-test temporary folder, removed afterwards.
class Cli : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kjudge_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A 4 x 8 tensor of smooth values, optionally with one element changed.
  std::string npy(const std::string& name, kj::DType dtype, double bump = 0, int at = 13) const {
    kj::HostTensor t(dtype, {4, 8});
    for (std::int64_t i = 0; i < t.numel(); ++i)
      t.set(i, 0.5 + 0.25 * static_cast<double>(i % 7) - 0.01 * static_cast<double>(i));
    if (bump != 0) t.set(at, t.get(at) + bump);
    kj::write_npy(path(name), t);
    return path(name);
  }

  fs::path dir_;
};

// ---- arguments and exit codes ----

TEST(CliArgs, VersionAndHelp) {
  auto r = kjudge({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, std::string("kjudge ") + KJUDGE_VERSION + "\n");
  r = kjudge({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "Commands:"));
}

// KJ_TEST_DISABLE alone once gave an off-by-one kernel PASS: now the command refuses it, naming
// the switch and the flag, before anything runs; serve refuses it whatever it is given.
TEST(CliArgs, PrecompileKernelsRefusesWhatIsNotAnArchitecture) {
  for (const char* bad : {"x", "9", "90a", "-1", "2000"}) {
    const Result r = kjudge({"--precompile-kernels", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_TRUE(contains(r.err, std::string("'") + bad + "' is not an architecture like 90"))
        << r.err;
  }
}

TEST(CliArgs, TestSwitchesWithoutTheUnsafeFlagExit2) {
  ::setenv("KJ_TEST_DISABLE", "poison,redzone", 1);
  const std::string trap = problem_dir("vector_add") + "/traps/off_by_one.cu";
  for (const char* command : {"check", "bench"}) {
    const auto r = kjudge({command, problem_dir("vector_add"), "--candidate", trap});
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_EQ(r.err, "kjudge: error: KJ_TEST_DISABLE: test switches ('poison,redzone') turn "
                     "kjudge's defences off; " + std::string(command) +
                         " refuses them unless --unsafe-test-switches is given\n")
        << command;
  }
  std::ostringstream out, err;
  EXPECT_EQ(kj::cli::run({"serve"}, out, err), 2);
  ::unsetenv("KJ_TEST_DISABLE");
  EXPECT_TRUE(contains(err.str(), "serve refuses them")) << err.str();
}

TEST(CliArgs, BadArgumentsExit2WithAHint) {
  auto r = kjudge({});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--help")) << r.err;

  r = kjudge({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'frobnicate'")) << r.err;
  EXPECT_TRUE(contains(r.err, "Run 'kjudge --help' for usage.")) << r.err;

  r = kjudge({"check", "problems/softmax", "cand.cu"});  // not a command until it works
  EXPECT_EQ(r.code, 2);

  r = kjudge({"validate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "kjudge validate: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "Run 'kjudge validate --help' for usage.")) << r.err;

  r = kjudge({"cases", problem_dir("softmax"), "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--bogus")) << r.err;

  r = kjudge({"compare", "a.npy", "b.npy"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--policy")) << r.err;

  r = kjudge({"compare", "a.npy", "b.npy", "--policy", "exact", "--nan", "sometimes"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "sometimes")) << r.err;
  EXPECT_TRUE(r.out.empty());

  // serve: one judge per device, or one device; an ordinal that is not one.
  r = kjudge({"serve", "--devices", "0,1", "--device", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--device excludes --devices")) << r.err;
  r = kjudge({"serve", "--devices", "0,x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "Value x not in range 0 to 1023")) << r.err;
  // The switch for no spare workers is serve's, spelled in full.
  r = kjudge({"serve", "--help"});
  EXPECT_TRUE(contains(r.out + r.err, "--no-spare-workers")) << r.out;
  r = kjudge({"serve", "--no-spare-worker"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--no-spare-worker")) << r.err;
}

// audit: exit 1 for a hollow problem (its findings in the table), 0 for an OK one, 2 for a
// policy it does not know.
TEST(CliArgs, AuditExitsByItsFindings) {
  const std::string hollow = std::string(KJ_CASES_DIR) + "/audit/hollow_softmax";
  auto r = kjudge({"audit", hollow, "--backend", "host"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "hollow_softmax       kjudge           hollow")) << r.out;
  r = kjudge({"audit", problem_dir("vector_add"), "--backend", "host", "--json", "-"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"schema_version\": 1")) << r.out;
  r = kjudge({"audit", problem_dir("vector_add"), "--policy", "kernelbench-v9"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "kjudge audit: --policy: ")) << r.err;
}

// mutate: a folder of kjudge problems or --kernelbench DIR (the Python campaign), and the
// options of one refused with the other, before anything runs.
TEST(CliArgs, MutateTakesProblemsOrAKernelBenchFolder) {
  auto r = kjudge({"mutate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "mutate: PROBLEM is required (or --kernelbench DIR)")) << r.err;
  r = kjudge({"mutate", problem_dir("vector_add"), "--sites", "cuda"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "mutate: --sites and --ray are for --kernelbench")) << r.err;
  r = kjudge({"mutate", "--kernelbench", "x", "--backend", "host"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "PROBLEM, --backend, --cache and --emit-cases are for kjudge's own"))
      << r.err;
}

// card: written beside problem.toml; a check by a looser policy is then refused (exit 2, the
// card named) unless --allow-loosen.
TEST_F(Cli, ACardRefusesALoosenedPolicyUnlessAllowed) {
  const fs::path dir = dir_ / "softmax";
  fs::copy(problem_dir("softmax"), dir, fs::copy_options::recursive);
  // The card's ladder would run the solutions in workers, which these tests' executable
  // cannot serve as: without them the card is written all the same.
  fs::remove_all(dir / "solutions");
  auto r = kjudge({"card", dir.string(), "--backend", "host"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "wrote " + (dir / "card.toml").string())) << r.out;
  ASSERT_TRUE(fs::exists(dir / "card.toml"));
  std::string toml;
  {
    std::ifstream in(dir / "problem.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    toml = ss.str();
  }
  const auto at = toml.find("policy = \"relative\"");
  ASSERT_NE(at, std::string::npos);
  toml.replace(at, std::string("policy = \"relative\"").size(), "policy = \"relative(64)\"");
  { std::ofstream(dir / "problem.toml") << toml; }
  const std::string cand = problem_dir("softmax") + "/solutions/basic.cu";
  r = kjudge({"check", dir.string(), "--candidate", cand, "--backend", "host"});
  EXPECT_EQ(r.code, 2); // refused before anything runs
  EXPECT_TRUE(contains(r.err, "card.toml")) << r.err;
  EXPECT_TRUE(contains(r.err, "'relative(64)' is looser than 'relative'")) << r.err;
  // Allowed, the check goes on to its next step: here the candidate's file, which is missing
  // (these tests' executable cannot serve as kjudge's worker).
  r = kjudge({"check", dir.string(), "--candidate", (dir / "missing.cu").string(), "--backend",
              "host", "--allow-loosen"});
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(contains(r.err, "card.toml")) << r.err;
  EXPECT_TRUE(contains(r.err, "--candidate")) << r.err;
}

// bench --slo-p99 takes a finite positive number of milliseconds; anything else is exit 2 before
// anything runs, the option named on stderr.
TEST(CliArgs, ABadSloP99Exits2NamingIt) {
  const std::string basic = problem_dir("vector_add") + "/solutions/basic.cu";
  for (const char* bad : {"0", "-1", "abc", "1ms", "nan", "inf", ""}) {
    const auto r = kjudge({"bench", problem_dir("vector_add"), "--candidate", basic, "--against",
                           basic, "--slo-p99", bad, "--backend", "host"});
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "--slo-p99")) << bad << ": " << r.err;
    EXPECT_TRUE(contains(r.err, std::string("must be a positive number of milliseconds, got '") +
                                    bad + "'"))
        << bad << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
  // check has no SLO: it times nothing.
  const auto r =
      kjudge({"check", problem_dir("vector_add"), "--candidate", basic, "--slo-p99", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--slo-p99")) << r.err;
}

// ---- compare ----

TEST_F(Cli, ComparePasses) {
  const auto actual = npy("y.npy", kj::DType::f32);
  const auto golden = npy("golden.npy", kj::DType::f64);
  auto r = kjudge({"compare", actual, golden, "--policy", "exact", "--expected", "golden"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "PASS compare (1/1 cases)");
  // exact's default is the reference: given one, it is used; without one, the message says
  // both ways out.
  r = kjudge({"compare", actual, golden, "--policy", "exact", "--reference", actual});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = kjudge({"compare", actual, golden, "--policy", "exact"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--reference REF, or --expected golden")) << r.err;
  r = kjudge({"compare", actual, golden, "--policy", "ulp(1)"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = kjudge({"compare", actual, golden, "--policy", "allclose", "--expected", "golden"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(Cli, CompareFailsWithTheEvidence) {
  const auto actual = npy("y.npy", kj::DType::f32, 0.5, 13);
  const auto golden = npy("golden.npy", kj::DType::f64);
  auto r = kjudge(
      {"compare", actual, golden, "--policy", "allclose(1e-5, 1e-8)", "--expected", "golden"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "FAIL(mismatch) compare: case y.npy vs golden.npy")
      << r.out;
  EXPECT_TRUE(contains(r.out, "output y: FAIL(mismatch)")) << r.out;
  EXPECT_TRUE(contains(r.out, "worst       [1, 5]")) << r.out;  // flat 13 of 4 x 8
  EXPECT_TRUE(contains(r.out, "replay: kjudge compare")) << r.out;
  EXPECT_TRUE(contains(r.out, "'allclose(1e-5, 1e-8)' --expected golden")) << r.out;
}

TEST_F(Cli, CompareWithAReferenceAndJson) {
  const auto actual = npy("y.npy", kj::DType::f32);
  const auto ref = npy("ref.npy", kj::DType::f32);
  const auto golden = npy("golden.npy", kj::DType::f64);
  auto r = kjudge({"compare", actual, golden, "--policy", "relative", "--reference", ref, "--slice",
                   "0", "--json", "-"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // With --json -, stdout is the JSON alone and the console verdict moves to stderr.
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "PASS");
  EXPECT_EQ(j["correctness"], true);
  EXPECT_EQ(j["manifest"]["backend"], "files");
  EXPECT_TRUE(contains(r.err, "PASS compare (1/1 cases)"));

  const auto bad = npy("bad.npy", kj::DType::f32, 1.0, 3);
  r = kjudge({"compare", bad, golden, "--policy", "relative", "--reference", ref, "--json",
              path("v.json")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::ifstream f(path("v.json"));
  const auto saved = nlohmann::json::parse(f);
  EXPECT_EQ(saved["reason"], "mismatch");
  EXPECT_EQ(saved["exit_code"], 1);
  EXPECT_EQ(saved["cases"][0]["outputs"][0]["output"], "bad");
}

TEST_F(Cli, CompareConvertsToTheRequestedDtype) {
  // An f64 dump judged as bf16: once rounded it equals the golden rounded to bf16.
  const auto actual = npy("y.npy", kj::DType::f64);
  const auto golden = npy("golden.npy", kj::DType::f64);
  auto r = kjudge(
      {"compare", actual, golden, "--policy", "exact", "--expected", "golden", "--dtype", "bf16"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = kjudge({"compare", actual, golden, "--policy", "exact", "--dtype", "f33"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--dtype")) << r.err;
  EXPECT_TRUE(contains(r.err, "f33")) << r.err;
}

TEST_F(Cli, CompareRejectsBadInput) {
  const auto actual = npy("y.npy", kj::DType::f32);
  const auto golden = npy("golden.npy", kj::DType::f64);

  // A missing file: exit 2 and the path in the message.
  const std::string missing = path("missing.npy");
  auto r = kjudge({"compare", missing, golden, "--policy", "ulp(0)"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, missing)) << r.err;

  r = kjudge({"compare", actual, golden, "--policy", "bogus(3)"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--policy")) << r.err;

  // relative(k) is defined by the reference's own error: without one it cannot run.
  r = kjudge({"compare", actual, golden, "--policy", "relative"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_FALSE(r.err.empty());

  // Shapes that differ.
  kj::HostTensor other(kj::DType::f32, {3, 8});
  kj::write_npy(path("other.npy"), other);
  r = kjudge({"compare", path("other.npy"), golden, "--policy", "ulp(0)"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "[3, 8]")) << r.err;
  EXPECT_TRUE(contains(r.err, "[4, 8]")) << r.err;

  // Not a .npy file at all.
  { std::ofstream(path("junk.npy")) << "hello"; }
  r = kjudge({"compare", path("junk.npy"), golden, "--policy", "ulp(0)"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "junk.npy")) << r.err;

  r = kjudge(
      {"compare", actual, golden, "--policy", "relative", "--reference", actual, "--slice", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--slice")) << r.err;

  // A JSON report that cannot be written is the user's argument, not kjudge's fault.
  r = kjudge({"compare", actual, golden, "--policy", "ulp(0)", "--json", dir_.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--json")) << r.err;
}

// ---- validate ----

TEST(CliValidate, Softmax) {
  const auto problem = kj::load_problem(problem_dir("softmax"));
  auto r = kjudge({"validate", problem_dir("softmax")});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "softmax " + problem.short_hash() + ": ok");
  EXPECT_TRUE(contains(r.out, "public0")) << r.out;
  EXPECT_TRUE(contains(r.out, "vary R of public0: 4095 (d-1), 4097 (d+1)")) << r.out;

  r = kjudge({"validate", "--json", problem_dir("softmax"), problem_dir("vector_add")});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["problem"], "softmax");
  EXPECT_EQ(j[0]["ok"], true);
  EXPECT_EQ(j[0]["hash"], problem.hash);
  EXPECT_FALSE(j[0]["shape_sets"].empty());
}

TEST(CliValidate, BrokenProblems) {
  // Loads, but its reference caps the golden at f32: diagnostics with file, line and column.
  auto r = kjudge({"validate", fixture("lint_error")});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  // The verdict line on standard output, the diagnostics on standard error.
  EXPECT_TRUE(contains(r.out, "lint_error")) << r.out;
  EXPECT_TRUE(contains(r.out, ": invalid")) << r.out;
  EXPECT_TRUE(contains(r.err, "reference.cu:5:21: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "expf")) << r.err;
  EXPECT_FALSE(contains(r.out, ": error: ")) << r.out;

  // Does not load: reported like a diagnostic, and the other problems are still validated.
  r = kjudge({"validate", fixture("bad_toml"), problem_dir("softmax")});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "problem.toml:5:8: error: tier: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "fast")) << r.err;
  EXPECT_FALSE(contains(r.out, ": error: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "softmax ")) << r.out;

  r = kjudge({"validate", "--json", fixture("bad_toml")});
  EXPECT_EQ(r.code, 2);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["ok"], false);
  EXPECT_EQ(j[0]["diagnostics"][0]["where"]["field"], "tier");
  EXPECT_EQ(j[0]["diagnostics"][0]["where"]["line"], 5);

  // A folder that does not exist: exit 2 and its path in the message.
  const std::string nowhere = fixture("no_such_problem");
  r = kjudge({"validate", nowhere});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out + r.err, nowhere)) << r.out << r.err;
}

// ---- cases ----

TEST(CliCases, ListsCanonicalIds) {
  const auto problem = kj::load_problem(problem_dir("softmax"));
  auto r = kjudge({"cases", problem_dir("softmax")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("softmax " + problem.short_hash() + ": ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, problem.short_hash() + ":public0:0:id  public")) << r.out;

  r = kjudge({"cases", problem_dir("softmax"), "--json"});
  EXPECT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["cases"].empty());
  for (const auto& c : j["cases"])
    EXPECT_EQ(c["id"].get<std::string>().rfind(problem.short_hash() + ":", 0), 0u) << c;
  EXPECT_TRUE(j["skipped"].is_array());

  r = kjudge({"cases", fixture("no_such_problem")});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "no_such_problem")) << r.err;
}

// The secret of drawn hidden shapes comes from a file or the environment, never the command
// line, is long enough not to be guessed, and leaves the environment once read.
TEST_F(Cli, TheSecretOfHiddenShapes) {
  const std::string softmax = problem_dir("softmax");
  auto r = kjudge({"check", softmax, "--candidate", "x.cu", "--secret", "0123456789abcdefgh"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "kjudge: error: --secret: a secret on the command line is readable by every "
                   "process (/proc/<pid>/cmdline): put it in a file for --secret-file, or in "
                   "$KJUDGE_SECRET\n");
  r = kjudge({"cases", softmax, "--secret-file", path("none")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "kjudge: error: " + path("none") + ": --secret-file: cannot read the secret "
                   "file\n");
  std::ofstream(path("short")) << "0123456789\n";
  r = kjudge({"cases", softmax, "--secret-file", path("short")});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "the secret is 10 bytes; at least 16 are needed")) << r.err;

  // Without a secret the drawn sets are a SKIP line; with one from the file they are listed
  // under its tag, and the environment's secret (the file wins) is gone once read.
  r = kjudge({"cases", softmax});
  EXPECT_TRUE(contains(r.out, "SKIP(no secret: give --secret-file or KJUDGE_SECRET) 2 hidden "
                              "shape sets drawn from dims.hidden_ranges\n"))
      << r.out;
  std::ofstream(path("secret")) << "0123456789abcdef\n";
  ::setenv("KJUDGE_SECRET", "another secret, not used", 1);
  r = kjudge({"cases", softmax, "--secret-file", path("secret")});
  EXPECT_EQ(std::getenv("KJUDGE_SECRET"), nullptr);
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string tag = kj::secret_tag("0123456789abcdef");
  EXPECT_TRUE(contains(r.out, ":drawn0.1@" + tag + ":0:id  hidden\n")) << r.out;
  EXPECT_FALSE(contains(r.out, "SKIP(no secret")) << r.out;
  ::setenv("KJUDGE_SECRET", "0123456789abcdef", 1);
  EXPECT_EQ(kjudge({"cases", softmax}).out, r.out);
  EXPECT_EQ(std::getenv("KJUDGE_SECRET"), nullptr);
}

// ---- cache ----

// An NVRTC folder with two entries beside files that are not its own, a case folder with one
// entry and one declined marker, and a KernelBench build folder with one build, one left half
// made and a folder that is not a build, as the caches write them.
TEST_F(Cli, CacheStatsAndClear) {
  const fs::path nvrtc = path("nvrtc"), cases = path("cases");
  fs::create_directories(nvrtc / "host");
  std::ofstream(nvrtc / "aaaa.kjc") << std::string(1000, 'a');
  std::ofstream(nvrtc / "bbbb.kjc") << std::string(2000, 'b');
  std::ofstream(nvrtc / "notes.txt") << "not kjudge's";
  std::ofstream(nvrtc / "host" / "x.so") << "a host build";
  const fs::path builds = nvrtc / "kernelbench-builds", build = builds / std::string(64, 'e');
  fs::create_directories(build);
  fs::create_directories(builds / ".entry-x");
  fs::create_directories(builds / "mine");
  std::ofstream(build / "build.json") << std::string(500, ' ');
  std::ofstream(build / "record.json") << std::string(100, ' ');
  std::ofstream(build / (std::string(64, 'f') + ".so")) << std::string(4000, 's');
  // torch's precompiled header: its file below the entry counted, its link to the header not.
  const fs::path pch = builds / std::string(64, '9');
  fs::create_directories(pch / "include" / "torch");
  std::ofstream(pch / "build.json") << std::string(10, ' ');
  std::ofstream(pch / "include" / "torch" / "extension.h.gch") << std::string(7000, 'h');
  fs::create_symlink(nvrtc / "notes.txt", pch / "include" / "torch" / "extension.h");
  const kj::judge::CaseDiskCache disk(cases, std::uint64_t{1} << 30);
  const std::string key(64, 'c');
  ASSERT_TRUE(disk.store(key, 0.25, std::string(3000, 'p')));
  disk.decline(std::string(64, 'd'));
  const std::uint64_t entry_bytes = fs::file_size(cases / (key + ".kjcase"));
  const std::vector<std::string> folders{"--cache", nvrtc.string(), "--case-cache-dir",
                                         cases.string()};
  auto cache = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "cache");
    args.insert(args.end(), folders.begin(), folders.end());
    return kjudge(args);
  };

  auto r = cache({"stats"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "NVRTC cache " + nvrtc.string() + ": 2 entries, 0.0 MiB\n" +
                       "case cache " + cases.string() +
                       ": 1 entry, 0.0 MiB, 1 declined (read slower than made)\n" +
                       "    cccccccccccccccc     0.0 MiB  made in 0.250 s\n" +
                       "KernelBench build cache " + builds.string() + ": 2 entries, 0.0 MiB\n");
  r = cache({"stats", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nvrtc_cache"],
            (nlohmann::json{{"dir", nvrtc.string()}, {"entries", 2}, {"bytes", 3000}}));
  EXPECT_EQ(j["case_cache"]["entries"], 1);
  EXPECT_EQ(j["case_cache"]["bytes"], entry_bytes);
  EXPECT_EQ(j["case_cache"]["declined"], 1);
  EXPECT_EQ(j["case_cache"]["per_entry"],
            (nlohmann::json::array({{{"key", key}, {"bytes", entry_bytes}, {"make_s", 0.25}}})));
  EXPECT_EQ(j["kernelbench_builds"],
            (nlohmann::json{{"dir", builds.string()}, {"entries", 2}, {"bytes", 11610}}));

  r = cache({"clear"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "NVRTC cache " + nvrtc.string() + ": 2 files removed\ncase cache " +
                       cases.string() + ": 2 files removed\nKernelBench build cache " +
                       builds.string() + ": 3 builds removed\n");
  EXPECT_FALSE(fs::exists(build));
  EXPECT_FALSE(fs::exists(pch));
  EXPECT_TRUE(fs::exists(builds / "mine"));
  EXPECT_TRUE(fs::exists(nvrtc / "notes.txt"));
  EXPECT_TRUE(fs::exists(nvrtc / "host" / "x.so"));
  r = cache({"stats", "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["case_cache"]["entries"], 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["nvrtc_cache"]["entries"], 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["case_cache"]["declined"], 0);

  // --case-cache-dir off leaves the case folder out.
  r = kjudge({"cache", "stats", "--cache", nvrtc.string(), "--case-cache-dir", "off"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "NVRTC cache " + nvrtc.string() + ": 0 entries, 0.0 MiB\n" +
                       "KernelBench build cache " + builds.string() + ": 0 entries, 0.0 MiB\n");
}

TEST_F(Cli, CacheRefusesBadArguments) {
  auto r = kjudge({"cache", "frob"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "kjudge cache: ACTION: frob not in {stats,clear}")) << r.err;
  r = kjudge({"cache"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "ACTION is required")) << r.err;
  std::ofstream(path("a_file")) << "x";
  r = kjudge({"cache", "clear", "--case-cache-dir", path("a_file")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "kjudge: error: " + path("a_file") + ": --case-cache-dir: not a folder\n");
  EXPECT_TRUE(fs::exists(path("a_file")));
  for (const char* command : {"check", "bench", "serve"}) {
    std::vector<std::string> args{command, "--case-cache-dir-mib", "0"};
    if (std::string(command) != "serve")
      args.insert(args.end(), {problem_dir("vector_add"), "--candidate", "c.cu"});
    r = kjudge(args);
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_TRUE(contains(r.err, "--case-cache-dir-mib")) << command << ": " << r.err;
  }
}

// ---- export ----

TEST_F(Cli, ExportWritesALoadableProblemWithoutHiddenShapes) {
  auto r = kjudge({"export", problem_dir("softmax")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "name = \"softmax\"")) << r.out;
  EXPECT_FALSE(contains(r.out, "4099")) << r.out;  // the hidden set's C

  const std::string out = path("exported");
  r = kjudge({"export", problem_dir("softmax"), "-o", out});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(fs::path(out) / "problem.toml"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "reference.cu"));
  const auto exported = kj::load_problem(out);
  EXPECT_TRUE(exported.dims.hidden_sets.empty());
  EXPECT_EQ(kjudge({"validate", out}).code, 0);
}

TEST_F(Cli, ExportRefusesToOverwriteTheProblem) {
  // On a copy, so a broken guard could not damage the bundled problem.
  const fs::path copy = path("softmax");
  fs::copy(problem_dir("softmax"), copy, fs::copy_options::recursive);
  const std::string before = [&] {
    std::ifstream f(copy / "problem.toml");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  }();
  auto r = kjudge({"export", copy.string(), "--output", copy.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "refusing")) << r.err;
  std::ifstream f(copy / "problem.toml");
  std::ostringstream after;
  after << f.rdbuf();
  EXPECT_EQ(after.str(), before);
}

}  // namespace
