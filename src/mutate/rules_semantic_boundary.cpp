// The semantic (SE-*) and boundary (BD-*) rewrite rules of the mutation operator catalogue
// (../shared/reference/mutation-operators.md): a softmax without its max, reductions with the
// wrong start or combiner, normalisations off by one, forced conditions, dropped clamps,
// statements, output writes and half loops; relational operators, dropped guards and conjuncts,
// tile tails, loop ends and shared-memory sizes. Each rule is a `Body` member
// (src/mutate/operator_tokens.hpp) that walks one device body and emits candidates.
#include "mutate/operator_tokens.hpp"

namespace kj::mutate::detail::ops {

// ---- semantic ------------------------------------------------------------------------------

void Body::se_softmax_max() {
  for (int i = 0; i < n_; ++i) {
    if (!(call_of(i, "expf") || call_of(i, "__expf") || call_of(i, "exp"))) continue;
    const auto args = arguments(i + 1);
    if (args.size() != 1) continue;
    const auto [s, e] = args[0];
    const int le = primary_end(s);
    if (le < 0 || !is(le + 1, "-") || !is_binary(le + 1) || primary_end(le + 2) != e) continue;
    emit("exp(x - m) -> exp(x)", s, e, text(s, le));
  }
}

bool Body::is_neg_inf(int s, int& e) const {
  if (is(s, "__int_as_float") && is(s + 1, "(") && number(s + 2) && is(s + 3, ")")) {
    const IntLiteral il = parse_int(tx(s + 2));
    if (il.ok && il.value == 0xff800000ull) return e = s + 3, true;
  }
  if (is(s, "-") && (is(s + 1, "INFINITY") || is(s + 1, "CUDART_INF_F") || is(s + 1, "FLT_MAX")))
    return e = s + 1, true;
  if (ident(s) && f_.neg_inf_macros.count(std::string(tx(s))) != 0) return e = s, true;
  return false;
}

void Body::se_red_init() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "=")) continue;
    int e = -1;
    if (is_neg_inf(i + 1, e) && in(tx(e + 1), {";", ","})) emit("-inf -> 0", i + 1, e, "0.0f");
    const int z = i + 1;
    const FloatLiteral fl = parse_float(tx(z));
    if (number(z) && fl.ok && fl.value == 0.0 && in(tx(z + 1), {";", ","}) && ident(i - 1)) {
      // In a float or double declaration.
      TypeInfo t;
      if (declared_at(i - 1, t) && t.depth == 0 && !t.has("const") &&
          (t.has("float") || t.has("double")))
        emit("0 -> 1", z, z, fl.is_float ? "1.0f" : "1.0");
    }
  }
}

void Body::se_red_op() {
  for (int i = 0; i < n_; ++i) {
    // a = fmaxf(a, e)
    if (is(i, "=") && call_of(i + 1, "fmaxf") && is(match(i + 2) + 1, ";")) {
      const int ls = statement_lhs_start(i);
      const auto args = arguments(i + 2);
      if (ls >= 0 && args.size() == 2) {
        const std::string lhs = text(ls, i - 1);
        for (int a = 0; a < 2; ++a) {
          const auto mine = args[static_cast<std::size_t>(a)];
          const auto other = args[static_cast<std::size_t>(1 - a)];
          if (text(mine.first, mine.second) == lhs) {
            emit("a = fmaxf(a, e) -> a + e", i + 1, match(i + 2),
                 lhs + " + " + paren_unless_primary(other.first, other.second));
            break;
          }
        }
      }
    }
    // a += e on a float
    if (is(i, "+=") && !in_for_increment(i)) {
      const int ls = statement_lhs_start(i);
      const int end = simple_statement_end(i);
      if (ls < 0 || end < 0 || !float_typed(ls, i - 1)) continue;
      emit("a += e -> a = fmaxf(a, e)", ls, end - 1,
           text(ls, i - 1) + " = fmaxf(" + text(ls, i - 1) + ", " + text(i + 1, end - 1) + ")");
    }
  }
}

int Body::statement_lhs_start(int i) const {
  const int s = primary_begin(i - 1);
  if (s < 0 || statement_at(s) == nullptr) return -1;
  return s;
}

