// The mutation operator catalogue of `kjudge mutate` and the generation of single-edit mutants
// (../shared/reference/mutation-operators.md, "Operator catalogue"). Every operator works on the
// lexer's code tokens inside __global__/__device__ bodies (kj::lex::find_functions), never on
// comments, strings, preprocessor lines, attributes or launch brackets. The rewrites are token
// patterns, not a C++ parser: where a pattern could be ambiguous (a `*` that may be a pointer
// declarator, a `<` that may open a template argument list, an operand whose extent depends on
// precedence) the operator stays silent, because a few correct mutants are worth more than many
// that do not compile or do not mean what their label says. Types are read from the function's
// parameters and the local declarations above a use, which is enough to keep the precision and
// control rewrites on `float` values. This file holds the catalogue table, the driver that runs
// the operators over each body and turns their candidates into Mutants (ids, dedup, labels),
// apply_mutant and normalize_ptx; the operators themselves are `Body` members
// (src/mutate/operator_tokens.hpp), their rules grouped by category in src/mutate/rules_*.cpp.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kjudge/lex.hpp"
#include "kjudge/mutate.hpp"
#include "kjudge/sha256.hpp"
#include "mutate/operator_tokens.hpp"
#include "mutate/report_internal.hpp"

namespace kj::mutate {

std::string_view category_name(Category c) {
  switch (c) {
  case Category::arithmetic: return "arithmetic";
  case Category::indexing: return "indexing";
  case Category::semantic: return "semantic";
  case Category::boundary: return "boundary";
  case Category::synchronization: return "synchronization";
  case Category::precision: return "precision";
  case Category::control: return "control";
  }
  return "unknown";
}

namespace detail::ops {

// ---- The catalogue -------------------------------------------------------------------------

const std::vector<Operator>& catalogue_table() {
  using C = Category;
  static const std::vector<Operator> table = {
      {"AR-AOR", C::arithmetic, "binary + - * / replaced by its counterpart",
       {"+ -> -", "- -> +", "* -> /", "/ -> *"}},
      {"AR-ASSIGN", C::arithmetic, "compound assignment changed or accumulation dropped",
       {"+= -> -=", "-= -> +=", "*= -> /=", "/= -> *=", "+= -> ="}},
      {"AR-SWAP", C::arithmetic, "operands of a non-commutative operator swapped",
       {"a - b -> b - a", "a / b -> b / a"}},
      {"AR-UNARY", C::arithmetic, "unary minus or fabsf dropped", {"-x -> x", "fabsf(x) -> x"}},
      {"AR-CONST", C::arithmetic,
       "literal perturbed (the float scalings are tolerance probes, reported apart)",
       {"float c -> c * (1 + 1e-3)", "float c -> c * (1 - 1e-3)", "float c -> 0",
        "integer c -> c + 1", "integer c -> c - 1"}},
      {"AR-SCALE-DROP", C::arithmetic, "a constant multiplicative factor dropped",
       {"c * e -> e", "e * c -> e", "e / c -> e"}},
      {"AR-TERM-DROP", C::arithmetic, "an added term dropped (bias, residual)",
       {"a + b -> a", "a + b -> b"}},
      {"AR-MINMAX", C::arithmetic, "min and max exchanged, or a ReLU-style max dropped",
       {"fmaxf -> fminf", "fminf -> fmaxf", "max -> min", "min -> max", "fmaxf(x, 0) -> x"}},
      {"IX-DIM", C::indexing, "x and y exchanged on threadIdx/blockIdx/blockDim/gridDim",
       {".x -> .y", ".y -> .x"}},
      {"IX-GIR", C::indexing, "blockIdx and threadIdx exchanged",
       {"blockIdx -> threadIdx", "threadIdx -> blockIdx"}},
      {"IX-OFF", C::indexing, "a subscript off by one", {"a[i] -> a[i + 1]", "a[i] -> a[i - 1]"}},
      {"IX-STRIDE", C::indexing, "leading dimension replaced by another size parameter",
       {"r * K -> r * N"}},
      {"IX-TRANSPOSE", C::indexing, "the two subscripts of a 2-D access exchanged",
       {"a[i][j] -> a[j][i]"}},
      {"IX-GRIDSTRIDE", C::indexing, "grid-stride step shortened or the loop cut to one pass",
       {"step -> step / gridDim.x", "grid-stride loop -> one pass"},
       true},
      {"IX-LOOP0", C::indexing, "loop start 0 -> 1", {"for (i = 0 -> for (i = 1"}},
      {"IX-ARGSWAP", C::indexing, "two adjacent same-typed arguments of a device call swapped",
       {"f(a, b) -> f(b, a)"}},
      {"SE-SOFTMAX-MAX", C::semantic, "the max subtraction before exp dropped",
       {"exp(x - m) -> exp(x)"},
       true},
      {"SE-RED-INIT", C::semantic, "reduction identity changed", {"-inf -> 0", "0 -> 1"}},
      {"SE-RED-OP", C::semantic, "max reduction turned into a sum and back",
       {"a = fmaxf(a, e) -> a + e", "a += e -> a = fmaxf(a, e)"}},
      {"SE-NORM", C::semantic, "normalisation changed: n-1 divisor, epsilon or centring dropped",
       {"/ n -> / (n - 1)", "+ eps -> (dropped)", "x - mean -> x"}},
      {"SE-DCR", C::semantic, "a branch condition forced", {"if (c) -> if (true)",
                                                             "if (c) -> if (false)"}},
      {"SE-CLAMP", C::semantic, "a clamp bound removed",
       {"min(a, b) -> a", "min(a, b) -> b", "max(a, b) -> a", "max(a, b) -> b",
        "fminf/fmaxf(x, c) -> x", "c ? k : v -> v"}},
      {"SE-SDL", C::semantic, "one statement or block deleted",
       {"statement -> ;", "{ block } -> { }"}},
      {"SE-PARTIAL", C::semantic, "the bound of an outer work loop halved",
       {"i < n -> i < n / 2"}},
      {"SE-NOWRITE", C::semantic, "a store to an output deleted", {"out[i] = v; -> ;"}},
      {"BD-ROR", C::boundary, "relational operator off by one",
       {"< -> <=", "<= -> <", "> -> >=", ">= -> >"}},
      {"BD-DROP-GUARD", C::boundary, "a bounds guard removed",
       {"if (guard) s -> s", "if (guard) return; -> (deleted)"}},
      {"BD-DROP-CONJ", C::boundary, "one conjunct of a guard dropped",
       {"a && b -> a", "a && b -> b"}},
      {"BD-TILE-TAIL", C::boundary, "zero padding of a load removed, or the tail iteration dropped",
       {"c ? a[i] : 0 -> a[i]", "i < n; i += s -> i + s <= n"}},
      {"BD-LOOPEND", C::boundary, "a loop end moved by one",
       {"i < n -> i < n - 1", "i > n -> i > n + 1"}},
      {"BD-SMEM", C::boundary, "a shared array one element shorter", {"s[N] -> s[N - 1]"}},
      {"SY-DROP", C::synchronization, "one __syncthreads() removed", {"__syncthreads(); -> ;"}},
      {"SY-MOVE", C::synchronization, "a barrier swapped with its neighbour statement",
       {"barrier moved up", "barrier moved down"}},
      {"SY-WARP", C::synchronization, "__syncwarp dropped or a shuffle mask narrowed",
       {"__syncwarp(); -> ;", "mask 0xffffffff -> 0x0000ffff"}},
      {"SY-SHFL-OFF", C::synchronization, "shuffle direction, offset start or step changed",
       {"__shfl_down_sync -> __shfl_xor_sync", "__shfl_xor_sync -> __shfl_down_sync",
        "offset start halved", "offset start doubled", "offset step doubled",
        "literal offset doubled"},
       true},
      {"SY-ATOMIC", C::synchronization, "an atomic update made a plain read-modify-write",
       {"atomicAdd(&p, v) -> p += v", "atomicAdd(p, v) -> *p += v"}},
      {"SY-ATOMIC-OP", C::synchronization, "atomicAdd replaced by another atomic",
       {"atomicAdd -> atomicExch", "atomicAdd -> atomicMax"}},
      {"SY-FENCE", C::synchronization, "a memory fence or volatile dropped",
       {"__threadfence(); -> ;", "volatile -> (dropped)"}},
      {"PR-ACC", C::precision, "accumulator rounded each step",
       {"acc rounded to f16 each step", "acc rounded to bf16 each step",
        "acc rounded to tf32 each step"}},
      {"PR-IN", C::precision, "multiply operands rounded",
       {"a * b -> f16(a) * f16(b)", "a * b -> bf16(a) * bf16(b)", "a * b -> tf32(a) * tf32(b)"}},
      {"PR-DOUBLE", C::precision, "double arithmetic done in float",
       {"double -> float", "double literal -> float literal"}},
      {"PR-FASTMATH", C::precision, "accurate math replaced by the fast intrinsics",
       {"expf -> __expf", "logf -> __logf", "a / b -> __fdividef(a, b)",
        "1 / sqrtf(x) -> rsqrtf(x)", "sinf -> __sinf", "cosf -> __cosf", "powf -> __powf",
        "log2f -> __log2f", "exp10f -> __exp10f", "tanf -> __tanf"},
       true},
      {"PR-EPS", C::precision, "epsilon scaled by 100 or zeroed", {"eps -> eps * 100", "eps -> 0"}},
      {"PR-KAHAN", C::precision, "Kahan compensation removed", {"c = (t - s) - y -> c = 0"}},
      {"CTRL", C::control, "must-pass rewrites (contraction, re-association)",
       {"fmaf(a, b, c) -> a * b + c", "a * b + c -> fmaf(a, b, c)", "c + a * b -> fmaf(a, b, c)",
        "(a + b) + c -> a + (b + c)", "a + b + c -> a + (b + c)"}},
  };
  return table;
}

int operator_index(std::string_view id) {
  const auto& table = catalogue_table();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].id == id) return static_cast<int>(i);
  throw std::logic_error("mutation operator " + std::string(id) + " is not in the catalogue");
}

