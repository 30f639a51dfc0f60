// find_functions: the `__global__` and `__device__` functions of a source, read from its tokens
// without parsing C++. Declarations at namespace, `extern "C"` and class scope are walked one at
// a time; every other brace (function bodies, initialisers, enum bodies) is skipped whole, so
// lambdas and local declarations never show up. The parameter types it reports are what kjudge
// uses for `extern "C"` kernels, whose mangled names carry no types.
//
// Parameter types are normalised: tokens joined by single spaces with none around `::`, inside
// `<...>`/`(...)`/`[...]`, or before `*`, `&` and `,` ("const float*", "Tensor<float, 2>");
// `__restrict__` (and `__restrict`, `restrict`), `__grid_constant__` and attributes are dropped
// because they do not change the type an argument must have; `const` and `volatile` are kept.
// Array parameters are reported as the pointer they decay to ("float x[]" -> "float*").
#include "kjudge/lex.hpp"

#include <algorithm>
#include <initializer_list>

namespace kj::lex {
namespace {

constexpr std::size_t npos = std::string_view::npos;

bool one_of(std::string_view word, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// Words followed by parentheses that are never the function's parameter list.
bool is_annotation(std::string_view w) {
  return one_of(w, {"__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__",
                    "__declspec", "alignas", "__align__", "__builtin_align__", "decltype",
                    "noexcept", "throw", "sizeof", "alignof", "requires", "operator"});
}

// Words that cannot be a parameter's or function's name (so `int (*fp)(int)` is no function
// `int`, and the lone `int` in `f(int)` is an unnamed parameter).
bool is_type_word(std::string_view w) {
  return one_of(w, {"void",    "bool",     "char",  "char8_t", "char16_t", "char32_t",
                    "wchar_t", "short",    "int",   "long",    "float",    "double",
                    "signed",  "unsigned", "auto",  "const",   "volatile", "typename",
                    "class",   "struct",   "union", "enum",    "register", "template"});
}

bool is_dropped_qualifier(std::string_view w) {
  return one_of(w, {"__restrict__", "__restrict", "restrict", "__grid_constant__"});
}

class Parser {
public:
  Parser(std::string_view source, const LexResult& lexed)
      : src_(source), toks_(code_tokens(lexed)), n_(toks_.size()) {}

  std::vector<Function> run() {
    std::size_t i = 0;
    while (i < n_) {
      if (is(i, ";")) {
        ++i;
      } else if (is(i, "}")) {
        if (!scopes_.empty()) scopes_.pop_back();
        ++i;
      } else if (one_of(text(i), {"public", "private", "protected"}) && is(i + 1, ":")) {
        i += 2;
      } else {
        i = declaration(i);
      }
    }
    return std::move(out_);
  }

private:
  struct Scope {
    std::string name;  // "" for anonymous namespaces and extern blocks
    bool extern_c;
  };

  // What one declaration has shown so far.
  struct Decl {
    std::size_t start = 0;
    bool is_template = false;
    std::vector<std::string> template_params;
    bool global = false, device = false, host = false, extern_c = false;
    bool is_namespace = false, is_class = false, is_enum = false, initializer = false;
    bool ctor_init = false;  // a `:` after the parameter list: member initialisers follow
    std::string scope_name;  // of the namespace or class it opens
    std::size_t params_open = npos, params_close = npos, name_tok = npos;
    std::string name, qualifier;
  };

  std::string_view src_;
  std::vector<Token> toks_;
  std::size_t n_;
  std::vector<Scope> scopes_;
  std::vector<Function> out_;

  std::string_view text(std::size_t i) const { return i < n_ ? toks_[i].text(src_) : ""; }
  bool is(std::size_t i, std::string_view s) const { return i < n_ && text(i) == s; }
  bool is_ident(std::size_t i) const { return i < n_ && toks_[i].kind == TokenKind::identifier; }

  // The token closing the bracket opened at i, counting only its own kind; n_ when unclosed.
  std::size_t match(std::size_t i) const {
    std::string_view open = text(i);
    std::string_view close = open == "(" ? ")" : open == "[" ? "]" : "}";
    int depth = 0;
    for (std::size_t k = i; k < n_; ++k) {
      if (text(k) == open) ++depth;
      if (text(k) == close && --depth == 0) return k;
    }
    return n_;
  }

  // Bracket nesting in a token range, `<...>` included: a `<` opens only after a name, as in a
  // template-id, and `>>` closes two. (A comparison `a < b` in a default argument is misread as
  // an opening; kernels' signatures practically never have one.)
  struct Nesting {
    std::vector<char> stack;
    // Returns the number of `>` that found no open `<` (they close an enclosing list).
    int step(std::string_view w, bool after_name) {
      if (w == "(" || w == "[" || w == "{") {
        stack.push_back(w[0]);
      } else if (w == ")" || w == "]" || w == "}") {
        char open = w == ")" ? '(' : w == "]" ? '[' : '{';
        while (!stack.empty() && stack.back() != open)
          stack.pop_back();
        if (!stack.empty()) stack.pop_back();
      } else if (w == "<" && after_name) {
        stack.push_back('<');
      } else if (w == ">" || w == ">>") {
        int closers = static_cast<int>(w.size());
        while (closers > 0 && !stack.empty() && stack.back() == '<') {
          stack.pop_back();
          --closers;
        }
        return closers;
      }
      return 0;
    }
    bool top() const { return stack.empty(); }
  };

  // End (exclusive) of the `<...>` list opened at `open`: the closing `>` token, or where a
  // malformed list gives up (`;`, `{` or an unmatched closer at its top level).
  std::size_t angle_close(std::size_t open) const {
    Nesting nest;
    for (std::size_t k = open + 1; k < n_; ++k) {
      std::string_view w = text(k);
      if (nest.top() && (w == ";" || w == "{" || w == ")" || w == "]" || w == "}")) return k;
      if (nest.step(w, is_ident(k - 1)) > 0) return k;
    }
    return n_;
  }

  std::vector<std::pair<std::size_t, std::size_t>> split_commas(std::size_t b,
                                                                std::size_t e) const {
    std::vector<std::pair<std::size_t, std::size_t>> parts;
    Nesting nest;
    std::size_t part = b;
    for (std::size_t k = b; k < e; ++k) {
      if (nest.top() && is(k, ",")) {
        parts.emplace_back(part, k);
        part = k + 1;
      } else {
        nest.step(text(k), k > b && is_ident(k - 1));
      }
    }
    if (part < e || !parts.empty()) parts.emplace_back(part, e);
    return parts;
  }

  // A parameter's range without its default argument.
  std::size_t default_cut(std::size_t b, std::size_t e) const {
    Nesting nest;
    for (std::size_t k = b; k < e; ++k) {
      if (nest.top() && is(k, "=")) return k;
      nest.step(text(k), k > b && is_ident(k - 1));
    }
    return e;
  }

  std::vector<std::string> template_names(std::size_t b, std::size_t e) const {
    std::vector<std::string> names;
    for (auto [pb, pe] : split_commas(b, e)) {
      pe = default_cut(pb, pe);
      bool named = pe > pb + 1 && is_ident(pe - 1) && !is_type_word(text(pe - 1));
      names.emplace_back(named ? text(pe - 1) : "");
    }
    return names;
  }

  // Token texts with normalised spacing (see the top of the file).
  std::string join(const std::vector<std::size_t>& idx) const {
    std::string out;
    std::string_view prev;
    for (std::size_t k : idx) {
      std::string_view w = text(k);
      bool tight =
          out.empty() || one_of(prev, {"::", "<", "(", "[", "~"}) ||
          one_of(w, {"::", "<", ">", ">>", "*", "&", "&&", ",", "(", ")", "[", "]", "..."});
      if (!tight) out += ' ';
      out += w;
      prev = w;
    }
    return out;
  }

  // The last token of a type may be the declarator's name when something before it that is not
  // a cv-qualifier forms the type ("const T x" names x; "const T" is unnamed).
  bool names_declarator(const std::vector<std::size_t>& kept, std::size_t pos) const {
    if (!is_ident(kept[pos]) || is_type_word(text(kept[pos]))) return false;
    if (pos == 0 || is(kept[pos - 1], "::")) return false;
    for (std::size_t k = 0; k < pos; ++k) {
      if (!one_of(text(kept[k]), {"const", "volatile", "typename", "struct", "class", "union",
                                  "enum", "register"})) {
        return true;
      }
    }
    return false;
  }

  Parameter parameter(std::size_t b, std::size_t e) const {
    std::vector<std::size_t> kept;
    for (std::size_t k = b; k < e; ++k) {
      if (toks_[k].kind == TokenKind::attribute || is_dropped_qualifier(text(k))) continue;
      kept.push_back(k);
    }
    Parameter p{"", "", false};
    // Only what is outside every bracket shapes the declarator: Map<int, float*> is no pointer.
    std::vector<bool> top(kept.size());
    Nesting nest;
    for (std::size_t j = 0; j < kept.size(); ++j) {
      top[j] = nest.top();
      nest.step(text(kept[j]), j > 0 && is_ident(kept[j - 1]));
    }
    // A parenthesised declarator: `void (*fn)(int)`, `float (&a)[4]`.
    for (std::size_t j = 0; j + 1 < kept.size(); ++j) {
      if (!top[j] || !is(kept[j], "(") || !one_of(text(kept[j + 1]), {"*", "&", "&&"})) continue;
      std::size_t close = j;
      while (close < kept.size() && !is(kept[close], ")"))
        ++close;
      std::vector<std::size_t> type = kept;
      for (std::size_t k = close; k-- > j + 1;) {
        if (is_ident(kept[k]) && !is_type_word(text(kept[k]))) {
          p.name = text(kept[k]);
          type.erase(type.begin() + static_cast<std::ptrdiff_t>(k));
          break;
        }
      }
      p.type = join(type);
      p.is_pointer = is(kept[j + 1], "*");
      return p;
    }
    // An array parameter decays to a pointer to its element.
    std::size_t bracket = 0;
    while (bracket < kept.size() && !(top[bracket] && is(kept[bracket], "[")))
      ++bracket;
    auto at = [&](std::size_t j) { return kept.begin() + static_cast<std::ptrdiff_t>(j); };
    std::vector<std::size_t> base(kept.begin(), at(bracket));
    if (!base.empty() && names_declarator(base, base.size() - 1)) {
      p.name = text(base.back());
      base.pop_back();
    }
    p.type = join(base);
    if (bracket < kept.size()) {
      std::size_t first_end = bracket;
      while (first_end < kept.size() && !is(kept[first_end], "]"))
        ++first_end;
      std::vector<std::size_t> rest(at(std::min(first_end + 1, kept.size())), kept.end());
      p.type += rest.empty() ? "*" : "(*)" + join(rest);
      p.is_pointer = true;
      return p;
    }
    for (std::size_t j = 0; j < base.size(); ++j) {
      if (top[j] && is(base[j], "*")) p.is_pointer = true;
    }
    return p;
  }

  std::vector<Parameter> parameters(std::size_t b, std::size_t e) const {
    std::vector<Parameter> params;
    auto parts = split_commas(b, e);
    if (parts.size() == 1 && parts[0].second == parts[0].first + 1 && is(parts[0].first, "void")) {
      return params;
    }
    for (auto [pb, pe] : parts)
      params.push_back(parameter(pb, default_cut(pb, pe)));
    return params;
  }

  // The opening `<` of the template arguments that end at `close` (a `>` or `>>`), or npos.
  std::size_t angle_open_before(std::size_t close, std::size_t floor) const {
    // Real template arguments are short; the cap keeps inputs like `>()>()>()...` linear.
    floor = std::max(floor, close > 256 ? close - 256 : 0);
    int depth = 0;
    for (std::size_t k = close + 1; k-- > floor;) {
      std::string_view w = text(k);
      if (w == ">" || w == ">>") depth += static_cast<int>(w.size());
      if (w == "<" && --depth <= 0) return depth == 0 ? k : npos;
      if (w == ";" || w == "{" || w == "}") return npos;
    }
    return npos;
  }

  // Whether the `(` at `open` starts the parameter list of a function named just before it;
  // if so, fills in the name, its token and its `A::B::` qualifier.
  bool function_name(std::size_t open, Decl& d) const {
    if (open <= d.start) return false;
    std::size_t p = open - 1;
    std::size_t first = p;  // first token of the name, where a qualifier would end
    std::string name;
    std::size_t op = p;  // operator+, operator(), operator[]: punctuators after `operator`
    while (op > d.start && p - op < 3 && toks_[op].kind == TokenKind::punct)
      --op;
    if (op < p && is(op, "operator")) {
      name = "operator";
      for (std::size_t j = op + 1; j <= p; ++j)
        name += text(j);
      p = first = op;
    } else if (is_ident(p) && p > d.start && is(p - 1, "operator")) {
      name = "operator " + std::string(text(p));  // conversion: operator float()
      first = p - 1;
    } else if (is_ident(p)) {
      std::string_view w = text(p);
      if (is_annotation(w) || is_type_word(w)) return false;
      name = w;
      if (p > d.start && is(p - 1, "~")) {
        name = "~" + name;
        first = p - 1;
      }
    } else if (is(p, ">") || is(p, ">>")) {
      std::size_t lt = angle_open_before(p, d.start);
      if (lt == npos || lt == d.start || !is_ident(lt - 1) || is_annotation(text(lt - 1))) {
        return false;
      }
      p = first = lt - 1;
      name = text(p);
    } else {
      return false;
    }
    std::string qualifier;
    for (std::size_t k = first; k >= d.start + 2 && is(k - 1, "::");) {
      std::size_t q = k - 2;
      if (is(q, ">") || is(q, ">>")) {
        std::size_t lt = angle_open_before(q, d.start);
        if (lt == npos || lt == d.start) break;
        q = lt - 1;
      }
      if (!is_ident(q)) break;
      qualifier = std::string(text(q)) + "::" + qualifier;
      k = q;
    }
    d.name = std::move(name);
    d.name_tok = p;
    d.qualifier = std::move(qualifier);
    return true;
  }

  void finish(const Decl& d, std::size_t open_brace, std::size_t close_brace) {
    if (d.params_open == npos || !(d.global || d.device)) return;
    Function f;
    f.kind = d.global ? FunctionKind::global
             : d.host ? FunctionKind::host_device
                      : FunctionKind::device;
    f.name = d.name;
    for (const Scope& s : scopes_) {
      if (!s.name.empty()) f.qualified_name += s.name + "::";
    }
    f.qualified_name += d.qualifier + d.name;
    f.is_template = d.is_template;
    f.extern_c = d.extern_c || (!scopes_.empty() && scopes_.back().extern_c);
    f.template_params = d.template_params;
    f.params = parameters(d.params_open + 1, d.params_close);
    f.decl_offset = toks_[d.start].offset;
    f.body_begin = open_brace == npos ? npos : toks_[open_brace].offset;
    f.body_end = open_brace == npos ? npos
                 : close_brace < n_ ? toks_[close_brace].offset + 1
                                    : src_.size();
    f.line = toks_[d.name_tok].line;
    out_.push_back(std::move(f));
  }

  void open_scope(std::string name, bool extern_c) {
    bool inherited = !scopes_.empty() && scopes_.back().extern_c;
    scopes_.push_back(Scope{std::move(name), extern_c || inherited});
  }

  // The name a `struct`/`class`/`union` keyword at i introduces ("" when anonymous).
  std::string class_name(std::size_t i) const {
    std::size_t k = i + 1;
    while (k < n_) {
      if (toks_[k].kind == TokenKind::attribute) {
        ++k;
      } else if (is_ident(k) && is_annotation(text(k)) && is(k + 1, "(")) {
        k = match(k + 1) + 1;
      } else {
        break;
      }
    }
    return is_ident(k) ? std::string(text(k)) : "";
  }

  // Reads one declaration starting at i and returns where the next one starts.
  std::size_t declaration(std::size_t i) {
    Decl d;
    d.start = i;
    while (is(i, "template")) {
      d.is_template = true;
      if (!is(i + 1, "<")) {  // explicit instantiation
        ++i;
        continue;
      }
      std::size_t close = angle_close(i + 1);
      d.template_params = template_names(i + 2, close);
      i = close < n_ && (is(close, ">") || is(close, ">>")) ? close + 1 : close;
    }
    for (; i < n_; ++i) {
      std::string_view w = text(i);
      bool have_params = d.params_open != npos;
      if (is_ident(i)) {
        // An execution space after a parameter list means that list was a macro call
        // (`DEFINE_X(y) __global__ void k()`): the real declaration starts here.
        if (have_params && (one_of(w, {"__global__", "__device__", "__host__"}) ||
                            (w == "template" && !is(i - 1, "::")))) {
          return i;
        }
        if (have_params) continue;
        if (w == "__global__") d.global = true;
        if (w == "__device__") d.device = true;
        if (w == "__host__") d.host = true;
        if (w == "namespace") d.is_namespace = true;
        if (w == "enum") d.is_enum = true;
        if (one_of(w, {"struct", "class", "union"}) && !d.is_class) {
          d.is_class = true;
          d.scope_name = class_name(i);
        }
        if (w == "extern" && i + 1 < n_ && toks_[i + 1].kind == TokenKind::string) {
          bool c_linkage = text(i + 1) == "\"C\"";
          if (is(i + 2, "{")) {
            open_scope("", c_linkage);
            return i + 3;
          }
          d.extern_c = c_linkage;
          ++i;
        }
        continue;
      }
      if (w == ";") {
        finish(d, npos, npos);
        return i + 1;
      }
      if (w == "}") {
        finish(d, npos, npos);
        return i;
      }
      if (w == "=" && !have_params) d.initializer = true;
      if (w == ":" && have_params) d.ctor_init = true;
      if (w == "[") {
        i = match(i);
      } else if (w == "(") {
        std::size_t close = match(i);
        if (!have_params && !d.initializer && function_name(i, d)) {
          // `__device__ int x(0);` initialises a variable; a parameter never starts with a value.
          bool value = i + 1 < n_ && (toks_[i + 1].kind == TokenKind::number ||
                                      toks_[i + 1].kind == TokenKind::string ||
                                      toks_[i + 1].kind == TokenKind::character ||
                                      one_of(text(i + 1), {"true", "false", "nullptr"}));
          if (value) {
            d.initializer = true;
          } else {
            d.params_open = i;
            d.params_close = std::min(close, n_);
          }
        }
        i = close;
      } else if (w == "{") {
        if (d.is_namespace && !have_params && !d.initializer) {
          std::string name;
          for (std::size_t k = d.start; k < i; ++k) {
            if (is_ident(k) && !one_of(text(k), {"namespace", "inline"})) name += text(k);
            if (is(k, "::")) name += "::";
          }
          open_scope(std::move(name), false);
          return i + 1;
        }
        if (have_params) {
          // A brace right after a member initialiser's name is that initialiser (`x{0}`).
          if (d.ctor_init && (is_ident(i - 1) || is(i - 1, ">") || is(i - 1, ">>"))) {
            i = match(i);
            continue;
          }
          std::size_t close = match(i);
          finish(d, i, close);
          return close + 1;
        }
        if (d.is_class && !d.is_enum && !d.initializer) {
          open_scope(d.scope_name, false);
          return i + 1;
        }
        i = match(i);
      }
    }
    finish(d, npos, npos);
    return n_;
  }
};

}  // namespace

std::vector<Function> find_functions(std::string_view source, const LexResult& lexed) {
  return Parser(source, lexed).run();
}

}  // namespace kj::lex
