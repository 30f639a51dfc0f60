// The cooperative-groups kernels the host backend runs (tests/cases/host/cooperative_groups.cu,
// pinned in tests/unit/host/host_cooperative_groups_test.cpp) compile for the GPU with NVRTC
// against the toolkit's own headers (no GPU needed): the host's stand-ins are the same API.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/nvrtc.hpp"

namespace {

namespace fs = std::filesystem;

TEST(CompileModule, TheHostsCooperativeGroupsKernelsCompileForTheGpu) {
  std::ifstream f(fs::path(KJ_CASES_DIR) / "host" / "cooperative_groups.cu", std::ios::binary);
  const std::string source{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(source.empty());
  kj::CompileOptions o;
  o.arch = 90;
  o.kjudge_include = KJ_SOURCE_DIR "/include";
  const std::vector<std::string> kernels = {"warp_reduce",  "tile8_sum",     "tiles_apart",
                                            "block_rotate", "tile16_votes",  "compact_positive",
                                            "tile_scans",   "dynamic_groups"};
  const auto m = kj::compile_module(source, "cooperative_groups.cu", kernels, o);
  ASSERT_EQ(m.kernels.size(), kernels.size());
  EXPECT_EQ(m.kernels[0].demangled, "warp_reduce(int const*, int*, float const*, float*)");
  EXPECT_EQ(m.kernels[5].param_types,
            (std::vector<std::string>{"int const*", "int*", "int*", "int*", "int"}));
  // Tile barriers are warp barriers with the tile's mask; the block's, barrier.sync.
  EXPECT_NE(m.ptx.find("bar.warp.sync"), std::string::npos);
  EXPECT_NE(m.ptx.find("barrier.sync"), std::string::npos);
  EXPECT_FALSE(m.cubin.empty());
}

} // namespace
