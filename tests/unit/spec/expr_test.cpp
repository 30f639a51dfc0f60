// The expression language: precedence, every function, checked arithmetic, and errors that point
// at the column of the offending token.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "kjudge/expr.hpp"

namespace kj {
namespace {

const Location kWhere{"problems/x/problem.toml", "reference.launch[0].grid[0]", 12, 9};

std::int64_t ev(std::string_view text, const Env& env = {}) {
  return Expr::parse(text, kWhere).eval(env);
}

// The ExprError of evaluating (or parsing) `text`; fails the test if there is none.
ExprError error_of(std::string_view text, const Env& env = {}) {
  try {
    ev(text, env);
  } catch (const ExprError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return ExprError(Location{}, "none", 0);
}

TEST(Expr, LiteralsAndNames) {
  EXPECT_EQ(ev("0"), 0);
  EXPECT_EQ(ev("  42 "), 42);
  EXPECT_EQ(ev("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(ev("R", {{"R", 7}}), 7);
  EXPECT_EQ(ev("_x1", {{"_x1", 3}}), 3);
}

TEST(Expr, Precedence) {
  EXPECT_EQ(ev("1 + 2 * 3"), 7);
  EXPECT_EQ(ev("(1 + 2) * 3"), 9);
  EXPECT_EQ(ev("10 - 4 - 3"), 3); // left-associative
  EXPECT_EQ(ev("100 / 10 / 5"), 2);
  EXPECT_EQ(ev("2 * 3 % 4"), 2); // (2*3) % 4
  EXPECT_EQ(ev("-2 * 3"), -6);
  EXPECT_EQ(ev("--5"), 5);
  EXPECT_EQ(ev("-(2 + 3) * 2"), -10);
  EXPECT_EQ(ev("1 + 2 == 3"), 1);
  EXPECT_EQ(ev("1 < 2 == 1"), 1);  // relational binds tighter than equality
  EXPECT_EQ(ev("0 || 1 && 0"), 0); // && binds tighter than ||
  EXPECT_EQ(ev("C >= 1 && R >= 1", {{"C", 1}, {"R", 0}}), 0);
}

TEST(Expr, ComparisonsAndLogic) {
  EXPECT_EQ(ev("3 <= 3"), 1);
  EXPECT_EQ(ev("3 < 3"), 0);
  EXPECT_EQ(ev("4 > 3"), 1);
  EXPECT_EQ(ev("4 >= 5"), 0);
  EXPECT_EQ(ev("4 != 5"), 1);
  EXPECT_EQ(ev("4 == 5"), 0);
  // Short-circuit: the division by zero on the right is never evaluated.
  EXPECT_EQ(ev("B == 0 || C % B == 0", {{"B", 0}, {"C", 7}}), 1);
  EXPECT_EQ(ev("B != 0 && C / B > 1", {{"B", 0}, {"C", 7}}), 0);
}

TEST(Expr, TruncatingDivision) {
  EXPECT_EQ(ev("7 / 2"), 3);
  EXPECT_EQ(ev("-7 / 2"), -3);
  EXPECT_EQ(ev("7 % 3"), 1);
  EXPECT_EQ(ev("-7 % 3"), -1);
  EXPECT_EQ(ev("7 % -3"), 1);
  EXPECT_EQ(ev("(-9223372036854775807 - 1) % -1"), 0);
}

TEST(Expr, Functions) {
  EXPECT_EQ(ev("ceil_div(10, 3)"), 4);
  EXPECT_EQ(ev("ceil_div(9, 3)"), 3);
  EXPECT_EQ(ev("ceil_div(0, 3)"), 0);
  EXPECT_EQ(ev("ceil_div(-7, 2)"), -3);
  EXPECT_EQ(ev("ceil_div(7, -2)"), -3);
  EXPECT_EQ(ev("ceil_div(-7, -2)"), 4);
  EXPECT_EQ(ev("min(3, 1, 2)"), 1);
  EXPECT_EQ(ev("max(3, 1, 2)"), 3);
  EXPECT_EQ(ev("min(5)"), 5);
  EXPECT_EQ(ev("log2(1)"), 0);
  EXPECT_EQ(ev("log2(1000)"), 9);
  EXPECT_EQ(ev("log2(1024)"), 10);
  EXPECT_EQ(ev("ceil_log2(1)"), 0);
  EXPECT_EQ(ev("ceil_log2(1000)"), 10);
  EXPECT_EQ(ev("ceil_log2(1024)"), 10);
  EXPECT_EQ(ev("ceil_log2(1025)"), 11);
  EXPECT_EQ(ev("next_pow2(0)"), 1);
  EXPECT_EQ(ev("next_pow2(1)"), 1);
  EXPECT_EQ(ev("next_pow2(1000)"), 1024);
  EXPECT_EQ(ev("next_pow2(1024)"), 1024);
  EXPECT_EQ(ev("next_pow2(4611686018427387904)"), std::int64_t{1} << 62);
  EXPECT_EQ(ev("align_up(1000, 128)"), 1024);
  EXPECT_EQ(ev("align_up(1024, 128)"), 1024);
  EXPECT_EQ(ev("align_up(0, 128)"), 0);
  EXPECT_EQ(ev("align_up(-5, 4)"), -4);
  EXPECT_EQ(ev("ceil_div(R * C, max(1, min(256, C)))", {{"R", 4}, {"C", 1000}}), 16);
  EXPECT_EQ(ev("min ( 4 , 2 )"), 2); // spaces between name and '('
}

TEST(Expr, FunctionDomainErrors) {
  EXPECT_EQ(error_of("log2(0)").expr_column(), 1);
  EXPECT_NE(std::string(error_of("log2(0)").what()).find("positive"), std::string::npos);
  EXPECT_EQ(error_of("1 + ceil_log2(-1)").expr_column(), 5);
  EXPECT_EQ(error_of("next_pow2(-1)").expr_column(), 1);
  EXPECT_EQ(error_of("align_up(5, 0)").expr_column(), 1);
  EXPECT_NE(std::string(error_of("ceil_div(5, 0)").what()).find("by zero"), std::string::npos);
  EXPECT_NE(std::string(error_of("next_pow2(4611686018427387905)").what()).find("overflow"),
            std::string::npos);
}

TEST(Expr, DivisionByZero) {
  const ExprError e = error_of("R / (C - 4)", {{"R", 1}, {"C", 4}});
  EXPECT_EQ(e.expr_column(), 3); // the '/'
  EXPECT_EQ(e.bare_message(), "division by zero at column 3");
  EXPECT_EQ(e.where().file, "problems/x/problem.toml");
  EXPECT_EQ(e.where().field, "reference.launch[0].grid[0]");
  EXPECT_EQ(e.where().line, 12);
  EXPECT_EQ(error_of("5 % 0").bare_message(), "modulo by zero at column 3");
}

TEST(Expr, Overflow) {
  for (const char* text : {"9223372036854775807 + 1", "-9223372036854775807 - 2",
                           "4294967296 * 4294967296", "(-9223372036854775807 - 1) / -1",
                           "-(-9223372036854775807 - 1)", "align_up(9223372036854775807, 2)"}) {
    const ExprError e = error_of(text);
    EXPECT_NE(std::string(e.what()).find("overflow"), std::string::npos) << text;
  }
  EXPECT_EQ(error_of("1 + 4294967296 * 4294967296").expr_column(), 16);
  // A literal beyond 64 bits is a parse error at its first digit.
  const ExprError lit = error_of("2 * 99999999999999999999");
  EXPECT_EQ(lit.expr_column(), 5);
  EXPECT_NE(std::string(lit.what()).find("does not fit in 64 bits"), std::string::npos);
}

TEST(Expr, UnknownNameWithColumn) {
  const ExprError e = error_of("ceil_div(Rows, 4)", {{"R", 4}, {"C", 8}});
  EXPECT_EQ(e.expr_column(), 10);
  EXPECT_STREQ(e.what(),
               "problems/x/problem.toml:12:9: reference.launch[0].grid[0]: unknown name 'Rows' at "
               "column 10 (known: C, R)");
  EXPECT_NE(std::string(error_of("x").what()).find("no names are defined"), std::string::npos);
}

TEST(Expr, ParseErrors) {
  struct Case {
    const char* text;
    int column;
    const char* message;
  };
  const Case cases[] = {
      {"(R + 1", 7, "expected ')' at column 7"},
      {"", 1, "expected an expression at column 1"},
      {"   ", 4, "expected an expression at column 4"},
      {"R +", 4, "expected a number, a name or '(' at column 4"},
      {"R R", 3, "unexpected 'R' at column 3"},
      {"2.5", 1, "bad number '2.' (only decimal integers) at column 1"},
      {"1e5", 1, "bad number '1e' (only decimal integers) at column 1"},
      {"R = 1", 3, "unexpected '=' at column 3"},
      {"R & 1", 3, "unexpected '&' at column 3"},
      {"foo(1)", 1,
       "unknown function 'foo' (known: align_up, ceil_div, ceil_log2, log2, max, min, "
       "next_pow2) at column 1"},
      {"ceil_div(1)", 1, "ceil_div takes 2 arguments, got 1 at column 1"},
      {"log2(1, 2)", 1, "log2 takes 1 argument, got 2 at column 1"},
      {"min()", 1, "min takes at least 1 arguments, got 0 at column 1"},
      {"max(1 2)", 7, "expected ',' or ')' at column 7"},
      {"min(1,)", 7, "unexpected ')' at column 7"},
      {"$", 1, "unexpected '$' at column 1"},
  };
  for (const Case& c : cases) {
    try {
      Expr::parse(c.text, kWhere);
      ADD_FAILURE() << "parsed: '" << c.text << "'";
    } catch (const ExprError& e) {
      EXPECT_EQ(e.expr_column(), c.column) << c.text;
      EXPECT_EQ(e.bare_message(), c.message) << c.text;
      EXPECT_EQ(e.where().line, 12);
    }
  }
}

TEST(Expr, NestingIsBounded) {
  EXPECT_EQ(ev(std::string(60, '(') + "1" + std::string(60, ')')), 1);
  EXPECT_THROW(Expr::parse(std::string(100000, '(') + "1", kWhere), SpecError);
  EXPECT_THROW(Expr::parse(std::string(100000, '-') + "1", kWhere), SpecError);
  std::string long_sum = "1";
  for (int i = 0; i < 100000; ++i)
    long_sum += "+1";
  EXPECT_THROW(Expr::parse(long_sum, kWhere), SpecError);
  std::string ok_sum = "1";
  for (int i = 0; i < 200; ++i)
    ok_sum += "+1";
  EXPECT_EQ(ev(ok_sum), 201);
}

TEST(Expr, NamesAndCheckNames) {
  const Expr e = Expr::parse("ceil_div(R * C, B) + R + i", kWhere);
  EXPECT_EQ(e.names(), (std::set<std::string>{"B", "C", "R", "i"}));
  EXPECT_NO_THROW(e.check_names({"B", "C", "R", "i"}));
  try {
    e.check_names({"R", "C", "i"});
    ADD_FAILURE();
  } catch (const ExprError& err) {
    EXPECT_EQ(err.expr_column(), 17);
    EXPECT_EQ(err.bare_message(), "unknown name 'B' at column 17 (known: C, R, i)");
  }
  EXPECT_TRUE(Expr::parse("min(4, 2)", kWhere).names().empty());
}

TEST(Expr, DefaultAndConstant) {
  const Expr zero;
  EXPECT_EQ(zero.text(), "0");
  EXPECT_EQ(zero.eval({}), 0);
  const Expr c = Expr::constant(-12);
  EXPECT_EQ(c.text(), "-12");
  EXPECT_EQ(c.eval({}), -12);
  const Expr p = Expr::parse(" R*2 ", kWhere);
  EXPECT_EQ(p.text(), " R*2 ");
  EXPECT_EQ(p.where().field, kWhere.field);
}

} // namespace
} // namespace kj
