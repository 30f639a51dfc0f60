// The on-disk tier of the case cache (src/judge/case_disk_cache.hpp): a host case survives its
// encoding field by field, a flipped byte or a truncated entry is found, the case made afresh
// and the entry replaced, the size cap evicts the least recently used entries, a hidden case
// drawn with a secret is never written, an entry read more slowly than its case was made is
// declined for good, and a host `check` run twice on one folder gives the same verdict, the
// second from disk (a third, after damage, reports it once on standard error).
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "judge/backend.hpp"
#include "judge/case_disk_cache.hpp"
#include "judge/host/host_backend.hpp"
#include "kjudge/cache_folders.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;
using namespace kj::judge;

fs::path problems() { return fs::path(KJ_SOURCE_DIR) / "problems"; }

// A fresh folder per test, removed afterwards.
class CaseDiskCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kjudge-case-cache-" + std::string(::testing::UnitTest::GetInstance()
                                                   ->current_test_info()
                                                   ->name()) +
            "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // The folder's file names ending in `suffix`.
  std::vector<fs::path> files(const std::string& suffix) const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().ends_with(suffix)) out.push_back(e.path());
    return out;
  }
  fs::path dir_;
};

// The host backend set up for a problem, as kj::check makes it (its oracle built).
struct HostOracleRig {
  explicit HostOracleRig(const std::string& name) : problem(load_problem(problems() / name)) {
    options.backend = Backend::host;
    options.self_exe = KJ_KJUDGE_EXE;
    options.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
    options.cache_dir = fs::temp_directory_path() / "kjudge_host_check_test_cache";
    settings.backend = Backend::host;
    settings.defences = Defences::all_but({});
    settings.kjudge_include = options.kjudge_include;
    settings.trace = &trace;
    backend = make_host_backend(settings, problem, verdict);
    std::string budget;
    plan = host_case_plan(problem, options.cases, budget);
  }
  const Case& first_case() const { return plan.cases.at(0); }

  Problem problem;
  CheckOptions options;
  CheckSettings settings{options};
  PhaseTrace trace;
  Verdict verdict;
  std::unique_ptr<CheckBackend> backend;
  CasePlan plan;
};

void expect_same_tensors(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b,
                         const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].dtype(), b[k].dtype()) << what << " " << k;
    EXPECT_EQ(a[k].shape(), b[k].shape()) << what << " " << k;
    ASSERT_EQ(a[k].nbytes(), b[k].nbytes()) << what << " " << k;
    EXPECT_TRUE(std::equal(a[k].bytes().begin(), a[k].bytes().end(), b[k].bytes().begin()))
        << what << " " << k;
  }
}

void expect_same_case(const CaseData& a, const CaseData& b) {
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.input_shapes, b.input_shapes);
  EXPECT_EQ(a.output_shapes, b.output_shapes);
  expect_same_tensors(a.host_master, b.host_master, "master");
  expect_same_tensors(a.initial, b.initial, "initial");
  expect_same_tensors(a.golden, b.golden, "golden");
  expect_same_tensors(a.reference, b.reference, "reference");
  EXPECT_EQ(a.reference_s, b.reference_s);
  EXPECT_EQ(a.nan_in_inputs, b.nan_in_inputs);
  EXPECT_EQ(a.extreme_in_inputs, b.extreme_in_inputs);
}

CaseData round_trip(CheckBackend& backend, const Problem& problem, const CaseData& data) {
  const std::optional<std::string> bytes = backend.encode_case(data);
  EXPECT_TRUE(bytes);
  std::optional<CaseImage> image = decode_case_image(*bytes, problem);
  EXPECT_TRUE(image);
  std::optional<CaseData> back = backend.decode_case(std::move(*image));
  EXPECT_TRUE(back);
  return std::move(*back);
}

