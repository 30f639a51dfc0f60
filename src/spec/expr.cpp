// The integer expression language of shapes, launch plans and constraints: a recursive-descent
// parser into a small immutable tree, and a checked 64-bit evaluator. Every error, at parse or
// at evaluation, is an ExprError that points at the column of the offending token, because the
// expressions live inside TOML strings where the file's own line and column only find the field.
#include "kjudge/expr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace kj {

namespace {

enum class Op { add, sub, mul, div, mod, eq, ne, lt, le, gt, ge, land, lor };
enum class Fn { ceil_div, min, max, log2, ceil_log2, next_pow2, align_up, sum };

struct FnInfo {
  Fn fn;
  std::string_view name;
  int min_args;
  int max_args; // -1: any number
};
constexpr FnInfo kFunctions[] = {
    {Fn::ceil_div, "ceil_div", 2, 2},
    {Fn::min, "min", 1, -1},
    {Fn::max, "max", 1, -1},
    {Fn::log2, "log2", 1, 1},
    {Fn::ceil_log2, "ceil_log2", 1, 1},
    {Fn::next_pow2, "next_pow2", 1, 1},
    {Fn::align_up, "align_up", 2, 2},
    {Fn::sum, "sum", 1, 1}, // the real dialect's only
};

std::string_view op_text(Op op) {
  switch (op) {
  case Op::add:
    return "+";
  case Op::sub:
    return "-";
  case Op::mul:
    return "*";
  case Op::div:
    return "/";
  case Op::mod:
    return "%";
  case Op::eq:
    return "==";
  case Op::ne:
    return "!=";
  case Op::lt:
    return "<";
  case Op::le:
    return "<=";
  case Op::gt:
    return ">";
  case Op::ge:
    return ">=";
  case Op::land:
    return "&&";
  case Op::lor:
    return "||";
  }
  return "?";
}

// Bounds both the parser's recursion and the height of the tree (which the evaluator and the
// destructor recurse over): no real shape needs more, and fuzzed input must not blow the stack.
constexpr int kMaxNesting = 64;
constexpr int kMaxHeight = 256;

std::string list_names(const std::vector<std::string_view>& names) {
  if (names.empty()) return "no names are defined here";
  std::string out = "known: ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

} // namespace

struct Expr::Node {
  enum class Kind { literal, name, neg, binary, call };
  Kind kind = Kind::literal;
  int column = 1;         // 1-based, of the literal, name, operator or function name
  std::int64_t value = 0; // literal
  double real = 0;        // literal of the real dialect
  bool is_real = false;
  std::string name;       // name, or the function's name for messages
  Op op = Op::add;        // binary
  Fn fn = Fn::min;        // call
  int height = 1;
  std::vector<std::unique_ptr<Node>> kids;
};

namespace {

using Node = Expr::Node;
using NodePtr = std::unique_ptr<Node>;

class Parser {
public:
  Parser(std::string_view text, const Location& where, bool real = false)
      : s_(text), where_(where), real_(real) {}

  NodePtr parse_all() {
    skip_ws();
    if (p_ == s_.size()) fail("expected an expression", col());
    NodePtr root = parse_or();
    skip_ws();
    if (p_ != s_.size()) fail(fmt::format("unexpected '{}'", s_[p_]), col());
    return root;
  }

private:
  [[noreturn]] void fail(const std::string& msg, int column) const {
    throw ExprError(where_, fmt::format("{} at column {}", msg, column), column);
  }
  int col() const { return static_cast<int>(p_) + 1; }
  void skip_ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r'))
      ++p_;
  }
  bool eat(std::string_view tok) {
    skip_ws();
    if (s_.substr(p_, tok.size()) != tok) return false;
    p_ += tok.size();
    return true;
  }

  NodePtr make_binary(Op op, int column, NodePtr l, NodePtr r) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::binary;
    n->op = op;
    n->column = column;
    n->height = 1 + std::max(l->height, r->height);
    n->kids.push_back(std::move(l));
    n->kids.push_back(std::move(r));
    check_height(*n);
    return n;
  }
  void check_height(const Node& n) const {
    if (n.height > kMaxHeight) fail("expression is too deeply nested", n.column);
  }