void Body::se_norm() {
  for (int i = 0; i < n_; ++i) {
    if ((is(i, "/") || is(i, "/=")) && punct(i)) {
      const int s = i + 1;
      int e = -1;
      if (ident(s) && primary_end(s) == s && type_of(tx(s), s).is_integer()) e = s;
      if (is(s, "static_cast") && tmpl(s + 1) && is(s + 2, "float") && is(s + 4, "(") &&
          ident(s + 5) && is(s + 6, ")") && type_of(tx(s + 5), s + 5).is_integer())
        e = s + 6;
      if (e >= 0) emit("/ n -> / (n - 1)", s, e, "(" + text(s, e) + " - 1)");
    }
    // + eps dropped
    if (is(i, "+") && is_binary(i)) {
      const int re = primary_end(i + 1);
      if (re == i + 1 && ident(i + 1) && is_epsilon_name(tx(i + 1)) && right_bound(re, 12))
        emit("+ eps -> (dropped)", i, re, "");
    }
    // x - mean -> x
    if (is(i, "-") && is_binary(i) && ident(i + 1) &&
        in(lower(tx(i + 1)), {"mean", "mu", "avg", "m_mean"})) {
      const int re = primary_end(i + 1);
      if (re >= 0 && right_bound(re, 12)) emit("x - mean -> x", i, re, "");
    }
  }
}

void Body::se_dcr() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "if") || !is(i + 1, "(") || match(i + 1) <= i + 2) continue;
    emit("if (c) -> if (true)", i + 2, match(i + 1) - 1, "true");
    emit("if (c) -> if (false)", i + 2, match(i + 1) - 1, "false");
  }
}

void Body::se_clamp() {
  for (int i = 0; i < n_; ++i) {
    const bool minmax = (is(i, "min") || is(i, "max")) && is(i + 1, "(");
    const bool fminmax = (is(i, "fminf") || is(i, "fmaxf")) && is(i + 1, "(");
    if ((minmax || fminmax) && !is(i - 1, ".") && !is(i - 1, "->")) {
      const auto args = arguments(i + 1);
      if (args.size() != 2) continue;
      int first = i;
      while (is(first - 1, "::") && ident(first - 2)) first -= 2;
      if (minmax) {
        const std::string name(tx(i));
        emit(name + "(a, b) -> a", first, match(i + 1),
             paren_unless_primary(args[0].first, args[0].second));
        emit(name + "(a, b) -> b", first, match(i + 1),
             paren_unless_primary(args[1].first, args[1].second));
      } else {
        for (int a = 0; a < 2; ++a) {
          const auto [s, e] = args[static_cast<std::size_t>(a)];
          const FloatLiteral fl = parse_float(tx(s));
          if (s == e && number(s) && fl.ok && fl.value != 0.0) {
            const auto other = args[static_cast<std::size_t>(1 - a)];
            emit("fminf/fmaxf(x, c) -> x", first, match(i + 1),
                 paren_unless_primary(other.first, other.second));
          }
        }
      }
    }
  }
  for_each_ternary([&](int cs, int q, int colon, int end) {
    const auto literal = [&](int s, int e) {
      const FloatLiteral fl = parse_float(tx(s));
      const IntLiteral il = parse_int(tx(s));
      return s == e && number(s) && ((fl.ok) || (il.ok && !il.hex));
    };
    const auto plain = [&](int s, int e) {
      if (!is_primary(s, e)) return false;
      for (int k = s; k <= e; ++k)
        if (is(k, "[") || is(k, "(")) return false;
      return true;
    };
    if (literal(q + 1, colon - 1) && plain(colon + 1, end))
      emit("c ? k : v -> v", cs, end, text(colon + 1, end));
    else if (plain(q + 1, colon - 1) && literal(colon + 1, end))
      emit("c ? k : v -> v", cs, end, text(q + 1, colon - 1));
  });
}

bool Body::writes_output(const Statement& st) const {
  // The lvalue before the top-level `=` names an output pointer: a non-const pointer
  // parameter, or a local pointer made from one.
  int eq = -1;
  for (int k = st.first; k < st.last; ++k) {
    if ((is(k, "(") || is(k, "[")) && match(k) > k) {
      k = match(k);
      continue;
    }
    if (in(tx(k), {"=", "+=", "-=", "*=", "/="})) {
      eq = k;
      break;
    }
  }
  if (eq < 0) return false;
  for (int k = st.first; k < eq; ++k) {
    if (!ident(k)) continue;
    if (is(k - 1, ".") || is(k - 1, "->")) continue;
    if (is_output_pointer(tx(k), k)) return true;
    if (is(k + 1, "[")) break; // the base of the first subscript decides
  }
  return false;
}

