// The expression and type queries the mutation operators share (src/mutate/operator_tokens.hpp):
// whether a token is a binary operator and how tightly it binds, where a postfix expression starts
// and ends, a call's arguments, what a name was declared as and whether an expression is a float,
// and the places several categories ask about (for headers, subscripts, array dimensions, loop
// bounds, grid-stride steps, barriers). They answer "not sure" rather than guess, so the rules
// built on them stay silent where the token patterns are ambiguous.
#include "mutate/operator_tokens.hpp"

namespace kj::mutate::detail::ops {

// ---- Operators and operands ----------------------------------------------------------------

bool Body::operand_end(int p) const {
  if (p < 0) return false;
  if (number(p) || (i_kind(p, TokenKind::character))) return true;
  if (ident(p)) return !is_type_word(tx(p)) && !is_statement_word(tx(p));
  if (is(p, "]")) return true;
  if (is(p, ")")) {
    if (header_close_[static_cast<std::size_t>(p)]) return false;
    const int o = match(p);
    if (o < 0) return false;
    // A C-style cast: (float), (const float*)
    bool cast = o + 1 < p;
    for (int k = o + 1; k < p; ++k)
      if (!(ident(k) && is_type_word(tx(k))) && !is(k, "*") && !is(k, "&")) cast = false;
    return !cast;
  }
  return false;
}

bool Body::operand_start(int q) const {
  if (q >= n_) return false;
  if (number(q) || i_kind(q, TokenKind::character)) return true;
  if (ident(q)) return !is_type_word(tx(q)) || in(tx(q), {"float", "int", "double"});
  return in(tx(q), {"(", "-", "!", "~", "++", "--", "*", "&", "+"});
}

bool Body::is_declarator(int i) const {
  if (is(i + 1, "*") || is(i + 1, "&") || is(i + 1, "const") || is(i + 1, "__restrict__"))
    return true;
  int k = i - 1;
  if (!ident(k)) return false;
  while (ident(k) && is(k - 1, "::") && ident(k - 2)) k -= 2;
  const int q = k - 1;
  const bool start = q < 0 || is(q, ";") || is(q, "{") || is(q, "}") ||
                     (ident(q) && is_declaration_specifier(tx(q))) ||
                     (is(q, "(") && is(q - 1, "for"));
  if (!start) return false;
  return ident(i + 1) && in(tx(i + 2), {"=", ";", ",", "[", ")", ":"});
}

bool Body::is_binary(int i) const {
  if (!punct(i) || in_tmpl_[static_cast<std::size_t>(i)]) return false;
  const std::string_view w = tx(i);
  if (in(w, {"+", "-", "*", "&"})) {
    if (!operand_end(i - 1) || !operand_start(i + 1)) return false;
    if ((w == "*" || w == "&") && is_declarator(i)) return false;
    return true;
  }
  return true;
}

int Body::binary_prec(int i) const {
  if (i < 0 || i >= n_ || !punct(i)) return 0;
  const std::string_view w = tx(i);
  if (tmpl(i)) return 0;
  if (in(w, {"*", "/", "%"})) return (w != "*" || is_binary(i)) ? 13 : 0;
  if (in(w, {"+", "-"})) return is_binary(i) ? 12 : 0;
  if (in(w, {"<<", ">>"})) return 11;
  if (in(w, {"<", "<=", ">", ">="})) return 10;
  if (in(w, {"==", "!="})) return 9;
  if (w == "&") return is_binary(i) ? 8 : 0;
  if (w == "^") return 7;
  if (w == "|") return 6;
  if (w == "&&") return 5;
  if (w == "||") return 4;
  if (in(w, {"?", ":"})) return 3;
  if (is_assignment(w)) return 2;
  if (w == ",") return 1;
  return 0;
}

bool Body::left_bound(int s, int prec) const {
  const int p = s - 1;
  if (p < 0) return true;
  if (in(tx(p), {"(", "[", "{", ";", "}", ",", "return"}) && !tmpl(p)) return true;
  if (ident(p) && in(tx(p), {"else", "do"})) return true;
  const int bp = binary_prec(p);
  return bp > 0 && bp < prec;
}

bool Body::right_bound(int e, int prec) const {
  const int q = e + 1;
  if (q >= n_) return true;
  if (in(tx(q), {")", "]", "}", ";", ","}) && !tmpl(q)) return true;
  const int bp = binary_prec(q);
  return bp > 0 && bp <= prec;
}

int Body::primary_end(int s) const {
  if (s < 0 || s >= n_) return -1;
  int e;
  if (number(s)) return s;
  if (is(s, "(")) {
    e = match(s);
    if (e < 0) return -1;
  } else if (ident(s) && !is_statement_word(tx(s)) &&
             (!is_type_word(tx(s)) || is(s + 1, "("))) {
    e = s;
    while (is(e + 1, "::") && ident(e + 2)) e += 2;
    if (tmpl(e + 1) && match(e + 1) > 0) {
      e = match(e + 1);
      if (!is(e + 1, "(")) return -1;
    }
  } else {
    return -1;
  }
  while (true) {
    if ((is(e + 1, "(") || is(e + 1, "[")) && match(e + 1) > 0) {
      e = match(e + 1);
    } else if ((is(e + 1, ".") || is(e + 1, "->")) && ident(e + 2)) {
      e += 2;
    } else {
      break;
    }
  }
  return e;
}

int Body::primary_begin(int e) const {
  if (e < 0 || e >= n_) return -1;
  int s = e;
  while (true) {
    if (number(s)) return s;
    if (ident(s)) {
      if (is_statement_word(tx(s))) return -1;
      while (is(s - 1, "::") && ident(s - 2)) s -= 2;
      if ((is(s - 1, ".") || is(s - 1, "->")) && s - 2 >= 0) {
        s -= 2;
        continue;
      }
      return s;
    }
    if (is(s, ")") || is(s, "]")) {
      const int o = match(s);
      if (o < 0) return -1;
      if (is(s, ")") && header_close_[static_cast<std::size_t>(s)]) return -1;
      if (ident(o - 1) && !is_statement_word(tx(o - 1)) && !is_type_word(tx(o - 1))) {
        s = o - 1;
        continue;
      }
      if (tmpl(o - 1)) { // f<T>(...), static_cast<T>(...)
        int k = o - 1;
        for (int j = 0; j < k; ++j)
          if (match(j) == k && tmpl(j)) {
            k = j - 1;
            break;
          }
        if (!ident(k)) return -1;
        s = k;
        continue;
      }
      if (is(s, "]")) { // a subscript needs a base
        if (o - 1 < 0 || !(ident(o - 1) || is(o - 1, ")") || is(o - 1, "]"))) return -1;
        s = o - 1;
        continue;
      }
      if (ident(o - 1) || is(o - 1, ")") || is(o - 1, "]")) return -1;
      return o; // a group
    }
    return -1;
  }
}

std::vector<std::pair<int, int>> Body::arguments(int open) const {
  std::vector<std::pair<int, int>> args;
  const int close = match(open);
  if (close < 0 || close == open + 1) return args;
  int start = open + 1;
  for (int k = open + 1; k <= close; ++k) {
    if (k < close && (is(k, "(") || is(k, "[") || is(k, "{") || (tmpl(k) && is(k, "<")))) {
      if (match(k) < 0) return {};
      k = match(k);
      continue;
    }
    if (k == close || is(k, ",")) {
      if (k == start) return {};
      args.emplace_back(start, k - 1);
      start = k + 1;
    }
  }
  return args;
}

bool Body::call_of(int i, std::string_view name) const {
  return ident(i) && tx(i) == name && is(i + 1, "(") && match(i + 1) > 0 && !is(i - 1, ".") &&
         !is(i - 1, "->");
}

bool Body::only_top_level(int s, int e, std::initializer_list<std::string_view> allowed) const {
  for (int k = s; k <= e; ++k) {
    if ((is(k, "(") || is(k, "[")) && match(k) > k) {
      k = match(k);
      continue;
    }
    if (punct(k) && !in(tx(k), allowed)) return false;
  }
  return true;
}

bool Body::zero_literal(int s, int e) const {
  const FloatLiteral fl = parse_float(tx(s));
  const IntLiteral il = parse_int(tx(s));
  return s == e && number(s) && ((fl.ok && fl.value == 0.0) || (il.ok && il.value == 0));
}

// ---- Types ---------------------------------------------------------------------------------

TypeInfo Body::type_of(std::string_view name, int use) const {
  for (int k = std::min(use, n_) - 1; k >= 0; --k) {
    if (!ident(k) || tx(k) != name) continue;
    TypeInfo t;
    if (declared_at(k, t)) return t;
  }
  for (const auto& p : fn_.params)
    if (p.name == name) return type_from_parameter(p);
  return {};
}

bool Body::declared_at(int k, TypeInfo& t) const {
  if (!in(tx(k + 1), {"=", ";", ",", "[", ")", "{", ":"})) return false;
  int p = k - 1;
  int depth = 0;
  while (is(p, "*") || is(p, "&") || is(p, "const") || is(p, "__restrict__")) {
    if (is(p, "*")) ++depth;
    --p;
  }
  int start = -1;
  if (ident(p) && !is_statement_word(tx(p))) {
    int s = p;
    while (s - 1 >= 0 && (ident(s - 1) || is(s - 1, "::") || tmpl(s - 1))) {
      if (ident(s - 1) && is_statement_word(tx(s - 1))) break;
      if (tmpl(s - 1) && is(s - 1, ">")) {
        const int j = opener_of(s - 1);
        if (j < 0) break;
        s = j;
        continue;
      }
      --s;
    }
    start = s;
    for (int j = start; j <= p; ++j)
      if (ident(j)) t.words.emplace_back(tx(j));
  } else if (tmpl(p) && is(p, ">")) {
    const int j = opener_of(p);
    if (j < 1 || !ident(j - 1)) return false;
    for (int w = j - 1; w >= 0 && (ident(w) || is(w, "::")); --w)
      if (ident(w)) t.words.insert(t.words.begin(), std::string(tx(w)));
  } else if (is(p, ",")) {
    // Another declarator of a list: the type words from the start of the declaration.
    int s = p;
    while (s > 0 && !in(tx(s - 1), {";", "{", "}"}) && !(is(s - 1, "(") && is(s - 2, "for"))) {
      if (is(s - 1, ")") || is(s - 1, "]")) {
        s = std::max(0, match(s - 1));
        continue;
      }
      if (paren_depth_[static_cast<std::size_t>(s - 1)] < paren_depth_[static_cast<std::size_t>(k)])
        break;
      --s;
    }
    if (!is_declaration(s)) return false;
    for (int j = s; ident(j) && (ident(j + 1) || is(j + 1, "*") || is(j + 1, "&")); ++j)
      t.words.emplace_back(tx(j));
    if (t.words.empty()) return false;
  } else {
    return false;
  }
  if (t.words.empty()) return false;
  for (const auto& w : t.words)
    if (is_statement_word(w)) return false;
  t.depth = depth;
  for (int j = k + 1; is(j, "[") && match(j) > 0; j = match(j) + 1) ++t.depth;
  t.known = true;
  return true;
}

int Body::opener_of(int close) const {
  int j = close;
  while (j >= 0 && match(j) != close) --j;
  return j;
}

bool Body::float_typed(int s, int e) const {
  if (s < 0 || e < s) return false;
  if (s == e && number(s)) {
    const FloatLiteral f = parse_float(tx(s));
    return f.ok && f.is_float;
  }
  if (is(s, "(") && match(s) == e) return float_expression(s + 1, e - 1);
  if (!ident(s)) return false;
  if (is(s + 1, "(") && match(s + 1) == e) return is_float_function(tx(s));
  if (is(s, "static_cast") && tmpl(s + 1) && is(s + 2, "float") && match(s + 1) == s + 3)
    return is(s + 4, "(") && match(s + 4) == e;
  TypeInfo t = type_of(tx(s), s);
  if (!t.known) return false;
  int depth = t.depth;
  for (int k = s + 1; k <= e;) {
    if (is(k, "[") && match(k) > 0) {
      --depth;
      k = match(k) + 1;
    } else if (is(k, ".") && ident(k + 1) && k + 1 == e && depth == 0 &&
               (t.has("float2") || t.has("float3") || t.has("float4")) &&
               in(tx(k + 1), {"x", "y", "z", "w"})) {
      return true;
    } else {
      return false;
    }
  }
  return depth == 0 && t.is_float();
}

bool Body::float_expression(int s, int e) const {
  int k = s;
  bool any = false;
  while (k <= e) {
    while (k <= e && is(k, "-") && !is_binary(k)) ++k;
    const int pe = primary_end(k);
    if (pe < 0 || pe > e || !float_typed(k, pe)) return false;
    any = true;
    k = pe + 1;
    if (k > e) break;
    if (!in(tx(k), {"+", "-", "*", "/"})) return false;
    ++k;
  }
  return any;
}

// ---- Places --------------------------------------------------------------------------------

bool Body::in_for_increment(int i) const {
  for (const auto& f : fors_)
    if (i > f.semi2 && i < f.close) return true;
  return false;
}

bool Body::inside_subscript(int i) const {
  for (int k = i - 1; k >= 0; --k)
    if (is(k, "[") && match(k) > i) return true;
  return false;
}

bool Body::is_declarator_dimension(int open) const {
  int k = open - 1;
  while (is(k, "]") && match(k) >= 0) k = match(k) - 1;
  if (!ident(k)) return false;
  const int p = k - 1;
  if (ident(p)) return !is_statement_word(tx(p));
  if (is(p, "*") || is(p, "&")) return is_declarator(p);
  if (tmpl(p)) return true;
  if (is(p, ",")) {
    for (int s = p; s >= 0; --s)
      if (in(tx(s), {";", "{", "}"})) return is_declaration(s + 1);
    return is_declaration(0);
  }
  return false;
}

bool Body::is_shared_declaration(int open) const {
  for (int s = open; s >= 0; --s) {
    if (in(tx(s), {";", "{", "}"})) return false;
    if (is(s, "__shared__")) return true;
  }
  return false;
}

bool Body::plain_condition(int s, int e) const {
  for (int k = s; k <= e; ++k) {
    if ((is(k, "(") || is(k, "[")) && match(k) > k) {
      k = match(k);
      continue;
    }
    if (in(tx(k), {"&&", "||", "?", ":", ",", "<", ">", "<=", ">=", "==", "!="}) && !tmpl(k))
      return false;
  }
  return true;
}

bool Body::mentions_grid(int s, int e) const {
  for (int k = s; k <= e; ++k)
    if (is(k, "gridDim")) return true;
  if (s == e && ident(s)) {
    for (int k = s - 1; k >= 0; --k) {
      if (!is(k, tx(s)) || !is(k + 1, "=")) continue;
      TypeInfo t;
      if (!declared_at(k, t)) continue;
      for (int j = k + 2; j < n_ && !is(j, ";") && !is(j, ","); ++j)
        if (is(j, "gridDim")) return true;
      return false;
    }
  }
  return false;
}

bool Body::is_barrier_or_fence(int s) const {
  return in(tx(s), {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block",
                    "__threadfence_system"});
}

} // namespace kj::mutate::detail::ops
