// The tokeniser of kj_lex: turns CUDA C++ source into tokens that keep their exact byte offsets,
// so every later message and rewrite can point back at the bytes the user wrote. It follows the
// C++ lexical grammar closely enough for kernels (pp-numbers, prefixed and raw strings, longest
// match punctuation) and adds what CUDA needs (launch brackets), but it never rejects input:
// anything it cannot place becomes a one-byte punct token, and unterminated constructs run to
// the end of the source with an entry in `errors`.
#include "kjudge/lex.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace kj::lex {
namespace {

bool is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool is_digit(int c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(int c) {
  return is_ident_start(c) || is_digit(c);
}
bool is_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Longest match first: a three-byte operator must be tried before its two-byte prefix.
constexpr std::array<std::string_view, 5> punct3 = {"<<=", ">>=", "->*", "...", "<=>"};
constexpr std::array<std::string_view, 22> punct2 = {
    "::", "->", ".*", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
    "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"};

// Line and column of increasing offsets in one pass over the source.
struct LineCursor {
  std::string_view src;
  std::size_t offset = 0;
  int line = 1;
  std::size_t line_begin = 0;

  explicit LineCursor(std::string_view s) : src(s) {}
  std::pair<int, int> advance(std::size_t to) {
    for (; offset < to && offset < src.size(); ++offset) {
      if (src[offset] == '\n') {
        ++line;
        line_begin = offset + 1;
      }
    }
    return {line, static_cast<int>(to - line_begin) + 1};
  }
};

class Lexer {
public:
  explicit Lexer(std::string_view source) : src_(source) {}

  LexResult run() {
    while (true) {
      skip_whitespace();
      if (pos_ >= src_.size()) break;
      lex_one();
    }
    assign_positions();
    return std::move(out_);
  }

private:
  std::string_view src_;
  std::size_t pos_ = 0;
  LexResult out_;
  int open_launches_ = 0;                   // `<<<` seen without their `>>>`
  bool at_line_start_ = true;               // only blanks (or comments) since the last newline
  std::vector<std::size_t> error_offsets_;  // parallel to out_.errors until run() ends

  // The byte at i as 0..255, or -1 past the end (NUL bytes are ordinary input).
  int peek(std::size_t i) const {
    return i < src_.size() ? static_cast<unsigned char>(src_[i]) : -1;
  }

  void emit(TokenKind kind, std::size_t begin, std::size_t end) {
    out_.tokens.push_back(Token{kind, begin, end - begin, 0, 0});
    pos_ = end;
  }

  void error(std::size_t at, std::string message) {
    error_offsets_.push_back(at);
    out_.errors.push_back({0, 0, std::move(message)});
  }

  // Lines and columns are filled in at the end, in one forward walk per list: tokens and errors
  // are each in offset order, while an error inside a directive lies after its token's start.
  void assign_positions() {
    LineCursor tokens_at(src_);
    for (Token& t : out_.tokens)
      std::tie(t.line, t.column) = tokens_at.advance(t.offset);
    LineCursor errors_at(src_);
    for (std::size_t k = 0; k < out_.errors.size(); ++k) {
      std::tie(out_.errors[k].line, out_.errors[k].column) = errors_at.advance(error_offsets_[k]);
    }
  }

  // A backslash-newline joins two lines (translation phase 2), so it is blank but does not
  // start a new line for the purpose of directives.
  void skip_whitespace() {
    while (pos_ < src_.size()) {
      int c = peek(pos_);
      if (c == '\\' && peek(pos_ + 1) == '\n') {
        pos_ += 2;
      } else if (c == '\\' && peek(pos_ + 1) == '\r' && peek(pos_ + 2) == '\n') {
        pos_ += 3;
      } else if (is_space(c)) {
        if (c == '\n') at_line_start_ = true;
        ++pos_;
      } else {
        break;
      }
    }
  }

  // Offset of the newline that ends the logical line starting at i (or the end of the source).
  // A backslash right before the newline splices the next line on, as in translation phase 2.
  std::size_t logical_line_end(std::size_t i) const {
    while (i < src_.size()) {
      if (src_[i] == '\n') {
        std::size_t back = i;
        if (back > 0 && src_[back - 1] == '\r') --back;
        if (back > 0 && src_[back - 1] == '\\') {
          ++i;
          continue;
        }
        return i;
      }
      ++i;
    }
    return i;
  }

  // End of a block comment whose `/*` is at i; reports and runs to the end when unterminated.
  std::size_t block_comment_end(std::size_t i) {
    std::size_t close = src_.find("*/", i + 2);
    if (close == std::string_view::npos) {
      error(i, "unterminated /* comment");
      return src_.size();
    }
    return close + 2;
  }

  // End of a quoted literal whose opening quote is at `quote`. A raw newline ends it (the
  // compiler would reject it; stopping there keeps the rest of the file lexable).
  std::size_t quoted_end(std::size_t token_begin, std::size_t quote, const char* what) {
    char q = src_[quote];
    std::size_t i = quote + 1;
    while (i < src_.size()) {
      char c = src_[i];
      if (c == q) return i + 1;
      if (c == '\n') break;
      i += c == '\\' ? 2 : 1;
    }
    error(token_begin, std::string("unterminated ") + what);
    return std::min(i, src_.size());
  }

  // R"delim( ... )delim" with the `"` at quote. An invalid delimiter is reported and the literal
  // is then read as an ordinary string, which is the most useful guess at what was meant.
  std::size_t raw_string_end(std::size_t token_begin, std::size_t quote) {
    std::size_t i = quote + 1;
    while (i < src_.size() && i - quote - 1 <= 16) {
      char c = src_[i];
      if (c == '(') break;
      if (c == ')' || c == '\\' || c == '"' || is_space(static_cast<unsigned char>(c))) break;
      ++i;
    }
    if (peek(i) != '(' || i - quote - 1 > 16) {
      error(token_begin, "invalid raw string delimiter");
      return quoted_end(token_begin, quote, "string literal");
    }
    std::string closing = ")";
    closing.append(src_.substr(quote + 1, i - quote - 1));
    closing += '"';
    std::size_t close = src_.find(closing, i + 1);
    if (close == std::string_view::npos) {
      error(token_begin, "unterminated raw string literal");
      return src_.size();
    }
    return close + closing.size();
  }

  void lex_directive(std::size_t begin) {
    std::size_t i = begin + 1;
    while (i < src_.size()) {
      char c = src_[i];
      if (c == '\n') break;
      if (c == '\\' && (peek(i + 1) == '\n' || (peek(i + 1) == '\r' && peek(i + 2) == '\n'))) {
        i += src_[i + 1] == '\n' ? 2 : 3;
      } else if (c == '/' && peek(i + 1) == '*') {
        i = block_comment_end(i);
      } else if (c == '/' && peek(i + 1) == '/') {
        i = logical_line_end(i);
      } else if (c == '"' || c == '\'') {
        // A quote hides comment openers (#define X "/*"); an unmatched one (#error don't)
        // stops at the newline, which the compiler accepts in a directive.
        std::size_t j = i + 1;
        while (j < src_.size() && src_[j] != c && src_[j] != '\n')
          j += src_[j] == '\\' ? 2 : 1;
        i = j < src_.size() && src_[j] == c ? j + 1 : std::min(j, src_.size());
      } else {
        ++i;
      }
    }
    emit(TokenKind::preprocessor, begin, i);
  }

  // A pp-number: digits, letters, `.`, digit separators and signed exponents, so suffixes and
  // hex floats (0x1p-3) come out whole without knowing the base.
  void lex_number(std::size_t begin) {
    std::size_t i = begin + 1;
    while (true) {
      int c = peek(i);
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') &&
          (peek(i + 1) == '+' || peek(i + 1) == '-')) {
        i += 2;
      } else if (is_ident_char(c) || c == '.') {
        ++i;
      } else if (c == '\'' && is_ident_char(peek(i + 1))) {
        i += 2;
      } else {
        break;
      }
    }
    emit(TokenKind::number, begin, i);
  }

  void lex_identifier(std::size_t begin) {
    std::size_t i = begin + 1;
    while (is_ident_char(peek(i)))
      ++i;
    std::string_view word = src_.substr(begin, i - begin);
    int next = peek(i);
    bool text_prefix = word == "u8" || word == "u" || word == "U" || word == "L";
    bool raw_prefix = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
    if (next == '"' && raw_prefix) {
      emit(TokenKind::string, begin, raw_string_end(begin, i));
    } else if (next == '"' && text_prefix) {
      emit(TokenKind::string, begin, quoted_end(begin, i, "string literal"));
    } else if (next == '\'' && text_prefix) {
      emit(TokenKind::character, begin, quoted_end(begin, i, "character literal"));
    } else {
      emit(TokenKind::identifier, begin, i);
    }
  }

  // [[ ... ]] with nested brackets and string arguments ([[deprecated("]]")]]).
  void lex_attribute(std::size_t begin) {
    int depth = 0;
    std::size_t i = begin;
    while (i < src_.size()) {
      char c = src_[i];
      if (c == '"' || c == '\'') {
        i = quoted_end(begin, i, c == '"' ? "string literal" : "character literal");
        continue;
      }
      ++i;
      if (c == '[') ++depth;
      if (c == ']' && --depth == 0) break;
    }
    if (depth != 0) error(begin, "unterminated attribute");
    emit(TokenKind::attribute, begin, i);
  }

  void lex_punct(std::size_t begin) {
    std::string_view rest = src_.substr(begin, 3);
    if (rest == "<<<") {
      ++open_launches_;
      emit(TokenKind::launch_open, begin, begin + 3);
      return;
    }
    if (rest == ">>>" && open_launches_ > 0) {
      --open_launches_;
      emit(TokenKind::launch_close, begin, begin + 3);
      return;
    }
    for (std::string_view p : punct3) {
      if (rest == p) return emit(TokenKind::punct, begin, begin + 3);
    }
    for (std::string_view p : punct2) {
      if (rest.substr(0, 2) == p) return emit(TokenKind::punct, begin, begin + 2);
    }
    emit(TokenKind::punct, begin, begin + 1);
  }

  void lex_one() {
    std::size_t begin = pos_;
    int c = peek(begin);
    int next = peek(begin + 1);
    if (c == '/' && next == '/') {
      emit(TokenKind::comment, begin, logical_line_end(begin));
      return;  // the newline after it is whitespace, so at_line_start_ is settled there
    }
    if (c == '/' && next == '*') {
      std::size_t end = block_comment_end(begin);
      if (src_.substr(begin, end - begin).find('\n') != std::string_view::npos) {
        at_line_start_ = true;
      }
      emit(TokenKind::comment, begin, end);
      return;
    }
    bool was_line_start = at_line_start_;
    at_line_start_ = false;
    if (c == '#' && was_line_start) {
      lex_directive(begin);
    } else if (is_digit(c) || (c == '.' && is_digit(next))) {
      lex_number(begin);
    } else if (is_ident_start(c)) {
      lex_identifier(begin);
    } else if (c == '"') {
      emit(TokenKind::string, begin, quoted_end(begin, begin, "string literal"));
    } else if (c == '\'') {
      emit(TokenKind::character, begin, quoted_end(begin, begin, "character literal"));
    } else if (c == '[' && next == '[') {
      lex_attribute(begin);
    } else {
      lex_punct(begin);
    }
  }
};

}  // namespace

LexResult tokenize(std::string_view source) {
  return Lexer(source).run();
}

std::vector<Token> code_tokens(const LexResult& lexed) {
  std::vector<Token> out;
  out.reserve(lexed.tokens.size());
  for (const Token& t : lexed.tokens) {
    if (t.kind != TokenKind::comment && t.kind != TokenKind::preprocessor) out.push_back(t);
  }
  return out;
}

std::pair<int, int> line_column(std::string_view source, std::size_t offset) {
  return LineCursor(source).advance(std::min(offset, source.size()));
}

}  // namespace kj::lex