// layernorm_backward: an in-out output (initial values drawn), a golden, a reference.
TEST(CaseEncoding, AHostCaseRoundTripsFieldByField) {
  HostOracleRig rig("layernorm_backward");
  const CaseData made = rig.backend->oracle().prepare(rig.first_case());
  std::size_t drawn_initial = 0;
  for (const HostTensor& t : made.initial)
    drawn_initial += t.nbytes() > 0 ? 1 : 0;
  ASSERT_EQ(drawn_initial, 2u); // dweight and dbias accumulate
  ASSERT_EQ(made.golden.size(), rig.problem.outputs.size());
  ASSERT_GT(made.reference_s, 0);
  const CaseData back = round_trip(*rig.backend, rig.problem, made);
  expect_same_case(made, back);
  EXPECT_EQ(*rig.backend->encode_case(back), *rig.backend->encode_case(made));
}

// A special-values case keeps its flag; a payload that does not fit the problem is refused.
TEST(CaseEncoding, FlagsSurviveAndForeignPayloadsAreRefused) {
  HostOracleRig rig("softmax");
  const auto nan_case =
      std::find_if(rig.plan.cases.begin(), rig.plan.cases.end(), [](const Case& c) {
        return c.special && c.special->kind == SpecialKind::nan;
      });
  ASSERT_NE(nan_case, rig.plan.cases.end());
  const CaseData made = rig.backend->oracle().prepare(*nan_case);
  ASSERT_TRUE(made.nan_in_inputs);
  const CaseData back = round_trip(*rig.backend, rig.problem, made);
  expect_same_case(made, back);

  const std::string bytes = *rig.backend->encode_case(made);
  const Problem other = load_problem(problems() / "vector_add"); // two inputs, not one
  EXPECT_FALSE(decode_case_image(bytes, other));
  EXPECT_FALSE(decode_case_image(bytes.substr(0, bytes.size() - 1), rig.problem));
  EXPECT_FALSE(decode_case_image(bytes + "x", rig.problem));
}

// A backend with the host's encoding and no oracle: the case source's logic alone.
class FakeBackend final : public CheckBackend {
public:
  CaseOracle& oracle() override { throw std::logic_error("no oracle"); }
  std::unique_ptr<KernelUnderTest> make_runner(std::string, const Candidate&) override {
    return nullptr;
  }
  std::string case_identity() const override { return "fake"; }
  std::optional<std::string> encode_case(const CaseData& d) override {
    ++encoded;
    return encode_case_image(d, d.host_master, d.golden, d.reference);
  }
  std::optional<CaseData> decode_case(CaseImage image) override {
    ++decoded;
    CaseData d = std::move(image.frame);
    d.host_master = std::move(image.master);
    d.golden = std::move(image.golden);
    d.reference = std::move(image.reference);
    return d;
  }
  int encoded = 0, decoded = 0;
};

// Case `c` of `problem` as a fake oracle makes it: its frame, every tensor zero but a marker,
// in 20 ms at least (a real oracle's pace: reading the entry must beat it).
CaseData fake_case(const Problem& problem, const Case& c, double marker = 7) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CaseData d = case_frame(problem, c);
  for (std::size_t i = 0; i < problem.inputs.size(); ++i)
    d.host_master.emplace_back(problem.inputs[i].dtype, d.input_shapes[i]);
  d.initial.resize(problem.outputs.size());
  for (std::size_t o = 0; o < problem.outputs.size(); ++o)
    d.reference.emplace_back(problem.outputs[o].dtype, d.output_shapes[o]);
  d.host_master[0].set(0, marker);
  return d;
}

CaseKeyParts fake_key() { return {"build", "problem-hash", "host", "fake", true, {}}; }

struct SourceRun {
  CaseSourceCounts counts;
  double marker = 0; // the first element of the case's first input
};

// One check's worth of case_data for `c`, its case made by fake_case.
SourceRun run_source(const fs::path& dir, const Problem& problem, const Case& c,
                     FakeBackend& backend, std::uint64_t cap = std::uint64_t{1} << 30) {
  CaseSource source(nullptr, "", std::make_unique<CaseDiskCache>(dir, cap), fake_key(), problem);
  const auto data = source.case_data(c, backend, [&] { return fake_case(problem, c); });
  return {source.counts(), data->host_master[0].get(0)};
}

