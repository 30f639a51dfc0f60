// The arithmetic (AR-*) and indexing (IX-*) rewrite rules of the mutation operator catalogue
// (../shared/reference/mutation-operators.md): operator and operand swaps, compound assignments,
// literals, dropped scales and terms, min/max; thread and block indices, subscript offsets,
// strides, transposes, grid-stride loops, loop starts and swapped call arguments. Each rule is a
// `Body` member (src/mutate/operator_tokens.hpp) that walks one device body and emits candidates.
#include <algorithm>
#include <cmath>

#include "mutate/operator_tokens.hpp"

namespace kj::mutate::detail::ops {

// ---- arithmetic ----------------------------------------------------------------------------

void Body::ar_aor() {
  for (int i = 0; i < n_; ++i) {
    if (!punct(i) || !in(tx(i), {"+", "-", "*", "/"}) || !is_binary(i)) continue;
    if (is(i, "/") && !operand_end(i - 1)) continue;
    static const std::pair<std::string_view, std::string_view> swaps[] = {
        {"+", "-"}, {"-", "+"}, {"*", "/"}, {"/", "*"}};
    for (const auto& [from, to] : swaps)
      if (tx(i) == from) emit(std::string(from) + " -> " + std::string(to), i, i, std::string(to));
  }
}

void Body::ar_assign() {
  for (int i = 0; i < n_; ++i) {
    if (!punct(i) || in_for_increment(i)) continue;
    const std::string_view w = tx(i);
    if (w == "+=") {
      emit("+= -> -=", i, i, "-=");
      emit("+= -> =", i, i, "=");
    } else if (w == "-=") {
      emit("-= -> +=", i, i, "+=");
    } else if (w == "*=") {
      emit("*= -> /=", i, i, "/=");
    } else if (w == "/=") {
      emit("/= -> *=", i, i, "*=");
    }
  }
}

void Body::ar_swap() {
  for (int i = 0; i < n_; ++i) {
    if (!(is(i, "-") || is(i, "/")) || !is_binary(i)) continue;
    const int prec = is(i, "-") ? 12 : 13;
    const int ls = primary_begin(i - 1), re = primary_end(i + 1);
    if (ls < 0 || re < 0 || !left_bound(ls, prec) || !right_bound(re, prec)) continue;
    if (text(ls, i - 1) == text(i + 1, re)) continue;
    emit(is(i, "-") ? "a - b -> b - a" : "a / b -> b / a", ls, re,
         text(i + 1, re) + between(i - 1, i) + std::string(tx(i)) + between(i, i + 1) +
             text(ls, i - 1));
  }
}

void Body::ar_unary() {
  for (int i = 0; i < n_; ++i) {
    if (is(i, "-") && punct(i) && !in_tmpl_[static_cast<std::size_t>(i)] && !is_binary(i) &&
        (ident(i + 1) || number(i + 1) || is(i + 1, "(")) && !operand_end(i - 1) &&
        !is(i - 1, "-") && !is(i - 1, "+"))
      emit("-x -> x", i, i, "");
    if (call_of(i, "fabsf")) {
      const auto args = arguments(i + 1);
      if (args.size() == 1)
        emit("fabsf(x) -> x", i, match(i + 1), paren_unless_primary(args[0].first, args[0].second));
    }
  }
}

void Body::ar_const() {
  for (int i = 0; i < n_; ++i) {
    if (!number(i) || in_tmpl_[static_cast<std::size_t>(i)]) continue;
    if (is(i - 1, "[") && is(i + 1, "]") && is_declarator_dimension(i - 1)) continue;
    if (in_alignment(i)) continue; // __align__(16) -> 17 is no bug, just no compile
    if (const FloatLiteral fl = parse_float(tx(i)); fl.ok) {
      if (fl.value == 0.0 || !std::isfinite(fl.value)) continue;
      emit("float c -> c * (1 + 1e-3)", i, i, float_text(fl.value * (1 + 1e-3), fl.is_float));
      emit("float c -> c * (1 - 1e-3)", i, i, float_text(fl.value * (1 - 1e-3), fl.is_float));
      emit("float c -> 0", i, i, fl.is_float ? "0.0f" : "0.0");
      continue;
    }
    const IntLiteral il = parse_int(tx(i));
    if (!il.ok || il.hex) continue;
    emit("integer c -> c + 1", i, i, std::to_string(il.value + 1) + il.suffix);
    // c - 1: not where 0 would stop a shift loop or divide by zero, nor below 0 unsigned.
    if (il.value == 1 && in(tx(i - 1), {">>=", "<<=", "/", "%", "/=", "%="})) continue;
    if (il.value == 0) {
      if (il.suffix.find_first_of("uU") != std::string::npos) continue;
      emit("integer c -> c - 1", i, i, "(-1)");
    } else {
      emit("integer c -> c - 1", i, i, std::to_string(il.value - 1) + il.suffix);
    }
  }
}

bool Body::in_alignment(int i) const {
  for (int k = i - 1; k >= 0; --k)
    if (is(k, "(") && match(k) > i)
      return in(tx(k - 1), {"__align__", "alignas", "__launch_bounds__", "__builtin_assume_aligned"});
  return false;
}

void Body::ar_scale_drop() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "*") && !is(i, "/")) continue;
    if (!is_binary(i)) continue;
    auto scale_literal = [&](int k) {
      const FloatLiteral fl = parse_float(tx(k));
      return number(k) && fl.ok && fl.value != 0.0 && fl.value != 1.0;
    };
    if (is(i, "*") && scale_literal(i - 1) && !in(tx(i - 2), {"/", "%"}) &&
        !(is(i - 2, "-") && !is_binary(i - 2)) && !is(i - 2, "."))
      emit("c * e -> e", i - 1, i, "");
    if (scale_literal(i + 1)) {
      if (is(i, "*")) emit("e * c -> e", i, i + 1, "");
      else emit("e / c -> e", i, i + 1, "");
    }
  }
  // The spans above leave the whitespace after the dropped factor; that is harmless.
}

