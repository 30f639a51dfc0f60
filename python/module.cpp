// kjudge._kjudge: the C++ library behind the Python package (python/kjudge). Arrays arrive
// through DLPack (NumPy, PyTorch, CuPy, ...): host arrays are judged by compare_tensors, CUDA
// arrays where they lie by the GPU comparator (kj::DeviceTensorJudge, loaded on first use, so
// the module imports where there is no driver). The verdict stays a C++ object (Judgement): its
// outcome, reason and message are read as strings, and the output's finding and the whole
// verdict become Python objects only when asked, with exactly the fields and values of
// `kjudge compare --json`, built from the JSON tree without printing and parsing it.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/mutate.hpp"
#include "kjudge/report.hpp"

namespace nb = nanobind;
namespace fs = std::filesystem;

namespace {

using HostArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using AnyArray = nb::ndarray<nb::ro>;

// The DLPack dtype as kjudge's; nullopt for one kjudge does not judge (complex, u16, ...).
std::optional<kj::DType> dtype_of(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<Code>(t.code)) {
  case Code::Float:
    if (t.bits == 64) return kj::DType::f64;
    if (t.bits == 32) return kj::DType::f32;
    if (t.bits == 16) return kj::DType::f16;
    return std::nullopt;
  case Code::Bfloat: return t.bits == 16 ? std::optional(kj::DType::bf16) : std::nullopt;
  case Code::Int:
    if (t.bits == 64) return kj::DType::i64;
    if (t.bits == 32) return kj::DType::i32;
    if (t.bits == 16) return kj::DType::i16;
    if (t.bits == 8) return kj::DType::i8;
    return std::nullopt;
  case Code::UInt: return t.bits == 8 ? std::optional(kj::DType::u8) : std::nullopt;
  case Code::Bool: return t.bits == 8 ? std::optional(kj::DType::boolean) : std::nullopt;
  default: return std::nullopt;
  }
}

[[noreturn]] void refuse(const char* name, const std::string& why) {
  throw nb::value_error((std::string(name) + ": " + why).c_str());
}

template <class Array> kj::DType judged_dtype(const Array& a, const char* name) {
  const auto dtype = dtype_of(a.dtype());
  if (!dtype)
    refuse(name, "a dtype kjudge does not judge (floats of 16, 32, 64 bits, bfloat16, i8-i64, u8, "
                 "bool)");
  return *dtype;
}

template <class Array> kj::Shape shape_of(const Array& a) {
  kj::Shape shape;
  for (std::size_t d = 0; d < a.ndim(); ++d) shape.push_back(static_cast<std::int64_t>(a.shape(d)));
  return shape;
}

// Where an argument's memory is, by DLPack's device type (kDLCPU 1, kDLCUDA 2); objects without
// __dlpack_device__ (buffers, lists) are host memory.
struct Place {
  int type = 1, id = 0;
  bool host() const { return type == 1; }
  bool cuda() const { return type == 2; }
};

Place place_of(nb::handle array) {
  if (!nb::hasattr(array, "__dlpack_device__")) return {};
  const nb::tuple device = nb::borrow<nb::tuple>(array.attr("__dlpack_device__")());
  return {nb::cast<int>(device[0]), nb::cast<int>(device[1])};
}

std::string place_name(Place p) {
  if (p.host()) return "host memory";
  if (p.cuda()) return "cuda:" + std::to_string(p.id);
  return "DLPack device type " + std::to_string(p.type);
}

// A host argument as an array: DLPack and buffer-protocol objects as they are (a copy only when
// they are not C-contiguous), anything else (lists, scalars) through numpy.asarray.
HostArray host_array(nb::handle array, const char* name) {
  HostArray out;
  if (nb::try_cast(array, out)) return out;
  nb::object as_numpy;
  try {
    as_numpy = nb::module_::import_("numpy").attr("asarray")(array);
  } catch (const nb::python_error&) {
    throw nb::type_error((std::string(name) + ": not an array (pass a NumPy or PyTorch array, "
                                              "or anything with DLPack)")
                             .c_str());
  }
  if (!nb::try_cast(as_numpy, out)) refuse(name, "a dtype kjudge does not judge");
  return out;
}

