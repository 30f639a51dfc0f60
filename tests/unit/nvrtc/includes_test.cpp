// The include allow-list: what passes, what is refused with its line, and the ways around the
// check that the preprocessor accepts (digraphs, comments and continuations inside a directive,
// computed includes, #include_next, `..` in a path).
#include <string>

#include <gtest/gtest.h>

#include "kjudge/nvrtc.hpp"

namespace {

// The CompileError message of check_includes, or "" when it passes.
std::string include_error(const std::string& source) {
  try {
    kj::check_includes(source, "cand.cu");
  } catch (const kj::CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(IncludeAllowed, TheList) {
  for (const char* h :
       {"kjudge/device.cuh", "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cooperative_groups.h",
        "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h", "mma.h",
        "cuda/pipeline", "cuda/barrier", "cuda/ptx", "cuda/std/cstdint", "cub/cub.cuh",
        "cub/block/block_reduce.cuh", "cuda_runtime.h", "cuda.h", "assert.h", "cassert"})
    EXPECT_TRUE(kj::include_allowed(h)) << h;
  for (const char* h :
       {"stdio.h", "cstdio", "cassert.h", "assert", "my.h", "thrust/sort.h", "cuda_runtime_api.h", "kjudge/rounding.hpp",
        "cub/../stdio.h", "cub/./x", "/usr/include/stdio.h", "cub/", "cub", "cooperative_groups/",
        "cuda/std/", "cuda_fp16.hpp", "", "cub//x.cuh", "cub\\x.cuh"})
    EXPECT_FALSE(kj::include_allowed(h)) << h;
}

TEST(CheckIncludes, AllowedPass) {
  EXPECT_EQ(include_error("#include <cuda_fp16.h>\n#include \"kjudge/device.cuh\"\n"
                          "#  include   <cub/block/block_reduce.cuh>\n__global__ void k() {}\n"),
            "");
}

TEST(CheckIncludes, SystemHeaderIsRefusedWithItsLine) {
  const std::string e = include_error("// a comment\n\n#include <stdio.h>\n");
  EXPECT_EQ(e.rfind("cand.cu:3: #include <stdio.h> is not allowed (kjudge compiles with the "
                    "pinned toolkit headers only; allowed: kjudge/device.cuh, cuda_fp16.h",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("cub/..."), std::string::npos) << e;
}

TEST(CheckIncludes, LocalHeaderIsRefused) {
  const std::string e = include_error("#include \"my.h\"\n");
  EXPECT_EQ(e.rfind("cand.cu:1: #include \"my.h\" is not allowed", 0), 0u) << e;
  EXPECT_NE(e.find("a candidate is one file"), std::string::npos) << e;
}

TEST(CheckIncludes, ThrustIsRefused) {
  EXPECT_NE(include_error("#include <cuda_fp16.h>\n#include <thrust/sort.h>\n")
                .rfind("cand.cu:2: #include <thrust/sort.h>", 0),
            std::string::npos);
}

TEST(CheckIncludes, TricksStillCount) {
  EXPECT_NE(include_error("%:include <stdio.h>\n"), "");
  EXPECT_NE(include_error("#/**/include/**/<stdio.h>\n"), "");
  EXPECT_NE(include_error("/* lead */ #include <stdio.h>\n"), "");
  EXPECT_NE(include_error("#inc\\\nlude <stdio.h>\n"), "");
  EXPECT_NE(include_error("#include \\\n<stdio.h>\n"), "");
  EXPECT_NE(include_error("#include_next <cuda_fp16.h>\n"), "");
  EXPECT_NE(include_error("#import <cuda_fp16.h>\n"), "");
  EXPECT_NE(include_error("#include <cub/../../stdio.h>\n"), "");
  const std::string computed = include_error("#define H <stdio.h>\n#include H\n");
  EXPECT_EQ(computed.rfind("cand.cu:2: a computed #include", 0), 0u) << computed;
}

TEST(CheckIncludes, TextThatIsNotADirectivePasses) {
  EXPECT_EQ(include_error("// #include <stdio.h>\n/* #include <stdio.h> */\n"
                          "const char* s = \"#include <stdio.h>\";\n"
                          "#if __has_include(<stdio.h>)\n#endif\n#pragma once\n"),
            "");
}

} // namespace
