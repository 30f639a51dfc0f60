// The internal pieces the mutation operators share (src/mutate/operators.cpp and the rules_*.cpp
// files): the catalogue lookups, word and literal classification, what a name was declared as,
// and `Body`, one __global__/__device__ body as a token vector with its bracket, template,
// statement and for-loop structure. Each operator is a `Body` member that walks the tokens and
// emits candidate rewrites; operators.cpp turns the candidates into Mutants. The structure is
// built in operator_tokens.cpp, the expression and type queries live in operator_expressions.cpp
// and the rewrite rules, by category, in the rules_*.cpp files. Nothing here is public API.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kjudge/lex.hpp"
#include "kjudge/mutate.hpp"

namespace kj::mutate::detail::ops {

using lex::Token;
using lex::TokenKind;

// ---- The catalogue (operators.cpp) -----------------------------------------------------------

const std::vector<Operator>& catalogue_table();
// The catalogue index of an operator id; std::logic_error when there is none.
int operator_index(std::string_view id);

// ---- Words (operator_tokens.cpp) ---------------------------------------------------------------

inline bool in(std::string_view w, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), w) != set.end();
}

// Words that name or qualify a type: an identifier among them before `*`, `-` or `&` makes it a
// declarator or a unary operator, never the left operand of a binary one.
bool is_type_word(std::string_view w);
// Keywords after which an operand starts (`return -x`), so they are not operand ends.
bool is_statement_word(std::string_view w);
bool is_declaration_specifier(std::string_view w);
// Float-valued functions: a call to one of them is a float operand.
bool is_float_function(std::string_view w);
bool is_assignment(std::string_view p);
std::string lower(std::string_view s);
bool is_epsilon_name(std::string_view name);

// A decimal or hex integer literal: its value and suffix (u, l, ll, ...). Digit separators and
// octal literals other than 0 are left alone.
struct IntLiteral {
  bool ok = false;
  bool hex = false;
  unsigned long long value = 0;
  std::string suffix;
};
IntLiteral parse_int(std::string_view text);

// A decimal floating literal (1.0f, 2e-3, .5): its value and whether it is a float (f suffix).
struct FloatLiteral {
  bool ok = false;
  bool is_float = false; // f or F suffix
  double value = 0;
};
FloatLiteral parse_float(std::string_view text);
// The literal text of v: `%.9g`, always with a point or exponent, `f` when is_float.
std::string float_text(double v, bool is_float);

// What a name was declared as: its type words and how many `*` or `[]` lie on top of them.
struct TypeInfo {
  bool known = false;
  std::vector<std::string> words;
  int depth = 0;
  bool has(std::string_view w) const { return std::find(words.begin(), words.end(), w) != words.end(); }
  bool is_float() const { return known && has("float") && !has("double"); }
  bool is_const_pointee() const { return has("const"); }
  bool is_integer() const {
    if (!known || depth != 0) return false;
    for (const auto& w : words)
      if (!in(w, {"int", "long", "unsigned", "signed", "short", "size_t", "int64_t", "uint64_t",
                  "int32_t", "uint32_t", "const"}))
        return false;
    return !words.empty();
  }
};
TypeInfo type_from_parameter(const lex::Parameter& p);

// ---- One device body ---------------------------------------------------------------------------

// One rewrite an operator proposes: op is the catalogue index, [offset, offset + length) the
// bytes of the source it replaces.
struct Candidate {
  int op;
  std::string rewrite;
  std::size_t offset, length;
  std::string replacement, prelude;
  bool equivalence_prone;
};

// What every body of one file shares.
struct FileContext {
  std::string_view src;
  const lex::LexResult* lexed = nullptr;
  const std::vector<lex::Function>* functions = nullptr;
  bool has_fp16 = false, has_bf16 = false;
  std::set<std::string> neg_inf_macros; // #define NAME -inf
};

class Body {
public:
  // The code tokens strictly inside fn's braces, analysed (operator_tokens.cpp).
  Body(const FileContext& file, const lex::Function& fn, const std::vector<bool>& active,
       std::vector<Candidate>& out);
  // Every active operator's candidates, in catalogue order (operators.cpp).
  void run();

private:
  const FileContext& f_;
  const lex::Function& fn_;
  const std::vector<bool>& active_;
  std::vector<Candidate>& out_;
  std::vector<Token> t_;
  int n_ = 0;
  int op_ = 0;

  std::vector<int> match_;          // matching bracket of ( [ { and template < >
  std::vector<bool> tmpl_;          // a `<`, `>` or `>>` of a template argument list
  std::vector<bool> in_tmpl_;       // inside template arguments
  std::vector<bool> frozen_;        // inside launch brackets, or an attribute
  std::vector<int> paren_depth_;    // enclosing ( and [
  std::vector<bool> block_brace_;   // a `{` or `}` of a compound statement
  std::vector<bool> header_close_;  // the `)` that closes an if/for/while/switch header
  struct ForLoop {
    int kw, open, close, semi1, semi2, body_first, body_last, nesting;
  };
  std::vector<ForLoop> fors_;
  struct Statement {
    int first, last; // last: its `;`
    bool braced;     // a sibling in a brace list (not the body of a braceless if/for)
  };
  std::vector<Statement> statements_;