// A host array as a host tensor of its own dtype and shape (HostTensor owns its storage: one
// copy of the values).
kj::HostTensor host_tensor(const HostArray& a, const char* name) {
  kj::HostTensor t(judged_dtype(a, name), shape_of(a));
  if (t.nbytes() > 0) std::memcpy(t.bytes().data(), a.data(), t.nbytes());
  return t;
}

// The executable the package ships beside this module (kjudge/bin/kjudge): the GPU comparator
// finds the headers and the precompiled kernels from it as the CLI does from itself.
fs::path package_executable() {
  static const int anchor = 0;
  Dl_info info{};
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  return fs::path(info.dli_fname).parent_path() / "bin" / "kjudge";
}

// The CLI's compile cache (its default_cache_dir), so the package and `kjudge check` share
// compiled kernels.
fs::path kernel_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return fs::path(xdg) / "kjudge";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return fs::path(home) / ".cache" / "kjudge";
  return {};
}

// A CUDA argument as a device array: exported with __dlpack__(stream=...) so that its producer
// orders its pending writes before the judge's stream (DLPack's contract), read in place.
struct DeviceArg {
  AnyArray array;
  kj::DeviceArray view;
};

DeviceArg device_array(nb::handle array, const char* name, nb::handle stream) {
  DeviceArg out;
  const nb::object capsule = array.attr("__dlpack__")(nb::arg("stream") = stream);
  if (!nb::try_cast(capsule, out.array)) refuse(name, "its DLPack capsule cannot be read");
  out.view.dtype = judged_dtype(out.array, name);
  out.view.shape = shape_of(out.array);
  // C-contiguous, as HostTensor's storage: dimensions of one element may have any stride.
  std::int64_t expected_stride = 1;
  for (std::size_t d = out.array.ndim(); d-- > 0;) {
    if (out.array.shape(d) != 1 && out.array.stride(d) != expected_stride)
      refuse(name, "a device array that is not C-contiguous (pass .contiguous() of it)");
    expected_stride *= static_cast<std::int64_t>(out.array.shape(d));
  }
  out.view.ptr = reinterpret_cast<std::uintptr_t>(out.array.data());
  return out;
}

// A JSON tree as Python objects: what json.loads makes of its text, without the text.
nb::object python_of(const nlohmann::json& j) {
  using Type = nlohmann::json::value_t;
  switch (j.type()) {
  case Type::null: return nb::none();
  case Type::boolean: return nb::bool_(j.get<bool>());
  case Type::number_integer: return nb::int_(j.get<std::int64_t>());
  case Type::number_unsigned: return nb::int_(j.get<std::uint64_t>());
  case Type::number_float: return nb::float_(j.get<double>());
  case Type::string: {
    const auto& s = j.get_ref<const std::string&>();
    return nb::str(s.data(), s.size());
  }
  case Type::array: {
    nb::list list;
    for (const auto& item : j) list.append(python_of(item));
    return list;
  }
  case Type::object: {
    nb::dict dict;
    for (auto it = j.begin(); it != j.end(); ++it)
      dict[nb::str(it.key().data(), it.key().size())] = python_of(it.value());
    return dict;
  }
  default: return nb::none(); // binary and discarded values: never in a verdict
  }
}

// kj::compare_tensors' verdict, held for Python.
struct Judgement {
  kj::Verdict verdict;
};

struct CompareArgs {
  kj::CompareSettings settings;
  kj::TensorNames names;
};

Judgement judge_on_host(nb::handle actual, nb::handle truth, nb::handle expected,
                        const CompareArgs& args) {
  const kj::TensorNames& names = args.names;
  kj::HostTensor a = host_tensor(host_array(actual, names.actual.c_str()), names.actual.c_str());
  const kj::HostTensor x = host_tensor(host_array(truth, names.expected.c_str()),
                                       names.expected.c_str());
  std::optional<kj::HostTensor> ref;
  if (expected.is(truth)) ref = x; // no golden: the expected is both (one import)
  else if (!expected.is_none())
    ref = host_tensor(host_array(expected, names.reference.c_str()), names.reference.c_str());
  return {kj::compare_tensors(std::move(a), x, std::move(ref), args.settings, names)};
}

