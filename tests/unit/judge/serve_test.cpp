// kjudge serve (kj::serve, kj::Judge) on the host backend, so it runs in CI: one answer line per
// request, in order, with the request's id; a candidate by path and one as source text judged as
// `check` judges them; every malformed request (not JSON, not an object, a field missing, of the
// wrong type, unknown, both candidate forms, a problem that does not load) answered with its
// kind and a message, and the stream goes on after it. A problem's cases are made once: the next
// candidate's check takes them from the case cache, with the same verdicts.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kjudge/serve.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;
using nlohmann::json;

ServeOptions host_serve_options() {
  ServeOptions o;
  o.defaults.backend = Backend::host;
  o.defaults.self_exe = KJ_KJUDGE_EXE;
  o.defaults.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  // The host check tests' cache: content-addressed, so sharing it only saves compiles.
  o.defaults.cache_dir = fs::temp_directory_path() / "kjudge_host_check_test_cache";
  o.defaults.fail_fast = true;
  return o;
}

std::vector<json> answers_to(const std::string& requests, ServeOptions options = host_serve_options()) {
  std::istringstream in(requests);
  std::ostringstream out;
  EXPECT_EQ(serve(in, out, std::move(options)), 0);
  std::vector<json> answers;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    answers.push_back(json::parse(line)); // every answer is one line of JSON
  return answers;
}

std::string problem(const std::string& name) {
  return (fs::path(KJ_SOURCE_DIR) / "problems" / name).string();
}

// Judges sharing a device: a bench waiting for its timing keeps checks that come after it out,
// so a steady stream of checks cannot hold the device from it. (The margins are generous: the
// test asserts the order of entry, not a time.)
TEST(DeviceTurn, AWaitingBenchGoesBeforeLaterChecks) {
  using namespace std::chrono_literals;
  kj::DeviceTurn turn;
  std::vector<std::string> order;
  std::mutex order_mutex;
  auto entered = [&](const char* who) {
    const std::lock_guard<std::mutex> lock(order_mutex);
    order.emplace_back(who);
  };
  auto first_check = turn.beside();
  std::thread bench([&] {
    auto alone = turn.alone();
    entered("bench");
  });
  std::this_thread::sleep_for(300ms); // the bench now waits for the first check
  std::thread later_check([&] {
    auto beside = turn.beside();
    entered("later check");
  });
  std::this_thread::sleep_for(300ms);
  first_check.unlock();
  bench.join();
  later_check.join();
  EXPECT_EQ(order, (std::vector<std::string>{"bench", "later check"}));
}

TEST(Serve, KeepsEachCaseForTheNextCandidateOfTheProblem) {
  ServeOptions o = host_serve_options();
  o.defaults.fail_fast = false;
  Judge judge(o);
  auto request = [&](const std::string& candidate, const std::string& op = "check") {
    return judge.handle({{"op", op}, {"problem", problem("vector_add")},
                         {"candidate", problem("vector_add") + "/" + candidate}});
  };
  const json first = request("solutions/basic.cu");
  ASSERT_TRUE(first.contains("verdict")) << first.dump();
  EXPECT_EQ(first["verdict"]["outcome"], "PASS");
  const std::size_t cases = first["verdict"]["cases"].size();
  ASSERT_GT(cases, 0u);
  CaseCacheStats s = judge.case_cache_stats();
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, cases);
  EXPECT_EQ(s.entries, cases);
  EXPECT_GT(s.bytes, 0u);

  // Another candidate of the problem: every case from the cache, the same cases judged.
  const json second = request("solutions/grid_stride.cu");
  EXPECT_EQ(second["verdict"]["outcome"], "PASS");
  s = judge.case_cache_stats();
  EXPECT_EQ(s.hits, cases);
  EXPECT_EQ(s.misses, cases);
  ASSERT_EQ(second["verdict"]["cases"].size(), cases);
  for (std::size_t k = 0; k < cases; ++k)
    EXPECT_EQ(second["verdict"]["cases"][k]["id"], first["verdict"]["cases"][k]["id"]);

  // A kept case judges a wrong candidate as before: the cache changes no verdict.
  const json trap = request("traps/off_by_one.cu");
  EXPECT_EQ(trap["verdict"]["outcome"], "FAIL");
  EXPECT_EQ(trap["verdict"]["reason"], "oob_write");
  EXPECT_GT(judge.case_cache_stats().hits, cases);

  // bench measures the reference afresh: it neither reads nor fills the cache.
  const CaseCacheStats before = judge.case_cache_stats();
  const json timed = request("solutions/basic.cu", "bench");
  EXPECT_EQ(timed["verdict"]["outcome"], "PASS") << timed.dump().substr(0, 400);
  // A bench answer names its timer and what its figures are, and has its latencies.
  const json& provenance = timed["verdict"]["provenance"];
  EXPECT_EQ(provenance["timer"], "host_cpu");
  EXPECT_EQ(provenance["figures"]["runtime"]["aggregation"], "sum over the timed cases");
  EXPECT_GT(timed["verdict"]["latency"]["candidate"]["n"].get<int>(), 0);
  EXPECT_TRUE(timed["verdict"]["latency"]["against"].is_null());
  EXPECT_EQ(judge.case_cache_stats().hits, before.hits);
  EXPECT_EQ(judge.case_cache_stats().misses, before.misses);
}