  // One precedence level of left-associative binary operators. The tokens are tried in order,
  // so a longer one ("<=") must come before its prefix ("<").
  template <class Next>
  NodePtr level(Next next, std::initializer_list<std::pair<std::string_view, Op>> ops) {
    NodePtr left = (this->*next)();
    for (;;) {
      skip_ws();
      const int column = col();
      bool matched = false;
      for (auto [tok, op] : ops) {
        if (s_.substr(p_, tok.size()) != tok) continue;
        p_ += tok.size();
        NodePtr right = (this->*next)();
        left = make_binary(op, column, std::move(left), std::move(right));
        matched = true;
        break;
      }
      if (!matched) return left;
    }
  }

  NodePtr parse_or() { return level(&Parser::parse_and, {{"||", Op::lor}}); }
  NodePtr parse_and() { return level(&Parser::parse_eq, {{"&&", Op::land}}); }
  NodePtr parse_eq() { return level(&Parser::parse_rel, {{"==", Op::eq}, {"!=", Op::ne}}); }
  NodePtr parse_rel() {
    return level(&Parser::parse_add,
                 {{"<=", Op::le}, {">=", Op::ge}, {"<", Op::lt}, {">", Op::gt}});
  }
  NodePtr parse_add() { return level(&Parser::parse_mul, {{"+", Op::add}, {"-", Op::sub}}); }
  NodePtr parse_mul() {
    return level(&Parser::parse_unary, {{"*", Op::mul}, {"/", Op::div}, {"%", Op::mod}});
  }

  NodePtr parse_unary() {
    skip_ws();
    if (p_ < s_.size() && s_[p_] == '-') {
      const int column = col();
      ++p_;
      Nest nest(*this, column);
      NodePtr operand = parse_unary();
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::neg;
      n->column = column;
      n->height = operand->height + 1;
      n->kids.push_back(std::move(operand));
      check_height(*n);
      return n;
    }
    return parse_primary();
  }

  // Counts nesting (parentheses, call arguments, unary minus) on the way down.
  struct Nest {
    Nest(Parser& parser, int column) : p(parser) {
      if (++p.depth_ > kMaxNesting) p.fail("expression is too deeply nested", column);
    }
    ~Nest() { --p.depth_; }
    Parser& p;
  };

  NodePtr parse_primary() {
    skip_ws();
    const int column = col();
    if (p_ == s_.size()) fail("expected a number, a name or '('", column);
    const char c = s_[p_];
    if (c == '(') {
      ++p_;
      Nest nest(*this, column);
      NodePtr inner = parse_or();
      if (!eat(")")) fail("expected ')'", col());
      return inner;
    }
    if (c >= '0' && c <= '9') return parse_number();
    if (is_name_start(c)) return parse_name_or_call();
    fail(fmt::format("unexpected '{}'", c), column);
  }

  static bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
  // The real dialect has min, max and sum; the integer one every function but sum.
  bool in_dialect(Fn fn) const {
    return real_ ? fn == Fn::min || fn == Fn::max || fn == Fn::sum : fn != Fn::sum;
  }