// Each operator's rule, in catalogue order; the rules live in src/mutate/rules_*.cpp.
void Body::run() {
  using Gen = void (Body::*)();
  static const std::vector<std::pair<std::string_view, Gen>> generators = {
      {"AR-AOR", &Body::ar_aor},           {"AR-ASSIGN", &Body::ar_assign},
      {"AR-SWAP", &Body::ar_swap},         {"AR-UNARY", &Body::ar_unary},
      {"AR-CONST", &Body::ar_const},       {"AR-SCALE-DROP", &Body::ar_scale_drop},
      {"AR-TERM-DROP", &Body::ar_term_drop}, {"AR-MINMAX", &Body::ar_minmax},
      {"IX-DIM", &Body::ix_dim},           {"IX-GIR", &Body::ix_gir},
      {"IX-OFF", &Body::ix_off},           {"IX-STRIDE", &Body::ix_stride},
      {"IX-TRANSPOSE", &Body::ix_transpose}, {"IX-GRIDSTRIDE", &Body::ix_gridstride},
      {"IX-LOOP0", &Body::ix_loop0},       {"IX-ARGSWAP", &Body::ix_argswap},
      {"SE-SOFTMAX-MAX", &Body::se_softmax_max}, {"SE-RED-INIT", &Body::se_red_init},
      {"SE-RED-OP", &Body::se_red_op},     {"SE-NORM", &Body::se_norm},
      {"SE-DCR", &Body::se_dcr},           {"SE-CLAMP", &Body::se_clamp},
      {"SE-SDL", &Body::se_sdl},           {"SE-PARTIAL", &Body::se_partial},
      {"SE-NOWRITE", &Body::se_nowrite},   {"BD-ROR", &Body::bd_ror},
      {"BD-DROP-GUARD", &Body::bd_drop_guard}, {"BD-DROP-CONJ", &Body::bd_drop_conj},
      {"BD-TILE-TAIL", &Body::bd_tile_tail}, {"BD-LOOPEND", &Body::bd_loopend},
      {"BD-SMEM", &Body::bd_smem},         {"SY-DROP", &Body::sy_drop},
      {"SY-MOVE", &Body::sy_move},         {"SY-WARP", &Body::sy_warp},
      {"SY-SHFL-OFF", &Body::sy_shfl_off}, {"SY-ATOMIC", &Body::sy_atomic},
      {"SY-ATOMIC-OP", &Body::sy_atomic_op}, {"SY-FENCE", &Body::sy_fence},
      {"PR-ACC", &Body::pr_acc},           {"PR-IN", &Body::pr_in},
      {"PR-DOUBLE", &Body::pr_double},     {"PR-FASTMATH", &Body::pr_fastmath},
      {"PR-EPS", &Body::pr_eps},           {"PR-KAHAN", &Body::pr_kahan},
      {"CTRL", &Body::ctrl},
  };
  for (const auto& [id, gen] : generators) {
    op_ = operator_index(id);
    if (active_[static_cast<std::size_t>(op_)]) (this->*gen)();
  }
}

} // namespace detail::ops