  // -- token access --
  std::string_view tx(int i) const {
    return i >= 0 && i < n_ ? t_[static_cast<std::size_t>(i)].text(f_.src) : std::string_view();
  }
  bool is(int i, std::string_view s) const { return i >= 0 && i < n_ && tx(i) == s; }
  TokenKind kind(int i) const { return t_[static_cast<std::size_t>(i)].kind; }
  bool ident(int i) const { return i >= 0 && i < n_ && kind(i) == TokenKind::identifier; }
  bool number(int i) const { return i >= 0 && i < n_ && kind(i) == TokenKind::number; }
  bool punct(int i) const { return i >= 0 && i < n_ && kind(i) == TokenKind::punct; }
  bool i_kind(int i, TokenKind k) const { return i >= 0 && i < n_ && kind(i) == k; }
  int match(int i) const { return i >= 0 && i < n_ ? match_[static_cast<std::size_t>(i)] : -1; }
  bool tmpl(int i) const { return i >= 0 && i < n_ && tmpl_[static_cast<std::size_t>(i)]; }
  std::size_t begin_of(int i) const { return t_[static_cast<std::size_t>(i)].offset; }
  std::size_t end_of(int i) const {
    return t_[static_cast<std::size_t>(i)].offset + t_[static_cast<std::size_t>(i)].length;
  }
  std::string text(int a, int b) const {
    return std::string(f_.src.substr(begin_of(a), end_of(b) - begin_of(a)));
  }
  std::string between(int a, int b) const { // the bytes after token a and before token b
    return std::string(f_.src.substr(end_of(a), begin_of(b) - end_of(a)));
  }

  // -- emitting (operator_tokens.cpp) --
  // A candidate replacing tokens [first, last], unless one of them is frozen. `rewrite` must be
  // one of the current operator's; equivalence: -1 the operator's default, 0 no, 1 yes.
  void emit(std::string_view rewrite, int first, int last, std::string replacement,
            std::string prelude = {}, int equivalence = -1);
  void emit_span(std::string_view rewrite, std::size_t begin, std::size_t end,
                 std::string replacement, std::string prelude = {}, int equivalence = -1);

  // -- structure (operator_tokens.cpp) --
  void analyse();
  void mark_template(int open);
  void add_for(int kw, int open);
  // The `(` of the header of the if/for/while/switch at i (after a `constexpr`), -1 when it has
  // none or it is unbalanced.
  int control_header_open(int i) const;
  // The last token of the statement starting at i (its `;` or the `}` of a block), -1 if unsure.
  int statement_or_control_end(int i) const;
  // The `;` ending a simple statement starting at i; -1 when a block or an unbalanced closer
  // comes first.
  int simple_statement_end(int i) const;
  bool statement_start_context(int i, bool& braced) const;
  void collect_statements();
  const Statement* statement_at(int first) const;
  // A declaration statement: starts with type words, or `T name`, `T* name`, `A::B<..> name`.
  bool is_declaration(int i) const;

  // -- operators and operands (operator_expressions.cpp) --
  bool operand_end(int p) const;
  bool operand_start(int q) const;
  // `T* name` or `T& name`: the `*` or `&` at i is a declarator.
  bool is_declarator(int i) const;
  bool is_binary(int i) const;
  // Precedence of the token at i as a binary operator (0: not one).
  int binary_prec(int i) const;
  // The operand [s, e] of an operator of precedence `prec` is bound to it on the left: what
  // comes before binds less tightly (or opens a group or statement).
  bool left_bound(int s, int prec) const;
  // ... and on the right: what follows binds no more tightly (left-associative operators).
  bool right_bound(int e, int prec) const;
  // The last token of a postfix expression (name, call, subscript, member, literal or group)
  // starting at s; -1 if none starts there.
  int primary_end(int s) const;
  // The first token of the postfix expression ending at e; -1 if none ends there.
  int primary_begin(int e) const;
  bool is_primary(int s, int e) const { return primary_end(s) == e; }
  std::string paren_unless_primary(int s, int e) const {
    return is_primary(s, e) ? text(s, e) : "(" + text(s, e) + ")";
  }
  // Split the arguments of the call whose `(` is at open: [first, last] per argument.
  std::vector<std::pair<int, int>> arguments(int open) const;
  // A call token: name followed by `(`, not a member or a qualified std:: name unless allowed.
  bool call_of(int i, std::string_view name) const;
  // Whether every punctuator of [s, e] outside ( ) and [ ] groups is one of `allowed`.
  bool only_top_level(int s, int e, std::initializer_list<std::string_view> allowed) const;
  // Whether [s, e] is the one literal 0 (0, 0u, 0.0f, ...).
  bool zero_literal(int s, int e) const;

