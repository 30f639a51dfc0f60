// The launch-plan/kernel signature check of `kjudge validate` and of candidate loading: before
// any compiler runs, each launch's kernel must be a __global__ function of the source, with as
// many parameters as the launch has arguments, a pointer wherever a tensor goes and a value
// wherever a scalar, dim or expression goes, and a template argument list that fits. The exact
// types come later from NVRTC's demangled names; this catches the plan/kernel mismatches that
// the lexer's reading of the signature already shows, with the position of the launch.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kjudge/lex.hpp"
#include "kjudge/validate.hpp"

namespace kj {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// The template arguments written in a launch's kernel name: nullopt for "k", {} for "k<>",
// {"4", "T"} for "k<4, T>". Commas nested in <>, () or [] stay inside their argument.
std::optional<std::vector<std::string>> template_args(const std::string& kernel) {
  const auto open = kernel.find('<');
  if (open == std::string::npos) return std::nullopt;
  const auto close = kernel.rfind('>');
  std::vector<std::string> args;
  if (close == std::string::npos || close < open) return args;
  const std::string_view inner = std::string_view(kernel).substr(open + 1, close - open - 1);
  if (trim(inner).empty()) return args;
  int angles = 0, parens = 0;  // a `>` inside parentheses is a comparison, not a bracket
  std::size_t start = 0;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '(' || c == '[') ++parens;
    if (c == ')' || c == ']') --parens;
    if (parens == 0 && c == '<') ++angles;
    if (parens == 0 && c == '>') --angles;
    if (c == ',' && angles == 0 && parens == 0) {
      args.push_back(trim(inner.substr(start, i - start)));
      start = i + 1;
    }
  }
  args.push_back(trim(inner.substr(start)));
  return args;
}

// How many of a template's parameters have a default argument: the lexer gives the names only,
// so the template head is re-read from the declaration's first token.
std::size_t defaulted_template_params(std::string_view text, const std::vector<lex::Token>& toks,
                                      const lex::Function& f) {
  auto it = std::find_if(toks.begin(), toks.end(),
                         [&](const lex::Token& t) { return t.offset >= f.decl_offset; });
  while (it != toks.end() && it->text(text) != "template") {
    if (it->text(text) == "(" || it->text(text) == "{") return 0;
    ++it;
  }
  if (it == toks.end() || ++it == toks.end() || it->text(text) != "<") return 0;
  ++it;
  int parens = 0;  // of () [] {}: a `>` inside them is a comparison
  int angles = 0;  // nested template argument lists
  std::size_t defaults = 0;
  bool has_default = false;
  for (; it != toks.end(); ++it) {
    const std::string_view t = it->text(text);
    if (t == "(" || t == "[" || t == "{") {
      ++parens;
    } else if (t == ")" || t == "]" || t == "}") {
      --parens;
    } else if (parens == 0 && t == "<") {
      ++angles;
    } else if (parens == 0 && (t == ">" || t == ">>")) {
      const int closes = t == ">" ? 1 : 2;
      if (angles < closes) break;
      angles -= closes;
    } else if (t == "," && parens == 0 && angles == 0) {
      defaults += has_default;
      has_default = false;
    } else if (t == "=" && parens == 0 && angles == 0) {
      has_default = true;
    }
  }
  return defaults + has_default;
}

// The element type of a pointer parameter with qualifiers dropped: "const float* __restrict__"
// gives "float".
std::string element_type(const std::string& type) {
  std::string out;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && word != "const" && word != "volatile" && word != "__restrict__" &&
        word != "__restrict" && word != "restrict") {
      out += (out.empty() ? "" : " ") + word;
    }
    word.clear();
  };
  for (const char c : type) {
    if (c == ' ' || c == '*' || c == '&' || c == '\t') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

// The tensor dtype whose C++ name the parameter's element type spells, if any: typedefs,
// templates and vector types are left to NVRTC.
std::optional<DType> spelled_dtype(const std::string& element) {
  static constexpr DType all[] = {DType::f64,     DType::f32,     DType::f16, DType::bf16,
                                  DType::fp8e4m3, DType::fp8e5m2, DType::i64, DType::i32,
                                  DType::i16,     DType::i8,      DType::u8,  DType::boolean};
  for (const DType d : all) {
    if (dtype_cxx_name(d) == element) return d;
  }
  return std::nullopt;
}

enum class ArgKind { tensor, scalar, dim, expression, unknown_name, invalid };

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string_view arg_kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::tensor: return "a tensor";
    case ArgKind::scalar: return "a scalar";
    case ArgKind::dim: return "a dim";
    case ArgKind::expression: return "an expression";
    case ArgKind::unknown_name: return "an unknown name";
    case ArgKind::invalid: return "invalid";
  }
  return "invalid";
}