TEST_F(CaseDiskCacheTest, AFlippedByteOrATruncatedEntryIsMadeAfreshAndReplaced) {
  const Problem problem = load_problem(problems() / "vector_add");
  std::string budget;
  const CasePlan plan = host_case_plan(problem, {}, budget);
  const Case& c = plan.cases.at(0);
  FakeBackend backend;
  SourceRun r = run_source(dir_, problem, c, backend);
  EXPECT_EQ(r.counts.misses, 1u);
  EXPECT_EQ(r.counts.disk_stored, 1u);
  ASSERT_EQ(files(".kjcase").size(), 1u);
  const fs::path entry = files(".kjcase").front();
  const auto size = fs::file_size(entry);

  r = run_source(dir_, problem, c, backend);
  EXPECT_EQ(r.counts.disk_hits, 1u);
  EXPECT_EQ(r.counts.misses, 0u);
  EXPECT_EQ(r.marker, 7);

  for (const char* damage : {"flip", "truncate"}) {
    {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(size / 2));
      char byte = 0;
      f.get(byte);
      f.seekp(static_cast<std::streamoff>(size / 2));
      f.put(static_cast<char>(byte ^ 0x10));
    }
    if (std::string(damage) == "truncate") fs::resize_file(entry, size / 3);
    r = run_source(dir_, problem, c, backend);
    EXPECT_EQ(r.counts.disk_corrupt, 1u) << damage;
    EXPECT_EQ(r.counts.disk_hits, 0u) << damage;
    EXPECT_EQ(r.counts.misses, 1u) << damage;
    EXPECT_EQ(r.counts.disk_stored, 1u) << damage; // replaced
    EXPECT_EQ(r.marker, 7) << damage;
    EXPECT_EQ(fs::file_size(entry), size) << damage;
    r = run_source(dir_, problem, c, backend);
    EXPECT_EQ(r.counts.disk_hits, 1u) << damage;
    EXPECT_EQ(r.counts.disk_corrupt, 0u) << damage;
  }
}

TEST_F(CaseDiskCacheTest, TheCapEvictsTheLeastRecentlyUsed) {
  const std::string payload(1000, 'p');
  const auto entry_bytes = [&] {
    CaseDiskCache probe(dir_ / "probe", std::uint64_t{1} << 30);
    probe.store("z", 0, payload); // a key as long as those below: entries of one size
    return fs::file_size(dir_ / "probe" / "z.kjcase");
  }();
  // Room for two entries, not three.
  const CaseDiskCache disk(dir_, entry_bytes * 5 / 2);
  const auto now = fs::file_time_type::clock::now();
  const auto store_at = [&](const std::string& key, int seconds_ago) {
    ASSERT_TRUE(disk.store(key, 1, payload));
    fs::last_write_time(dir_ / (key + ".kjcase"), now - std::chrono::seconds(seconds_ago));
  };
  store_at("a", 300);
  store_at("b", 200);
  // A hit makes "a" the most recently used: "b" goes when "c" needs the room.
  EXPECT_EQ(disk.read("a").found, CaseDiskCache::Found::entry);
  store_at("c", 100);
  EXPECT_EQ(disk.read("b").found, CaseDiskCache::Found::missing);
  EXPECT_EQ(disk.read("a").found, CaseDiskCache::Found::entry);
  EXPECT_EQ(disk.read("c").found, CaseDiskCache::Found::entry);
  EXPECT_EQ(files(".kjcase").size(), 2u);
  EXPECT_EQ(case_cache_facts(dir_).bytes, 2 * entry_bytes);
}

