// The token-level groundwork of the mutation operators (src/mutate/operator_tokens.hpp): how
// words and literals are classified, and how a `Body` is built from one device function: its
// code tokens, matched brackets and template argument lists, frozen spans (launch brackets,
// attributes, strings), compound-statement braces, for loops and statements, plus `emit`, the
// one place a candidate rewrite is checked against the catalogue and recorded.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "mutate/operator_tokens.hpp"

namespace kj::mutate::detail::ops {

// ---- Words and literals ------------------------------------------------------------------

bool is_type_word(std::string_view w) {
  return in(w, {"void", "bool", "char", "short", "int", "long", "float", "double", "signed",
                "unsigned", "const", "volatile", "auto", "half", "__half", "__half2",
                "__nv_bfloat16", "__nv_bfloat162", "float2", "float3", "float4", "double2",
                "int2", "int3", "int4", "uint2", "uint3", "uint4", "size_t", "constexpr", "static",
                "__shared__", "__restrict__", "__restrict", "register", "extern", "typename",
                "struct", "class", "uint32_t", "int32_t", "uint64_t", "int64_t", "uint8_t",
                "int8_t", "uint16_t", "int16_t", "__device__", "__constant__", "inline",
                "__forceinline__"});
}

bool is_statement_word(std::string_view w) {
  return in(w, {"return", "case", "else", "do", "throw", "sizeof", "new", "delete", "goto",
                "co_return", "co_yield", "if", "for", "while", "switch", "alignof", "decltype",
                "typeid", "break", "continue", "default", "template", "operator", "using",
                "namespace", "typedef"});
}

bool is_declaration_specifier(std::string_view w) {
  return in(w, {"const", "volatile", "__shared__", "static", "constexpr", "extern", "register",
                "__restrict__", "typename", "auto", "__constant__"});
}

bool is_float_function(std::string_view w) {
  return in(w, {"expf", "__expf", "logf", "__logf", "sqrtf", "rsqrtf", "fmaxf", "fminf", "fabsf",
                "tanhf", "fmaf", "__fmaf_rn", "__fdividef", "__half2float", "__bfloat162float",
                "__int_as_float", "sinf", "cosf", "powf", "exp2f", "log2f", "__sinf", "__cosf",
                "__powf", "__log2f", "__saturatef", "__fadd_rn", "__fmul_rn", "__frcp_rn",
                "__fsqrt_rn", "erff", "tanf", "exp10f", "log10f", "__low2float", "__high2float"});
}

bool is_assignment(std::string_view p) {
  return in(p, {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="});
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool is_epsilon_name(std::string_view name) {
  const std::string l = lower(name);
  return l.rfind("eps", 0) == 0 || l.rfind("keps", 0) == 0;
}

IntLiteral parse_int(std::string_view text) {
  IntLiteral r;
  if (text.empty() || text.find('\'') != std::string_view::npos) return r;
  std::size_t i = 0;
  int base = 10;
  if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    r.hex = true;
    i = 2;
  } else if (text.size() > 1 && text[0] == '0' && std::isdigit(static_cast<unsigned char>(text[1]))) {
    return r; // octal
  }
  std::size_t digits = i;
  while (digits < text.size() &&
         (base == 16 ? std::isxdigit(static_cast<unsigned char>(text[digits])) != 0
                     : std::isdigit(static_cast<unsigned char>(text[digits])) != 0))
    ++digits;
  if (digits == i) return r;
  r.suffix = std::string(text.substr(digits));
  for (char c : r.suffix)
    if (!in(std::string_view(&c, 1), {"u", "U", "l", "L"})) return r;
  r.value = std::strtoull(std::string(text.substr(i, digits - i)).c_str(), nullptr, base);
  r.ok = true;
  return r;
}

FloatLiteral parse_float(std::string_view text) {
  FloatLiteral r;
  if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) return r;
  if (text.find_first_of(".eE") == std::string_view::npos) return r;
  std::string body(text);
  if (!body.empty() && (body.back() == 'f' || body.back() == 'F')) {
    r.is_float = true;
    body.pop_back();
  } else if (!body.empty() && (body.back() == 'l' || body.back() == 'L')) {
    return r;
  }
  char* end = nullptr;
  r.value = std::strtod(body.c_str(), &end);
  r.ok = end != nullptr && *end == '\0';
  return r;
}

std::string float_text(double v, bool is_float) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return is_float ? s + "f" : s;
}

TypeInfo type_from_parameter(const lex::Parameter& p) {
  TypeInfo t;
  t.known = true;
  std::string word;
  for (char c : p.type + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') {
      word += c;
      continue;
    }
    if (!word.empty()) t.words.push_back(word), word.clear();
    if (c == '*' || c == '[') ++t.depth;
  }
  return t;
}

// ---- A body and its structure -------------------------------------------------------------