bool Body::is_output_pointer(std::string_view name, int use) const {
  for (int k = use - 1; k >= 0; --k) {
    if (!is(k, name)) continue;
    TypeInfo t;
    if (!declared_at(k, t)) continue;
    if (t.depth == 0 || t.has("const") || t.has("__shared__")) return false;
    if (!is(k + 1, "=")) return false;
    const int end = simple_statement_end(k);
    for (int j = k + 2; j < end && j >= 0; ++j)
      if (ident(j) && !is(j, name) && is_output_pointer(tx(j), j)) return true;
    return false;
  }
  for (const auto& p : fn_.params)
    if (p.name == name) return p.is_pointer && p.type.rfind("const", 0) != 0;
  return false;
}

void Body::se_sdl() {
  for (const auto& st : statements_) {
    if (is_barrier_or_fence(st.first) || is(st.first, "return") || is(st.first, "break") ||
        is(st.first, "continue") || is_declaration(st.first) || st.last == st.first)
      continue;
    if (writes_output(st)) continue; // SE-NOWRITE's
    emit("statement -> ;", st.first, st.last, ";");
  }
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "{") || !block_brace_[static_cast<std::size_t>(i)] || match(i) <= i + 1) continue;
    const int p = i - 1;
    const bool controlled = (is(p, ")") && header_close_[static_cast<std::size_t>(p)] &&
                             !is(match(p) - 1, "while") && !is(match(p) - 1, "switch")) ||
                            is(p, "else");
    if (!controlled) continue;
    emit("{ block } -> { }", i + 1, match(i) - 1, "");
  }
}

void Body::se_partial() {
  for (const auto& f : fors_) {
    if (f.nesting != 0) continue;
    const int c = f.semi1 + 1;
    if (!ident(c) || !is(c + 1, "<") || tmpl(c + 1) || c + 2 >= f.semi2) continue;
    if (!plain_condition(c + 2, f.semi2 - 1)) continue;
    emit("i < n -> i < n / 2", c + 2, f.semi2 - 1, paren_unless_primary(c + 2, f.semi2 - 1) + " / 2");
  }
}

void Body::se_nowrite() {
  for (const auto& st : statements_) {
    if (is_declaration(st.first) || !writes_output(st)) continue;
    emit("out[i] = v; -> ;", st.first, st.last, ";");
  }
}

// ---- boundary ------------------------------------------------------------------------------

void Body::bd_ror() {
  for (int i = 0; i < n_; ++i) {
    if (!punct(i) || tmpl(i) || in_tmpl_[static_cast<std::size_t>(i)]) continue;
    const std::string_view w = tx(i);
    if (w == "<" && !is(i - 1, "template") && !is(i - 1, "operator")) emit("< -> <=", i, i, "<=");
    if (w == "<=") emit("<= -> <", i, i, "<");
    if (w == ">") emit("> -> >=", i, i, ">=");
    if (w == ">=") emit(">= -> >", i, i, ">");
  }
}

bool Body::has_relational(int s, int e) const {
  for (int k = s; k <= e; ++k)
    if (in(tx(k), {"<", "<=", ">", ">="}) && punct(k) && !tmpl(k)) return true;
  return false;
}

void Body::bd_drop_guard() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "if") || !is(i + 1, "(")) continue;
    const int close = match(i + 1);
    if (close < 0 || !has_relational(i + 2, close - 1)) continue;
    const int body_end = statement_or_control_end(close + 1);
    if (body_end < 0 || is(body_end + 1, "else") || is(i - 1, "else")) continue;
    if (in(tx(close + 1), {"return", "break", "continue"}) && is(body_end, ";") &&
        body_end == simple_statement_end(close + 1))
      emit("if (guard) return; -> (deleted)", i, body_end, "");
    else if (!is_declaration(close + 1))
      emit("if (guard) s -> s", i, close, "");
  }
}