// A candidate the compile cache does not hold is compiled in a compile-only worker: the first
// request's is started on demand, with a spare behind it, which the next request takes.
TEST(Serve, StartsTheNextCompileWorkerAheadOfNeed) {
  Judge judge(host_serve_options());
  std::ifstream file(problem("vector_add") + "/solutions/basic.cu");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (int k = 0; k < 2; ++k) {
    // A comment no earlier run wrote: a source the cache cannot hold.
    const std::string fresh =
        text + fmt::format("// {} {} {}\n", ::getpid(), k,
                           std::chrono::steady_clock::now().time_since_epoch().count());
    const json answer = judge.handle({{"problem", problem("vector_add")}, {"source", fresh}});
    ASSERT_TRUE(answer.contains("verdict")) << answer.dump();
    EXPECT_EQ(answer["verdict"]["outcome"], "PASS") << answer.dump().substr(0, 400);
    EXPECT_EQ(judge.spare_worker_stats().started_on_demand, 1u);
    EXPECT_EQ(judge.spare_worker_stats().taken_ready, static_cast<std::uint64_t>(k));
  }
  ServeOptions none = host_serve_options();
  none.spare_workers = false;
  Judge without(none);
  (void)without.handle({{"problem", problem("vector_add")},
                        {"candidate", problem("vector_add") + "/solutions/basic.cu"}});
  EXPECT_EQ(without.spare_worker_stats().started_on_demand, 0u);
}

