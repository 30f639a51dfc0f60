// Tests of kj::lex::tokenize, code_tokens and line_column: each token kind with its exact offset,
// length, line and column, the CUDA launch brackets against template closers, directives with
// continuations and comments, and the unterminated and binary inputs that must lex without
// throwing.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kjudge/lex.hpp"

namespace kj::lex {
namespace {

using Kinds = std::vector<std::pair<TokenKind, std::string>>;

Kinds kinds_and_texts(std::string_view src) {
  Kinds out;
  for (const Token& t : tokenize(src).tokens)
    out.emplace_back(t.kind, std::string(t.text(src)));
  return out;
}

void expect_token(const Token& t, TokenKind kind, std::size_t offset, std::size_t length, int line,
                  int column) {
  EXPECT_EQ(t.kind, kind);
  EXPECT_EQ(t.offset, offset);
  EXPECT_EQ(t.length, length);
  EXPECT_EQ(t.line, line);
  EXPECT_EQ(t.column, column);
}

constexpr auto ident = TokenKind::identifier;
constexpr auto number = TokenKind::number;
constexpr auto string = TokenKind::string;
constexpr auto character = TokenKind::character;
constexpr auto punct = TokenKind::punct;
constexpr auto comment = TokenKind::comment;
constexpr auto pp = TokenKind::preprocessor;
constexpr auto attribute = TokenKind::attribute;

TEST(Tokenize, EmptyAndBlankSources) {
  EXPECT_TRUE(tokenize("").tokens.empty());
  LexResult blank = tokenize(" \t\n\r\n\v\f ");
  EXPECT_TRUE(blank.tokens.empty());
  EXPECT_TRUE(blank.errors.empty());
}

TEST(Tokenize, OffsetsLinesAndColumns) {
  std::string_view src = "int x = 42;\n\tfloat y;\n";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 8u);
  expect_token(r.tokens[0], ident, 0, 3, 1, 1);
  expect_token(r.tokens[1], ident, 4, 1, 1, 5);
  expect_token(r.tokens[2], punct, 6, 1, 1, 7);
  expect_token(r.tokens[3], number, 8, 2, 1, 9);
  expect_token(r.tokens[4], punct, 10, 1, 1, 11);
  expect_token(r.tokens[5], ident, 13, 5, 2, 2);  // a tab is one byte column
  expect_token(r.tokens[6], ident, 19, 1, 2, 8);
  expect_token(r.tokens[7], punct, 20, 1, 2, 9);
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, CrLfLineEndings) {
  LexResult r = tokenize("a\r\nbc\r\n");
  ASSERT_EQ(r.tokens.size(), 2u);
  expect_token(r.tokens[1], ident, 3, 2, 2, 1);
}

TEST(Tokenize, NumbersAreWholePpNumbers) {
  std::string_view src =
      "0x1p-3 1e-5 1'000 10ull 1.0f .5 0b1010 017 0xFFu 1.5E+10L 3.f 2.5e3 0x1.8P+1";
  Kinds expected;
  for (std::string_view n : {"0x1p-3", "1e-5", "1'000", "10ull", "1.0f", ".5", "0b1010", "017",
                             "0xFFu", "1.5E+10L", "3.f", "2.5e3", "0x1.8P+1"}) {
    expected.emplace_back(number, std::string(n));
  }
  EXPECT_EQ(kinds_and_texts(src), expected);
}

TEST(Tokenize, SignsOutsideExponentsAreOperators) {
  EXPECT_EQ(kinds_and_texts("a-1 1e-5-2 x.y 1.f+2"), (Kinds{{ident, "a"},
                                                            {punct, "-"},
                                                            {number, "1"},
                                                            {number, "1e-5"},
                                                            {punct, "-"},
                                                            {number, "2"},
                                                            {ident, "x"},
                                                            {punct, "."},
                                                            {ident, "y"},
                                                            {number, "1.f"},
                                                            {punct, "+"},
                                                            {number, "2"}}));
}

TEST(Tokenize, StringLiteralsWithPrefixes) {
  std::string_view src = R"(u8"a" u"b" U"c" L"d" "e\"f" "")";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 6u);
  expect_token(r.tokens[0], string, 0, 5, 1, 1);
  expect_token(r.tokens[1], string, 6, 4, 1, 7);
  expect_token(r.tokens[2], string, 11, 4, 1, 12);
  expect_token(r.tokens[3], string, 16, 4, 1, 17);
  expect_token(r.tokens[4], string, 21, 6, 1, 22);
  EXPECT_EQ(r.tokens[4].text(src), R"("e\"f")");
  expect_token(r.tokens[5], string, 28, 2, 1, 29);
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, PrefixWordsWithoutAQuoteAreIdentifiers) {
  EXPECT_EQ(kinds_and_texts("u8 \"x\" LR L"),
            (Kinds{{ident, "u8"}, {string, "\"x\""}, {ident, "LR"}, {ident, "L"}}));
}