namespace {

using detail::ops::Body;
using detail::ops::Candidate;
using detail::ops::catalogue_table;
using detail::ops::FileContext;
using detail::one_line;
using detail::ops::operator_index;
using lex::Token;
using lex::TokenKind;

// The names a preprocessor line defines as -inf (`#define NEG_INF __int_as_float(0xff800000)`).
std::set<std::string> negative_infinity_macros(std::string_view src, const lex::LexResult& lexed) {
  std::set<std::string> names;
  for (const Token& tok : lexed.tokens) {
    if (tok.kind != TokenKind::preprocessor) continue;
    std::string line;
    for (char c : tok.text(src))
      if (c != ' ' && c != '\t' && c != '\\' && c != '\n' && c != '\r') line += c;
    if (line.rfind("#define", 0) != 0) continue;
    for (std::string_view value : {"__int_as_float(0xff800000)", "__int_as_float(0xff800000u)",
                                   "(-INFINITY)", "-INFINITY", "__int_as_float(0xFF800000)"}) {
      if (line.size() > value.size() && line.compare(line.size() - value.size(), value.size(), value) == 0) {
        // #defineNAMEvalue, the spaces gone: the name is what lies between.
        std::string_view text = tok.text(src);
        std::size_t p = text.find("define") + 6;
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
        std::size_t q = p;
        while (q < text.size() && (std::isalnum(static_cast<unsigned char>(text[q])) != 0 || text[q] == '_')) ++q;
        if (q > p && (q >= text.size() || text[q] != '(')) names.emplace(text.substr(p, q - p));
      }
    }
  }
  return names;
}

bool includes_header(std::string_view src, const lex::LexResult& lexed, std::string_view header) {
  for (const Token& tok : lexed.tokens)
    if (tok.kind == TokenKind::preprocessor && tok.text(src).find("include") != std::string_view::npos &&
        tok.text(src).find(header) != std::string_view::npos)
      return true;
  return false;
}

std::string mutant_id(std::string_view file, std::string_view op, std::size_t offset,
                      std::size_t length, std::string_view replacement) {
  std::string key;
  key.append(file).push_back('\0');
  key.append(op).push_back('\0');
  key.append(std::to_string(offset)).push_back('\0');
  key.append(std::to_string(length)).push_back('\0');
  key.append(replacement);
  return sha256_hex(key).substr(0, 16);
}

} // namespace