void Body::ar_term_drop() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "+") || !is_binary(i) || inside_subscript(i) || in_for_header(i)) continue;
    // Never the pointer of pointer arithmetic: `x + r * C` without `x` is not a pointer.
    const int re = primary_end(i + 1);
    if (re >= 0 && right_bound(re, 12) && !pointer_typed(i + 1, re)) emit("a + b -> a", i, re, "");
    const int ls = primary_begin(i - 1);
    if (ls >= 0 && left_bound(ls, 12) && !pointer_typed(ls, i - 1)) emit("a + b -> b", ls, i, "");
  }
}

bool Body::pointer_typed(int s, int e) const {
  if (!ident(s)) return false;
  const TypeInfo t = type_of(tx(s), s);
  if (!t.known) return false;
  int depth = t.depth;
  for (int k = s + 1; k <= e; ++k) {
    if (is(k, "[") && match(k) > 0) {
      --depth;
      k = match(k);
    } else {
      return false;
    }
  }
  return depth > 0;
}

bool Body::in_for_header(int i) const {
  for (const auto& f : fors_)
    if (i > f.open && i < f.close) return true;
  return false;
}

void Body::ar_minmax() {
  for (int i = 0; i < n_; ++i) {
    if (!ident(i) || !is(i + 1, "(") || is(i - 1, ".") || is(i - 1, "->")) continue;
    const std::string_view w = tx(i);
    if (w == "fmaxf") emit("fmaxf -> fminf", i, i, "fminf");
    if (w == "fminf") emit("fminf -> fmaxf", i, i, "fmaxf");
    if (w == "max") emit("max -> min", i, i, "min");
    if (w == "min") emit("min -> max", i, i, "max");
    if (w == "fmaxf") {
      const auto args = arguments(i + 1);
      if (args.size() != 2) continue;
      for (int a = 0; a < 2; ++a) {
        const auto [s, e] = args[static_cast<std::size_t>(a)];
        if (zero_literal(s, e)) {
          const auto other = args[static_cast<std::size_t>(1 - a)];
          emit("fmaxf(x, 0) -> x", i, match(i + 1), paren_unless_primary(other.first, other.second));
        }
      }
    }
  }
}

// ---- indexing ------------------------------------------------------------------------------

bool Body::is_thread_index(int i) const {
  return ident(i) && in(tx(i), {"threadIdx", "blockIdx", "blockDim", "gridDim"}) &&
         is(i + 1, ".") && ident(i + 2);
}

void Body::ix_dim() {
  for (int i = 0; i < n_; ++i) {
    if (!is_thread_index(i)) continue;
    if (is(i + 2, "x")) emit(".x -> .y", i + 2, i + 2, "y");
    if (is(i + 2, "y")) emit(".y -> .x", i + 2, i + 2, "x");
  }
}

void Body::ix_gir() {
  for (int i = 0; i < n_; ++i) {
    if (!is_thread_index(i)) continue;
    if (is(i, "blockIdx")) emit("blockIdx -> threadIdx", i, i, "threadIdx");
    if (is(i, "threadIdx")) emit("threadIdx -> blockIdx", i, i, "blockIdx");
  }
}

