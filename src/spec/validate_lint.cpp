// The reference lint of `kjudge validate`. The golden is the reference template instantiated
// with T = double, so anything in its __global__/__device__ bodies that pins f32 (an f-suffixed
// literal, expf and the other single-precision functions and intrinsics) silently caps the
// yardstick at f32. References also accumulate sequentially (docs/design.md): a shuffle or atomic
// reduction changes the order the `relative` policy measures against. The lint walks the lexer's
// code tokens, so comments, strings and identifiers that merely contain an `f` are never flagged.
#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "kjudge/lex.hpp"
#include "kjudge/validate.hpp"

namespace kj {

namespace {

// The single-precision functions of the CUDA Math API (the `f`-suffixed twins of the double
// ones) and the f32 intrinsics. A call of any of them converts a double argument to float.
constexpr std::array f32_math_functions = {
    "acosf",         "acoshf",       "asinf",        "asinhf",      "atan2f",
    "atanf",         "atanhf",       "cbrtf",        "ceilf",       "copysignf",
    "cosf",          "coshf",        "cospif",       "cyl_bessel_i0f", "cyl_bessel_i1f",
    "erfcf",         "erfcinvf",     "erfcxf",       "erff",        "erfinvf",
    "exp10f",        "exp2f",        "expf",         "expm1f",      "fabsf",
    "fdimf",         "fdividef",     "floorf",       "fmaf",        "fmaxf",
    "fminf",         "fmodf",        "frexpf",       "hypotf",      "ilogbf",
    "j0f",           "j1f",          "jnf",          "ldexpf",      "lgammaf",
    "llrintf",       "llroundf",     "log10f",       "log1pf",      "log2f",
    "logbf",         "logf",         "lrintf",       "lroundf",     "modff",
    "nanf",          "nearbyintf",   "nextafterf",   "norm3df",     "norm4df",
    "normcdff",      "normcdfinvf",  "normf",        "powf",        "rcbrtf",
    "remainderf",    "remquof",      "rhypotf",      "rintf",       "rnorm3df",
    "rnorm4df",      "rnormf",       "roundf",       "rsqrtf",      "scalblnf",
    "scalbnf",       "sincosf",      "sincospif",    "sinf",        "sinhf",
    "sinpif",        "sqrtf",        "tanf",         "tanhf",       "tgammaf",
    "truncf",        "y0f",          "y1f",          "ynf",
};
constexpr std::array f32_intrinsics = {
    "__cosf",     "__exp10f",   "__expf",     "__fdividef", "__log10f",   "__log2f",
    "__logf",     "__powf",     "__saturatef", "__sincosf", "__sinf",     "__tanf",
    "__tanhf",    "__frsqrt_rn", "__fsqrt_rd", "__fsqrt_rn", "__fsqrt_ru", "__fsqrt_rz",
    "__frcp_rd",  "__frcp_rn",  "__frcp_ru",  "__frcp_rz",  "__fadd_rd",  "__fadd_rn",
    "__fadd_ru",  "__fadd_rz",  "__fsub_rd",  "__fsub_rn",  "__fsub_ru",  "__fsub_rz",
    "__fmul_rd",  "__fmul_rn",  "__fmul_ru",  "__fmul_rz",  "__fdiv_rd",  "__fdiv_rn",
    "__fdiv_ru",  "__fdiv_rz",  "__fmaf_rd",  "__fmaf_rn",  "__fmaf_ru",  "__fmaf_rz",
    "__fmaf_ieee_rd", "__fmaf_ieee_rn", "__fmaf_ieee_ru", "__fmaf_ieee_rz",
    "__float2int_rd", "__float2int_rn", "__float2int_ru", "__float2int_rz",
    "__float2uint_rd", "__float2uint_rn", "__float2uint_ru", "__float2uint_rz",
    "__float2ll_rd", "__float2ll_rn", "__float2ll_ru", "__float2ll_rz",
    "__float2ull_rd", "__float2ull_rn", "__float2ull_ru", "__float2ull_rz",
    "__int2float_rd", "__int2float_rn", "__int2float_ru", "__int2float_rz",
    "__uint2float_rd", "__uint2float_rn", "__uint2float_ru", "__uint2float_rz",
    "__ll2float_rd", "__ll2float_rn", "__ll2float_ru", "__ll2float_rz",
    "__ull2float_rd", "__ull2float_rn", "__ull2float_ru", "__ull2float_rz",
};

template <std::size_t N>
bool listed(const std::array<const char*, N>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const char* s) { return name == s; });
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// What the type-generic replacement of an f32-only call is, for the message.
std::string replacement(std::string_view name) {
  if (name == "__fdividef" || name == "fdividef") return "write a / b on T";
  if (starts_with(name, "__f") && (ends_with(name, "_rn") || ends_with(name, "_rz") ||
                                   ends_with(name, "_ru") || ends_with(name, "_rd"))) {
    return "write the plain operation on T";
  }
  if (name.find("2float") != std::string_view::npos || starts_with(name, "__float2")) {
    return "convert with T(...) or static_cast";
  }
  std::string_view stem = name;
  if (starts_with(stem, "__")) stem.remove_prefix(2);
  if (ends_with(stem, "f")) stem.remove_suffix(1);
  return fmt::format("write kj::{}(...) (kjudge/device.cuh) or the overloaded form", stem);
}

bool is_shuffle(std::string_view name) {
  return starts_with(name, "__shfl") ||
         (starts_with(name, "__reduce_") && ends_with(name, "_sync"));
}

bool is_atomic(std::string_view name) {
  return name.size() > 6 && starts_with(name, "atomic") &&
         std::isupper(static_cast<unsigned char>(name[6]));
}

// A number token split into the literal and its suffix, and whether it is a floating literal.
struct NumberParts {
  bool floating = false;
  std::string_view body;
  std::string_view suffix;
};

NumberParts split_number(std::string_view t) {
  NumberParts parts;
  std::size_t i = 0;
  auto digits = [&](auto is_digit) {
    while (i < t.size() && (is_digit(static_cast<unsigned char>(t[i])) || t[i] == '\'')) ++i;
  };
  auto exponent = [&](char lower, char upper) {
    if (i < t.size() && (t[i] == lower || t[i] == upper)) {
      std::size_t j = i + 1;
      if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
      if (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) {
        i = j;
        digits([](unsigned char c) { return std::isdigit(c) != 0; });
        parts.floating = true;
      }
    }
  };
  const bool hex = t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const bool binary = t.size() > 1 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B');
  if (hex) {
    // 0x1f is an integer: its f is a hex digit. Only a binary exponent makes it floating.
    i = 2;
    digits([](unsigned char c) { return std::isxdigit(c) != 0; });
    if (i < t.size() && t[i] == '.') {
      ++i;
      digits([](unsigned char c) { return std::isxdigit(c) != 0; });
      parts.floating = true;
    }
    exponent('p', 'P');
  } else if (binary) {
    i = 2;
    digits([](unsigned char c) { return c == '0' || c == '1'; });
  } else {
    digits([](unsigned char c) { return std::isdigit(c) != 0; });
    if (i < t.size() && t[i] == '.') {
      ++i;
      digits([](unsigned char c) { return std::isdigit(c) != 0; });
      parts.floating = true;
    }
    exponent('e', 'E');
  }
  parts.body = t.substr(0, i);
  parts.suffix = t.substr(i);
  return parts;
}

// The precision a literal suffix pins, or empty when it does not narrow (none, l, L, f64...).
std::string_view narrowing_suffix(std::string_view suffix) {
  if (suffix == "f" || suffix == "F" || suffix == "f32" || suffix == "F32") return "f32";
  if (suffix == "f16" || suffix == "F16") return "f16";
  if (suffix == "bf16" || suffix == "BF16") return "bf16";
  return {};
}

}  // namespace

