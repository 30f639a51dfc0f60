// The synchronization (SY-*), precision (PR-*) and control (CTRL) rewrite rules of the mutation
// operator catalogue (../shared/reference/mutation-operators.md): dropped or moved barriers, warp
// masks and shuffle offsets, atomics and fences; accumulators and inputs rounded to f16, bf16 or
// tf32, doubles narrowed, fast-math intrinsics, epsilons and Kahan compensation; and the
// must-pass controls (contraction, re-association) that a judge must accept. Each rule is a
// `Body` member (src/mutate/operator_tokens.hpp) that walks one device body and emits candidates.
#include "mutate/operator_tokens.hpp"

namespace kj::mutate::detail::ops {

// ---- synchronization -----------------------------------------------------------------------

int Body::call_statement_end(int i, std::string_view name) const {
  if (!call_of(i, name) || !is(match(i + 1) + 1, ";")) return -1;
  bool braced = false;
  if (!statement_start_context(i, braced)) return -1;
  return match(i + 1) + 1;
}

void Body::sy_drop() {
  for (int i = 0; i < n_; ++i)
    if (const int e = call_statement_end(i, "__syncthreads"); e >= 0)
      emit("__syncthreads(); -> ;", i, e, ";");
}

void Body::sy_move() {
  for (int i = 0; i < n_; ++i) {
    const int e = call_statement_end(i, "__syncthreads");
    if (e < 0) continue;
    const Statement* self = statement_at(i);
    if (self == nullptr || !self->braced) continue;
    const std::string barrier = text(i, e);
    // With the statement before it.
    for (const auto& st : statements_) {
      if (st.last == i - 1 && st.braced && movable(st)) {
        emit("barrier moved up", st.first, e, barrier + between(st.last, i) + text(st.first, st.last));
      }
      if (st.first == e + 1 && st.braced && movable(st)) {
        emit("barrier moved down", i, st.last, text(st.first, st.last) + between(e, st.first) + barrier);
      }
    }
  }
}

bool Body::movable(const Statement& st) const {
  if (is_barrier_or_fence(st.first) || in(tx(st.first), {"return", "break", "continue"}))
    return false;
  // A declaration without an initialiser reads nothing: moving the barrier past it is a no-op.
  if (is_declaration(st.first)) {
    for (int k = st.first; k < st.last; ++k)
      if (is(k, "=")) return true;
    return false;
  }
  return true;
}

bool Body::is_shuffle(int i) const {
  return ident(i) && in(tx(i), {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync"}) &&
         is(i + 1, "(") && match(i + 1) > 0;
}

void Body::sy_warp() {
  for (int i = 0; i < n_; ++i) {
    if (const int e = call_statement_end(i, "__syncwarp"); e >= 0)
      emit("__syncwarp(); -> ;", i, e, ";");
    if (!is_shuffle(i)) continue;
    const auto args = arguments(i + 1);
    if (args.empty()) continue;
    const auto [s, e] = args[0];
    const IntLiteral il = parse_int(tx(s));
    const bool full = (s == e && il.ok && il.value == 0xffffffffull) ||
                      (s == e && ident(s) && !is_type_word(tx(s)));
    if (full) emit("mask 0xffffffff -> 0x0000ffff", s, e, "0x0000ffffu");
  }
}

void Body::sy_shfl_off() {
  for (int i = 0; i < n_; ++i) {
    if (call_of(i, "__shfl_down_sync"))
      emit("__shfl_down_sync -> __shfl_xor_sync", i, i, "__shfl_xor_sync", {}, 1);
    if (call_of(i, "__shfl_xor_sync"))
      emit("__shfl_xor_sync -> __shfl_down_sync", i, i, "__shfl_down_sync", {}, 0);
    if ((call_of(i, "__shfl_up_sync") || call_of(i, "__shfl_down_sync") ||
         call_of(i, "__shfl_xor_sync"))) {
      const auto args = arguments(i + 1);
      if (args.size() >= 3) {
        const auto [s, e] = args[2];
        const IntLiteral il = parse_int(tx(s));
        if (s == e && il.ok && il.value > 0 && il.value < 16)
          emit("literal offset doubled", s, e, std::to_string(il.value * 2) + il.suffix, {}, 0);
      }
    }
  }
  for (const auto& f : fors_) {
    // for (int o = 16; o > 0; o >>= 1) with o the offset of a shuffle in the body.
    const int lit = f.semi1 - 1, var = f.semi1 - 3;
    if (!number(lit) || !is(lit - 1, "=") || !ident(var)) continue;
    bool used = false;
    for (int k = f.body_first; k <= f.body_last; ++k)
      if (is_shuffle(k)) {
        const auto args = arguments(k + 1);
        if (args.size() >= 3 && args[2].first == args[2].second && is(args[2].first, tx(var)))
          used = true;
      }
    if (!used) continue;
    const int v = f.semi2 + 1;
    if (!is(v, tx(var)) || !number(v + 2) || v + 3 != f.close) continue;
    const IntLiteral start = parse_int(tx(lit));
    if (!start.ok) continue;
    if (is(v + 1, ">>=") && start.value >= 2)
      emit("offset start halved", lit, lit, std::to_string(start.value / 2) + start.suffix, {}, 0);
    if (is(v + 1, "<<="))
      emit("offset start doubled", lit, lit, std::to_string(start.value * 2) + start.suffix, {}, 0);
    if ((is(v + 1, ">>=") || is(v + 1, "<<=")) && tx(v + 2) == "1")
      emit("offset step doubled", v + 2, v + 2, "2", {}, 0);
  }
}

TypeInfo Body::pointee_type(int s, int e) const {
  TypeInfo t;
  if (is(s, "&") && ident(s + 1)) {
    t = type_of(tx(s + 1), s + 1);
    int depth = t.depth;
    for (int k = s + 2; k <= e;) {
      if (is(k, "[") && match(k) > 0 && match(k) <= e) {
        --depth;
        k = match(k) + 1;
      } else {
        return {};
      }
    }
    t.depth = depth;
    return depth == 0 ? t : TypeInfo{};
  }
  if (s == e && ident(s)) {
    t = type_of(tx(s), s);
    if (t.depth != 1) return {};
    t.depth = 0;
    return t;
  }
  return {};
}

void Body::sy_atomic() {
  for (int i = 0; i < n_; ++i) {
    const int end = call_statement_end(i, "atomicAdd");
    if (end < 0) continue;
    const auto args = arguments(i + 1);
    if (args.size() != 2) continue;
    const auto [s, e] = args[0];
    const std::string value = text(args[1].first, args[1].second);
    if (is(s, "&") && is_primary(s + 1, e))
      emit("atomicAdd(&p, v) -> p += v", i, match(i + 1), text(s + 1, e) + " += " + value);
    else if (s == e && ident(s))
      emit("atomicAdd(p, v) -> *p += v", i, match(i + 1), "*" + text(s, e) + " += " + value);
  }
}

void Body::sy_atomic_op() {
  for (int i = 0; i < n_; ++i) {
    if (!call_of(i, "atomicAdd")) continue;
    const auto args = arguments(i + 1);
    if (args.size() != 2) continue;
    const TypeInfo t = pointee_type(args[0].first, args[0].second);
    if (!t.known) continue;
    const bool is_float = t.has("float") && t.words.size() <= 2;
    const bool is_int = t.is_integer() || (t.has("int") && t.depth == 0 && !t.has("float"));
    if (is_float || is_int) emit("atomicAdd -> atomicExch", i, i, "atomicExch");
    if (is_int && !t.has("short")) emit("atomicAdd -> atomicMax", i, i, "atomicMax");
  }
}

void Body::sy_fence() {
  for (int i = 0; i < n_; ++i) {
    for (std::string_view fence : {"__threadfence", "__threadfence_block", "__threadfence_system"})
      if (const int e = call_statement_end(i, fence); e >= 0)
        emit("__threadfence(); -> ;", i, e, ";");
    if (is(i, "volatile")) emit("volatile -> (dropped)", i, i, "");
  }
}

// ---- precision -----------------------------------------------------------------------------

std::string Body::round_wrap(std::string_view kind, const std::string& e, std::string& prelude) const {
  if (kind == "f16") {
    if (!f_.has_fp16) prelude = "#include <cuda_fp16.h>\n";
    return "__half2float(__float2half(" + e + "))";
  }
  if (kind == "bf16") {
    if (!f_.has_bf16) prelude = "#include <cuda_bf16.h>\n";
    return "__bfloat162float(__float2bfloat16(" + e + "))";
  }
  return "__int_as_float(__float_as_int(" + e + ") & 0xffffe000)";
}

void Body::pr_acc() {
  static const std::pair<std::string_view, std::string_view> kinds[] = {
      {"f16", "acc rounded to f16 each step"},
      {"bf16", "acc rounded to bf16 each step"},
      {"tf32", "acc rounded to tf32 each step"}};
  for (const auto& st : statements_) {
    const int ls = st.first;
    const int le = primary_end(ls);
    if (le < 0 || !float_typed(ls, le)) continue;
    const std::string acc = text(ls, le);
    if (is(le + 1, "+=") && le + 2 < st.last) {
      const std::string e = paren_unless_primary(le + 2, st.last - 1);
      for (const auto& [kind, label] : kinds) {
        std::string prelude;
        const std::string r = round_wrap(kind, acc + " + " + e, prelude);
        emit(label, ls, st.last - 1, acc + " = " + r, prelude);
      }
    } else if (is(le + 1, "=") && call_of(le + 2, "fmaf") && match(le + 3) == st.last - 2) {
      const auto args = arguments(le + 3);
      if (args.size() != 3 || text(args[2].first, args[2].second) != acc) continue;
      for (const auto& [kind, label] : kinds) {
        std::string prelude;
        emit(label, le + 2, st.last - 1, round_wrap(kind, text(le + 2, st.last - 1), prelude),
             prelude);
      }
    }
  }
}

void Body::pr_in() {
  static const std::pair<std::string_view, std::string_view> kinds[] = {
      {"f16", "a * b -> f16(a) * f16(b)"},
      {"bf16", "a * b -> bf16(a) * bf16(b)"},
      {"tf32", "a * b -> tf32(a) * tf32(b)"}};
  for (int i = 0; i < n_; ++i) {
    if (is(i, "*") && is_binary(i)) {
      const int ls = primary_begin(i - 1), re = primary_end(i + 1);
      if (ls < 0 || re < 0 || number(ls) || number(re)) continue;
      if (!float_typed(ls, i - 1) || !float_typed(i + 1, re)) continue;
      for (const auto& [kind, label] : kinds) {
        std::string prelude;
        const std::string a = round_wrap(kind, text(ls, i - 1), prelude);
        const std::string b = round_wrap(kind, text(i + 1, re), prelude);
        emit(label, ls, re, a + between(i - 1, i) + "*" + between(i, i + 1) + b, prelude);
      }
    }
    if (call_of(i, "fmaf")) {
      const auto args = arguments(i + 1);
      if (args.size() != 3) continue;
      for (const auto& [kind, label] : kinds) {
        std::string prelude;
        const std::string a = round_wrap(kind, text(args[0].first, args[0].second), prelude);
        const std::string b = round_wrap(kind, text(args[1].first, args[1].second), prelude);
        emit(label, args[0].first, args[1].second,
             a + between(args[0].second, args[1].first) + b,
             prelude);
      }
    }
  }
}

void Body::pr_double() {
  for (int i = 0; i < n_; ++i) {
    if (is(i, "double")) emit("double -> float", i, i, "float");
    if (number(i) && !in_tmpl_[static_cast<std::size_t>(i)]) {
      const FloatLiteral fl = parse_float(tx(i));
      if (fl.ok && !fl.is_float) emit("double literal -> float literal", i, i, std::string(tx(i)) + "f");
    }
  }
}

void Body::pr_fastmath() {
  static const std::pair<std::string_view, std::string_view> calls[] = {
      {"expf", "__expf"}, {"logf", "__logf"}, {"sinf", "__sinf"}, {"cosf", "__cosf"},
      {"powf", "__powf"}, {"log2f", "__log2f"}, {"exp10f", "__exp10f"}, {"tanf", "__tanf"}};
  for (int i = 0; i < n_; ++i) {
    for (const auto& [from, to] : calls)
      if (call_of(i, from) && !is(i - 1, "::"))
        emit(std::string(from) + " -> " + std::string(to), i, i, std::string(to));
    if (!is(i, "/") || !is_binary(i)) continue;
    const int ls = primary_begin(i - 1), re = primary_end(i + 1);
    if (ls < 0 || re < 0) continue;
    // 1 / sqrtf(x) -> rsqrtf(x)
    const FloatLiteral one = parse_float(tx(ls));
    if (ls == i - 1 && one.ok && one.value == 1.0 && call_of(i + 1, "sqrtf") &&
        match(i + 2) == re && left_bound(ls, 13)) {
      emit("1 / sqrtf(x) -> rsqrtf(x)", ls, re, "rsqrtf" + text(i + 2, re));
      continue;
    }
    if (left_bound(ls, 13) && right_bound(re, 13) && float_typed(ls, i - 1) &&
        float_typed(i + 1, re))
      emit("a / b -> __fdividef(a, b)", ls, re,
           "__fdividef(" + text(ls, i - 1) + ", " + text(i + 1, re) + ")");
  }
}

void Body::pr_eps() {
  for (int i = 0; i < n_; ++i) {
    if (ident(i) && is_epsilon_name(tx(i)) && !is(i - 1, ".") && !is(i - 1, "->") &&
        !is(i - 1, "::") && !is(i + 1, "(") && !is_assignment(tx(i + 1)) && !is_type_word(tx(i - 1)) &&
        !(ident(i - 1) && !is_statement_word(tx(i - 1)))) {
      emit("eps -> eps * 100", i, i, "(" + std::string(tx(i)) + " * 100.0f)");
      emit("eps -> 0", i, i, "0.0f");
    }
    if (number(i) && is(i - 1, "+") && is_binary(i - 1)) {
      const FloatLiteral fl = parse_float(tx(i));
      if (fl.ok && fl.value > 0 && fl.value < 1e-3) {
        emit("eps -> eps * 100", i, i, float_text(fl.value * 100, fl.is_float));
        emit("eps -> 0", i, i, fl.is_float ? "0.0f" : "0.0");
      }
    }
  }
}

void Body::pr_kahan() {
  // c = (t - s) - y;
  for (const auto& st : statements_) {
    const int k = st.first;
    if (!ident(k) || !is(k + 1, "=") || !is(k + 2, "(") || !ident(k + 3) || !is(k + 4, "-") ||
        !ident(k + 5) || !is(k + 6, ")") || !is(k + 7, "-") || !ident(k + 8) || k + 9 != st.last)
      continue;
    emit("c = (t - s) - y -> c = 0", k + 2, k + 8, "0.0f");
  }
}

// ---- controls ------------------------------------------------------------------------------

void Body::ctrl() {
  for (int i = 0; i < n_; ++i) {
    if (call_of(i, "fmaf")) {
      const auto args = arguments(i + 1);
      if (args.size() == 3) {
        std::string r = paren_unless_primary(args[0].first, args[0].second) + " * " +
                        paren_unless_primary(args[1].first, args[1].second) + " + " +
                        paren_unless_primary(args[2].first, args[2].second);
        const int e = match(i + 1);
        if (!(left_bound(i, 12) && right_bound(e, 12))) r = "(" + r + ")";
        emit("fmaf(a, b, c) -> a * b + c", i, e, r);
      }
    }
    if (!is(i, "+") || !is_binary(i)) continue;
    // a * b + c
    {
      const int ce = primary_end(i + 1);
      const int be = i - 1, bs = primary_begin(be);
      if (ce >= 0 && bs > 0 && is(bs - 1, "*") && is_binary(bs - 1)) {
        const int as = primary_begin(bs - 2);
        if (as >= 0 && left_bound(as, 12) && right_bound(ce, 12) && float_typed(as, bs - 2) &&
            float_typed(bs, be) && float_typed(i + 1, ce))
          emit("a * b + c -> fmaf(a, b, c)", as, ce,
               "fmaf(" + text(as, bs - 2) + ", " + text(bs, be) + ", " + text(i + 1, ce) + ")");
      }
    }
    // c + a * b
    {
      const int cs = primary_begin(i - 1);
      const int ae = primary_end(i + 1);
      if (cs >= 0 && ae >= 0 && is(ae + 1, "*") && is_binary(ae + 1)) {
        const int be = primary_end(ae + 2);
        if (be >= 0 && left_bound(cs, 12) && right_bound(be, 12) && float_typed(cs, i - 1) &&
            float_typed(i + 1, ae) && float_typed(ae + 2, be))
          emit("c + a * b -> fmaf(a, b, c)", cs, be,
               "fmaf(" + text(i + 1, ae) + ", " + text(ae + 2, be) + ", " + text(cs, i - 1) + ")");
      }
    }
    // (a + b) + c  and  a + b + c
    {
      const int ce = primary_end(i + 1);
      if (ce < 0 || !right_bound(ce, 12) || !float_typed(i + 1, ce)) continue;
      const int left_end = i - 1;
      if (is(left_end, ")") && match(left_end) >= 0) {
        const int o = match(left_end);
        const int ae = primary_end(o + 1);
        if (ae > 0 && is(ae + 1, "+") && is_binary(ae + 1) && primary_end(ae + 2) == left_end - 1 &&
            primary_begin(left_end) == o && left_bound(o, 12) && float_typed(o + 1, ae) &&
            float_typed(ae + 2, left_end - 1)) {
          emit("(a + b) + c -> a + (b + c)", o, ce,
               text(o + 1, ae) + " + (" + text(ae + 2, left_end - 1) + " + " + text(i + 1, ce) + ")");
          continue;
        }
      }
      const int bs = primary_begin(left_end);
      if (bs > 0 && is(bs - 1, "+") && is_binary(bs - 1)) {
        const int as = primary_begin(bs - 2);
        if (as >= 0 && left_bound(as, 12) && float_typed(as, bs - 2) && float_typed(bs, left_end))
          emit("a + b + c -> a + (b + c)", as, ce,
               text(as, bs - 2) + " + (" + text(bs, left_end) + " + " + text(i + 1, ce) + ")");
      }
    }
  }
}

} // namespace kj::mutate::detail::ops