TEST(Tokenize, RawStringsKeepQuotesAndParens) {
  std::string src = "a = R\"xy(b )\" c \n )\"  )xy\"; d";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 5u);
  expect_token(r.tokens[2], string, 4, src.find(";") - 4, 1, 5);
  EXPECT_EQ(r.tokens[2].text(src), "R\"xy(b )\" c \n )\"  )xy\"");
  expect_token(r.tokens[3], punct, src.find(";"), 1, 2, 10);
  expect_token(r.tokens[4], ident, src.size() - 1, 1, 2, 12);
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, RawStringsWithPrefixesAndEmptyDelimiter) {
  EXPECT_EQ(kinds_and_texts(R"**(R"(x)" u8R"(y)" LR"d(z)d" uR"(")" UR"()")**"),
            (Kinds{{string, R"*(R"(x)")*"},
                   {string, R"*(u8R"(y)")*"},
                   {string, R"*(LR"d(z)d")*"},
                   {string, R"*(uR"(")")*"},
                   {string, R"*(UR"()")*"}}));
}

TEST(Tokenize, InvalidRawDelimiterIsReportedAndReadAsAString) {
  std::string_view src = "x R\"a b(q)a b\" y";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[0].column, 3);
  EXPECT_NE(r.errors[0].message.find("raw string delimiter"), std::string::npos);
  ASSERT_GE(r.tokens.size(), 2u);
  EXPECT_EQ(r.tokens[1].kind, string);
  EXPECT_EQ(r.tokens[1].text(src), "R\"a b(q)a b\"");
}

TEST(Tokenize, CharacterLiterals) {
  EXPECT_EQ(kinds_and_texts(R"('a' '\'' u'b' L'c' U'd' u8'e' '\\' '"')"),
            (Kinds{{character, "'a'"},
                   {character, R"('\'')"},
                   {character, "u'b'"},
                   {character, "L'c'"},
                   {character, "U'd'"},
                   {character, "u8'e'"},
                   {character, R"('\\')"},
                   {character, R"('"')"}}));
}

TEST(Tokenize, PunctuationTakesTheLongestMatch) {
  Kinds expected;
  std::string src;
  for (std::string_view p :
       {"<<=", ">>=", "->*", "::", "...", "##", "->", ".*", "<=>", "++", "--",
        "&&",  "||",  "!=",  "==", "<=",  ">=", "<<", ">>", "+=",  "-=", "*=",
        "/=",  "%=",  "&=",  "|=", "^=",  "{",  "}",  "?",  ":",   "~",  "!"}) {
    src += "a ";
    src += p;
    src += ' ';
    expected.emplace_back(ident, "a");
    expected.emplace_back(punct, std::string(p));
  }
  EXPECT_EQ(kinds_and_texts(src), expected);
  // Without blanks the longest match decides: `a<<=b` is <<=, `a->*b` is ->*, `x...` is ...
  EXPECT_EQ(kinds_and_texts("a<<=b->*c...d:::e"), (Kinds{{ident, "a"},
                                                         {punct, "<<="},
                                                         {ident, "b"},
                                                         {punct, "->*"},
                                                         {ident, "c"},
                                                         {punct, "..."},
                                                         {ident, "d"},
                                                         {punct, "::"},
                                                         {punct, ":"},
                                                         {ident, "e"}}));
}

TEST(Tokenize, LaunchBracketsAgainstTemplateClosers) {
  std::string_view src = "k<<<g, b>>>(x); A<B<C<int>>> y; z >>> 2;";
  LexResult r = tokenize(src);
  Kinds got = kinds_and_texts(src);
  ASSERT_EQ(got.size(), 26u);
  expect_token(r.tokens[1], TokenKind::launch_open, 1, 3, 1, 2);
  expect_token(r.tokens[5], TokenKind::launch_close, 8, 3, 1, 9);
  // A<B<C<int>>> with no launch open: `>>` then `>`.
  EXPECT_EQ(got[17], (std::pair<TokenKind, std::string>{punct, ">>"}));
  EXPECT_EQ(got[18], (std::pair<TokenKind, std::string>{punct, ">"}));
  EXPECT_EQ(r.tokens[17].offset, 25u);
  EXPECT_EQ(r.tokens[18].offset, 27u);
  EXPECT_EQ(got[22], (std::pair<TokenKind, std::string>{punct, ">>"}));
  EXPECT_EQ(got[23], (std::pair<TokenKind, std::string>{punct, ">"}));
}

TEST(Tokenize, TemplateArgumentsInsideALaunch) {
  // The `>` and `>>` of f<T<int>> belong to the template; the launch closes at `>>>`.
  EXPECT_EQ(kinds_and_texts("k<T><<<n, f<T<int>>(m)>>>(p);"),
            (Kinds{{ident, "k"},
                   {punct, "<"},
                   {ident, "T"},
                   {punct, ">"},
                   {TokenKind::launch_open, "<<<"},
                   {ident, "n"},
                   {punct, ","},
                   {ident, "f"},
                   {punct, "<"},
                   {ident, "T"},
                   {punct, "<"},
                   {ident, "int"},
                   {punct, ">>"},
                   {punct, "("},
                   {ident, "m"},
                   {punct, ")"},
                   {TokenKind::launch_close, ">>>"},
                   {punct, "("},
                   {ident, "p"},
                   {punct, ")"},
                   {punct, ";"}}));
}

TEST(Tokenize, Comments) {
  std::string_view src = "x // tail */\n/* a\n * b */ y";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 4u);
  expect_token(r.tokens[0], ident, 0, 1, 1, 1);
  expect_token(r.tokens[1], comment, 2, 10, 1, 3);
  expect_token(r.tokens[2], comment, 13, 12, 2, 1);
  expect_token(r.tokens[3], ident, 26, 1, 3, 9);
}

TEST(Tokenize, CommentMarkersInsideStringsAreText) {
  std::string_view src = R"(s = "a */ b"; t = "/*"; /* c "*/ u)";
  EXPECT_EQ(kinds_and_texts(src), (Kinds{{ident, "s"},
                                         {punct, "="},
                                         {string, R"("a */ b")"},
                                         {punct, ";"},
                                         {ident, "t"},
                                         {punct, "="},
                                         {string, R"("/*")"},
                                         {punct, ";"},
                                         {comment, R"(/* c "*/)"},
                                         {ident, "u"}}));
}

TEST(Tokenize, LineCommentContinuesAfterBackslash) {
  std::string_view src = "// a \\\n b\nc";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 2u);
  expect_token(r.tokens[0], comment, 0, 9, 1, 1);
  expect_token(r.tokens[1], ident, 10, 1, 3, 1);
}

TEST(Tokenize, DirectiveWithContinuationIsOneToken) {
  std::string_view src = "#define F(x) \\\n  ((x) + 1)\nint y;";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 4u);
  expect_token(r.tokens[0], pp, 0, 26, 1, 1);
  EXPECT_EQ(r.tokens[0].text(src), "#define F(x) \\\n  ((x) + 1)");
  expect_token(r.tokens[1], ident, 27, 3, 3, 1);
}

TEST(Tokenize, DirectiveContinuationWithCrLf) {
  std::string_view src = "#define A 1 \\\r\n + 2\r\nb";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 2u);
  EXPECT_EQ(r.tokens[0].kind, pp);
  EXPECT_EQ(r.tokens[0].text(src), "#define A 1 \\\r\n + 2\r");
  expect_token(r.tokens[1], ident, src.size() - 1, 1, 3, 1);
}

TEST(Tokenize, DirectiveKeepsItsComments) {
  std::string_view src = "  #  define A 1 /* multi\nline */ + 2 // end /*\nint z;";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 4u);
  expect_token(r.tokens[0], pp, 2, src.find("\nint") - 2, 1, 3);
  expect_token(r.tokens[1], ident, src.find("int"), 3, 3, 1);
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, QuotesInDirectivesHideCommentOpeners) {
  std::string_view src = "#define S \"/*\"\n#error don't\nint q;";
  Kinds got = kinds_and_texts(src);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0], (std::pair<TokenKind, std::string>{pp, "#define S \"/*\""}));
  EXPECT_EQ(got[1], (std::pair<TokenKind, std::string>{pp, "#error don't"}));
  EXPECT_EQ(got[2], (std::pair<TokenKind, std::string>{ident, "int"}));
}