void Body::ix_off() {
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "[") || match(i) <= i + 1 || in_tmpl_[static_cast<std::size_t>(i)]) continue;
    if (!(ident(i - 1) || is(i - 1, "]") || is(i - 1, ")"))) continue;
    if (is_declarator_dimension(i)) continue;
    const int s = i + 1, e = match(i) - 1;
    const bool additive = only_top_level(s, e, {"+", "-", "*", "/", "%", ".", "->", "::"});
    const std::string inner = additive ? text(s, e) : "(" + text(s, e) + ")";
    emit("a[i] -> a[i + 1]", s, e, inner + " + 1");
    emit("a[i] -> a[i - 1]", s, e, inner + " - 1");
  }
}

void Body::ix_stride() {
  std::vector<const lex::Parameter*> sizes;
  for (const auto& p : fn_.params)
    if (!p.name.empty() && type_from_parameter(p).is_integer()) sizes.push_back(&p);
  if (sizes.size() < 2) return;
  for (int i = 0; i < n_; ++i) {
    if (!is(i, "*") || !is_binary(i)) continue;
    for (int side : {i - 1, i + 1}) {
      if (!ident(side)) continue;
      if (side == i + 1 && primary_end(side) != side) continue;
      if (side == i - 1 && primary_begin(side) != side) continue;
      const auto it = std::find_if(sizes.begin(), sizes.end(),
                                   [&](const lex::Parameter* p) { return p->name == tx(side); });
      if (it == sizes.end() || type_of(tx(side), side).depth != 0 ||
          !type_of(tx(side), side).is_integer())
        continue;
      int made = 0;
      for (const auto* other : sizes)
        if (other->name != tx(side) && made < 2) {
          emit("r * K -> r * N", side, side, other->name);
          ++made;
        }
    }
  }
}

void Body::ix_transpose() {
  for (int i = 0; i + 1 < n_; ++i) {
    if (!ident(i) || !is(i + 1, "[") || is_statement_word(tx(i))) continue;
    const int c1 = match(i + 1);
    if (c1 < 0 || !is(c1 + 1, "[")) continue;
    const int c2 = match(c1 + 1);
    if (c2 < 0 || is(c2 + 1, "[") || is(i - 1, "]")) continue;
    if (is_declarator_dimension(i + 1) || c1 == i + 2 || c2 == c1 + 2) continue;
    const std::string a = text(i + 2, c1 - 1), b = text(c1 + 2, c2 - 1);
    if (a == b) continue;
    emit("a[i][j] -> a[j][i]", i + 2, c2 - 1, b + between(c1 - 1, c1 + 2) + a);
  }
}

void Body::ix_gridstride() {
  for (const auto& f : fors_) {
    const int v = f.semi2 + 1;
    if (!ident(v) || !is(v + 1, "+=") || f.close <= v + 2) continue;
    const int s = v + 2, e = f.close - 1;
    if (!mentions_grid(s, e)) continue;
    emit("step -> step / gridDim.x", s, e, paren_unless_primary(s, e) + " / gridDim.x");
    // One pass: the increment jumps to the bound of a `v < bound` condition.
    const int c = f.semi1 + 1;
    if (is(c, tx(v)) && is(c + 1, "<") && !tmpl(c + 1) && c + 2 < f.semi2 &&
        plain_condition(c + 2, f.semi2 - 1))
      emit("grid-stride loop -> one pass", v, e,
           std::string(tx(v)) + " = " + paren_unless_primary(c + 2, f.semi2 - 1));
  }
}

void Body::ix_loop0() {
  for (const auto& f : fors_) {
    const int z = f.semi1 - 1;
    if (number(z) && tx(z) == "0" && is(z - 1, "=") && ident(z - 2)) emit("for (i = 0 -> for (i = 1", z, z, "1");
  }
}

void Body::ix_argswap() {
  for (int i = 0; i < n_; ++i) {
    if (!ident(i) || is(i - 1, ".") || is(i - 1, "->")) continue;
    int open = i + 1;
    if (tmpl(open) && match(open) > open) open = match(open) + 1;
    if (!is(open, "(") || match(open) < 0) continue;
    const lex::Function* callee = nullptr;
    int count = 0;
    for (const auto& g : *f_.functions)
      if (g.name == tx(i)) {
        callee = &g;
        ++count;
      }
    if (count != 1 || callee == nullptr) continue;
    const auto args = arguments(open);
    if (args.size() != callee->params.size() || args.size() < 2) continue;
    for (std::size_t a = 0; a + 1 < args.size(); ++a) {
      if (callee->params[a].type != callee->params[a + 1].type) continue;
      const std::string x = text(args[a].first, args[a].second);
      const std::string y = text(args[a + 1].first, args[a + 1].second);
      if (x == y) continue;
      emit("f(a, b) -> f(b, a)", args[a].first, args[a + 1].second,
           y + between(args[a].second, args[a + 1].first) + x);
    }
  }
}

} // namespace kj::mutate::detail::ops
