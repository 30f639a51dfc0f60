// A CUDA C++ lexer that keeps exact byte offsets. It does not parse C++; it gives the tokens,
// the comments, the preprocessor lines and the spans of `__global__`/`__device__` function
// bodies that the spec lint, the PTX-scan messages, the host rewrite and the mutation operators
// need, each pointing back at the exact bytes of the source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::lex {

enum class TokenKind {
  identifier,     // also keywords: the lexer does not tell them apart
  number,         // integer or floating literal, with suffixes (1.0f, 0x1p-3, 10ull, 1'000)
  string,         // "..." incl. prefixes (u8"", L"") and raw strings R"d(...)d"
  character,      // 'a', u'a'
  punct,          // operators and punctuation, longest match (<<=, ->*, ::, ...)
  launch_open,    // <<< of a kernel launch
  launch_close,   // >>> of a kernel launch
  attribute,      // [[...]] as one token, nested brackets included
  comment,        // // ... or /* ... */
  preprocessor,   // a whole directive line, continuations included
};

struct Token {
  TokenKind kind;
  std::size_t offset;  // byte offset of the first character
  std::size_t length;  // bytes
  int line;            // 1-based line of the first character
  int column;          // 1-based byte column of the first character
  std::string_view text(std::string_view source) const { return source.substr(offset, length); }
};

// Tokenise a whole source. Never throws on bad input: an unterminated comment or literal ends at
// the end of the source and is reported in `errors` with its position.
struct LexResult {
  std::vector<Token> tokens;  // in source order, comments and preprocessor lines included
  struct Problem {
    int line, column;
    std::string message;
  };
  std::vector<Problem> errors;
};
LexResult tokenize(std::string_view source);

// The tokens without comments and preprocessor lines: what the parsers below walk.
std::vector<Token> code_tokens(const LexResult& lexed);

// 1-based line and column of a byte offset.
std::pair<int, int> line_column(std::string_view source, std::size_t offset);

enum class FunctionKind { global, device, host_device };

// Types are normalised: single spaces, none around `::` or inside brackets, none before `*`, `&`
// or `,` ("const float*", "Tensor<float, 2>", "void(*)(int)"); `__restrict__`, `__grid_constant__`
// and attributes are dropped (they do not change what an argument must be), `const` is kept;
// an array parameter is given as the pointer it decays to (`float x[]` -> "float*").
struct Parameter {
  std::string type;  // the declared type, normalised spacing: "const float*", "int", "T*"
  std::string name;  // may be empty
  bool is_pointer;   // the declarator has a top-level `*` (or is an array parameter)
};

// A function marked __global__ or __device__ (templates included), with the exact spans of its
// parts. Prototypes without a body are listed with body_begin == body_end == npos. Only
// declarations at namespace, `extern "C"` and class scope are read: nothing inside a body
// (lambdas, local classes) is listed, and `__device__` variables are not functions. An explicit
// specialisation or instantiation is listed under its template's name.
struct Function {
  FunctionKind kind;
  std::string name;
  bool is_template;
  bool extern_c;                        // inside extern "C" { } or declared extern "C"
  std::vector<std::string> template_params;  // names of the template parameters, in order
  std::vector<Parameter> params;
  std::size_t decl_offset;              // first token of the declaration (template/qualifiers)
  std::size_t body_begin;               // offset of `{`
  std::size_t body_end;                 // offset one past the matching `}`
  int line;                             // line of the function name
  std::string qualified_name;           // with the enclosing namespaces and classes (anonymous
                                        // ones left out) and any written qualifier: "ns::S::f"
};
std::vector<Function> find_functions(std::string_view source, const LexResult& lexed);

}  // namespace kj::lex