TEST(Serve, AnswersEachRequestOnItsLineInOrderWithItsId) {
  const std::string off_by_one =
      (fs::path(KJ_SOURCE_DIR) / "problems/vector_add/traps/off_by_one.cu").string();
  // The same kernel as text, as a generator would send it.
  std::ifstream basic_file(problem("vector_add") + "/solutions/basic.cu");
  const std::string source((std::istreambuf_iterator<char>(basic_file)),
                           std::istreambuf_iterator<char>());
  ASSERT_FALSE(source.empty());
  std::string requests;
  requests += json{{"id", 1}, {"problem", problem("vector_add")},
                   {"candidate", problem("vector_add") + "/solutions/basic.cu"}}.dump() + "\n";
  requests += "\n"; // blank lines are skipped
  requests += json{{"id", "trap"}, {"problem", problem("vector_add")}, {"candidate", off_by_one}}
                  .dump() + "\n";
  requests += json{{"id", 3}, {"problem", problem("vector_add")}, {"source", source},
                   {"name", "gen_7.cu"}}.dump() + "\n";
  const std::vector<json> a = answers_to(requests);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0]["id"], 1);
  EXPECT_EQ(a[0]["verdict"]["outcome"], "PASS") << a[0].dump();
  EXPECT_EQ(a[0]["verdict"]["manifest"]["backend"], "host");
  EXPECT_TRUE(a[0]["verdict"]["manifest"]["device"].is_null()); // no GPU judged it
  EXPECT_EQ(a[1]["id"], "trap");
  EXPECT_EQ(a[1]["verdict"]["reason"], "oob_write") << a[1].dump();
  EXPECT_EQ(a[2]["id"], 3);
  EXPECT_EQ(a[2]["verdict"]["outcome"], "PASS") << a[2].dump();
  EXPECT_EQ(a[2]["verdict"]["manifest"]["candidate"], "gen_7.cu");
  // Every answer says where its figures come from, as check --json does: the problem's dtypes,
  // no timer on a check, the case cache's counters.
  for (const json& answer : a) {
    const json& p = answer["verdict"]["provenance"];
    EXPECT_EQ(p["inputs"], json::parse(R"([{"name": "x", "dtype": "f32"},
                                           {"name": "y", "dtype": "f32"}])"));
    EXPECT_EQ(p["outputs"], json::parse(R"([{"name": "z", "dtype": "f32"}])"));
    EXPECT_TRUE(p["timer"].is_null());
    EXPECT_EQ(p["figures"], json::object());
    EXPECT_TRUE(p["sm_clock"]["source"].is_null()); // the host backend has no SM clock
    EXPECT_TRUE(answer["verdict"]["manifest"]["case_cache"].contains("disk_hits"));
  }
}

// The attack that took serve down: a candidate signalling the judge (SIGKILL to its parent,
// SIGSTOP to every process). Its worker's confinement refuses both; it gets its verdict and the
// request after it gets one too.
TEST(Serve, ACandidateThatSignalsTheJudgeGetsItsVerdictAndServeGoesOn) {
  std::string requests;
  requests += json{{"id", "attack"}, {"problem", problem("relu")},
                   {"candidate", problem("relu") + "/traps/kill_the_judge.cu"}}.dump() + "\n";
  requests += json{{"id", "next"}, {"problem", problem("relu")},
                   {"candidate", problem("relu") + "/solutions/basic.cu"}}.dump() + "\n";
  const std::vector<json> a = answers_to(requests);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0]["verdict"]["outcome"], "FAIL") << a[0].dump();
  EXPECT_EQ(a[0]["verdict"]["reason"], "mismatch") << a[0].dump();
  EXPECT_EQ(a[1]["verdict"]["outcome"], "PASS") << a[1].dump();
}

// Several judges (`--devices`): a request that takes a judge a while does not let the quick
// answers behind it jump the queue; every answer comes in the order of its request.
TEST(Serve, OnSeveralDevicesTheAnswersKeepTheRequestsOrder) {
  ServeOptions o = host_serve_options();
  o.devices = {0, 1, 2};
  o.defaults.fail_fast = false; // the first request judges every case
  const std::string dir = problem("vector_add");
  std::string requests;
  requests += json{{"id", 1}, {"problem", dir}, {"candidate", dir + "/solutions/basic.cu"}}.dump();
  requests += "\n{not json\n\n";
  requests += json{{"id", 3}, {"problem", dir}, {"candidate", dir + "/traps/off_by_one.cu"}}.dump();
  requests += "\n" + json{{"id", 4}, {"problem", dir}}.dump() + "\n";
  requests += json{{"id", 5}, {"problem", dir}, {"candidate", dir + "/solutions/grid_stride.cu"}}
                  .dump() + "\n";
  const std::vector<json> a = answers_to(requests, o);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0]["id"], 1);
  EXPECT_EQ(a[0]["verdict"]["outcome"], "PASS") << a[0].dump().substr(0, 400);
  EXPECT_EQ(a[1]["error"]["kind"], "bad_request");
  EXPECT_NE(a[1]["error"]["message"].get<std::string>().find("line 2"), std::string::npos);
  EXPECT_EQ(a[2]["id"], 3);
  EXPECT_EQ(a[2]["verdict"]["reason"], "oob_write") << a[2].dump().substr(0, 400);
  EXPECT_EQ(a[3]["id"], 4);
  EXPECT_EQ(a[3]["error"]["kind"], "bad_request");
  EXPECT_EQ(a[4]["id"], 5);
  EXPECT_EQ(a[4]["verdict"]["outcome"], "PASS") << a[4].dump().substr(0, 400);
}

