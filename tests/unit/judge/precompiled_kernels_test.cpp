// The build's kjudge-kernels/ folder (cli/CMakeLists.txt, precompile_kernels) holds kjudge's own
// modules under the very keys the oracle looks up, so a first check loads them instead of
// compiling: a change to the key's parts on either side shows here as a miss.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/builtin_kernels.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/judge.hpp"

namespace {

std::vector<int> built_archs() {
  std::vector<int> archs;
  std::istringstream in(KJ_PRECOMPILED_ARCHS);
  for (std::string a; std::getline(in, a, ';');)
    if (!a.empty()) archs.push_back(std::stoi(a));
  return archs;
}

kj::CompileOptions oracle_options(int arch) {
  kj::CompileOptions o;
  o.arch = arch;
  o.kjudge_include = kj::find_kjudge_include(KJ_KJUDGE_EXE);
  o.precompiled_dir = kj::precompiled_kernels_dir(KJ_KJUDGE_EXE); // and no cache of its own
  return o;
}

TEST(PrecompiledKernels, TheBuildLeftEveryModuleUnderTheOraclesKey) {
  const std::vector<int> archs = built_archs();
  if (archs.empty()) GTEST_SKIP() << "built with KJUDGE_PRECOMPILED_ARCHS empty";
  for (const int arch : archs) {
    EXPECT_TRUE(kj::compile_builtin_kernels(oracle_options(arch)).from_cache) << arch;
    EXPECT_TRUE(kj::compile_compare_kernels(oracle_options(arch)).from_cache) << arch;
  }
}

TEST(PrecompiledKernels, AnotherArchitectureIsNotThere) {
  const std::vector<int> archs = built_archs();
  int other = 75; // not a default of any build (and NVRTC 13 still targets it)
  ASSERT_EQ(std::count(archs.begin(), archs.end(), other), 0);
  // Only the builtins (half a second): the miss compiles them.
  EXPECT_FALSE(kj::compile_builtin_kernels(oracle_options(other)).from_cache);
}

TEST(PrecompiledKernels, TheFolderLiesBesideTheExecutable) {
  EXPECT_EQ(kj::precompiled_kernels_dir("/opt/kjudge/bin/kjudge"),
            std::filesystem::path("/opt/kjudge/bin/kjudge-kernels"));
  EXPECT_EQ(kj::precompiled_kernels_dir(""), std::filesystem::path());
}

} // namespace