TEST(Tokenize, HashIsADirectiveOnlyFirstOnItsLine) {
  EXPECT_EQ(kinds_and_texts("x # y\n/* c */ #if X\n// d\n#endif"), (Kinds{{ident, "x"},
                                                                          {punct, "#"},
                                                                          {ident, "y"},
                                                                          {comment, "/* c */"},
                                                                          {pp, "#if X"},
                                                                          {comment, "// d"},
                                                                          {pp, "#endif"}}));
}

TEST(Tokenize, SplicedLinesAreBlankButNoNewLine) {
  std::string_view src = "a \\\n b \\\r\n#define";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 4u);
  expect_token(r.tokens[1], ident, 5, 1, 2, 2);
  expect_token(r.tokens[2], punct, 10, 1, 3, 1);  // joined onto b's line: not a directive
  expect_token(r.tokens[3], ident, 11, 6, 3, 2);
}

TEST(Tokenize, AttributesAreOneToken) {
  std::string_view src =
      "[[nodiscard]] int f(); [[gnu::aligned(16), deprecated(\"]]\")]] int g; a[b[0]]";
  LexResult r = tokenize(src);
  ASSERT_GE(r.tokens.size(), 9u);
  expect_token(r.tokens[0], attribute, 0, 13, 1, 1);
  std::size_t second = src.find("[[gnu");
  EXPECT_EQ(r.tokens[6].kind, attribute);
  EXPECT_EQ(r.tokens[6].offset, second);
  EXPECT_EQ(r.tokens[6].text(src), "[[gnu::aligned(16), deprecated(\"]]\")]]");
  // a[b[0]] has no `[[`: plain brackets.
  Kinds got = kinds_and_texts(src);
  EXPECT_EQ(got[got.size() - 6], (std::pair<TokenKind, std::string>{punct, "["}));
  EXPECT_EQ(got.back(), (std::pair<TokenKind, std::string>{punct, "]"}));
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, UnterminatedBlockComment) {
  std::string_view src = "x\n  /* never closed";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 2u);
  expect_token(r.tokens[1], comment, 4, src.size() - 4, 2, 3);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_EQ(r.errors[0].column, 3);
  EXPECT_NE(r.errors[0].message.find("unterminated"), std::string::npos);
}