Judgement judge_on_device(int device, nb::handle actual, nb::handle truth, nb::handle expected,
                          const CompareArgs& args) {
  kj::DeviceTensorJudge& judge =
      kj::DeviceTensorJudge::of_device(device, package_executable(), kernel_cache_dir());
  const nb::int_ stream(judge.stream());
  const kj::TensorNames& names = args.names;
  const DeviceArg a = device_array(actual, names.actual.c_str(), stream);
  const DeviceArg x = device_array(truth, names.expected.c_str(), stream);
  std::optional<DeviceArg> ref;
  if (!expected.is_none()) ref = device_array(expected, names.reference.c_str(), stream);
  std::optional<kj::DeviceArray> ref_view;
  if (ref) ref_view = ref->view;
  // The device works without the GIL: other Python threads go on meanwhile.
  const nb::gil_scoped_release unlocked;
  return {judge.compare(a.view, x.view, ref_view, args.settings, names)};
}

// kjudge.compare's call: `truth` is what the policy's golden side reads (the golden, or the
// expected without one), `expected` the same-precision reference (None: none), `truth_name` how
// messages name the truth.
Judgement compare(nb::handle actual, nb::handle truth, nb::handle expected,
                  const std::string& policy, const std::string& dtype,
                  const std::string& expected_kind, int slice, const std::string& nan,
                  bool statistics, const std::string& truth_name) {
  CompareArgs args;
  args.settings.policy = policy;
  args.settings.dtype = dtype;
  args.settings.expected_kind = expected_kind;
  args.settings.slice = slice;
  args.settings.nan = nan;
  args.settings.statistics = statistics;
  args.names = {"actual", truth_name, "expected"};
  try {
    const Place pa = place_of(actual), pt = place_of(truth);
    const Place pe = expected.is_none() ? pt : place_of(expected);
    if (pa.host() && pt.host() && pe.host()) return judge_on_host(actual, truth, expected, args);
    // One device for all three: judged where they lie, or not at all (no silent copies).
    const std::pair<Place, const std::string*> places[] = {
        {pa, &args.names.actual}, {pt, &args.names.expected}, {pe, &args.names.reference}};
    for (const auto& [p, name] : places)
      if (!p.host() && !p.cuda())
        refuse(name->c_str(), "in " + place_name(p) + "; kjudge judges host memory and CUDA "
                                                      "devices");
    const Place device = pa.cuda() ? pa : pt.cuda() ? pt : pe;
    for (const auto& [p, name] : places)
      if (p.type != device.type || p.id != device.id)
        refuse(name->c_str(), "in " + place_name(p) + " while another array is in " +
                                  place_name(device) +
                                  ": pass all three on one device (or all on the host)");
    return judge_on_device(device.id, actual, truth, expected, args);
  } catch (const kj::SpecError& e) {
    throw nb::value_error(e.what());
  }
}

// ---- kjudge.kernelbench.mutate's door to the mutation library -------------------------------

const kj::mutate::Checker& checker_named(const std::string& name) {
  static std::map<std::string, kj::mutate::Checker> resolved; // under the GIL
  auto it = resolved.find(name);
  if (it == resolved.end()) it = resolved.emplace(name, kj::mutate::resolve_checkers({name}).at(0)).first;
  return it->second;
}

nlohmann::json checker_json(const kj::mutate::Checker& c) {
  using C = kj::mutate::Checker;
  return {{"name", c.name}, {"draw", c.draw == C::Draw::default_cases ? "default" : "first-shape"},
          {"seeds", c.seeds}, {"judge", c.judge == C::Judge::problem_policy ? "problem" : "tolerance"},
          {"rtol", c.rtol}, {"atol", c.atol}, {"rtol_half", c.rtol_half}, {"atol_half", c.atol_half},
          {"torch_defaults", c.torch_defaults}, {"dtype_epsilon_rtol", c.dtype_epsilon_rtol},
          {"skip_nonfinite_reference", c.skip_nonfinite_reference}};
}

std::string apply_mutant(const std::string& source, nb::dict mutant) {
  kj::mutate::Mutant m;
  m.id = nb::cast<std::string>(mutant["id"]);
  m.file = nb::cast<std::string>(mutant["file"]);
  m.offset = nb::cast<std::size_t>(mutant["offset"]);
  m.length = nb::cast<std::size_t>(mutant["length"]);
  m.original = nb::cast<std::string>(mutant["original"]);
  m.replacement = nb::cast<std::string>(mutant["replacement"]);
  m.prelude = nb::cast<std::string>(mutant["prelude"]);
  return kj::mutate::apply_mutant(source, m);
}