// Two judges of one device share its case cache: two checks of one problem side by side make
// each case once between them (before, each judge made every case: three judges of a problem,
// three times the oracle's work).
TEST(Serve, TwoJudgesOfADeviceMakeEachCaseOnceBetweenThem) {
  ServeOptions o = host_serve_options();
  o.jobs = 2;
  o.defaults.fail_fast = false; // every case, in both checks
  const std::string dir = problem("vector_add");
  std::string requests;
  for (const char* c : {"/solutions/basic.cu", "/solutions/grid_stride.cu"})
    requests += json{{"problem", dir}, {"candidate", dir + c}}.dump() + "\n";
  const std::vector<json> a = answers_to(requests, o);
  ASSERT_EQ(a.size(), 2u);
  std::uint64_t made = 0, found = 0;
  for (const json& answer : a) {
    ASSERT_EQ(answer["verdict"]["outcome"], "PASS") << answer.dump().substr(0, 400);
    made += answer["verdict"]["manifest"]["case_cache"]["misses"].get<std::uint64_t>();
    found += answer["verdict"]["manifest"]["case_cache"]["hits"].get<std::uint64_t>();
  }
  const std::uint64_t cases = a[0]["verdict"]["cases"].size();
  EXPECT_EQ(a[1]["verdict"]["cases"].size(), cases);
  EXPECT_EQ(made, cases);
  EXPECT_EQ(found, cases);
}

TEST(Serve, WithSeveralJobsUnorderedAnswersComeAsTheyAreReadyEachWithItsId) {
  // Two judges on one device: request 1 (a whole check) is still running when request 2 (a
  // request without a candidate) is answered, so unordered, 2 comes first; a bench request
  // (which holds the device alone) is answered too, with its timings.
  ServeOptions o = host_serve_options();
  o.jobs = 2;
  o.unordered = true;
  o.defaults.fail_fast = false;
  const std::string dir = problem("vector_add");
  std::string requests;
  requests += json{{"id", 1}, {"problem", dir}, {"candidate", dir + "/solutions/basic.cu"}}.dump();
  requests += "\n" + json{{"id", 2}, {"problem", dir}}.dump() + "\n";
  requests += json{{"id", 3}, {"op", "bench"}, {"runs", 2}, {"problem", dir},
                   {"candidate", dir + "/solutions/grid_stride.cu"}}.dump() + "\n";
  const std::vector<json> a = answers_to(requests, o);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0]["id"], 2);
  EXPECT_EQ(a[0]["error"]["kind"], "bad_request");
  std::map<int, json> by_id;
  for (const json& answer : a)
    by_id[answer["id"].get<int>()] = answer;
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id[1]["verdict"]["outcome"], "PASS") << by_id[1].dump().substr(0, 400);
  EXPECT_EQ(by_id[3]["verdict"]["outcome"], "PASS") << by_id[3].dump().substr(0, 400);
  EXPECT_TRUE(by_id[3]["verdict"]["runtime"].is_number()) << by_id[3].dump().substr(0, 400);
  // What judging cost is in every verdict: the check's wall time covers the candidate's runs.
  const json& t = by_id[1]["verdict"]["judge_time"];
  EXPECT_GT(t["candidate_ms"].get<double>(), 0);
  EXPECT_GT(t["wall_ms"].get<double>(), t["candidate_ms"].get<double>());
  // A passing output's percentiles only when asked for.
  EXPECT_TRUE(by_id[1]["verdict"]["cases"][0]["outputs"][0]["stats"].is_null());
}