void Body::bd_drop_conj() {
  auto conjuncts = [&](int s, int e) {
    std::vector<std::pair<int, int>> parts;
    int start = s;
    for (int k = s; k <= e; ++k) {
      if ((is(k, "(") || is(k, "[")) && match(k) > k) {
        k = match(k);
        continue;
      }
      if (in(tx(k), {"||", "?", ":"})) return std::vector<std::pair<int, int>>{};
      if (is(k, "&&")) {
        parts.emplace_back(start, k - 1);
        start = k + 1;
      }
    }
    parts.emplace_back(start, e);
    return parts;
  };
  auto drop = [&](int s, int e) {
    const auto parts = conjuncts(s, e);
    if (parts.size() < 2) return;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (k + 1 < parts.size()) emit("a && b -> b", parts[k].first, parts[k + 1].first - 1, "");
      else emit("a && b -> a", parts[k - 1].second + 1, parts[k].second, "");
    }
  };
  for (int i = 0; i < n_; ++i) {
    if ((is(i, "if") || is(i, "while")) && is(i + 1, "(") && match(i + 1) > i + 2)
      drop(i + 2, match(i + 1) - 1);
    if (is(i, "?") && is(i - 1, ")") && match(i - 1) >= 0) drop(match(i - 1) + 1, i - 2);
  }
  for (const auto& f : fors_)
    if (f.semi2 > f.semi1 + 1) drop(f.semi1 + 1, f.semi2 - 1);
}

void Body::bd_tile_tail() {
  for_each_ternary([&](int cs, int q, int colon, int end) {
    const auto load = [&](int s, int e) {
      if (!is_primary(s, e)) return false;
      for (int k = s; k <= e; ++k)
        if (is(k, "[")) return true;
      return false;
    };
    if (load(q + 1, colon - 1) && zero_literal(colon + 1, end))
      emit("c ? a[i] : 0 -> a[i]", cs, end, text(q + 1, colon - 1));
    else if (zero_literal(q + 1, colon - 1) && load(colon + 1, end))
      emit("c ? a[i] : 0 -> a[i]", cs, end, text(colon + 1, end));
  });
  for (const auto& f : fors_) {
    const int c = f.semi1 + 1, v = f.semi2 + 1;
    if (!ident(c) || !is(c + 1, "<") || tmpl(c + 1) || !plain_condition(c + 2, f.semi2 - 1)) continue;
    if (!is(v, tx(c)) || !is(v + 1, "+=") || primary_end(v + 2) != f.close - 1) continue;
    const int s = v + 2;
    if (mentions_grid(s, f.close - 1)) continue;
    if (s == f.close - 1 && tx(s) == "1") continue;
    emit("i < n; i += s -> i + s <= n", c, f.semi2 - 1,
         std::string(tx(c)) + " + " + text(s, f.close - 1) + " <= " +
             text(c + 2, f.semi2 - 1));
  }
}

void Body::bd_loopend() {
  for (const auto& f : fors_) {
    const int c = f.semi1 + 1;
    if (!ident(c) || c + 2 >= f.semi2 || tmpl(c + 1) || !plain_condition(c + 2, f.semi2 - 1)) continue;
    const int s = c + 2, e = f.semi2 - 1;
    const bool additive = is_primary(s, e) || all_additive(s, e);
    const std::string bound = additive ? text(s, e) : "(" + text(s, e) + ")";
    if (is(c + 1, "<")) emit("i < n -> i < n - 1", s, e, bound + " - 1");
    if (is(c + 1, ">") || is(c + 1, ">=")) emit("i > n -> i > n + 1", s, e, bound + " + 1");
  }
}

bool Body::all_additive(int s, int e) const {
  return only_top_level(s, e, {"+", "-", "*", "/", "%", ".", "::"});
}

void Body::bd_smem() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "[") || match(i) <= i + 1 || is(match(i) + 1, "[")) continue;
    if (!is_declarator_dimension(i) || !is_shared_declaration(i)) continue;
    const int s = i + 1, e = match(i) - 1;
    const IntLiteral il = parse_int(tx(s));
    if (s == e && il.ok && !il.hex && il.value > 1)
      emit("s[N] -> s[N - 1]", s, e, std::to_string(il.value - 1) + il.suffix);
    else if (!(s == e && il.ok))
      emit("s[N] -> s[N - 1]", s, e, (all_additive(s, e) ? text(s, e) : "(" + text(s, e) + ")") + " - 1");
  }
}

} // namespace kj::mutate::detail::ops
