// kjudge._kjudge: the C++ library behind the Python package (python/kjudge). Arrays arrive
// through DLPack (NumPy, PyTorch, CuPy, ...); verdicts leave as their JSON text, which the
// package wraps, so Python sees exactly the fields `kjudge compare --json` writes.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/report.hpp"

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<nb::ro, nb::c_contig>;

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

// An array as a host tensor of its own dtype and shape (its bytes copied: HostTensor owns its
// storage). ValueError, naming the argument, for device memory or an unjudged dtype.
kj::HostTensor host_tensor(const Array& a, const char* name) {
  if (a.device_type() != nb::device::cpu::value)
    throw nb::value_error(
        (std::string(name) + ": a device array; kjudge.compare judges host memory so far "
                             "(copy it with .cpu() or numpy.asarray)")
            .c_str());
  const auto dtype = dtype_of(a.dtype());
  if (!dtype)
    throw nb::value_error((std::string(name) + ": a dtype kjudge does not judge (floats of 16, "
                                               "32, 64 bits, bfloat16, i8-i64, u8, bool)")
                              .c_str());
  kj::Shape shape;
  for (std::size_t d = 0; d < a.ndim(); ++d) shape.push_back(static_cast<std::int64_t>(a.shape(d)));
  kj::HostTensor t(*dtype, shape);
  if (t.nbytes() > 0) std::memcpy(t.bytes().data(), a.data(), t.nbytes());
  return t;
}

// compare_tensors with the package's arguments (`names`: how messages name the three arrays, as
// the caller called them); the verdict as JSON text.
std::string compare_json(const Array& actual, const Array& expected, std::optional<Array> reference,
                         const std::string& policy, const std::string& dtype,
                         const std::string& expected_kind, int slice, const std::string& nan,
                         bool statistics, const std::vector<std::string>& names) {
  kj::CompareSettings settings;
  settings.policy = policy;
  settings.dtype = dtype;
  settings.expected_kind = expected_kind;
  settings.slice = slice;
  settings.nan = nan;
  settings.statistics = statistics;
  if (names.size() != 3) throw nb::value_error("names: actual's, expected's and reference's");
  kj::HostTensor a = host_tensor(actual, names[0].c_str());
  const kj::HostTensor x = host_tensor(expected, names[1].c_str());
  std::optional<kj::HostTensor> ref;
  if (reference) ref = host_tensor(*reference, names[2].c_str());
  try {
    const kj::Verdict v =
        kj::compare_tensors(std::move(a), x, std::move(ref), settings, {names[0], names[1], names[2]});
    return kj::to_json(v).dump();
  } catch (const kj::SpecError& e) {
    throw nb::value_error(e.what());
  }
}

} // namespace

NB_MODULE(_kjudge, m) {
  m.doc() = "kjudge's C++ library (use the kjudge package, not this module)";
  m.def("compare_json", &compare_json, nb::arg("actual"), nb::arg("expected"),
        nb::arg("reference").none(), nb::arg("policy"), nb::arg("dtype"),
        nb::arg("expected_kind"), nb::arg("slice"), nb::arg("nan"), nb::arg("statistics"), nb::arg("names"),
        "kj::compare_tensors: the verdict of `actual` against `expected`, as JSON text");
  m.attr("version") = KJUDGE_VERSION;
}