TEST_F(CaseDiskCacheTest, HiddenCasesDrawnWithASecretAreNeverWritten) {
  const Problem problem = load_problem(problems() / "vector_add");
  CaseOptions options;
  options.secret = "a secret of twenty-four b";
  const CasePlan plan = enumerate_cases(problem, options);
  const auto drawn = std::find_if(plan.cases.begin(), plan.cases.end(), [](const Case& c) {
    return c.shapes.id.starts_with("drawn");
  });
  ASSERT_NE(drawn, plan.cases.end());
  EXPECT_TRUE(drawn_with_secret(*drawn));
  const auto declared = std::find_if(plan.cases.begin(), plan.cases.end(), [](const Case& c) {
    return c.shapes.hidden && !c.shapes.id.starts_with("drawn");
  });
  ASSERT_NE(declared, plan.cases.end());
  EXPECT_FALSE(drawn_with_secret(*declared));
  EXPECT_FALSE(drawn_with_secret(plan.cases.front()));

  // A small stand-in for the drawn case (its N may be 33 million): its id and shapes flag are
  // what the source decides by.
  Case small = plan.cases.front();
  small.id = drawn->id;
  small.shapes = drawn->shapes;
  small.shapes.dims = {{"N", 1000}};
  FakeBackend backend;
  for (int run = 0; run < 2; ++run) {
    const SourceRun r = run_source(dir_, problem, small, backend);
    EXPECT_EQ(r.counts.misses, 1u);
    EXPECT_EQ(r.counts.disk_stored, 0u);
  }
  EXPECT_EQ(backend.encoded, 0);
  EXPECT_EQ(backend.decoded, 0);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CaseDiskCacheTest, AReadSlowerThanTheMakingIsDeclinedForGood) {
  const Problem problem = load_problem(problems() / "vector_add");
  std::string budget;
  const CasePlan plan = host_case_plan(problem, {}, budget);
  const Case& c = plan.cases.at(0);
  const CaseData d = fake_case(problem, c, 5);
  const std::string payload = encode_case_image(d, d.host_master, d.golden, d.reference);
  const std::string key = case_key(fake_key(), c.id);
  const CaseDiskCache disk(dir_, std::uint64_t{1} << 30);
  FakeBackend backend;

  // Recorded as made in 1000 s: any read beats that, and the entry stays.
  ASSERT_TRUE(disk.store(key, 1000, payload));
  SourceRun r = run_source(dir_, problem, c, backend);
  EXPECT_EQ(r.counts.disk_hits, 1u);
  EXPECT_EQ(r.counts.disk_declined, 0u);
  EXPECT_EQ(r.marker, 5); // the stored case, not a fresh one
  EXPECT_EQ(files(".kjcase").size(), 1u);

  // Recorded as made in no time: the read is slower, so it is the last.
  ASSERT_TRUE(disk.store(key, 0, payload));
  r = run_source(dir_, problem, c, backend);
  EXPECT_EQ(r.counts.disk_hits, 1u);
  EXPECT_EQ(r.counts.disk_declined, 1u);
  EXPECT_EQ(r.marker, 5);
  EXPECT_EQ(files(".kjcase").size(), 0u);
  EXPECT_EQ(files(".declined").size(), 1u);

  // Made afresh from now on, and never stored again by this build.
  const int encoded_before = backend.encoded;
  r = run_source(dir_, problem, c, backend);
  EXPECT_EQ(r.counts.misses, 1u);
  EXPECT_EQ(r.counts.disk_hits, 0u);
  EXPECT_EQ(r.counts.disk_stored, 0u);
  EXPECT_EQ(r.marker, 7);
  EXPECT_EQ(backend.encoded, encoded_before + 1);
  EXPECT_FALSE(disk.store(key, 1000, payload));
  EXPECT_EQ(files(".kjcase").size(), 0u);
  const CacheFolderFacts facts = case_cache_facts(dir_);
  EXPECT_EQ(facts.entries, 0u);
  EXPECT_EQ(facts.declined, 1u);
}

