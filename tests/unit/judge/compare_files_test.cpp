// kj::compare_files, the library call behind `kjudge compare`: a one-case verdict with backend
// "files" from .npy files, and bad requests as SpecErrors that name the file or the option; and
// compare_tensors reading an f32 expected where it is.
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "kjudge/inputs.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/report.hpp"
#include "kjudge/tensor.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;

std::string write(const std::string& name, DType dtype, double bump) {
  HostTensor t(dtype, {2, 3});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, 0.25 * static_cast<double>(i + 1));
  t.set(4, t.get(4) + bump);
  const fs::path path = fs::temp_directory_path() / ("kjudge_compare_files_" + name + ".npy");
  write_npy(path, t);
  return path.string();
}

std::string error_of(const CompareFiles& request) {
  try {
    compare_files(request);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CompareFiles, AOneCaseVerdictOfTheFiles) {
  CompareFiles request;
  request.actual = write("y", DType::f32, 0);
  request.expected = write("golden", DType::f64, 0);
  request.policy = "ulp(0)";
  Verdict v = compare_files(request);
  EXPECT_EQ(v.outcome, Outcome::pass);
  EXPECT_EQ(v.manifest.backend, "files");
  ASSERT_EQ(v.cases.size(), 1u);
  EXPECT_EQ(v.cases[0].case_id, "kjudge_compare_files_y.npy vs kjudge_compare_files_golden.npy");
  EXPECT_EQ(v.replay_command, "kjudge compare " + request.actual + " " + request.expected +
                                  " --policy 'ulp(0)'");

  request.actual = write("bumped", DType::f32, 0.5);
  v = compare_files(request);
  EXPECT_EQ(v.reason, Reason::mismatch);
  EXPECT_EQ(v.exit_code(), ExitCode::fail);
}

TEST(CompareFiles, BadRequestsNameTheFileOrTheOption) {
  CompareFiles request;
  request.actual = write("y", DType::f32, 0);
  request.expected = "/nonexistent/golden.npy";
  request.policy = "ulp(0)";
  EXPECT_EQ(error_of(request), "/nonexistent/golden.npy: no such file");
  request.expected = write("golden", DType::f64, 0);
  request.nan = "sometimes";
  EXPECT_EQ(error_of(request), "--nan: \"sometimes\" is not a NaN rule (propagate, ignore, exempt)");
  request.nan = "exempt";
  request.slice = 2;
  EXPECT_EQ(error_of(request), "--slice: axis 2 of a tensor of rank 2");
  request.slice = -1;
  request.policy = "allclose";
  EXPECT_EQ(error_of(request),
            "--policy: allclose compares against the reference by default: pass --reference REF, "
            "or --expected golden to compare against " + request.expected);
}

}  // namespace

TEST(CompareTensors, AnF32ExpectedReadInPlaceHasItsWidenedCopysVerdict) {
  // compare_tensors widens an expected into an f64 golden unless it is f64 or f32, which it
  // reads where it is: the verdict must be the widened copy's, JSON for JSON, passing or not,
  // for float and integer outputs (NaN, Inf and a value past the bound planted).
  HostTensor expected(DType::f32, {4, 100});
  HostTensor actual(DType::f32, {4, 100});
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    expected.set(i, 1.0 / static_cast<double>(i + 3) - 0.1);
    actual.set(i, expected.get(i) * (1.0 + 0x1p-22));
  }
  const HostTensor reference = actual;
  HostTensor planted = actual;
  planted.set(7, std::numeric_limits<double>::quiet_NaN());
  planted.set(100, std::numeric_limits<double>::infinity());
  planted.set(250, planted.get(250) + 1.0);
  const HostTensor widened = expected.converted(DType::f64);
  for (const char* policy : {"allclose", "ulp(4)", "exact", "relative", "rel_l2(1e-5)"}) {
    for (const HostTensor* a : {&actual, &planted}) {
      CompareSettings settings;
      settings.policy = policy;
      const bool integer = a == &planted && std::string(policy) == "exact";
      if (integer) settings.dtype = "i32";
      const auto verdict_of = [&](const HostTensor& x) {
        return to_json(compare_tensors(*a, x, reference, settings)).dump();
      };
      SCOPED_TRACE(std::string(policy) + (a == &planted ? ", planted" : ""));
      EXPECT_EQ(verdict_of(expected), verdict_of(widened));
    }
  }
  CompareSettings settings;
  settings.policy = "ulp(4)";
  EXPECT_EQ(compare_tensors(actual, expected, reference, settings).outcome, Outcome::pass);
  EXPECT_EQ(compare_tensors(planted, expected, reference, settings).outcome, Outcome::fail);
}

TEST(HostPass, AnyNumberOfThreadsGivesTheFindingOfOne) {
  // compare_tensors judges the chunks of an elementwise policy's pass on every core: each chunk
  // as one thread alone would, the histograms summed after. The finding must be one thread's,
  // JSON for JSON: sliced relative (outer 1 and outer > 1, the first failures found again in
  // flat order), and allclose over a ragged count of chunks, all with statistics, all planted.
  struct Output {
    Shape shape;
    PolicySpec::Kind kind;
    int slice;
  };
  const Output outputs[] = {{{5, 40000}, PolicySpec::Kind::relative, 0},
                            {{40, 3, 5000}, PolicySpec::Kind::relative, 1},
                            {{10 * 16384 + 77}, PolicySpec::Kind::allclose, -1}};
  for (const Output& o : outputs) {
    HostTensor golden(DType::f64, o.shape), reference(DType::f32, o.shape),
        actual(DType::f32, o.shape);
    for (std::int64_t i = 0; i < golden.numel(); ++i) {
      const double g = std::sin(0.001 * static_cast<double>(i)) + 0.5;
      golden.set(i, g);
      reference.set(i, g * (1.0 + 0x1p-23 * static_cast<double>(i % 3)));
      actual.set(i, g * (1.0 - 0x1p-23 * static_cast<double>(i % 5)));
    }
    actual.set(7, std::numeric_limits<double>::quiet_NaN());
    actual.set(golden.numel() / 2, 3.0);
    actual.set(golden.numel() - 1, -1.0);
    OutputSpec spec;
    spec.name = "y";
    spec.dtype = DType::f32;
    spec.policy.kind = o.kind;
    if (o.slice >= 0) spec.slice = o.slice;
    CompareInputs in;
    in.spec = &spec;
    in.actual = &actual;
    in.golden = &golden;
    in.reference = &reference;
    const std::string one = to_json(compare_output(in)).dump();
    EXPECT_NE(one.find("\"mismatches\":3"), std::string::npos) << one.substr(0, 300);
    for (const int threads : {2, 3, 7, 64}) {
      in.threads = threads;
      SCOPED_TRACE(shape_string(o.shape) + ", threads " + std::to_string(threads));
      EXPECT_EQ(to_json(compare_output(in)).dump(), one);
    }
  }
}
