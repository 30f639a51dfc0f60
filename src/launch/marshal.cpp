// Launch-plan marshalling (marshal.hpp): parameter types read from their spelling, the type
// checks done once per plan, and per case the evaluated, range-checked launches with each
// argument encoded as its parameter's bytes.
#include "launch/marshal.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "kjudge/lex.hpp"

namespace kj::judge {

namespace {

struct ValueInfo {
  ValueType type;
  std::string_view name;
  std::size_t size;
};

constexpr ValueInfo kValues[] = {
    {ValueType::unknown, "unknown", 0}, {ValueType::boolean, "bool", 1},
    {ValueType::i8, "int8", 1},         {ValueType::u8, "uint8", 1},
    {ValueType::i16, "int16", 2},       {ValueType::u16, "uint16", 2},
    {ValueType::i32, "int32", 4},       {ValueType::u32, "uint32", 4},
    {ValueType::i64, "int64", 8},       {ValueType::u64, "uint64", 8},
    {ValueType::f16, "float16", 2},     {ValueType::bf16, "bfloat16", 2},
    {ValueType::f32, "float32", 4},     {ValueType::f64, "float64", 8},
    {ValueType::fp8e4m3, "fp8e4m3", 1}, {ValueType::fp8e5m2, "fp8e5m2", 1},
};

const ValueInfo& value_info(ValueType t) {
  for (const auto& v : kValues)
    if (v.type == t) return v;
  return kValues[0];
}

bool is_float_value(ValueType t) {
  return t == ValueType::f16 || t == ValueType::bf16 || t == ValueType::f32 ||
         t == ValueType::f64 || t == ValueType::fp8e4m3 || t == ValueType::fp8e5m2;
}

// The DType whose value set a floating-point parameter has (for rounding and encoding).
DType float_dtype(ValueType t) {
  switch (t) {
  case ValueType::f16:
    return DType::f16;
  case ValueType::bf16:
    return DType::bf16;
  case ValueType::f32:
    return DType::f32;
  case ValueType::fp8e4m3:
    return DType::fp8e4m3;
  case ValueType::fp8e5m2:
    return DType::fp8e5m2;
  default:
    return DType::f64;
  }
}

// Named types other than the builtin integer words: the CUDA floating-point types, the
// <cstdint> typedefs (glibc, LP64) and the CUDA vector types.
struct Named {
  std::string_view spelling;
  std::string_view element; // canonical spelling
  ValueType value;
  int lanes;
};
constexpr Named kNamed[] = {
    {"bool", "bool", ValueType::boolean, 1},
    {"float", "float", ValueType::f32, 1},
    {"double", "double", ValueType::f64, 1},
    {"__half", "__half", ValueType::f16, 1},
    {"half", "__half", ValueType::f16, 1},
    {"__nv_bfloat16", "__nv_bfloat16", ValueType::bf16, 1},
    {"nv_bfloat16", "__nv_bfloat16", ValueType::bf16, 1},
    {"__nv_fp8_e4m3", "__nv_fp8_e4m3", ValueType::fp8e4m3, 1},
    {"__nv_fp8_e5m2", "__nv_fp8_e5m2", ValueType::fp8e5m2, 1},
    {"int8_t", "signed char", ValueType::i8, 1},
    {"uint8_t", "unsigned char", ValueType::u8, 1},
    {"int16_t", "short", ValueType::i16, 1},
    {"uint16_t", "unsigned short", ValueType::u16, 1},
    {"int32_t", "int", ValueType::i32, 1},
    {"uint32_t", "unsigned int", ValueType::u32, 1},
    {"int64_t", "long", ValueType::i64, 1},
    {"uint64_t", "unsigned long", ValueType::u64, 1},
    {"size_t", "unsigned long", ValueType::u64, 1},
    {"ptrdiff_t", "long", ValueType::i64, 1},
    {"intptr_t", "long", ValueType::i64, 1},
    {"uintptr_t", "unsigned long", ValueType::u64, 1},
    {"float2", "float2", ValueType::f32, 2},
    {"float4", "float4", ValueType::f32, 4},
    {"double2", "double2", ValueType::f64, 2},
    {"__half2", "__half2", ValueType::f16, 2},
    {"half2", "__half2", ValueType::f16, 2},
    {"__nv_bfloat162", "__nv_bfloat162", ValueType::bf16, 2},
    {"nv_bfloat162", "__nv_bfloat162", ValueType::bf16, 2},
    {"char2", "char2", ValueType::i8, 2},
    {"char4", "char4", ValueType::i8, 4},
    {"uchar2", "uchar2", ValueType::u8, 2},
    {"uchar4", "uchar4", ValueType::u8, 4},
    {"short2", "short2", ValueType::i16, 2},
    {"short4", "short4", ValueType::i16, 4},
    {"ushort2", "ushort2", ValueType::u16, 2},
    {"ushort4", "ushort4", ValueType::u16, 4},
    {"int2", "int2", ValueType::i32, 2},
    {"int4", "int4", ValueType::i32, 4},
    {"uint2", "uint2", ValueType::u32, 2},
    {"uint4", "uint4", ValueType::u32, 4},
    {"longlong2", "longlong2", ValueType::i64, 2},
    {"ulonglong2", "ulonglong2", ValueType::u64, 2},
};

// The builtin integer types from their words in any order ("long unsigned int").
bool fold_integer_words(const std::vector<std::string>& words, ParamType& p) {
  int is_unsigned = 0, is_signed = 0, longs = 0, shorts = 0, chars = 0, ints = 0;
  for (const auto& w : words) {
    if (w == "unsigned")
      ++is_unsigned;
    else if (w == "signed")
      ++is_signed;
    else if (w == "long")
      ++longs;
    else if (w == "short")
      ++shorts;
    else if (w == "char")
      ++chars;
    else if (w == "int")
      ++ints;
    else
      return false;
  }
  if (words.empty() || is_unsigned + is_signed > 1 || longs > 2 || shorts > 1 || chars > 1 ||
      ints > 1 || (chars && (longs || shorts || ints)) || (shorts && longs))
    return false;
  const bool u = is_unsigned > 0;
  if (chars) {
    // Plain char is signed on the x86-64 and aarch64 Linux hosts CUDA compiles for... except
    // aarch64, where it is unsigned; the device follows the host. kjudge's hosts are x86-64.
    p.element = u ? "unsigned char" : is_signed ? "signed char" : "char";
    p.value = u ? ValueType::u8 : ValueType::i8;
  } else if (shorts) {
    p.element = u ? "unsigned short" : "short";
    p.value = u ? ValueType::u16 : ValueType::i16;
  } else if (longs == 2) {
    p.element = u ? "unsigned long long" : "long long";
    p.value = u ? ValueType::u64 : ValueType::i64;
  } else if (longs == 1) {
    p.element = u ? "unsigned long" : "long";
    p.value = u ? ValueType::u64 : ValueType::i64;
  } else {
    p.element = u ? "unsigned int" : "int";
    p.value = u ? ValueType::u32 : ValueType::i32;
  }
  return true;
}

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
  std::vector<std::byte> out(n);
  std::memcpy(out.data(), p, n);
  return out;
}

template <class T>
std::vector<std::byte> bytes_of_value(T v) {
  return bytes_of(&v, sizeof v);
}

std::string dims_text(const std::array<unsigned, 3>& d, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return "[" + s + "]";
}

const PlanTensor* find_tensor(const PlanContext& ctx, std::string_view name) {
  for (const auto& t : ctx.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const ScalarSpec* find_scalar(const PlanContext& ctx, std::string_view name) {
  for (const auto& s : ctx.scalars)
    if (s.name == name) return &s;
  return nullptr;
}

std::string launch_label(const PlanContext& ctx, std::size_t k, const LaunchSpec& l) {
  return fmt::format("{} launch[{}] '{}'", ctx.owner, k, l.kernel);
}

std::string param_text(const ParamType& p, std::size_t i) {
  return fmt::format("parameter {} ('{}')", i, p.text);
}

// The bytes a parameter takes by kjudge's reading of its type; 0 when unknown.
std::size_t expected_size(const ParamType& p) {
  if (p.reference) return 0;
  if (p.pointer_depth > 0) return 8;
  return value_type_size(p.value) * static_cast<std::size_t>(p.lanes);
}

} // namespace

std::string_view value_type_name(ValueType t) {
  return value_info(t).name;
}
std::size_t value_type_size(ValueType t) {
  return value_info(t).size;
}

ValueType dtype_value_type(DType d) {
  switch (d) {
  case DType::f64:
    return ValueType::f64;
  case DType::f32:
    return ValueType::f32;
  case DType::f16:
    return ValueType::f16;
  case DType::bf16:
    return ValueType::bf16;
  case DType::fp8e4m3:
    return ValueType::fp8e4m3;
  case DType::fp8e5m2:
    return ValueType::fp8e5m2;
  case DType::i64:
    return ValueType::i64;
  case DType::i32:
    return ValueType::i32;
  case DType::i16:
    return ValueType::i16;
  case DType::i8:
    return ValueType::i8;
  case DType::u8:
    return ValueType::u8;
  case DType::boolean:
    return ValueType::boolean;
  }
  return ValueType::unknown;
}

namespace {

// `kj::rounded<float, kj::bf16>` (the audit's downgraded reference, rounding.hpp) spelled
// `float`: it is one float in memory and in a kernel argument. Spaces before a `>` go too, so
// `kj::storage_traits<kj::rounded<float, kj::f16> >::acc` reads as float's accumulator.
std::string rounded_types_as_float(std::string_view text) {
  std::string out(text);
  for (std::size_t at; (at = out.find("kj::rounded<")) != std::string::npos;) {
    const std::size_t close = out.find('>', at);
    if (close == std::string::npos) break;
    std::string inner = out.substr(at + 12, close - at - 12);
    std::erase_if(inner, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    if (inner != "float,kj::bf16" && inner != "float,kj::f16" && inner != "float,kj::tf32") break;
    const bool qualified = at >= 2 && out.compare(at - 2, 2, "::") == 0;
    out.replace(qualified ? at - 2 : at, close + 1 - (qualified ? at - 2 : at), "float");
  }
  std::string squeezed;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t next = out.find_first_not_of(' ', i);
    if (out[i] == ' ' && next != std::string::npos && out[next] == '>') continue;
    squeezed += out[i];
  }
  return squeezed;
}

} // namespace

ParamType parse_param_type(std::string_view spelled) {
  ParamType p;
  p.text = std::string(spelled);
  const std::string text = rounded_types_as_float(spelled);
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    // Qualifiers do not change what an argument must be; `struct`/`class` tags neither.
    static constexpr std::string_view dropped[] = {"const",      "volatile", "__restrict__",
                                                   "__restrict", "restrict", "__grid_constant__",
                                                   "struct",     "class"};
    if (std::find(std::begin(dropped), std::end(dropped), word) == std::end(dropped)) {
      std::string_view w = word;
      if (w.rfind("::", 0) == 0) w.remove_prefix(2);
      if (w.rfind("std::", 0) == 0) w.remove_prefix(5);
      words.emplace_back(w);
    }
    word.clear();
  };
  for (const char c : text) {
    if (c == '*') {
      flush();
      ++p.pointer_depth;
    } else if (c == '&') {
      flush();
      p.reference = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  if (fold_integer_words(words, p)) return p;
  if (words.size() == 1) {
    // `kj::acc_t<T>` of device.cuh, as a template's lowered name keeps it once T is known:
    // `kj::storage_traits<__nv_bfloat16>::acc`. It stands for T's accumulator (float for the
    // 16-bit floats, T itself for float and double); the rounded types have no plain one.
    constexpr std::string_view traits = "kj::storage_traits<", acc = ">::acc";
    const std::string_view w = words[0];
    if (w.size() > traits.size() + acc.size() && w.rfind(traits, 0) == 0 && w.ends_with(acc)) {
      const ParamType of = parse_param_type(
          w.substr(traits.size(), w.size() - traits.size() - acc.size()));
      const bool plain = of.lanes == 1 && of.pointer_depth == 0 && !of.reference;
      if (plain && (of.value == ValueType::f32 || of.value == ValueType::f64 ||
                    of.value == ValueType::f16 || of.value == ValueType::bf16))
        words[0] = of.value == ValueType::f64 ? "double" : "float";
    }
    for (const auto& n : kNamed) {
      if (n.spelling == words[0]) {
        p.element = std::string(n.element);
        p.value = n.value;
        p.lanes = n.lanes;
        return p;
      }
    }
  }
  for (const auto& w : words)
    p.element += (p.element.empty() ? "" : " ") + w;
  return p;
}

bool pointer_accepts(const ParamType& p, DType dtype) {
  return p.pointer() && p.value != ValueType::unknown && p.value == dtype_value_type(dtype);
}

PlanKernel plan_kernel(const KernelInfo& info, const std::vector<std::string>& param_types) {
  PlanKernel k;
  k.expression = info.expression;
  k.lowered = info.lowered;
  for (const auto& t : param_types)
    k.params.push_back(parse_param_type(t));
  k.param_sizes = info.param_sizes;
  k.static_shared = info.static_shared;
  k.max_threads = info.max_threads;
  return k;
}

std::vector<std::string> kernel_param_types(const KernelInfo& info, std::string_view source) {
  if (info.lowered.rfind("_Z", 0) == 0) return info.param_types;
  const lex::LexResult lexed = lex::tokenize(source);
  for (const lex::Function& f : lex::find_functions(source, lexed)) {
    if (f.kind != lex::FunctionKind::global || f.name != info.lowered) continue;
    std::vector<std::string> types;
    for (const auto& p : f.params)
      types.push_back(p.type);
    return types;
  }
  throw PlanError(fmt::format("kernel '{}' (lowered '{}'): no demangled signature and no "
                              "__global__ function of that name in the source",
                              info.expression, info.lowered));
}

std::vector<std::byte> encode_integer(ValueType t, std::int64_t v, std::string_view what) {
  auto out_of_range = [&](auto lo, auto hi) {
    throw PlanError(fmt::format("{}: passes {} to a {} parameter (range {} to {})", what, v,
                                value_type_name(t), lo, hi));
  };
  auto ranged = [&](auto sample) {
    using T = decltype(sample);
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    if constexpr (std::is_signed_v<T>) {
      if (v < static_cast<std::int64_t>(lo) || v > static_cast<std::int64_t>(hi))
        out_of_range(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi));
    } else {
      if (v < 0 || static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(hi))
        out_of_range(0, static_cast<std::uint64_t>(hi));
    }
    return bytes_of_value(static_cast<T>(v));
  };
  switch (t) {
  case ValueType::boolean:
    if (v != 0 && v != 1) out_of_range(0, 1);
    return bytes_of_value(static_cast<std::uint8_t>(v));
  case ValueType::i8:
    return ranged(std::int8_t{});
  case ValueType::u8:
    return ranged(std::uint8_t{});
  case ValueType::i16:
    return ranged(std::int16_t{});
  case ValueType::u16:
    return ranged(std::uint16_t{});
  case ValueType::i32:
    return ranged(std::int32_t{});
  case ValueType::u32:
    return ranged(std::uint32_t{});
  case ValueType::i64:
    return ranged(std::int64_t{});
  case ValueType::u64:
    return ranged(std::uint64_t{});
  case ValueType::unknown:
    throw PlanError(fmt::format("{}: the parameter's type is not one kjudge can pass", what));
  default:
    break;
  }
  // A floating-point parameter takes an integer only when it is exact there: a dim silently
  // rounded would be a different problem.
  const auto d = static_cast<double>(v);
  const DType f = float_dtype(t);
  constexpr std::int64_t two53 = std::int64_t{1} << 53;
  const bool exact = v >= -two53 && v <= two53 && round_to(f, d) == d;
  if (!exact)
    throw PlanError(
        fmt::format("{}: {} is not exact in a {} parameter", what, v, value_type_name(t)));
  return encode_float(t, d, what);
}

std::vector<std::byte> encode_float(ValueType t, double v, std::string_view what) {
  if (!is_float_value(t))
    throw PlanError(
        fmt::format("{}: a floating-point value for a {} parameter", what, value_type_name(t)));
  const DType f = float_dtype(t);
  const double r = round_to(f, v);
  if (std::isfinite(v) && !std::isfinite(r))
    throw PlanError(fmt::format("{}: {} overflows a {} parameter", what, v, value_type_name(t)));
  switch (t) {
  case ValueType::f64:
    return bytes_of_value(r);
  case ValueType::f32:
    return bytes_of_value(static_cast<float>(r));
  case ValueType::f16:
  case ValueType::bf16:
    return bytes_of_value(static_cast<std::uint16_t>(encode_bits(f, r)));
  default:
    return bytes_of_value(static_cast<std::uint8_t>(encode_bits(f, r)));
  }
}

void check_plan_types(const std::vector<LaunchSpec>& launches,
                      const std::vector<const PlanKernel*>& kernels, const PlanContext& ctx) {
  if (kernels.size() != launches.size())
    throw InternalError("check_plan_types: one kernel per launch expected");
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const LaunchSpec& l = launches[k];
    const PlanKernel& kernel = *kernels[k];
    const std::string where = launch_label(ctx, k, l);
    if (l.args.size() != kernel.params.size()) {
      std::string types;
      for (const auto& p : kernel.params)
        types += (types.empty() ? "" : ", ") + p.text;
      throw PlanError(fmt::format("{}: the launch gives {} argument{}, the kernel takes {} ({})",
                                  where, l.args.size(), l.args.size() == 1 ? "" : "s",
                                  kernel.params.size(), types));
    }
    if (!kernel.param_sizes.empty() && kernel.param_sizes.size() != kernel.params.size())
      throw PlanError(fmt::format("{}: the driver reports {} parameters, the signature {}", where,
                                  kernel.param_sizes.size(), kernel.params.size()));
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      const std::string& arg = l.args[i];
      const ParamType& p = kernel.params[i];
      const std::string what = fmt::format("{} argument {} '{}'", where, i, arg);
      if (p.reference || p.pointer_depth > 1)
        throw PlanError(
            fmt::format("{}: {} cannot receive a plan argument", what, param_text(p, i)));
      const std::size_t size = expected_size(p);
      if (!kernel.param_sizes.empty() && size != 0 && kernel.param_sizes[i] != size)
        throw PlanError(fmt::format("{}: {} takes {} bytes by the driver's count, {} by its type",
                                    what, param_text(p, i), kernel.param_sizes[i], size));
      if (const PlanTensor* t = find_tensor(ctx, arg)) {
        if (!p.pointer())
          throw PlanError(
              fmt::format("{}: a tensor, but {} is not a pointer", what, param_text(p, i)));
        if (!pointer_accepts(p, t->dtype))
          throw PlanError(fmt::format(
              "{}: tensor '{}' is {} ({}), but {} points to {}", what, t->name,
              dtype_name(t->dtype), dtype_cxx_name(t->dtype), param_text(p, i),
              p.element.empty() ? std::string("an unknown type") : "'" + p.element + "'"));
        continue;
      }
      if (p.pointer_depth > 0)
        throw PlanError(
            fmt::format("{}: not a tensor, but {} is a pointer", what, param_text(p, i)));
      if (p.value == ValueType::unknown || p.lanes != 1)
        throw PlanError(fmt::format("{}: {} is not a scalar type kjudge can pass (bool, the "
                                    "integer and floating-point types)",
                                    what, param_text(p, i)));
      if (const ScalarSpec* s = find_scalar(ctx, arg)) {
        if (is_float(s->dtype) && !is_float_value(p.value))
          throw PlanError(fmt::format("{}: scalar '{}' is {}, but {} is an integer type", what,
                                      s->name, dtype_name(s->dtype), param_text(p, i)));
        if (!is_float(s->dtype) && is_float_value(p.value))
          throw PlanError(fmt::format("{}: scalar '{}' is {}, but {} is floating-point", what,
                                      s->name, dtype_name(s->dtype), param_text(p, i)));
        continue;
      }
      if (i >= l.arg_exprs.size() || !l.arg_exprs[i])
        throw PlanError(fmt::format("{}: names no tensor, scalar or dim", what));
      // Dims and expressions of dims are integers; their bytes in a float parameter would be
      // read as some unrelated value (a C++ call converts, a launch does not).
      if (is_float_value(p.value))
        throw PlanError(fmt::format("{}: an integer expression, but {} is floating-point", what,
                                    param_text(p, i)));
    }
  }
}

