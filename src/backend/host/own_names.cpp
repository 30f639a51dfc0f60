// The candidate's own names kept apart from the host's (kjudge/host_backend.hpp,
// keep_own_names_apart). g++ compiles the candidate together with the C and C++ libraries'
// headers, which NVRTC never sees; a name the candidate declares could otherwise meet one of
// theirs in one overload set (`namespace std { double max(double, double); }` then
// `std::max(1.0f, x)`: NVRTC calls the candidate's, g++ the library's template), or reach one
// through argument-dependent lookup. Every identifier of the candidate's lines that NVRTC could
// not have given it (one the toolkit's device headers, the headers it included and the language
// do not name) gets the prefix `kjc_`, which no header uses: the host compiles the program
// NVRTC compiled, under names no library shares.
#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "kjudge/host_backend.hpp"
#include "kjudge/lex.hpp"

namespace kj {

namespace fs = std::filesystem;

namespace {

using lex::Token;
using lex::TokenKind;

// The language's own words (keywords, alternative tokens, contextual keywords), the types NVRTC
// defines without a header, and the compiler's names a CUDA source may use.
constexpr std::string_view kLanguage[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "final", "override",
    "import", "module", "__restrict", "__restrict__", "__attribute__", "__inline", "__inline__",
    "__volatile__", "__const", "__signed__", "__typeof__", "__typeof", "__alignof__",
    "__extension__", "__int128", "__func__", "__builtin_expect", "__builtin_unreachable",
    "__builtin_assume_aligned", "__builtin_offsetof", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "ptrdiff_t",
    "size_t"};

// Names of the host's own namespaces, apart even where a toolkit header mentions them (`std`
// stays the toolkit's only as `cuda::std`).
constexpr std::string_view kHostNamespaces[] = {"std", "kjh", "boost", "__gnu_cxx",
                                                "__cxxabiv1"};

// The toolkit's headers whose names NVRTC gives a source with no #include: the device
// functions, intrinsics, atomics and types of its builtin header.
bool is_implicit_api(const fs::path& file, const fs::path& cuda_include) {
  const std::string rel = file.lexically_relative(cuda_include).generic_string();
  if (rel.starts_with("crt/")) return true;
  for (const std::string_view prefix :
       {"sm_", "device_", "vector_", "builtin_types", "host_defines", "driver_types",
        "surface_types", "texture_types", "cuda_device_runtime_api"})
    if (rel.starts_with(prefix) && rel.find('/') == std::string::npos) return true;
  return false;
}

void add_identifiers(std::string_view text, std::set<std::string, std::less<>>& out);

// The identifiers of a directive line: its words after the '#'.
void add_directive_identifiers(std::string_view line, std::set<std::string, std::less<>>& out) {
  const std::size_t hash = line.find('#');
  if (hash == std::string_view::npos) return;
  add_identifiers(line.substr(hash + 1), out);
}

void add_identifiers(std::string_view text, std::set<std::string, std::less<>>& out) {
  const lex::LexResult lexed = lex::tokenize(text);
  for (const Token& t : lexed.tokens) {
    if (t.kind == TokenKind::identifier) out.emplace(t.text(text));
    else if (t.kind == TokenKind::preprocessor) add_directive_identifiers(t.text(text), out);
  }
}

// A header's identifiers, read once per process.
const std::set<std::string, std::less<>>& header_identifiers(const fs::path& file) {
  static std::mutex mutex;
  static std::map<fs::path, std::set<std::string, std::less<>>> known;
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(file); it != known.end()) return it->second;
  std::set<std::string, std::less<>>& names = known[file];
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  add_identifiers(text.str(), names);
  return names;
}

bool is_host_namespace(std::string_view name) {
  return std::find(std::begin(kHostNamespaces), std::end(kHostNamespaces), name) !=
         std::end(kHostNamespaces);
}

// The language's words and the identifiers of the toolkit's implicit device headers: read once
// per process and toolkit folder (every host build of a candidate starts from them).
const std::set<std::string, std::less<>>& implicit_names(const fs::path& cuda_include) {
  static std::mutex mutex;
  static std::map<fs::path, std::set<std::string, std::less<>>> known;
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(cuda_include); it != known.end()) return it->second;
  std::set<std::string, std::less<>>& names = known[cuda_include];
  names.insert(std::begin(kLanguage), std::end(kLanguage));
  std::error_code ec;
  if (cuda_include.empty()) return names;
  for (const fs::path& dir : {cuda_include, cuda_include / "crt"})
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file(ec) && is_implicit_api(entry.path(), cuda_include)) {
        const auto& more = header_identifiers(entry.path());
        names.insert(more.begin(), more.end());
      }
  return names;
}

} // namespace

std::set<std::string, std::less<>> nvrtc_names(const fs::path& cuda_include,
                                               const std::vector<fs::path>& headers,
                                               const std::set<std::string>& nvrtc_lacks,
                                               const std::set<std::string>& nvrtc_knows) {
  std::set<std::string, std::less<>> names = implicit_names(cuda_include);
  for (const fs::path& f : headers) {
    const auto& more = header_identifiers(f);
    names.insert(more.begin(), more.end());
  }
  names.insert(nvrtc_knows.begin(), nvrtc_knows.end());
  for (const std::string& n : nvrtc_lacks)
    names.erase(n);
  return names;
}

std::vector<std::string> words_outside(std::string_view source,
                                       const std::set<std::string, std::less<>>& known) {
  std::set<std::string, std::less<>> words;
  add_identifiers(source, words);
  std::vector<std::string> out;
  for (const std::string& w : words)
    if (known.count(w) == 0) out.push_back(w);
  return out;
}

std::vector<std::string> host_library_names(const std::set<std::string, std::less<>>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (::dlsym(RTLD_DEFAULT, n.c_str()) != nullptr) out.push_back(n);
  return out;
}

std::string keep_own_names_apart(std::string_view text,
                                 const std::set<std::string, std::less<>>& nvrtc_known) {
  const lex::LexResult lexed = lex::tokenize(text);
  const std::vector<Token> code = lex::code_tokens(lexed);
  std::string out;
  std::size_t copied = 0;
  auto is_punct = [&](std::size_t i, std::string_view p) {
    return code[i].kind == TokenKind::punct && code[i].text(text) == p;
  };
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].kind != TokenKind::identifier) continue;
    const std::string_view name = code[i].text(text);
    // `cuda::std` is libcu++'s, which NVRTC has too.
    const bool libcu = name == "std" && i >= 2 && is_punct(i - 1, "::") &&
                       code[i - 2].kind == TokenKind::identifier &&
                       code[i - 2].text(text) == "cuda";
    if (libcu || (nvrtc_known.count(name) != 0 && !is_host_namespace(name))) continue;
    out.append(text.substr(copied, code[i].offset - copied));
    out += "kjc_";
    out += name;
    copied = code[i].offset + code[i].length;
  }
  out.append(text.substr(copied));
  return out;
}

std::string with_own_names_restored(std::string_view text) {
  constexpr std::string_view prefix = "kjc_";
  auto identifier_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with(prefix) && (i == 0 || !identifier_char(text[i - 1])))
      i += prefix.size();
    if (i < text.size()) out += text[i];
  }
  return out;
}

} // namespace kj
