// The integer expression language of launch plans and shapes: integers, + - * / %, unary minus,
// parentheses, dim and scalar names, `i` inside a repeated launch, and the functions ceil_div,
// min, max, log2, ceil_log2, next_pow2, align_up. Constraints also need comparisons, so
// == != < <= > >= (1 or 0) and && || exist too, with C's precedence. Arithmetic is 64-bit and
// checked: overflow, division by zero and unknown names are SpecErrors naming the file, the
// field and the column.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "kjudge/error.hpp"

namespace kj {

// Names visible to an expression, with their values.
using Env = std::map<std::string, std::int64_t, std::less<>>;

// A SpecError raised by an expression, which also knows the 1-based column of the offending
// token inside the expression text (the Location's line/column stay those of the field in the
// file). Catching SpecError catches it too.
class ExprError : public SpecError {
public:
  ExprError(Location where, const std::string& message, int expr_column)
      : SpecError(std::move(where), message), expr_column_(expr_column) {}
  int expr_column() const { return expr_column_; }

private:
  int expr_column_;
};

class Expr {
public:
  Expr();  // the constant 0, text "0"
  // Parse `text`; `where` names the file and field, the column is filled in on error.
  static Expr parse(std::string_view text, const Location& where);
  static Expr constant(std::int64_t value);
  // The real-valued dialect of a problem's [score] formulas: decimal and exponent literals
  // ("0.3", "1e-3"), the same operators on doubles (/ divides exactly, % is fmod; comparisons,
  // && and || give 1 or 0), min and max, and sum(e): e evaluated once per case, that case's
  // names first, the results added. The integer functions are not in it.
  static Expr parse_real(std::string_view text, const Location& where);
  using RealEnv = std::map<std::string, double, std::less<>>;
  // Evaluate the real dialect; `cases` are sum()'s. Throws ExprError (an unknown name, a
  // division by zero, sum() within sum()); an integer expression evaluates as one too.
  double eval_real(const RealEnv& env, const std::vector<RealEnv>& cases = {}) const;

  // Evaluate with the given names; throws SpecError (unknown name, division by zero,
  // overflow, a function's domain error such as log2(0)).
  std::int64_t eval(const Env& env) const; // ExprError for the real dialect
  // Every name the expression refers to.
  std::set<std::string> names() const;
  // Throw ExprError for the first name (in text order) that `known` lacks, with its column and
  // the known names listed: the load-time check of a field's names.
  void check_names(const std::set<std::string, std::less<>>& known) const;
  const std::string& text() const { return text_; }
  const Location& where() const { return where_; }

  struct Node;  // the AST, private to expr.cpp

private:
  std::shared_ptr<const Node> root_;
  bool real_ = false;
  std::string text_;
  Location where_;
};

}  // namespace kj