TEST(Serve, AStatsRequestGetsThePercentilesOfPassingOutputs) {
  const std::string dir = problem("vector_add");
  const std::vector<json> a = answers_to(
      json{{"id", 1}, {"problem", dir}, {"candidate", dir + "/solutions/basic.cu"},
           {"stats", true}}.dump() + "\n" +
      json{{"id", 2}, {"problem", dir}, {"candidate", dir + "/solutions/basic.cu"},
           {"stats", 1}}.dump() + "\n");
  ASSERT_EQ(a.size(), 2u);
  const json& stats = a[0]["verdict"]["cases"][0]["outputs"][0]["stats"];
  ASSERT_TRUE(stats.is_object()) << a[0].dump().substr(0, 400);
  EXPECT_EQ(stats["abs"]["max"], 0); // vector_add's basic solution is exact
  EXPECT_EQ(a[1]["error"]["kind"], "bad_request");
  EXPECT_EQ(a[1]["error"]["message"], "field 'stats' must be true or false");
}

TEST(Serve, ABenchRequestCarriesTheOldKernelAndTheSlo) {
  // `against` and `slo_p99` as `kjudge bench --against OLD.cu --slo-p99 MS`: a retuning that is
  // bit-identical passes within a generous SLO and fails as a timeout under a nanosecond's.
  const std::string dir = problem("gelu");
  const std::string candidate = (fs::path(KJ_CASES_DIR) / "bench" / "gelu_block128.cu").string();
  auto bench = [&](int id, double slo) {
    return json{{"id", id}, {"op", "bench"}, {"runs", 2}, {"race_detection", false},
                {"problem", dir}, {"candidate", candidate},
                {"against", dir + "/solutions/basic.cu"}, {"slo_p99", slo}}.dump() + "\n";
  };
  std::string requests = bench(1, 1e6) + bench(2, 1e-6);
  requests += json{{"id", 3}, {"problem", dir}, {"candidate", candidate}, {"slo_p99", 1}}.dump() +
              "\n";
  requests += json{{"id", 4}, {"op", "bench"}, {"problem", dir}, {"candidate", candidate},
                   {"slo_p99", -1}}.dump() + "\n";
  requests += json{{"id", 5}, {"problem", dir}, {"candidate", candidate},
                   {"against", dir + "/solutions/missing.cu"}}.dump() + "\n";
  const std::vector<json> a = answers_to(requests);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0]["verdict"]["outcome"], "PASS") << a[0].dump().substr(0, 400);
  EXPECT_TRUE(a[0]["verdict"]["latency"]["against"].is_object()) << a[0].dump().substr(0, 400);
  EXPECT_EQ(a[0]["verdict"]["latency"]["slo_met"], true);
  EXPECT_EQ(a[1]["verdict"]["reason"], "timeout") << a[1].dump().substr(0, 400);
  EXPECT_EQ(a[1]["verdict"]["latency"]["slo_met"], false);
  EXPECT_EQ(a[2]["error"]["message"], "field 'slo_p99' is for \"op\": \"bench\"");
  EXPECT_EQ(a[3]["error"]["message"], "field 'slo_p99' must be a positive number of milliseconds");
  EXPECT_EQ(a[4]["error"]["kind"], "bad_request");
  EXPECT_NE(a[4]["error"]["message"].get<std::string>().find("missing.cu': no such file"),
            std::string::npos);
}

