// Tests of the JSON Lines log: the manifest line, a flush per record (another reader sees it
// while the writer is still open), resuming a matching log, refusing a changed manifest, and
// surviving a crash that cut the last line short.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kjudge/report.hpp"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class Jsonl : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kjudge_jsonl_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = dir_ / "run.jsonl";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static json manifest(const std::string& hash = "1a2b3c4d") {
    return {{"problem", "softmax"}, {"problem_hash", hash}, {"candidate_hash", "feed"}};
  }
  std::vector<std::string> lines() const {
    std::ifstream in(path_);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);)
      out.push_back(l);
    return out;
  }
  std::string contents() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void write(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary);
    out << text;
  }

  fs::path dir_, path_;
};

TEST_F(Jsonl, FirstLineIsTheManifestAndEachAppendIsFlushed) {
  kj::JsonlWriter w(path_, manifest());
  EXPECT_TRUE(w.resumed().empty());
  auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  const json head = json::parse(l[0]);
  EXPECT_EQ(head["manifest"], manifest());
  EXPECT_EQ(head["schema_version"], kj::kJsonSchemaVersion);

  w.append({{"case", "a"}, {"pass", true}});
  l = lines();  // read while the writer is open: the record must already be on disk
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(json::parse(l[1])["case"], "a");
  w.append({{"case", "b"}, {"ratio", kj::json_number(std::nan(""))}});
  l = lines();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(json::parse(l[2])["ratio"], "nan");
}

TEST_F(Jsonl, ResumesAMatchingLog) {
  {
    kj::JsonlWriter w(path_, manifest());
    w.append({{"case", "a"}});
    w.append({{"case", "b"}});
  }
  kj::JsonlWriter w(path_, manifest());
  ASSERT_EQ(w.resumed().size(), 2u);
  EXPECT_EQ(w.resumed()[0]["case"], "a");
  EXPECT_EQ(w.resumed()[1]["case"], "b");
  w.append({{"case", "c"}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 4u);  // one manifest line, never a second
  EXPECT_EQ(json::parse(l[3])["case"], "c");
}

TEST_F(Jsonl, RefusesADifferentManifest) {
  { kj::JsonlWriter w(path_, manifest("1a2b3c4d")); }
  try {
    kj::JsonlWriter w(path_, manifest("99999999"));
    FAIL() << "resumed a log of another problem";
  } catch (const kj::SpecError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("refusing to resume " + path_.string() +
                        ": manifest differs (problem "
                        "hash 1a2b3c4d in the log, 99999999 now)"),
              std::string::npos)
        << what;
  }
  json other = manifest();
  other["candidate_hash"] = "beef";
  try {
    kj::JsonlWriter w(path_, other);
    FAIL() << "resumed a log of another candidate";
  } catch (const kj::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("candidate hash feed in the log, beef now"),
              std::string::npos)
        << e.what();
  }
  // The refused log is left as it was.
  EXPECT_EQ(lines().size(), 1u);
}

TEST_F(Jsonl, DropsATruncatedLastLine) {
  {
    kj::JsonlWriter w(path_, manifest());
    w.append({{"case", "a"}});
  }
  {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << "{\"case\": \"b\", \"outp";  // a crash in the middle of a write
  }
  kj::JsonlWriter w(path_, manifest());
  ASSERT_EQ(w.resumed().size(), 1u);
  EXPECT_EQ(w.resumed()[0]["case"], "a");
  w.append({{"case", "b"}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 3u);
  for (const auto& line : l)
    EXPECT_TRUE(json::accept(line)) << line;
}

TEST_F(Jsonl, ADamagedMiddleLineIsAnError) {
  const std::string head =
      json{{"manifest", manifest()}, {"schema_version", kj::kJsonSchemaVersion}}.dump();
  write(head + "\n{\"case\": \"a\"}\n{garbage\n{\"case\": \"c\"}\n");
  EXPECT_THROW(kj::JsonlWriter(path_, manifest()), kj::SpecError);
}

TEST_F(Jsonl, APartialHeaderStartsOver) {
  const std::string head =
      json{{"manifest", manifest()}, {"schema_version", kj::kJsonSchemaVersion}}.dump();
  write(head.substr(0, 10));
  kj::JsonlWriter w(path_, manifest());
  EXPECT_TRUE(w.resumed().empty());
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_EQ(json::parse(lines()[0])["manifest"], manifest());
}

TEST_F(Jsonl, NeverOverwritesAForeignFile) {
  write("name,value\n1,2\n");
  EXPECT_THROW(kj::JsonlWriter(path_, manifest()), kj::SpecError);
  EXPECT_EQ(contents(), "name,value\n1,2\n");
  write("not json at all");
  EXPECT_THROW(kj::JsonlWriter(path_, manifest()), kj::SpecError);
  EXPECT_EQ(contents(), "not json at all");
}

TEST_F(Jsonl, AnUnwritableFolderIsASpecError) {
  EXPECT_THROW(kj::JsonlWriter(dir_ / "no" / "such" / "dir" / "run.jsonl", manifest()),
               kj::SpecError);
}

}  // namespace