const std::vector<Operator>& operator_catalogue() { return catalogue_table(); }

std::vector<Mutant> generate_mutants(std::string_view file, std::string_view source,
                                     const std::vector<std::string>& operators) {
  const auto& table = catalogue_table();
  std::vector<bool> active(table.size(), operators.empty());
  for (const auto& name : operators) {
    bool known = false;
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].id == name || category_name(table[i].category) == name) {
        active[i] = true;
        known = true;
      }
    if (!known) throw std::invalid_argument("unknown mutation operator or category '" + name + "'");
  }

  const lex::LexResult lexed = lex::tokenize(source);
  const std::vector<lex::Function> functions = lex::find_functions(source, lexed);
  FileContext ctx;
  ctx.src = source;
  ctx.lexed = &lexed;
  ctx.functions = &functions;
  ctx.has_fp16 = includes_header(source, lexed, "cuda_fp16.h");
  ctx.has_bf16 = includes_header(source, lexed, "cuda_bf16.h");
  ctx.neg_inf_macros = negative_infinity_macros(source, lexed);

  struct Located {
    Candidate c;
    std::string function;
  };
  std::vector<Located> all;
  for (const auto& fn : functions) {
    if (fn.body_begin == std::string_view::npos || fn.body_end == std::string_view::npos) continue;
    std::vector<Candidate> found;
    Body(ctx, fn, active, found).run();
    for (auto& c : found) all.push_back(Located{std::move(c), fn.name});
  }
  std::stable_sort(all.begin(), all.end(), [](const Located& a, const Located& b) {
    return a.c.offset != b.c.offset ? a.c.offset < b.c.offset : a.c.op < b.c.op;
  });

  // The same edit from two operators is one mutant: the first in catalogue order keeps it,
  // except that AR-CONST's generic literal nudges yield to an operator that means the edit
  // (IX-LOOP0's `0 -> 1`, SY-SHFL-OFF's `>>= 1 -> >>= 2`), so the specific label survives.
  const int generic = operator_index("AR-CONST");
  std::vector<Mutant> out;
  std::set<std::tuple<std::size_t, std::size_t, std::string>> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Candidate& c = all[i].c;
    const auto key = std::make_tuple(c.offset, c.length, c.replacement);
    if (seen.count(key) != 0) continue;
    if (c.op == generic) {
      bool specific = false;
      for (std::size_t j = i + 1; j < all.size() && all[j].c.offset == c.offset; ++j)
        if (all[j].c.length == c.length && all[j].c.replacement == c.replacement) specific = true;
      if (specific) continue;
    }
    seen.insert(key);
    const Operator& op = table[static_cast<std::size_t>(c.op)];
    Mutant m;
    m.op = op.id;
    m.category = op.category;
    m.rewrite = c.rewrite;
    m.file = std::string(file);
    m.offset = c.offset;
    m.length = c.length;
    const auto [line, column] = lex::line_column(source, c.offset);
    m.line = line;
    m.column = column;
    m.original = std::string(source.substr(c.offset, c.length));
    m.replacement = c.replacement;
    m.prelude = c.prelude;
    m.function = all[i].function;
    m.equivalence_prone = c.equivalence_prone;
    m.id = mutant_id(file, m.op, m.offset, m.length, m.replacement);
    const std::string to = m.replacement.empty() ? "(deleted)" : "`" + one_line(m.replacement) + "`";
    m.description = "`" + one_line(m.original) + "` -> " + to + " in " + m.function + " (line " +
                    std::to_string(m.line) + ")";
    out.push_back(std::move(m));
  }
  return out;
}