TEST(Serve, EveryMalformedRequestIsAnsweredWithItsKindAndTheStreamGoesOn) {
  const std::string basic = problem("vector_add") + "/solutions/basic.cu";
  const std::vector<std::string> requests = {
      "{not json",
      "[1, 2]",
      json{{"id", 2}, {"candidate", basic}}.dump(),
      json{{"id", 3}, {"problem", problem("vector_add")}}.dump(),
      json{{"id", 4}, {"problem", problem("vector_add")}, {"candidate", basic}, {"source", "x"}}
          .dump(),
      json{{"id", 5}, {"problem", problem("vector_add")}, {"candidate", basic}, {"fail_fats", true}}
          .dump(),
      json{{"id", 6}, {"problem", problem("vector_add")}, {"candidate", basic}, {"runs", "ten"}}
          .dump(),
      json{{"id", 7}, {"problem", problem("vector_add")}, {"candidate", basic}, {"op", "mutate"}}
          .dump(),
      json{{"id", 8}, {"problem", problem("no_such_problem")}, {"candidate", basic}}.dump(),
      json{{"id", 9}, {"problem", problem("vector_add")}, {"candidate", "/nonexistent.cu"}}.dump(),
      json{{"id", 10}, {"problem", problem("vector_add")}, {"source", "/* kjudge\n[[launch]]\n*/\n"}}
          .dump(),
      json{{"id", 11}, {"problem", problem("vector_add")}, {"candidate", basic}, {"min_time", -1}}
          .dump(),
      json{{"id", 12}, {"problem", problem("vector_add")}, {"candidate", basic}, {"rotation", 9}}
          .dump(),
  };
  std::string text;
  for (const auto& r : requests) text += r + "\n";
  const std::vector<json> a = answers_to(text);
  ASSERT_EQ(a.size(), requests.size());
  auto kind = [&](std::size_t k) { return a[k]["error"]["kind"].get<std::string>(); };
  auto message = [&](std::size_t k) { return a[k]["error"]["message"].get<std::string>(); };
  EXPECT_EQ(kind(0), "bad_request");
  EXPECT_NE(message(0).find("line 1: not JSON"), std::string::npos) << message(0);
  EXPECT_TRUE(a[0]["id"].is_null());
  EXPECT_EQ(kind(1), "bad_request");
  EXPECT_EQ(kind(2), "bad_request");
  EXPECT_NE(message(2).find("'problem' is missing"), std::string::npos) << message(2);
  EXPECT_EQ(a[2]["id"], 2);
  EXPECT_EQ(kind(3), "bad_request");
  EXPECT_EQ(kind(4), "bad_request");
  EXPECT_EQ(kind(5), "bad_request");
  EXPECT_NE(message(5).find("unknown field 'fail_fats'"), std::string::npos) << message(5);
  EXPECT_EQ(kind(6), "bad_request");
  EXPECT_NE(message(6).find("'runs' must be a number"), std::string::npos) << message(6);
  EXPECT_EQ(kind(7), "bad_request");
  EXPECT_EQ(kind(8), "spec_error");
  EXPECT_NE(message(8).find("no_such_problem"), std::string::npos) << message(8);
  EXPECT_EQ(kind(9), "bad_request");
  EXPECT_NE(message(9).find("no such file"), std::string::npos) << message(9);
  // A launch plan that does not parse is the candidate's failure, as in check.
  EXPECT_EQ(a[10]["verdict"]["reason"], "launch_error") << a[10].dump();
  // The GPU bench's options are checked before anything runs.
  EXPECT_EQ(kind(11), "bad_request");
  EXPECT_NE(message(11).find("'min_time' must be 0 to 3600 seconds"), std::string::npos)
      << message(11);
  EXPECT_EQ(kind(12), "bad_request");
  EXPECT_NE(message(12).find("'rotation' must be 1 to 8"), std::string::npos) << message(12);
}

