// libFuzzer target for kj_lex: any bytes must tokenise without crashing, and the results must
// keep the promises the rest of kjudge builds on (tokens in order, inside the source and not
// overlapping; lines and columns agreeing with line_column; function spans inside the source
// and around a `{ ... }`). A broken promise aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "kjudge/lex.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kj::lex;
  std::string_view src(reinterpret_cast<const char*>(data), size);
  LexResult lexed = tokenize(src);

  std::size_t end = 0;
  std::size_t walked = 0, line_begin = 0;  // a running line_column: calling it per token is
  int line = 1;                            // quadratic and slows the fuzzer down a hundredfold
  for (const Token& t : lexed.tokens) {
    check(t.length > 0);
    check(t.offset >= end);  // sorted and non-overlapping
    check(t.offset + t.length <= src.size());
    end = t.offset + t.length;
    for (; walked < t.offset; ++walked) {
      if (src[walked] == '\n') {
        ++line;
        line_begin = walked + 1;
      }
    }
    check(t.line == line && t.column == static_cast<int>(t.offset - line_begin) + 1);
  }
  if (!lexed.tokens.empty()) {
    const Token& last = lexed.tokens.back();
    check(line_column(src, last.offset) == std::make_pair(last.line, last.column));
  }
  for (const auto& e : lexed.errors)
    check(e.line >= 1 && e.column >= 1 && !e.message.empty());

  std::vector<Token> code = code_tokens(lexed);
  check(code.size() <= lexed.tokens.size());
  for (const Token& t : code) {
    check(t.kind != TokenKind::comment && t.kind != TokenKind::preprocessor);
  }

  constexpr std::size_t npos = std::string_view::npos;
  for (const Function& f : find_functions(src, lexed)) {
    check(!f.name.empty());
    check(f.decl_offset < src.size());
    check(f.line >= 1);
    check((f.body_begin == npos) == (f.body_end == npos));
    if (f.body_begin == npos) continue;
    check(f.decl_offset <= f.body_begin);
    check(f.body_begin < f.body_end && f.body_end <= src.size());
    check(src[f.body_begin] == '{');
    check(f.body_end == src.size() || src[f.body_end - 1] == '}');
  }
  return 0;
}