  NodePtr parse_number() {
    if (real_) return parse_real_number();
    const int column = col();
    const std::size_t start = p_;
    std::int64_t v = 0;
    bool overflow = false;
    while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
      const int digit = s_[p_] - '0';
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, digit, &v))
        overflow = true;
      ++p_;
    }
    if (p_ < s_.size() && (is_name_char(s_[p_]) || s_[p_] == '.'))
      fail(fmt::format("bad number '{}' (only decimal integers)", s_.substr(start, p_ - start + 1)),
           column);
    if (overflow)
      fail(fmt::format("integer literal {} does not fit in 64 bits", s_.substr(start, p_ - start)),
           column);
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::literal;
    n->column = column;
    n->value = v;
    return n;
  }

  // digits [. digits] [e [+-] digits], read by strtod.
  NodePtr parse_real_number() {
    const int column = col();
    const std::size_t start = p_;
    auto digits = [&] {
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    };
    digits();
    if (p_ < s_.size() && s_[p_] == '.') ++p_, digits();
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      const std::size_t exponent = p_;
      digits();
      if (p_ == exponent) fail("expected the exponent's digits", col());
    }
    if (p_ < s_.size() && (is_name_char(s_[p_]) || s_[p_] == '.'))
      fail(fmt::format("bad number '{}'", s_.substr(start, p_ - start + 1)), column);
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::literal;
    n->column = column;
    n->is_real = true;
    n->real = std::strtod(std::string(s_.substr(start, p_ - start)).c_str(), nullptr);
    return n;
  }

  NodePtr parse_name_or_call() {
    const int column = col();
    const std::size_t start = p_;
    while (p_ < s_.size() && is_name_char(s_[p_]))
      ++p_;
    std::string name(s_.substr(start, p_ - start));
    skip_ws();
    if (p_ == s_.size() || s_[p_] != '(') {
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::name;
      n->column = column;
      n->name = std::move(name);
      return n;
    }
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFunctions)
      if (f.name == name) info = &f;
    if (!info || !in_dialect(info->fn)) {
      std::vector<std::string_view> known;
      for (const FnInfo& f : kFunctions)
        if (in_dialect(f.fn)) known.push_back(f.name);
      std::sort(known.begin(), known.end());
      fail(fmt::format("unknown function '{}' ({})", name, list_names(known)), column);
    }
    ++p_; // '('
    Nest nest(*this, column);
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::call;
    n->column = column;
    n->fn = info->fn;
    n->name = std::move(name);
    if (!eat(")")) {
      for (;;) {
        NodePtr arg = parse_or();
        n->height = std::max(n->height, arg->height + 1);
        n->kids.push_back(std::move(arg));
        if (eat(")")) break;
        if (!eat(",")) fail("expected ',' or ')'", col());
      }
    }
    const int count = static_cast<int>(n->kids.size());
    if (count < info->min_args || (info->max_args >= 0 && count > info->max_args)) {
      const std::string wanted = info->max_args < 0 ? fmt::format("at least {}", info->min_args)
                                                    : fmt::format("{}", info->min_args);
      fail(fmt::format("{} takes {} argument{}, got {}", n->name, wanted,
                       info->min_args == 1 && info->max_args == 1 ? "" : "s", count),
           column);
    }
    check_height(*n);
    return n;
  }

  std::string_view s_;
  const Location& where_;
  bool real_ = false;
  std::size_t p_ = 0;
  int depth_ = 0;
};

// The real dialect's evaluator: doubles, a case's names before the global ones inside sum().
class RealEvaluator {
public:
  RealEvaluator(const Expr::RealEnv& env, const std::vector<Expr::RealEnv>& cases,
                const Location& where)
      : env_(env), cases_(cases), where_(where) {}

  double eval(const Node& n, const Expr::RealEnv* one_case) const {
    switch (n.kind) {
    case Node::Kind::literal:
      return n.is_real ? n.real : static_cast<double>(n.value);
    case Node::Kind::name: {
      if (one_case)
        if (auto it = one_case->find(n.name); it != one_case->end()) return it->second;
      if (auto it = env_.find(n.name); it != env_.end()) return it->second;
      std::vector<std::string_view> known;
      for (const auto& [name, value] : env_) known.push_back(name);
      if (!cases_.empty())
        for (const auto& [name, value] : cases_.front()) known.push_back(name);
      fail(n, fmt::format("unknown name '{}'{} ({})", n.name,
                          one_case || cases_.empty() || !cases_.front().contains(n.name)
                              ? ""
                              : ": a case's name, only inside sum()",
                          list_names(known)));
    }
    case Node::Kind::neg:
      return -eval(*n.kids[0], one_case);
    case Node::Kind::binary:
      return binary(n, one_case);
    case Node::Kind::call:
      return call(n, one_case);
    }
    return 0;
  }

private:
  [[noreturn]] void fail(const Node& n, const std::string& msg) const {
    throw ExprError(where_, fmt::format("{} at column {}", msg, n.column), n.column);
  }

  double binary(const Node& n, const Expr::RealEnv* c) const {
    if (n.op == Op::land) return eval(*n.kids[0], c) != 0 && eval(*n.kids[1], c) != 0;
    if (n.op == Op::lor) return eval(*n.kids[0], c) != 0 || eval(*n.kids[1], c) != 0;
    const double a = eval(*n.kids[0], c), b = eval(*n.kids[1], c);
    switch (n.op) {
    case Op::add:
      return a + b;
    case Op::sub:
      return a - b;
    case Op::mul:
      return a * b;
    case Op::div:
      if (b == 0) fail(n, "division by zero");
      return a / b;
    case Op::mod:
      if (b == 0) fail(n, "modulo by zero");
      return std::fmod(a, b);
    case Op::eq:
      return a == b;
    case Op::ne:
      return a != b;
    case Op::lt:
      return a < b;
    case Op::le:
      return a <= b;
    case Op::gt:
      return a > b;
    case Op::ge:
      return a >= b;
    case Op::land:
    case Op::lor:
      break;
    }
    return 0;
  }