std::vector<Diagnostic> lint_reference(const KernelSource& src,
                                       const std::set<std::string>& skip_kernels) {
  std::vector<Diagnostic> out;
  const std::string_view text = src.text;
  const std::string file = src.path.empty() ? std::string("reference") : src.path.string();
  auto at = [&](int line, int column) { return Location{file, "", line, column}; };

  const lex::LexResult lexed = lex::tokenize(text);
  for (const auto& e : lexed.errors) {
    out.push_back({Diagnostic::Severity::error, at(e.line, e.column), e.message});
  }
  std::vector<std::pair<std::size_t, std::size_t>> bodies;
  for (const lex::Function& f : lex::find_functions(text, lexed)) {
    if (f.body_begin == std::string::npos || f.body_end == std::string::npos) continue;
    if (f.kind == lex::FunctionKind::global && skip_kernels.count(f.name)) continue;
    bodies.emplace_back(f.body_begin, f.body_end);
  }
  std::sort(bodies.begin(), bodies.end());
  auto in_body = [&](std::size_t offset) {
    // Bodies do not nest (a lambda is part of its function's body), so the last body that
    // starts at or before the offset is the only candidate.
    auto it = std::upper_bound(bodies.begin(), bodies.end(),
                               std::pair{offset, std::numeric_limits<std::size_t>::max()});
    return it != bodies.begin() && offset < std::prev(it)->second;
  };

  const std::vector<lex::Token> tokens = lex::code_tokens(lexed);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const lex::Token& tok = tokens[i];
    if (!in_body(tok.offset)) continue;
    const std::string_view word = tok.text(text);
    if (tok.kind == lex::TokenKind::number) {
      const NumberParts parts = split_number(word);
      const std::string_view pins = narrowing_suffix(parts.suffix);
      if (parts.floating && !pins.empty()) {
        out.push_back({Diagnostic::Severity::error, at(tok.line, tok.column),
                       fmt::format("f-suffixed literal '{}' caps the golden at {}; write "
                                   "kj::c<T>({})",
                                   word, pins, parts.body)});
      }
      continue;
    }
    if (tok.kind != lex::TokenKind::identifier) continue;
    const bool called = i + 1 < tokens.size() && tokens[i + 1].kind == lex::TokenKind::punct &&
                        tokens[i + 1].text(text) == "(";
    if (!called) continue;
    // obj.expf(...) is somebody's member function, not the math library.
    if (i > 0 && tokens[i - 1].kind == lex::TokenKind::punct) {
      const std::string_view prev = tokens[i - 1].text(text);
      if (prev == "." || prev == "->") continue;
    }
    if (listed(f32_math_functions, word) || listed(f32_intrinsics, word)) {
      out.push_back({Diagnostic::Severity::error, at(tok.line, tok.column),
                     fmt::format("f32-only {} '{}' caps the golden at f32; {}",
                                 starts_with(word, "__") ? "intrinsic" : "math function", word,
                                 replacement(word))});
    } else if (is_shuffle(word) || is_atomic(word)) {
      out.push_back({Diagnostic::Severity::error, at(tok.line, tok.column),
                     fmt::format("'{}' in the reference: references accumulate sequentially "
                                 "(docs/design.md); shuffle/atomic reductions change the yardstick",
                                 word)});
    }
  }
  return out;
}

}  // namespace kj