TEST(Tokenize, UnterminatedStringStopsAtTheNewline) {
  std::string_view src = "a = \"abc\nint y;";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 6u);
  expect_token(r.tokens[2], string, 4, 4, 1, 5);
  expect_token(r.tokens[3], ident, 9, 3, 2, 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[0].column, 5);
  EXPECT_NE(r.errors[0].message.find("string"), std::string::npos);
}

TEST(Tokenize, UnterminatedLiteralsAtTheEnd) {
  for (std::string_view src : {"'a", "\"abc\\", "R\"x(abc)y\"", "u8\"", "[[abc"}) {
    LexResult r = tokenize(src);
    ASSERT_EQ(r.tokens.size(), 1u) << src;
    EXPECT_EQ(r.tokens[0].offset, 0u) << src;
    EXPECT_EQ(r.tokens[0].length, src.size()) << src;
    ASSERT_EQ(r.errors.size(), 1u) << src;
    EXPECT_EQ(r.errors[0].line, 1) << src;
    EXPECT_EQ(r.errors[0].column, 1) << src;
  }
}

TEST(Tokenize, UnterminatedCommentInsideADirective) {
  std::string_view src = "int a;\n#define X /* open";
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 4u);
  expect_token(r.tokens[3], pp, 7, src.size() - 7, 2, 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_EQ(r.errors[0].column, 11);
}

