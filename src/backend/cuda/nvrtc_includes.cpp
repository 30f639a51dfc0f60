// The headers a compile may see: the include allow-list and the check of a source's directives
// against it (no compiler involved: the lexer and translation phases 2 and 3 by hand), the pinned
// toolkit include folders found beside the NVRTC library in use, and the hash that keys the
// compile cache by them.
#include "kjudge/nvrtc.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "backend/cuda/compile_cache.hpp"
#include "backend/cuda/nvrtc_internal.hpp"
#include "kjudge/error.hpp"
#include "kjudge/lex.hpp"

namespace kj {

namespace fs = std::filesystem;
using detail::trim;

namespace {

// Exact headers, then folders whose every header is allowed. cuda/barrier and cuda/ptx sit next
// to cuda/pipeline because Hopper kernels (TMA, mbarrier) need them; cuda/std/* is libcu++,
// device-side and header-only. cuda_runtime.h, cuda.h, assert.h and cassert are kjudge's
// stand-ins (include/kjudge/compat/), found before the toolkit's. Everything else in the toolkit
// (thrust, the C library) is out: a candidate is one file of device code against pinned headers.
constexpr std::array<std::string_view, 14> allowed_exact = {
    "kjudge/device.cuh", "cuda_fp16.h",          "cuda_bf16.h",    "cuda_fp8.h",
    "cooperative_groups.h", "mma.h",             "cuda/pipeline",  "cuda/barrier",
    "cuda/ptx",          "cuda/atomic",          "cuda_runtime.h", "cuda.h",
    "assert.h",          "cassert"};
constexpr std::array<std::string_view, 3> allowed_folders = {"cooperative_groups/", "cub/",
                                                             "cuda/std/"};

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The logical line from `begin`: continuations spliced, comments replaced by a space (what
// translation phases 2 and 3 do before the preprocessor reads a directive).
std::string logical_directive(std::string_view source, std::size_t begin) {
  std::string out;
  std::size_t i = begin;
  while (i < source.size()) {
    const char c = source[i];
    if (c == '\\' && i + 1 < source.size() &&
        (source[i + 1] == '\n' ||
         (source[i + 1] == '\r' && i + 2 < source.size() && source[i + 2] == '\n'))) {
      i += source[i + 1] == '\n' ? 2 : 3;
      continue;
    }
    if (c == '\n') break;
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const auto end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? source.size() : end + 2;
      out += ' ';
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') break;
    out += c;
    ++i;
  }
  return out;
}

struct IncludeDirective {
  std::string keyword; // include, include_next, import; empty if the line is another directive
  std::string header;  // between the delimiters; empty for a computed include
  bool angled = false;
  std::string text; // the directive as written after splicing, for messages
};

// Reads `#include <x>` / `%:include "x"` from a spliced directive line.
IncludeDirective parse_directive(const std::string& line) {
  IncludeDirective d;
  d.text = std::string(trim(line));
  std::string_view rest = trim(line);
  if (rest.substr(0, 1) == "#") {
    rest.remove_prefix(1);
  } else if (rest.substr(0, 2) == "%:") {
    rest.remove_prefix(2);
  } else {
    return d;
  }
  rest = trim(rest);
  std::size_t n = 0;
  while (n < rest.size() && is_ident_char(rest[n]))
    ++n;
  const std::string_view keyword = rest.substr(0, n);
  if (keyword != "include" && keyword != "include_next" && keyword != "import") return d;
  d.keyword = std::string(keyword);
  rest = trim(rest.substr(n));
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '"')) {
    const char close = rest[0] == '<' ? '>' : '"';
    const auto end = rest.find(close, 1);
    if (end != std::string_view::npos) {
      d.header = std::string(rest.substr(1, end - 1));
      d.angled = rest[0] == '<';
    }
  }
  return d;
}

} // namespace

