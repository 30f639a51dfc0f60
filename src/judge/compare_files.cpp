// kj::compare_files and kj::compare_tensors (judge.hpp): `kjudge compare` as a library call. The
// tensors become an OutputSpec and the CompareInputs of one case, judged by compare_output
// exactly as in a check.
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "kjudge/compare.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/report.hpp"

namespace kj {

namespace fs = std::filesystem;

namespace {

HostTensor read_tensor(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw SpecError({path, "", 0, 0}, "no such file");
  return read_npy(path);
}

std::string replay_command(const CompareFiles& a) {
  std::string cmd = fmt::format("kjudge compare {} {} --policy {}", shell_quote(a.actual),
                                shell_quote(a.expected), shell_quote(a.policy));
  if (!a.reference.empty()) cmd += " --reference " + shell_quote(a.reference);
  if (!a.dtype.empty()) cmd += " --dtype " + shell_quote(a.dtype);
  if (!a.expected_kind.empty()) cmd += " --expected " + a.expected_kind;
  if (a.slice >= 0) cmd += fmt::format(" --slice {}", a.slice);
  if (a.nan != "exempt") cmd += " --nan " + a.nan;
  return cmd;
}

void check_shape(const HostTensor& t, const std::string& path, const HostTensor& golden,
                 const std::string& golden_path) {
  if (t.shape() != golden.shape())
    throw SpecError({path, "", 0, 0},
                    fmt::format("shape {} differs from {} of {}", shape_string(t.shape()),
                                shape_string(golden.shape()), golden_path));
}

DType output_dtype(const CompareSettings& a, const HostTensor& actual) {
  if (a.dtype.empty()) return actual.dtype();
  const auto parsed = parse_dtype(a.dtype);
  if (!parsed)
    throw SpecError({"", "--dtype", 0, 0},
                    fmt::format("unknown dtype \"{}\" (f64 f32 f16 bf16 fp8e4m3 fp8e5m2 i64 i32 "
                                "i16 i8 u8 bool)",
                                a.dtype));
  return *parsed;
}

// The output as problem.toml would declare it: the actual's name and shape, the policy.
OutputSpec output_spec(const CompareSettings& a, const TensorNames& names,
                       const HostTensor& actual, DType dtype, bool has_reference) {
  const Location policy_where{"", "--policy", 0, 0};
  OutputSpec spec;
  spec.name = fs::path(names.actual).stem().string();
  spec.dtype = dtype;
  for (const auto d : actual.shape()) spec.shape.push_back(Expr::constant(d));
  spec.policy = parse_policy(a.policy, policy_where);
  if (!a.expected_kind.empty()) {
    const auto kind = parse_expected(a.expected_kind);
    if (!kind)
      throw SpecError({"", "--expected", 0, 0},
                      fmt::format("\"{}\" is neither golden nor reference", a.expected_kind));
    spec.policy.expected = *kind;
  }
  // exact and allclose compare against the reference by default; with files the user may
  // well mean EXPECTED, so say how to get either instead of only what is missing.
  if (spec.policy.expected == Expected::reference && !has_reference)
    throw SpecError(policy_where,
                    fmt::format("{} compares against the reference by default: pass "
                                "--reference REF, or --expected golden to compare against {}",
                                a.policy, names.expected));
  if (a.slice >= 0) {
    if (a.slice >= static_cast<int>(actual.shape().size()))
      throw SpecError({"", "--slice", 0, 0},
                      fmt::format("axis {} of a tensor of rank {}", a.slice, actual.shape().size()));
    spec.slice = a.slice;
  }
  spec.where = {names.actual, "", 0, 0};
  return spec;
}

}  // namespace

Verdict compare_files(const CompareFiles& a) {
  std::optional<HostTensor> reference;
  if (!a.reference.empty()) reference = read_tensor(a.reference);
  Verdict verdict = compare_tensors(read_tensor(a.actual), read_tensor(a.expected),
                                    std::move(reference), a, {a.actual, a.expected, a.reference});
  verdict.manifest.backend = "files";
  verdict.replay_command = replay_command(a);
  return verdict;
}

Verdict compare_tensors(HostTensor actual, const HostTensor& expected,
                        std::optional<HostTensor> reference, const CompareSettings& a,
                        const TensorNames& names) {
  const auto nan = parse_nan_rule(a.nan);
  if (!nan)
    throw SpecError({"", "--nan", 0, 0},
                    fmt::format("\"{}\" is not a NaN rule (propagate, ignore, exempt)", a.nan));
  const DType dtype = output_dtype(a, actual);
  check_shape(actual, names.actual, expected, names.expected);
  if (reference) check_shape(*reference, names.reference, expected, names.expected);
  const OutputSpec spec = output_spec(a, names, actual, dtype, reference.has_value());

  // The golden is compared in f64 and the others in the output dtype, as in a check.
  const HostTensor golden =
      expected.dtype() == DType::f64 ? expected : expected.converted(DType::f64);
  if (actual.dtype() != dtype) actual = actual.converted(dtype);
  if (reference && reference->dtype() != dtype) reference = reference->converted(dtype);

  CompareInputs in;
  in.spec = &spec;
  in.actual = &actual;
  in.golden = &golden;
  in.reference = reference ? &*reference : nullptr;
  in.nan = *nan;
  in.exact_percentiles = a.exact_percentiles;
  in.statistics = a.statistics;
  // Tensors carry no inputs to plant NaNs in: `ignore` means the user wants NaN-in cases.
  in.nan_in_inputs = in.nan == NanRule::ignore;
  in.tier = spec.policy.kind == PolicySpec::Kind::exact    ? Tier::exact
            : spec.policy.kind == PolicySpec::Kind::metric ? Tier::approximate
                                                           : Tier::tolerance;

  Verdict verdict;
  verdict.manifest.problem = "compare";
  verdict.manifest.backend = "tensors";
  CaseFinding pseudo;
  pseudo.case_id = fmt::format("{} vs {}", fs::path(names.actual).filename().string(),
                               fs::path(names.expected).filename().string());
  pseudo.case_class = "public";
  pseudo.outputs.push_back(compare_output(in));
  verdict.cases.push_back(std::move(pseudo));
  verdict.finalize();
  return verdict;
}

}  // namespace kj