  double call(const Node& n, const Expr::RealEnv* c) const {
    if (n.fn == Fn::sum) {
      if (c) fail(n, "sum() inside sum()");
      double total = 0;
      for (const Expr::RealEnv& one : cases_) total += eval(*n.kids[0], &one);
      return total;
    }
    double out = eval(*n.kids[0], c);
    for (std::size_t k = 1; k < n.kids.size(); ++k) {
      const double v = eval(*n.kids[k], c);
      out = n.fn == Fn::min ? std::min(out, v) : std::max(out, v);
    }
    return out;
  }

  const Expr::RealEnv& env_;
  const std::vector<Expr::RealEnv>& cases_;
  const Location& where_;
};

class Evaluator {
public:
  Evaluator(const Env& env, const Location& where) : env_(env), where_(where) {}

  std::int64_t eval(const Node& n) const {
    switch (n.kind) {
    case Node::Kind::literal:
      return n.value;
    case Node::Kind::name:
      return lookup(n);
    case Node::Kind::neg: {
      const std::int64_t v = eval(*n.kids[0]);
      std::int64_t out = 0;
      if (__builtin_sub_overflow(std::int64_t{0}, v, &out))
        fail(n, fmt::format("64-bit overflow negating {}", v));
      return out;
    }
    case Node::Kind::binary:
      return binary(n);
    case Node::Kind::call:
      return call(n);
    }
    return 0;
  }

private:
  [[noreturn]] void fail(const Node& n, const std::string& msg) const {
    throw ExprError(where_, fmt::format("{} at column {}", msg, n.column), n.column);
  }

  std::int64_t lookup(const Node& n) const {
    auto it = env_.find(n.name);
    if (it != env_.end()) return it->second;
    std::vector<std::string_view> known;
    for (const auto& [name, value] : env_)
      known.push_back(name);
    throw ExprError(
        where_,
        fmt::format("unknown name '{}' at column {} ({})", n.name, n.column, list_names(known)),
        n.column);
  }

