// The layout's rules (docs/design.md "Layout"), read from the source tree: nothing on the judge's
// side includes the worker processes' headers, the worker side includes nothing of the judge's,
// and no library file grows past 700 lines (device kernels and the emulation header excepted).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

struct SourceFile {
  fs::path path; // relative to the source tree
  std::vector<std::string> lines;
};

std::vector<SourceFile> sources_under(const std::vector<std::string>& folders) {
  std::vector<SourceFile> out;
  const fs::path root(KJ_SOURCE_DIR);
  for (const std::string& folder : folders)
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cuh")) continue;
      SourceFile f{fs::relative(entry.path(), root), {}};
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);)
        f.lines.push_back(line);
      out.push_back(std::move(f));
    }
  return out;
}

bool under(const fs::path& path, const std::string& folder) {
  return path.string().rfind(folder, 0) == 0;
}

// The files of `files` with a line including a header whose path starts with `prefix`, as
// "file: line".
std::vector<std::string> including(const std::vector<SourceFile>& files,
                                   const std::string& prefix) {
  std::vector<std::string> out;
  for (const SourceFile& f : files)
    for (const std::string& line : f.lines)
      if (line.rfind("#include \"" + prefix, 0) == 0) out.push_back(f.path.string() + ": " + line);
  return out;
}

TEST(Layout, NothingTrustedIncludesTheWorkerSide) {
  std::vector<SourceFile> trusted;
  for (SourceFile& f : sources_under({"src", "include", "cli"}))
    if (!under(f.path, "src/worker/main/")) trusted.push_back(std::move(f));
  ASSERT_GT(trusted.size(), 100u);
  EXPECT_EQ(including(trusted, "worker/main/"), std::vector<std::string>{});
}

TEST(Layout, TheWorkerSideIncludesNothingOfTheJudge) {
  const std::vector<SourceFile> worker = sources_under({"src/worker/main"});
  ASSERT_GE(worker.size(), 4u);
  EXPECT_EQ(including(worker, "judge/"), std::vector<std::string>{});
}

TEST(Layout, NoLibraryFileOver700Lines) {
  std::vector<std::string> long_files;
  for (const SourceFile& f : sources_under({"src", "include", "cli"})) {
    const bool exempt = f.path.extension() == ".cuh" || f.path.filename() == "cuda_emulation.hpp";
    if (!exempt && f.lines.size() > 700)
      long_files.push_back(f.path.string() + ": " + std::to_string(f.lines.size()) + " lines");
  }
  EXPECT_EQ(long_files, std::vector<std::string>{});
}

} // namespace