std::string apply_mutant(std::string_view source, const Mutant& m) {
  if (m.offset > source.size() || m.length > source.size() - m.offset ||
      source.substr(m.offset, m.length) != m.original)
    throw std::invalid_argument("mutant " + m.id + " does not fit this source (" + m.file + ")");
  std::string r;
  r.reserve(m.prelude.size() + source.size() + m.replacement.size());
  r.append(m.prelude);
  r.append(source.substr(0, m.offset));
  r.append(m.replacement);
  r.append(source.substr(m.offset + m.length));
  return r;
}

std::string normalize_ptx(std::string_view ptx) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= ptx.size()) {
    std::size_t nl = ptx.find('\n', pos);
    if (nl == std::string_view::npos) nl = ptx.size();
    std::string_view line = ptx.substr(pos, nl - pos);
    pos = nl + 1;
    // A trailing comment does not change the code (PTX has no string literals outside .file).
    if (const std::size_t c = line.find("//"); c != std::string_view::npos) line = line.substr(0, c);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    std::size_t first = 0;
    while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
    const std::string_view body = line.substr(first);
    if (body.empty()) continue;
    bool drop = false;
    for (std::string_view d : {".version", ".target", ".address_size", ".loc", ".file"})
      if (body.substr(0, d.size()) == d &&
          (body.size() == d.size() || body[d.size()] == ' ' || body[d.size()] == '\t'))
        drop = true;
    if (drop) continue;
    out.append(line);
    out.push_back('\n');
  }
  return out;
}

} // namespace kj::mutate