nb::dict mutation_reports(const std::string& campaign_json, const std::string& where) {
  try {
    const kj::mutate::Campaign c = kj::mutate::campaign_from_json(campaign_json, where);
    std::ostringstream console;
    kj::mutate::write_console(console, c);
    nb::dict reports;
    reports["console"] = console.str();
    reports["html"] = kj::mutate::html_report(c);
    reports["json"] = kj::mutate::mutation_report_json(c);
    reports["jsonl"] = kj::mutate::mutants_jsonl(c);
    return reports;
  } catch (const kj::SpecError& e) {
    throw nb::value_error(e.what());
  }
}

void define_mutation_door(nb::module_& m) {
  m.def("mutants", [](const std::string& file, const std::string& source,
                      const std::vector<std::string>& operators) {
    return python_of(nlohmann::json::parse(
        kj::mutate::mutants_json(kj::mutate::generate_mutants(file, source, operators))));
  }, nb::arg("file"), nb::arg("source"), nb::arg("operators"),
        "kj::mutate::generate_mutants: the catalogue's single-edit mutants of the __global__ and "
        "__device__ bodies in `source`, as dicts (ValueError for an unknown operator)");
  m.def("apply_mutant", &apply_mutant, nb::arg("source"), nb::arg("mutant"),
        "kj::mutate::apply_mutant: `source` with the mutant's edit (ValueError where it does not fit)");
  m.def("checkers", [](const std::vector<std::string>& names) {
    nlohmann::json all = nlohmann::json::array();
    for (const kj::mutate::Checker& c : kj::mutate::resolve_checkers(names)) all.push_back(checker_json(c));
    return python_of(all);
  }, nb::arg("names"), "kj::mutate::resolve_checkers: builtin names or TOML files, as dicts");
  m.def("judge_by_tolerance", [](const std::string& checker, nb::handle actual, nb::handle expected) {
    const kj::HostTensor a = host_tensor(host_array(actual, "actual"), "actual");
    const kj::HostTensor e = host_tensor(host_array(expected, "expected"), "expected");
    const kj::mutate::ToleranceJudgement j = kj::mutate::judge_by_tolerance(checker_named(checker), a, e);
    return std::make_tuple(j.accepted, j.failing, j.log_error_ratio);
  }, nb::arg("checker"), nb::arg("actual"), nb::arg("expected"),
        "kj::mutate::judge_by_tolerance: (accepted, failing elements, log10 error ratio) of a "
        "tolerance checker on host arrays");
  m.def("mutation_reports", &mutation_reports, nb::arg("campaign_json"), nb::arg("where"),
        "kj::mutate's reports of a campaign given as JSON (campaign_from_json): console, html, "
        "json (mutation-testing-report-schema) and jsonl");
}

} // namespace

NB_MODULE(_kjudge, m) {
  m.doc() = "kjudge's C++ library (use the kjudge package, not this module)";
  nb::class_<Judgement>(m, "Judgement", "One output's verdict, as kjudge.compare judged it")
      .def_prop_ro("outcome", [](const Judgement& j) {
        return std::string(kj::outcome_name(j.verdict.outcome));
      })
      .def_prop_ro("reason", [](const Judgement& j) {
        return std::string(kj::reason_name(j.verdict.reason));
      })
      .def_prop_ro("message", [](const Judgement& j) { return j.verdict.message; })
      .def("output", [](const Judgement& j) {
        return python_of(kj::to_json(j.verdict.cases.at(0).outputs.at(0)));
      }, "The output's finding: the object of cases[0].outputs[0] of the verdict")
      .def("verdict", [](const Judgement& j) { return python_of(kj::to_json(j.verdict)); },
           "The whole verdict: the object `kjudge compare --json` prints");
  m.def("compare", &compare, nb::arg("actual"), nb::arg("truth"), nb::arg("expected").none(),
        nb::arg("policy"), nb::arg("dtype"), nb::arg("expected_kind"), nb::arg("slice"),
        nb::arg("nan"), nb::arg("statistics"), nb::arg("truth_name"),
        "kj::compare_tensors (host arrays) or the GPU comparator (CUDA arrays): the verdict of "
        "`actual` against `truth` and `expected`");
  m.def("cuda_available", [] {
    std::string why;
    const bool usable = kj::cuda_available(&why);
    return std::make_pair(usable, why);
  }, "Whether a CUDA driver and a device are usable here, and why not");
  define_mutation_door(m);
  m.attr("version") = KJUDGE_VERSION;
}