  // -- types (operator_expressions.cpp) --
  TypeInfo type_of(std::string_view name, int use) const;
  bool declared_at(int k, TypeInfo& t) const;
  // The `<` whose closer is the template `>` at close, -1 if none.
  int opener_of(int close) const;
  // Whether the postfix expression [s, e] is a float value.
  bool float_typed(int s, int e) const;
  bool float_expression(int s, int e) const;

  // -- places (operator_expressions.cpp) --
  bool in_for_increment(int i) const;
  bool inside_subscript(int i) const;
  // Array dimensions of a declaration: `float v[4]`, `__shared__ float s[T][T + 1]`.
  bool is_declarator_dimension(int open) const;
  bool is_shared_declaration(int open) const;
  // A loop bound with no comparison, logic or conditional at its top level.
  bool plain_condition(int s, int e) const;
  // The step [s, e] names gridDim, or is a variable initialised from it.
  bool mentions_grid(int s, int e) const;
  bool is_barrier_or_fence(int s) const;
  // Each conditional expression `c ? a : b` with its extent: f(cond_start, ?, :, end).
  template <class F>
  void for_each_ternary(F&& f) const;

  // -- arithmetic (rules_arithmetic_indexing.cpp) --
  void ar_aor();
  void ar_assign();
  void ar_swap();
  void ar_unary();
  void ar_const();
  bool in_alignment(int i) const;
  void ar_scale_drop();
  void ar_term_drop();
  // Whether the postfix expression [s, e] is known to be a pointer (or an array).
  bool pointer_typed(int s, int e) const;
  bool in_for_header(int i) const;
  void ar_minmax();

  // -- indexing (rules_arithmetic_indexing.cpp) --
  bool is_thread_index(int i) const;
  void ix_dim();
  void ix_gir();
  void ix_off();
  void ix_stride();
  void ix_transpose();
  void ix_gridstride();
  void ix_loop0();
  void ix_argswap();

  // -- semantic (rules_semantic_boundary.cpp) --
  void se_softmax_max();
  bool is_neg_inf(int s, int& e) const;
  void se_red_init();
  void se_red_op();
  // The first token of a simple lvalue ending just before the assignment at i, when that lvalue
  // starts a statement; -1 otherwise.
  int statement_lhs_start(int i) const;
  void se_norm();
  void se_dcr();
  void se_clamp();
  bool writes_output(const Statement& st) const;
  bool is_output_pointer(std::string_view name, int use) const;
  void se_sdl();
  void se_partial();
  void se_nowrite();

  // -- boundary (rules_semantic_boundary.cpp) --
  void bd_ror();
  bool has_relational(int s, int e) const;
  void bd_drop_guard();
  void bd_drop_conj();
  void bd_tile_tail();
  void bd_loopend();
  bool all_additive(int s, int e) const;
  void bd_smem();

  // -- synchronization (rules_sync_precision_control.cpp) --
  // `name(...);` as a whole statement: the index of its `;`, or -1.
  int call_statement_end(int i, std::string_view name) const;
  void sy_drop();
  void sy_move();
  bool movable(const Statement& st) const;
  bool is_shuffle(int i) const;
  void sy_warp();
  void sy_shfl_off();
  // Base identifier and subscripts of an atomic's address argument: &a[i] or p.
  TypeInfo pointee_type(int s, int e) const;
  void sy_atomic();
  void sy_atomic_op();
  void sy_fence();

  // -- precision and controls (rules_sync_precision_control.cpp) --
  std::string round_wrap(std::string_view kind, const std::string& e, std::string& prelude) const;
  void pr_acc();
  void pr_in();
  void pr_double();
  void pr_fastmath();
  void pr_eps();
  void pr_kahan();
  void ctrl();
};

template <class F>
void Body::for_each_ternary(F&& f) const {
  for (int q = 0; q < n_; ++q) {
    if (!is(q, "?")) continue;
    int cs = q - 1;
    for (; cs >= 0; --cs) {
      if (is(cs, ")") || is(cs, "]")) {
        if (match(cs) < 0) break;
        cs = match(cs);
        continue;
      }
      if (in(tx(cs), {"(", "[", "{", ";", "}", ",", "return", "?", ":"}) || is_assignment(tx(cs)))
        break;
    }
    ++cs;
    if (cs >= q || is(cs - 1, "?") || is(cs - 1, ":")) continue;
    int colon = -1, end = -1;
    for (int k = q + 1; k < n_; ++k) {
      if ((is(k, "(") || is(k, "[") || is(k, "{")) && match(k) > k) {
        k = match(k);
        continue;
      }
      if (is(k, "?")) break; // nested: leave it alone
      if (colon < 0 && is(k, ":")) {
        colon = k;
        continue;
      }
      if (in(tx(k), {")", "]", "}", ";", ","})) {
        end = k - 1;
        break;
      }
      if (colon >= 0 && is(k, ":")) break;
    }
    if (colon < 0 || end <= colon) continue;
    f(cs, q, colon, end);
  }
}

} // namespace kj::mutate::detail::ops