  std::int64_t binary(const Node& n) const {
    // && and || short-circuit, so `B == 0 || C % B == 0` is a usable constraint.
    if (n.op == Op::land) return eval(*n.kids[0]) != 0 && eval(*n.kids[1]) != 0;
    if (n.op == Op::lor) return eval(*n.kids[0]) != 0 || eval(*n.kids[1]) != 0;
    const std::int64_t a = eval(*n.kids[0]);
    const std::int64_t b = eval(*n.kids[1]);
    std::int64_t out = 0;
    bool overflow = false;
    switch (n.op) {
    case Op::add:
      overflow = __builtin_add_overflow(a, b, &out);
      break;
    case Op::sub:
      overflow = __builtin_sub_overflow(a, b, &out);
      break;
    case Op::mul:
      overflow = __builtin_mul_overflow(a, b, &out);
      break;
    case Op::div:
      if (b == 0) fail(n, "division by zero");
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1)
        overflow = true;
      else
        out = a / b;
      break;
    case Op::mod:
      if (b == 0) fail(n, "modulo by zero");
      // INT64_MIN % -1 is undefined in C++ but 0 in arithmetic.
      out = b == -1 ? 0 : a % b;
      break;
    case Op::eq:
      out = a == b;
      break;
    case Op::ne:
      out = a != b;
      break;
    case Op::lt:
      out = a < b;
      break;
    case Op::le:
      out = a <= b;
      break;
    case Op::gt:
      out = a > b;
      break;
    case Op::ge:
      out = a >= b;
      break;
    case Op::land:
    case Op::lor:
      break;
    }
    if (overflow) fail(n, fmt::format("64-bit overflow in {} {} {}", a, op_text(n.op), b));
    return out;
  }

  static std::int64_t floor_log2(std::int64_t v) { // v > 0
    return 63 - __builtin_clzll(static_cast<unsigned long long>(v));
  }

  std::int64_t call(const Node& n) const {
    std::vector<std::int64_t> args;
    args.reserve(n.kids.size());
    for (const auto& k : n.kids)
      args.push_back(eval(*k));
    switch (n.fn) {
    case Fn::min:
      return *std::min_element(args.begin(), args.end());
    case Fn::max:
      return *std::max_element(args.begin(), args.end());
    case Fn::ceil_div: {
      const std::int64_t a = args[0], b = args[1];
      if (b == 0) fail(n, "ceil_div by zero");
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1)
        fail(n, fmt::format("64-bit overflow in ceil_div({}, {})", a, b));
      std::int64_t q = a / b;
      const std::int64_t r = a % b;
      if (r != 0 && ((r > 0) == (b > 0))) ++q; // the true quotient was above q
      return q;
    }
    case Fn::align_up: {
      const std::int64_t a = args[0], b = args[1];
      if (b <= 0) fail(n, fmt::format("align_up needs a positive alignment, got {}", b));
      std::int64_t q = a / b;
      if (a % b > 0) ++q;
      std::int64_t out = 0;
      if (__builtin_mul_overflow(q, b, &out))
        fail(n, fmt::format("64-bit overflow in align_up({}, {})", a, b));
      return out;
    }
    case Fn::log2:
      if (args[0] <= 0) fail(n, fmt::format("log2 needs a positive argument, got {}", args[0]));
      return floor_log2(args[0]);
    case Fn::ceil_log2:
      if (args[0] <= 0)
        fail(n, fmt::format("ceil_log2 needs a positive argument, got {}", args[0]));
      return args[0] == 1 ? 0 : floor_log2(args[0] - 1) + 1;
    case Fn::next_pow2: {
      const std::int64_t a = args[0];
      if (a < 0) fail(n, fmt::format("next_pow2 needs a non-negative argument, got {}", a));
      if (a <= 1) return 1;
      const std::int64_t e = floor_log2(a - 1) + 1;
      if (e > 62) fail(n, fmt::format("64-bit overflow in next_pow2({})", a));
      return std::int64_t{1} << e;
    }
    case Fn::sum: // never parsed into an integer expression
      fail(n, "sum() is for a problem's [score] formulas");
    }
    return 0;
  }

  const Env& env_;
  const Location& where_;
};

void collect_names(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Kind::name) out.insert(n.name);
  for (const auto& k : n.kids)
    collect_names(*k, out);
}

// The first name (in text order: children are stored left to right) that `known` lacks.
const Node* first_unknown(const Node& n, const std::set<std::string, std::less<>>& known) {
  if (n.kind == Node::Kind::name && !known.contains(n.name)) return &n;
  for (const auto& k : n.kids)
    if (const Node* bad = first_unknown(*k, known)) return bad;
  return nullptr;
}

} // namespace

Expr::Expr() {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::literal;
  root_ = std::move(n);
  text_ = "0";
}

Expr Expr::constant(std::int64_t value) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::literal;
  n->value = value;
  Expr e;
  e.root_ = std::move(n);
  e.text_ = fmt::format("{}", value);
  return e;
}

Expr Expr::parse(std::string_view text, const Location& where) {
  Expr e;
  e.root_ = Parser(text, where).parse_all();
  e.text_ = std::string(text);
  e.where_ = where;
  return e;
}

std::int64_t Expr::eval(const Env& env) const {
  if (real_)
    throw ExprError(where_, fmt::format("'{}' is a real-valued formula, not an integer expression",
                                        text_),
                    1);
  return Evaluator(env, where_).eval(*root_);
}

Expr Expr::parse_real(std::string_view text, const Location& where) {
  Expr e;
  e.root_ = Parser(text, where, true).parse_all();
  e.real_ = true;
  e.text_ = std::string(text);
  e.where_ = where;
  return e;
}

double Expr::eval_real(const RealEnv& env, const std::vector<RealEnv>& cases) const {
  return RealEvaluator(env, cases, where_).eval(*root_, nullptr);
}

std::set<std::string> Expr::names() const {
  std::set<std::string> out;
  collect_names(*root_, out);
  return out;
}

void Expr::check_names(const std::set<std::string, std::less<>>& known) const {
  const Node* bad = first_unknown(*root_, known);
  if (!bad) return;
  std::vector<std::string_view> listed(known.begin(), known.end());
  throw ExprError(where_,
                  fmt::format("unknown name '{}' at column {} ({})", bad->name, bad->column,
                              list_names(listed)),
                  bad->column);
}

} // namespace kj