Body::Body(const FileContext& file, const lex::Function& fn, const std::vector<bool>& active,
           std::vector<Candidate>& out)
    : f_(file), fn_(fn), active_(active), out_(out) {
  for (const Token& tok : lex::code_tokens(*file.lexed))
    if (tok.offset > fn.body_begin && tok.offset + tok.length < fn.body_end) t_.push_back(tok);
  n_ = static_cast<int>(t_.size());
  analyse();
}

void Body::emit(std::string_view rewrite, int first, int last, std::string replacement,
                std::string prelude, int equivalence) {
  if (first < 0 || last < first || last >= n_) return;
  for (int i = first; i <= last; ++i)
    if (frozen_[static_cast<std::size_t>(i)]) return;
  emit_span(rewrite, begin_of(first), end_of(last), std::move(replacement), std::move(prelude),
            equivalence);
}

void Body::emit_span(std::string_view rewrite, std::size_t begin, std::size_t end,
                     std::string replacement, std::string prelude, int equivalence) {
  const Operator& op = catalogue_table()[static_cast<std::size_t>(op_)];
  if (std::find(op.rewrites.begin(), op.rewrites.end(), rewrite) == op.rewrites.end())
    throw std::logic_error("rewrite '" + std::string(rewrite) + "' is not one of " + op.id);
  if (f_.src.substr(begin, end - begin) == replacement) return;
  // A span over a conditional-compilation line would unbalance it; #pragma lines are safe.
  for (const Token& tok : f_.lexed->tokens)
    if (tok.kind == TokenKind::preprocessor && tok.offset >= begin && tok.offset < end &&
        tok.text(f_.src).find("pragma") == std::string_view::npos)
      return;
  out_.push_back(Candidate{op_, std::string(rewrite), begin, end - begin, std::move(replacement),
                           std::move(prelude),
                           equivalence < 0 ? op.equivalence_prone : equivalence == 1});
}

void Body::analyse() {
  const auto N = static_cast<std::size_t>(n_);
  match_.assign(N, -1);
  tmpl_.assign(N, false);
  in_tmpl_.assign(N, false);
  frozen_.assign(N, false);
  paren_depth_.assign(N, 0);
  block_brace_.assign(N, false);
  header_close_.assign(N, false);
  std::vector<int> stack;
  int launch = 0;
  for (int i = 0; i < n_; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (kind(i) == TokenKind::launch_open) ++launch;
    if (launch > 0 || kind(i) == TokenKind::attribute || kind(i) == TokenKind::string ||
        kind(i) == TokenKind::character)
      frozen_[u] = kind(i) != TokenKind::character || launch > 0;
    if (kind(i) == TokenKind::launch_close) launch = std::max(0, launch - 1);
    paren_depth_[u] = 0;
    for (int s : stack)
      if (!is(s, "{")) ++paren_depth_[u];
    const std::string_view w = tx(i);
    if (punct(i) && (w == "(" || w == "[" || w == "{")) {
      stack.push_back(i);
    } else if (punct(i) && (w == ")" || w == "]" || w == "}")) {
      if (!stack.empty()) {
        match_[u] = stack.back();
        match_[static_cast<std::size_t>(stack.back())] = i;
        stack.pop_back();
      }
    }
  }
  for (int i = 0; i < n_; ++i)
    if (is(i, "<") && !tmpl(i) && ident(i - 1)) mark_template(i);
  // Compound-statement braces: not an initialiser (`= {`, `T v{`, `({`).
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "{")) continue;
    const bool init = is(i - 1, "=") || is(i - 1, ",") || is(i - 1, "(") || is(i - 1, "{") ||
                      is(i - 1, "return") || is(i - 1, "]") || tmpl(i - 1) ||
                      (ident(i - 1) && !in(tx(i - 1), {"else", "do", "try"}));
    if (!init) {
      block_brace_[static_cast<std::size_t>(i)] = true;
      if (match(i) >= 0) block_brace_[static_cast<std::size_t>(match(i))] = true;
    }
  }
  for (int i = 0; i < n_; ++i) {
    if (!in(tx(i), {"if", "for", "while", "switch"}) || !ident(i)) continue;
    const int open = control_header_open(i);
    if (open < 0) continue;
    header_close_[static_cast<std::size_t>(match(open))] = true;
    if (is(i, "for")) add_for(i, open);
  }
  for (auto& loop : fors_)
    for (const auto& outer : fors_)
      if (outer.kw != loop.kw && outer.body_first <= loop.kw && loop.kw <= outer.body_last)
        ++loop.nesting;
  collect_statements();
}