TEST(Tokenize, UnknownBytesAreOneBytePunct) {
  std::string src("a\0@\xff`\xc3\xa9", 7);
  LexResult r = tokenize(src);
  ASSERT_EQ(r.tokens.size(), 7u);
  expect_token(r.tokens[0], ident, 0, 1, 1, 1);
  for (std::size_t k = 1; k < 7; ++k) {
    expect_token(r.tokens[k], punct, k, 1, 1, static_cast<int>(k) + 1);
  }
  EXPECT_TRUE(r.errors.empty());
}

TEST(Tokenize, TokensCoverTheSourceInOrder) {
  std::string_view src = "template <int N>\n__global__ void k(float* x) { x[0] = 1.0f; } // done";
  LexResult r = tokenize(src);
  std::size_t end = 0;
  for (const Token& t : r.tokens) {
    EXPECT_GE(t.offset, end);
    EXPECT_GT(t.length, 0u);
    end = t.offset + t.length;
    auto [line, column] = line_column(src, t.offset);
    EXPECT_EQ(t.line, line);
    EXPECT_EQ(t.column, column);
  }
  EXPECT_EQ(end, src.size());
}

TEST(CodeTokens, DropCommentsAndDirectives) {
  std::string_view src = "#include <a.h>\n// c\nint /* d */ x;";
  LexResult r = tokenize(src);
  EXPECT_EQ(r.tokens.size(), 6u);
  std::vector<Token> code = code_tokens(r);
  ASSERT_EQ(code.size(), 3u);
  EXPECT_EQ(code[0].text(src), "int");
  EXPECT_EQ(code[1].text(src), "x");
  EXPECT_EQ(code[1].offset, src.find("x;"));
  EXPECT_EQ(code[2].text(src), ";");
}

TEST(LineColumn, MapsOffsets) {
  std::string_view src = "ab\ncd\n\nef";
  EXPECT_EQ(line_column(src, 0), (std::pair<int, int>{1, 1}));
  EXPECT_EQ(line_column(src, 2), (std::pair<int, int>{1, 3}));  // the newline itself
  EXPECT_EQ(line_column(src, 3), (std::pair<int, int>{2, 1}));
  EXPECT_EQ(line_column(src, 6), (std::pair<int, int>{3, 1}));
  EXPECT_EQ(line_column(src, 8), (std::pair<int, int>{4, 2}));
  EXPECT_EQ(line_column(src, 9), (std::pair<int, int>{4, 3}));    // one past the end
  EXPECT_EQ(line_column(src, 100), (std::pair<int, int>{4, 3}));  // clamped
}

}  // namespace
}  // namespace kj::lex