bool include_allowed(std::string_view header) {
  if (header.empty() || header.front() == '/' || header.find('\\') != std::string_view::npos)
    return false;
  // No `.` or `..` component and no empty one: `cub/../stdio.h` must not pass as cub/*.
  std::size_t start = 0;
  while (start <= header.size()) {
    const auto end = std::min(header.find('/', start), header.size());
    const std::string_view part = header.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  if (std::find(allowed_exact.begin(), allowed_exact.end(), header) != allowed_exact.end())
    return true;
  return std::any_of(allowed_folders.begin(), allowed_folders.end(), [&](std::string_view f) {
    return header.size() > f.size() && header.substr(0, f.size()) == f;
  });
}

std::string allowed_includes_text() {
  std::string out;
  for (auto h : allowed_exact)
    out += (out.empty() ? "" : ", ") + std::string(h);
  for (auto f : allowed_folders)
    out += ", " + std::string(f) + "...";
  return out;
}

void check_includes(std::string_view source, std::string_view file_name) {
  const lex::LexResult lexed = lex::tokenize(source);
  const auto& tokens = lexed.tokens;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const lex::Token& tok = tokens[t];
    const std::string_view text = tok.text(source);
    // A directive is a preprocessor token; `%:` (the digraph of `#`) is lexed as punctuation,
    // and so is a stray `#` the lexer did not see at a line start. Both are read from the raw
    // source: erring towards a directive only ever rejects more.
    const bool directive = tok.kind == lex::TokenKind::preprocessor ||
                           (tok.kind == lex::TokenKind::punct && text == "#") ||
                           (tok.kind == lex::TokenKind::punct && text == "%" &&
                            tok.offset + 1 < source.size() && source[tok.offset + 1] == ':');
    if (!directive) continue;
    const IncludeDirective d = parse_directive(logical_directive(source, tok.offset));
    if (d.keyword.empty()) continue;
    const std::string where = fmt::format("{}:{}", file_name, tok.line);
    std::string message;
    if (d.keyword != "include") {
      message = fmt::format("{}: #{} is not allowed (kjudge compiles with the pinned toolkit "
                            "headers only; allowed: #include of {})",
                            where, d.keyword, allowed_includes_text());
    } else if (d.header.empty()) {
      message = fmt::format("{}: a computed #include ('{}') is not allowed: name the header "
                            "(allowed: {})",
                            where, d.text, allowed_includes_text());
    } else if (!include_allowed(d.header)) {
      const std::string shown = d.angled ? "<" + d.header + ">" : "\"" + d.header + "\"";
      message = fmt::format("{}: #include {} is not allowed (kjudge compiles with the pinned "
                            "toolkit headers only{}; allowed: {})",
                            where, shown, d.angled ? "" : ", and a candidate is one file",
                            allowed_includes_text());
    }
    if (!message.empty()) throw CompileError(message, message);
  }
}

std::vector<fs::path> toolkit_include_dirs() {
  static const std::vector<fs::path> dirs = [] {
    std::vector<fs::path> candidates;
    // The toolkit that holds the NVRTC library in use first: its headers are the ones that
    // NVRTC version was released with. The environment only helps unusual layouts.
    Dl_info info{};
    void* fn = reinterpret_cast<void*>(&nvrtcVersion);
    if (dladdr(fn, &info) != 0 && info.dli_fname != nullptr) {
      std::error_code ec;
      const fs::path lib = fs::canonical(info.dli_fname, ec);
      if (!ec) candidates.push_back(lib.parent_path().parent_path() / "include");
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* v = std::getenv(var); v != nullptr && *v != '\0')
        candidates.push_back(fs::path(v) / "include");
    }
    candidates.emplace_back("/usr/local/cuda/include");
    std::vector<fs::path> out;
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c / "cuda_fp16.h", ec)) continue;
      const fs::path dir = fs::canonical(c, ec);
      if (ec) continue;
      out.push_back(dir);
      if (fs::is_directory(dir / "cccl", ec)) out.push_back(dir / "cccl");
      break;
    }
    return out;
  }();
  return dirs;
}

std::string header_set_hash(const fs::path& kjudge_include) {
  return cuda_cache::pinned_header_set_hash(kjudge_include, toolkit_include_dirs());
}

} // namespace kj