// A problem whose policy is looser than its card.toml records is refused as `check` refuses it,
// read on each request (a card written while serving counts from the next), unless the server
// was started with allow_loosen.
TEST(Serve, AProblemLooserThanItsCardIsASpecErrorUnlessLooseningIsAllowed) {
  const fs::path dir = fs::temp_directory_path() / "kjudge-serve-card" / "softmax";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir.parent_path());
  fs::copy(problem("softmax"), dir, fs::copy_options::recursive);
  const std::string request =
      json{{"id", 1}, {"problem", dir.string()}, {"candidate", (dir / "solutions/warp_shuffle.cu").string()}}
          .dump() + "\n";
  const json first = answers_to(request).at(0);
  EXPECT_EQ(first["verdict"]["outcome"], "PASS");
  EXPECT_TRUE(first["verdict"]["loosened_card"].is_null()) << first.dump();
  // softmax judges by relative (k = 16 for f32): a card recording relative(4) is tighter.
  std::ofstream(dir / "card.toml") << "[[output]]\nname = \"y\"\npolicy = \"relative(4)\"\n";
  const json refused = answers_to(request).at(0);
  EXPECT_EQ(refused["error"]["kind"], "spec_error") << refused.dump();
  const std::string message = refused["error"]["message"];
  EXPECT_NE(message.find((dir / "card.toml").string()), std::string::npos) << message;
  EXPECT_NE(message.find("output 'y': the policy 'relative' is looser than 'relative(4)'"), std::string::npos)
      << message;
  ServeOptions loosened = host_serve_options();
  loosened.allow_loosen = true;
  const json allowed = answers_to(request, loosened).at(0);
  EXPECT_EQ(allowed["verdict"]["outcome"], "PASS");
  // ... and says so: a score made past its card must not pass for one the card allows.
  const std::string why = allowed["verdict"]["loosened_card"];
  EXPECT_NE(why.find("output 'y': the policy 'relative' is looser than 'relative(4)'"),
            std::string::npos) << why;
  fs::remove_all(dir.parent_path());
}

} // namespace

// A KernelBench-format request (a folder with problem.py) goes to the Python adapter, started
// from KJUDGE_PYTHON at the first one (here a stand-in speaking serve's protocol, which signs its
// answers with its arguments and dies on a source that says so): the answer carries the
// request's own id; the adapter dying on a request is that request's FAIL(runtime_error), never
// an ERROR, and the next request starts another; a native request beside them is judged as ever.
TEST(Serve, AKernelBenchRequestGoesToThePythonAdapter) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("kjudge-adapter-{}", ::getpid());
  fs::create_directories(dir / "kb");
  std::ofstream(dir / "kb" / "problem.py") << "# a KernelBench-format problem\n";
  const fs::path fake = dir / "python";
  std::ofstream(fake) << "#!/usr/bin/env python3\n"
                         "import json, sys\n"
                         "print(json.dumps({'ready': True}), flush=True)\n"
                         "for line in sys.stdin:\n"
                         "    r = json.loads(line)\n"
                         "    if r.get('source') == 'dies':\n"
                         "        sys.exit(3)\n"
                         "    print('a line that is not an answer', flush=True)\n"
                         "    print(json.dumps({'id': r['id'], 'verdict': {'outcome': 'PASS',\n"
                         "          'reason': 'none', 'message': ' '.join(sys.argv[1:])}}),\n"
                         "          flush=True)\n";
  fs::permissions(fake, fs::perms::owner_all);
  ::setenv("KJUDGE_PYTHON", fake.c_str(), 1);
  Judge judge(host_serve_options());
  const std::string kb = (dir / "kb").string();
  const json first = judge.handle({{"id", "a"}, {"problem", kb}, {"source", "x"}});
  const json dies = judge.handle({{"id", 7}, {"problem", kb}, {"source", "dies"}});
  const json after = judge.handle({{"id", "c"}, {"problem", kb}, {"source", "y"}});
  const json native = judge.handle({{"id", "n"}, {"problem", problem("vector_add")},
                                    {"candidate", problem("vector_add") + "/solutions/basic.cu"}});
  ::unsetenv("KJUDGE_PYTHON");
  EXPECT_EQ(first["id"], "a");
  EXPECT_EQ(first["verdict"]["outcome"], "PASS") << first.dump();
  EXPECT_EQ(first["verdict"]["message"],
            "-m kjudge.kernelbench.serve --device cpu --build-cache " +
                host_serve_options().defaults.cache_dir.string());
  EXPECT_EQ(dies["id"], 7);
  EXPECT_EQ(dies["verdict"]["outcome"], "FAIL") << dies.dump();
  EXPECT_EQ(dies["verdict"]["reason"], "runtime_error");
  EXPECT_EQ(after["id"], "c");
  EXPECT_EQ(after["verdict"]["outcome"], "PASS") << after.dump();
  EXPECT_EQ(native["verdict"]["outcome"], "PASS") << native.dump().substr(0, 300);
  fs::remove_all(dir);
}