std::vector<LaunchRequest> marshal_launches(const std::vector<LaunchSpec>& launches,
                                            const std::vector<const PlanKernel*>& kernels,
                                            const PlanContext& ctx, const Env& env) {
  check_plan_types(launches, kernels, ctx);
  std::vector<LaunchRequest> out;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const LaunchSpec& l = launches[k];
    const PlanKernel& kernel = *kernels[k];
    const std::string base = launch_label(ctx, k, l);
    try {
      std::int64_t repeat = 1;
      if (l.repeat) {
        repeat = l.repeat->eval(env);
        if (repeat < 0 || repeat > kMaxRepeat)
          throw PlanError(fmt::format("{}: repeat '{}' = {} is outside 0 to {}", base,
                                      l.repeat->text(), repeat, kMaxRepeat));
      }
      Env local = env;
      for (std::int64_t r = 0; r < repeat; ++r) {
        std::string where = base;
        if (l.repeat) {
          local["i"] = r;
          where += fmt::format(" (i = {})", r);
        }
        LaunchRequest req;
        req.lowered = kernel.lowered;
        req.label = where;

        auto eval_dims = [&](const std::vector<Expr>& exprs, const char* field,
                             std::array<unsigned, 3>& dims, std::optional<std::array<int, 3>> max) {
          if (exprs.empty() || exprs.size() > 3)
            throw PlanError(
                fmt::format("{}: {} has {} dims, 1 to 3 expected", where, field, exprs.size()));
          dims = {1, 1, 1};
          for (std::size_t d = 0; d < exprs.size(); ++d) {
            const std::int64_t v = exprs[d].eval(local);
            const std::int64_t hi = max ? (*max)[d] : std::int64_t{0xFFFFFFFF};
            if (v < 1 || v > hi)
              throw PlanError(fmt::format("{}: {}[{}] = '{}' = {} is outside 1 to {}", where, field,
                                          d, exprs[d].text(), v, hi));
            dims[d] = static_cast<unsigned>(v);
          }
        };
        std::optional<std::array<int, 3>> max_grid, max_block;
        if (ctx.device) {
          max_grid = ctx.device->max_grid;
          max_block = ctx.device->max_block;
        }
        eval_dims(l.grid, "grid", req.dims.grid, max_grid);
        eval_dims(l.block, "block", req.dims.block, max_block);
        const std::int64_t threads =
            std::int64_t{req.dims.block[0]} * req.dims.block[1] * req.dims.block[2];
        if (ctx.device && threads > ctx.device->max_threads_per_block)
          throw PlanError(fmt::format("{}: block {} has {} threads, the device allows {}", where,
                                      dims_text(req.dims.block, l.block.size()), threads,
                                      ctx.device->max_threads_per_block));
        if (kernel.max_threads > 0 && threads > kernel.max_threads)
          throw PlanError(fmt::format("{}: block {} has {} threads, the kernel can launch with {} "
                                      "at most (its registers per thread limit it)",
                                      where, dims_text(req.dims.block, l.block.size()), threads,
                                      kernel.max_threads));
        const std::int64_t shared = l.shared.eval(local);
        if (shared < 0 || shared > std::int64_t{0xFFFFFFFF})
          throw PlanError(fmt::format("{}: shared = '{}' = {} bytes is not a valid size", where,
                                      l.shared.text(), shared));
        if (ctx.device && shared + kernel.static_shared > ctx.device->max_shared_per_block_optin)
          throw PlanError(fmt::format(
              "{}: shared = '{}' = {} bytes (plus {} static) exceeds the device's {} bytes per "
              "block",
              where, l.shared.text(), shared, kernel.static_shared,
              ctx.device->max_shared_per_block_optin));
        req.dims.shared_bytes = static_cast<unsigned>(shared);
        if (!l.cluster.empty()) eval_dims(l.cluster, "cluster", req.dims.cluster, std::nullopt);
        req.dims.cooperative = l.cooperative;

        for (std::size_t i = 0; i < l.args.size(); ++i) {
          const std::string& arg = l.args[i];
          const ParamType& p = kernel.params[i];
          const std::string what = fmt::format("{} argument {} '{}'", where, i, arg);
          ArgRequest a;
          if (find_tensor(ctx, arg)) {
            a.kind = ArgRequest::Kind::buffer;
            a.buffer = arg;
          } else if (const ScalarSpec* s = find_scalar(ctx, arg)) {
            a.bytes = is_float(s->dtype)
                          ? encode_float(p.value, round_to(s->dtype, s->as_double), what)
                          : encode_integer(p.value, s->as_int, what);
          } else {
            a.bytes = encode_integer(p.value, l.arg_exprs[i]->eval(local), what);
          }
          req.args.push_back(std::move(a));
        }
        out.push_back(std::move(req));
      }
    } catch (const PlanError&) {
      throw;
    } catch (const SpecError& e) {
      // An expression that cannot be evaluated on this case's shapes (division by zero,
      // overflow) is the plan's fault on this case.
      throw PlanError(fmt::format("{}: {}", base, e.what()));
    }
  }
  return out;
}

std::string instantiate_kernel(std::string_view kernel, std::string_view type, bool bare_template) {
  const auto open = kernel.find('<');
  if (open == std::string_view::npos)
    return bare_template ? fmt::format("{}<{}>", kernel, type) : std::string(kernel);
  std::string out(kernel.substr(0, open));
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t i = open; i < kernel.size(); ++i) {
    const char c = kernel[i];
    const bool starts =
        c == 'T' && !ident(kernel[i - 1]) && (i + 1 == kernel.size() || !ident(kernel[i + 1]));
    if (starts)
      out += type;
    else
      out += c;
  }
  return out;
}

} // namespace kj::judge
