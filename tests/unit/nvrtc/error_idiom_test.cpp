// The error idiom (kjudge/error.hpp): every error kjudge throws is a kj::Error whose kind says
// whose fault it is, and the no-throw CUDA check of destructors reports a cleanup failure once,
// and never one that only follows a sticky error. No GPU needed: the codes are given.
#include <string>

#include <gtest/gtest.h>

#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"

namespace {

using namespace kj;

TEST(ErrorIdiom, EachErrorTypeSaysWhoseFaultItIs) {
  EXPECT_EQ(SpecError({"p.toml", "dims", 3, 0}, "bad").kind(), ErrorKind::spec);
  EXPECT_EQ(SizeOverflow("too big").kind(), ErrorKind::spec);
  EXPECT_EQ(InternalError("broken").kind(), ErrorKind::internal);
  EXPECT_EQ(CompileError("no", "log").kind(), ErrorKind::candidate);
  EXPECT_EQ(HostCompileLimit("cap").kind(), ErrorKind::candidate);
  EXPECT_EQ(HostLoadTimeCode("ctor").kind(), ErrorKind::candidate);
  EXPECT_EQ(CudaError(CUDA_ERROR_ILLEGAL_ADDRESS, "x").kind(), ErrorKind::cuda);
  EXPECT_EQ(UnsupportedOnHost("asm").kind(), ErrorKind::unsupported);
  EXPECT_STREQ(SpecError({"p.toml", "dims", 3, 0}, "bad").what(), "p.toml:3: dims: bad");
}

TEST(ErrorIdiom, ACleanupFailureIsReportedOnceAndNeverAfterAStickyError) {
  testing::internal::CaptureStderr();
  report_cuda_cleanup_failure(CUDA_ERROR_ILLEGAL_ADDRESS, "cuMemFree(p)", "a.cpp", 1);
  report_cuda_cleanup_failure(CUDA_ERROR_DEINITIALIZED, "cuMemFree(p)", "a.cpp", 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  report_cuda_cleanup_failure(CUDA_ERROR_INVALID_VALUE, "cuMemFree(p)", "a.cpp", 3);
  report_cuda_cleanup_failure(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy(e)", "b.cpp", 4);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "kjudge: cleanup: cuMemFree(p) failed: CUDA_ERROR_INVALID_VALUE (a.cpp:3)\n");
}

} // namespace