std::string param_string(const lex::Parameter& p) {
  return p.name.empty() ? fmt::format("'{}'", p.type) : fmt::format("'{}' ({})", p.name, p.type);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Location field_of(const Location& base, const std::string& suffix) {
  Location out = base;
  out.field += suffix;
  return out;
}

}  // namespace

std::vector<Diagnostic> check_launch_signatures(const Problem& problem, const KernelSource& src,
                                                const std::vector<ScratchSpec>& scratch) {
  std::vector<Diagnostic> out;
  auto error = [&](Location where, std::string message) {
    out.push_back({Diagnostic::Severity::error, std::move(where), std::move(message)});
  };
  // Which plan this is decides two rules: the reference's float role may stay a bare T, and
  // the golden's float tensors are double. Copies of the problem's sources count as them.
  auto same_source = [&](const KernelSource& other) {
    if (&src == &other) return true;
    if (src.path != other.path || src.text != other.text ||
        src.launches.size() != other.launches.size()) {
      return false;
    }
    for (std::size_t k = 0; k < src.launches.size(); ++k) {
      if (src.launches[k].kernel != other.launches[k].kernel) return false;
    }
    return true;
  };
  const bool is_golden = problem.golden && same_source(*problem.golden);
  const bool is_reference = !is_golden && same_source(problem.reference);
  const std::string role = is_reference ? "reference" : is_golden ? "golden" : "launch";
  const std::string file = src.path.empty() ? role : src.path.filename().string();

  const std::string_view text = src.text;
  const lex::LexResult lexed = lex::tokenize(text);
  const std::vector<lex::Token> toks = lex::code_tokens(lexed);
  std::vector<lex::Function> kernels;
  std::vector<std::string> kernel_names;
  for (lex::Function& f : lex::find_functions(text, lexed)) {
    if (f.kind != lex::FunctionKind::global) continue;
    if (std::find(kernel_names.begin(), kernel_names.end(), f.name) == kernel_names.end()) {
      kernel_names.push_back(f.name);
    }
    kernels.push_back(std::move(f));
  }

  auto classify = [&](const std::string& arg, const LaunchSpec& launch, std::string& why) {
    if (problem.find_input(arg) || problem.find_output(arg) || problem.find_stage(arg) ||
        std::any_of(scratch.begin(), scratch.end(),
                    [&](const ScratchSpec& s) { return s.name == arg; })) {
      return ArgKind::tensor;
    }
    if (problem.find_scalar(arg)) return ArgKind::scalar;
    auto has_dim = [&](const std::vector<DimSet>& sets) {
      return std::any_of(sets.begin(), sets.end(),
                         [&](const DimSet& s) { return s.values.count(arg) > 0; });
    };
    if (has_dim(problem.dims.public_sets) || has_dim(problem.dims.hidden_sets)) {
      return ArgKind::dim;
    }
    if (is_identifier(arg) && !(arg == "i" && launch.repeat)) return ArgKind::unknown_name;
    try {
      (void)Expr::parse(arg, Location{});
      return ArgKind::expression;
    } catch (const SpecError& e) {
      why = e.bare_message();
      return ArgKind::invalid;
    }
  };

  for (std::size_t k = 0; k < src.launches.size(); ++k) {
    const LaunchSpec& launch = src.launches[k];
    Location base = launch.where;
    if (base.field.empty()) base.field = fmt::format("{}.launch[{}]", role, k);
    const std::string name = launch.kernel_base_name();
    // A qualified launch ("ns::k") matches the lexer's unqualified name.
    const auto colons = name.rfind("::");
    const std::string unqualified = colons == std::string::npos ? name : name.substr(colons + 2);

    std::vector<const lex::Function*> matches;
    for (const lex::Function& f : kernels) {
      if (f.name == name || f.name == unqualified) matches.push_back(&f);
    }
    if (matches.empty()) {
      error(field_of(base, ".kernel"),
            kernel_names.empty()
                ? fmt::format("kernel '{}' is not defined in {}: it defines no __global__ function",
                              name, file)
                : fmt::format("kernel '{}' is not defined in {}; kernels defined: {}", name, file,
                              join(kernel_names)));
      continue;
    }
    // Overloads and prototypes: the one whose arity fits the launch, else the first definition.
    const lex::Function* fn = nullptr;
    for (const lex::Function* f : matches) {
      if (f->params.size() == launch.args.size() && (!fn || fn->body_begin == std::string::npos)) {
        fn = f;
      }
    }
    if (!fn) {
      for (const lex::Function* f : matches) {
        if (!fn || (fn->body_begin == std::string::npos && f->body_begin != std::string::npos)) {
          fn = f;
        }
      }
    }

    const auto targs = template_args(launch.kernel);
    if (!fn->is_template) {
      if (targs) {
        error(field_of(base, ".kernel"),
              fmt::format("kernel '{}' is not a template, but the launch '{}' gives template "
                          "arguments",
                          name, launch.kernel));
      }
    } else {
      const std::size_t total = fn->template_params.size();
      const std::size_t required = total - std::min(total, defaulted_template_params(text, toks, *fn));
      const std::size_t given = targs ? targs->size() : 0;
      // The reference names its float role T (or leaves a one-parameter template bare); kjudge
      // substitutes the problem dtype, and double for the golden, when it instantiates it.
      const bool role_substituted = is_reference && total == 1 && given == 0;
      if (!role_substituted && (given < required || given > total)) {
        const std::string expected = required == total
                                         ? fmt::format("{}", total)
                                         : fmt::format("{} to {}", required, total);
        error(field_of(base, ".kernel"),
              fmt::format("kernel '{}' takes {} template argument{} <{}>, the launch '{}' gives {}",
                          name, expected, total == 1 ? "" : "s", join(fn->template_params),
                          launch.kernel, given));
      }
    }

    std::vector<std::string> params;
    for (const auto& p : fn->params) params.push_back(p.name.empty() ? p.type : p.name);
    if (launch.args.size() != fn->params.size()) {
      error(field_of(base, ".args"),
            fmt::format("the launch gives {} argument{}, kernel '{}' takes {} parameter{} ({})",
                        launch.args.size(), launch.args.size() == 1 ? "" : "s", name,
                        fn->params.size(), fn->params.size() == 1 ? "" : "s", join(params)));
    }
    const std::size_t n = std::min(launch.args.size(), fn->params.size());
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& arg = launch.args[i];
      const lex::Parameter& param = fn->params[i];
      const Location where = field_of(base, fmt::format(".args[{}]", i));
      std::string why;
      const ArgKind kind = classify(arg, launch, why);
      if (kind == ArgKind::unknown_name) {
        error(where, param.is_pointer
                         ? fmt::format("argument {} '{}' names no input, output or scratch "
                                       "tensor, but parameter {} {} of '{}' is a pointer",
                                       i, arg, i, param_string(param), name)
                         : fmt::format("argument {} '{}' names no tensor, scalar or dim of the "
                                       "problem",
                                       i, arg));
        continue;
      }
      if (kind == ArgKind::invalid) {
        error(where, fmt::format("argument '{}' is neither a tensor, a scalar, a dim nor an "
                                 "expression: {}",
                                 arg, why));
        continue;
      }
      if (kind == ArgKind::tensor && !param.is_pointer) {
        error(where, fmt::format("argument {} '{}' is a tensor, but parameter {} {} of '{}' is "
                                 "not a pointer",
                                 i, arg, i, param_string(param), name));
        continue;
      }
      if (kind != ArgKind::tensor && param.is_pointer) {
        error(where, fmt::format("argument {} '{}' is {}, but parameter {} {} of '{}' is a "
                                 "pointer",
                                 i, arg, arg_kind_name(kind), i, param_string(param), name));
        continue;
      }
      if (kind == ArgKind::tensor) {
        DType dtype = DType::f32;
        if (const InputSpec* in = problem.find_input(arg)) {
          dtype = in->dtype;
        } else if (const OutputSpec* o = problem.find_output(arg)) {
          dtype = o->dtype;
        } else if (const StageSpec* stage = problem.find_stage(arg)) {
          dtype = stage->dtype;
        } else {
          dtype = std::find_if(scratch.begin(), scratch.end(),
                               [&](const ScratchSpec& s) { return s.name == arg; })->dtype;
        }
        if (is_golden && is_float(dtype)) dtype = DType::f64;
        const std::optional<DType> spelled = spelled_dtype(element_type(param.type));
        if (spelled && dtype_cxx_name(*spelled) != dtype_cxx_name(dtype)) {
          error(where, fmt::format("tensor '{}' is {} ({}), but parameter {} {} of '{}' points "
                                   "to {}",
                                   arg, dtype_name(dtype), dtype_cxx_name(dtype), i,
                                   param_string(param), name, dtype_cxx_name(*spelled)));
        }
      }
    }
  }
  return out;
}

}  // namespace kj