// `kjudge check --backend host` in a child process; its stderr, and its JSON verdict parsed.
struct CliCheck {
  int code = -1;
  std::string err;
  nlohmann::json verdict;
};
CliCheck cli_check(const fs::path& case_dir, const fs::path& json) {
  const std::string command =
      std::string(KJ_KJUDGE_EXE) + " check " + (problems() / "vector_add").string() +
      " --candidate " + (problems() / "vector_add/solutions/basic.cu").string() +
      " --backend host --cache " +
      (fs::temp_directory_path() / "kjudge_host_check_test_cache").string() +
      " --case-cache-dir " + case_dir.string() + " --json " + json.string() + " 2>&1 >/dev/null";
  CliCheck r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr)
    r.err += buf.data();
  r.code = WEXITSTATUS(pclose(pipe));
  std::ifstream f(json);
  if (f) r.verdict = nlohmann::json::parse(f, nullptr, false);
  return r;
}

// The verdict without what may differ between two runs of one check: the cache's counters and
// the time it took.
nlohmann::json without_run_figures(nlohmann::json v) {
  v["manifest"].erase("case_cache");
  v.erase("judge_time");
  return v;
}

TEST_F(CaseDiskCacheTest, AHostCheckTwiceGivesTheSameVerdictTheSecondFromDisk) {
  const fs::path cases = dir_ / "cases";
  const CliCheck first = cli_check(cases, dir_ / "first.json");
  ASSERT_EQ(first.code, 0) << first.err;
  const nlohmann::json& made = first.verdict["manifest"]["case_cache"];
  const std::uint64_t n = first.verdict["cases"].size();
  ASSERT_GT(n, 10u);
  EXPECT_EQ(made["misses"], n);
  // A case made in about a millisecond is not worth a file (worth_storing): how many of
  // vector_add's small host cases are stored depends on the machine's speed, never 0.
  const std::uint64_t stored = made["disk_stored"].get<std::uint64_t>();
  EXPECT_GT(stored, 0u);
  EXPECT_LE(stored, n);
  EXPECT_EQ(made["disk_hits"], 0);
  EXPECT_EQ(case_cache_facts(cases).entries, stored);

  const CliCheck second = cli_check(cases, dir_ / "second.json");
  ASSERT_EQ(second.code, 0) << second.err;
  const nlohmann::json& read = second.verdict["manifest"]["case_cache"];
  // Reading a host case (a file of tens of KB) is far quicker than making it (the reference
  // and the f64 golden run on the CPU), so none is declined.
  EXPECT_EQ(read["disk_hits"], stored);
  EXPECT_EQ(read["misses"], n - stored);
  EXPECT_EQ(read["disk_declined"], 0);
  EXPECT_EQ(without_run_figures(second.verdict), without_run_figures(first.verdict));

  // Two entries damaged: both found and made afresh, one line on standard error for both.
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(cases))
    entries.push_back(e.path());
  ASSERT_GE(entries.size(), 2u);
  fs::resize_file(entries[0], fs::file_size(entries[0]) - 1);
  {
    std::fstream f(entries[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entries[1]) / 2));
    f.put('\xff');
    f.put('\x00');
  }
  const CliCheck third = cli_check(cases, dir_ / "third.json");
  ASSERT_EQ(third.code, 0) << third.err;
  const nlohmann::json& healed = third.verdict["manifest"]["case_cache"];
  EXPECT_EQ(healed["disk_corrupt"], 2);
  EXPECT_EQ(healed["misses"], 2);
  EXPECT_EQ(healed["disk_stored"], 2);
  EXPECT_EQ(healed["disk_hits"], n - 2);
  const std::string line = "held a corrupt entry: it was removed and the case made afresh";
  const auto at = third.err.find(line);
  EXPECT_NE(at, std::string::npos) << third.err;
  EXPECT_EQ(third.err.find(line, at + 1), std::string::npos) << third.err;
  EXPECT_EQ(without_run_figures(third.verdict), without_run_figures(first.verdict));

  // --case-cache-dir off: nothing read, nothing written.
  const CliCheck off = cli_check("off", dir_ / "off.json");
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(off.verdict["manifest"]["case_cache"]["disk_hits"], 0);
  EXPECT_EQ(off.verdict["manifest"]["case_cache"]["disk_stored"], 0);
  EXPECT_FALSE(fs::exists("off"));
}

} // namespace