void Body::mark_template(int open) {
  std::vector<int> angles{open};
  std::vector<int> visited{open};
  int j = open + 1;
  for (; j < n_; ++j) {
    const std::string_view w = tx(j);
    if (is(j, "(") || is(j, "[")) {
      if (match(j) < 0) return;
      j = match(j);
      continue;
    }
    if (!punct(j) && !ident(j) && !number(j)) return;
    if (punct(j) &&
        in(w, {"{", "}", ";", "&&", "||", "?", ":", "=", "==", "!=", "<=", ">=", ")", "]", ".",
               "->", "+=", "-=", "*=", "/=", "!", "<<", "<<="}))
      return;
    if (w == "<") {
      if (!ident(j - 1)) return;
      angles.push_back(j);
      visited.push_back(j);
    } else if (w == ">") {
      angles.pop_back();
      visited.push_back(j);
      if (angles.empty()) break;
    } else if (w == ">>") {
      if (angles.size() < 2) return;
      angles.pop_back();
      angles.pop_back();
      visited.push_back(j);
      if (angles.empty()) break;
    }
  }
  if (j >= n_) return;
  const int next = j + 1;
  const bool follows = next >= n_ || ident(next) ||
                       in(tx(next), {"(", "::", "{", ">", ">>", ",", "*", "&", ";", ")", "...",
                                     "&&"});
  if (!follows) return;
  for (int v : visited) tmpl_[static_cast<std::size_t>(v)] = true;
  for (int k = open; k <= j; ++k) in_tmpl_[static_cast<std::size_t>(k)] = true;
  match_[static_cast<std::size_t>(open)] = j;
}

void Body::add_for(int kw, int open) {
  const int close = match(open);
  int semi1 = -1, semi2 = -1;
  for (int k = open + 1; k < close; ++k) {
    if (is(k, "(") || is(k, "[") || is(k, "{")) {
      k = std::max(k, match(k));
      continue;
    }
    if (is(k, ";")) (semi1 < 0 ? semi1 : semi2) = k;
  }
  if (semi1 < 0 || semi2 < 0) return; // a range-for
  const int first = close + 1;
  int last = -1;
  if (is(first, "{")) last = match(first);
  else last = statement_or_control_end(first);
  if (last < 0) return;
  fors_.push_back(ForLoop{kw, open, close, semi1, semi2, first, last, 0});
}

int Body::control_header_open(int i) const {
  int open = i + 1;
  if (is(open, "constexpr")) ++open;
  return is(open, "(") && match(open) >= 0 ? open : -1;
}

int Body::statement_or_control_end(int i) const {
  if (i >= n_) return -1;
  if (is(i, "{")) return match(i);
  if (in(tx(i), {"if", "for", "while", "switch"}) && ident(i)) {
    const int open = control_header_open(i);
    if (open < 0) return -1;
    const int body_end = statement_or_control_end(match(open) + 1);
    if (body_end < 0) return -1;
    if (is(i, "if") && is(body_end + 1, "else")) return statement_or_control_end(body_end + 2);
    return body_end;
  }
  return simple_statement_end(i);
}

int Body::simple_statement_end(int i) const {
  for (int k = i; k < n_; ++k) {
    if (is(k, "(") || is(k, "[")) {
      if (match(k) < 0) return -1;
      k = match(k);
      continue;
    }
    if (is(k, "{")) {
      if (block_brace_[static_cast<std::size_t>(k)] || match(k) < 0) return -1;
      k = match(k);
      continue;
    }
    if (is(k, ")") || is(k, "]") || is(k, "}")) return -1;
    if (is(k, ";")) return k;
  }
  return -1;
}

bool Body::statement_start_context(int i, bool& braced) const {
  braced = false;
  if (i == 0) return braced = true;
  const int p = i - 1;
  if (paren_depth_[static_cast<std::size_t>(i)] != 0) return false;
  if (is(p, ";") || (is(p, "{") && block_brace_[static_cast<std::size_t>(p)]) ||
      (is(p, "}") && block_brace_[static_cast<std::size_t>(p)]))
    return braced = true;
  return (is(p, ")") && header_close_[static_cast<std::size_t>(p)]) || is(p, "else") ||
         is(p, "do");
}

void Body::collect_statements() {
  for (int i = 0; i < n_; ++i) {
    bool braced = false;
    if (!statement_start_context(i, braced)) continue;
    if (is(i, ";") || is(i, "{") || is(i, "}")) continue;
    if (ident(i) && (is_statement_word(tx(i)) && !in(tx(i), {"return", "break", "continue"})))
      continue;
    const int end = simple_statement_end(i);
    if (end < 0) continue;
    statements_.push_back(Statement{i, end, braced});
  }
}

const Body::Statement* Body::statement_at(int first) const {
  for (const auto& s : statements_)
    if (s.first == first) return &s;
  return nullptr;
}

bool Body::is_declaration(int i) const {
  if (!ident(i)) return false;
  if (is_type_word(tx(i))) return true;
  if (is_statement_word(tx(i))) return false;
  int k = i;
  while (ident(k) && is(k + 1, "::")) k += 2;
  if (!ident(k)) return false;
  if (tmpl(k + 1) && match(k + 1) > 0) k = match(k + 1);
  ++k;
  while (is(k, "*") || is(k, "&") || is(k, "const") || is(k, "__restrict__")) ++k;
  return ident(k) && !is_statement_word(tx(k));
}

} // namespace kj::mutate::detail::ops
