// kj::compare_files, kj::compare_tensors and kj::TensorComparison (judge.hpp): `kjudge compare` as
// a library call. The tensors become an OutputSpec and the CompareInputs of one case, judged by
// compare_output exactly as in a check; TensorComparison is that step without the values, which
// the device arrays' judge (dlpack_device_judge.cpp) shares.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

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

void check_shape(const Shape& shape, const std::string& name, const Shape& expected,
                 const std::string& expected_name) {
  if (shape != expected)
    throw SpecError({name, "", 0, 0},
                    fmt::format("shape {} differs from {} of {}", shape_string(shape),
                                shape_string(expected), expected_name));
}

DType output_dtype(const CompareSettings& a, DType actual) {
  if (a.dtype.empty()) return actual;
  const auto parsed = parse_dtype(a.dtype);
  if (!parsed)
    throw SpecError({"", "--dtype", 0, 0},
                    fmt::format("unknown dtype \"{}\" (f64 f32 f16 bf16 fp8e4m3 fp8e5m2 i64 i32 "
                                "i16 i8 u8 bool)",
                                a.dtype));
  return *parsed;
}

// The output as problem.toml would declare it: the actual's name and shape, the policy.
OutputSpec output_spec(const CompareSettings& a, const TensorNames& names, const Shape& actual,
                       DType dtype, bool has_reference) {
  const Location policy_where{"", "--policy", 0, 0};
  OutputSpec spec;
  spec.name = fs::path(names.actual).stem().string();
  spec.dtype = dtype;
  for (const auto d : actual) spec.shape.push_back(Expr::constant(d));
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
    if (a.slice >= static_cast<int>(actual.size()))
      throw SpecError({"", "--slice", 0, 0},
                      fmt::format("axis {} of a tensor of rank {}", a.slice, actual.size()));
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

TensorComparison::TensorComparison(const CompareSettings& a, const TensorNames& names,
                                   DType actual_dtype, const Shape& actual, const Shape& expected,
                                   const Shape* reference) {
  const auto nan = parse_nan_rule(a.nan);
  if (!nan)
    throw SpecError({"", "--nan", 0, 0},
                    fmt::format("\"{}\" is not a NaN rule (propagate, ignore, exempt)", a.nan));
  const DType dtype = output_dtype(a, actual_dtype);
  check_shape(actual, names.actual, expected, names.expected);
  if (reference) check_shape(*reference, names.reference, expected, names.expected);
  spec_ = output_spec(a, names, actual, dtype, reference != nullptr);

  rules_.spec = &spec_;
  rules_.nan = *nan;
  rules_.exact_percentiles = a.exact_percentiles;
  rules_.statistics = a.statistics;
  // Tensors carry no inputs to plant NaNs in: `ignore` means the user wants NaN-in cases.
  rules_.nan_in_inputs = rules_.nan == NanRule::ignore;
  rules_.tier = spec_.policy.kind == PolicySpec::Kind::exact    ? Tier::exact
                : spec_.policy.kind == PolicySpec::Kind::metric ? Tier::approximate
                                                                : Tier::tolerance;
  case_id_ = fmt::format("{} vs {}", fs::path(names.actual).filename().string(),
                         fs::path(names.expected).filename().string());
}

Verdict TensorComparison::verdict(OutputFinding finding) const {
  Verdict verdict;
  verdict.manifest.problem = "compare";
  verdict.manifest.backend = "tensors";
  CaseFinding pseudo;
  pseudo.case_id = case_id_;
  pseudo.case_class = "public";
  pseudo.outputs.push_back(std::move(finding));
  verdict.cases.push_back(std::move(pseudo));
  verdict.finalize();
  return verdict;
}

Verdict compare_tensors(HostTensor actual, const HostTensor& expected,
                        std::optional<HostTensor> reference, const CompareSettings& a,
                        const TensorNames& names) {
  const TensorComparison comparison(a, names, actual.dtype(), actual.shape(), expected.shape(),
                                    reference ? &reference->shape() : nullptr);
  // The golden is compared in f64 and the others in the output dtype, as in a check; an f64 or
  // f32 expected is read where it is (each f32 is a double exactly; a golden's copy is the size
  // of the whole output again, twice over for f32).
  const DType dtype = comparison.dtype();
  std::optional<HostTensor> widened;
  if (!golden_read_in_place(expected.dtype())) widened = expected.converted(DType::f64);
  if (actual.dtype() != dtype) actual = actual.converted(dtype);
  if (reference && reference->dtype() != dtype) reference = reference->converted(dtype);

  CompareInputs in;
  static_cast<CompareRules&>(in) = comparison.rules();
  in.actual = &actual;
  in.golden = widened ? &*widened : &expected;
  in.reference = reference ? &*reference : nullptr;
  // Every core (asked once: the count is read from a file, which a small call would feel).
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  in.threads = cores;
  return comparison.verdict(compare_output(in));
}

}  // namespace kj
