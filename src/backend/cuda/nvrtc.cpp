// NVRTC compilation for candidates and references: the include allow-list, the pinned toolkit
// include folders, one compile per source for the CUBIN and PTX, exact kernel parameter types
// from the demangled lowered names, clear messages for the source's faults (CompileError) and
// kjudge's or NVRTC's own (InternalError), and the content-addressed cache around it all.
//
// PTX strategy: NVRTC 13 gives both CUBIN and PTX from one compile for an sm_XX target, so the
// PTX for the static scan costs nothing extra (the same bytes a compute_XX compile gives). Only
// an NVRTC that refuses nvrtcGetPTX after an sm_ compile gets a second compile for compute_XX;
// measured on problems/softmax/reference.cu (2 shared cores), that would add ~110 ms to the
// ~190 ms of the sm_90 compile.
#include "kjudge/nvrtc.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "backend/cuda/compile_cache.hpp"
#include "kjudge/error.hpp"
#include "kjudge/lex.hpp"
#include "kjudge/spec.hpp"

namespace kj {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Includes

// Exact headers, then folders whose every header is allowed. cuda/barrier and cuda/ptx sit next
// to cuda/pipeline because Hopper kernels (TMA, mbarrier) need them; cuda/std/* is libcu++,
// device-side and header-only. Everything else in the toolkit (cuda_runtime.h, thrust, the C
// library) is out: a candidate is one file of device code against pinned headers.
constexpr std::array<std::string_view, 10> allowed_exact = {
    "kjudge/device.cuh", "cuda_fp16.h",          "cuda_bf16.h",
    "cuda_fp8.h",        "cooperative_groups.h", "mma.h",
    "cuda/pipeline",     "cuda/barrier",         "cuda/ptx",
    "cuda/atomic"};
constexpr std::array<std::string_view, 3> allowed_folders = {"cooperative_groups/", "cub/",
                                                             "cuda/std/"};

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\f\v");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(b, e - b + 1);
}

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

// ---------------------------------------------------------------------------------------------
// NVRTC logs

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_error_line(std::string_view line) {
  return line.find("): error") != std::string_view::npos ||
         line.find("): catastrophic error") != std::string_view::npos ||
         line.rfind("nvrtc: error", 0) == 0 || line.rfind("error:", 0) == 0;
}

// A diagnostic line of NVRTC ("file.cu(12): error: text") as "file.cu:12: error: text"; other
// lines unchanged.
std::string gcc_style(std::string_view line) {
  const auto close = line.find("): ");
  if (close == std::string_view::npos) return std::string(line);
  const auto open = line.rfind('(', close);
  if (open == std::string_view::npos || open == 0) return std::string(line);
  const std::string_view number = line.substr(open + 1, close - open - 1);
  if (number.empty() ||
      !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::string(line);
  return fmt::format("{}:{}: {}", line.substr(0, open), number, line.substr(close + 3));
}

constexpr std::size_t log_max_lines = 30;
constexpr std::size_t log_max_bytes = 4096;

// The first lines of a log (at most 30 lines and 4 KiB), starting early enough to show the first
// error: when warnings fill the head of the log, the window starts at the first error instead.
std::string trim_log(std::string_view log) {
  std::vector<std::string_view> lines = split_lines(log);
  while (!lines.empty() && trim(lines.back()).empty())
    lines.pop_back();
  std::size_t first = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_error_line(lines[i])) {
      if (i + 4 > log_max_lines) first = i;
      break;
    }
  }
  std::string out;
  if (first > 0) out += fmt::format("... ({} lines of warnings left out)\n", first);
  std::size_t i = first;
  for (; i < lines.size() && i - first < log_max_lines; ++i) {
    if (out.size() + lines[i].size() + 1 > log_max_bytes && i > first) break;
    out.append(lines[i].substr(0, log_max_bytes));
    out += '\n';
  }
  if (i < lines.size()) out += fmt::format("... ({} more lines)\n", lines.size() - i);
  return out;
}

// "cand.cu:10: error: expected an expression (and 2 more errors)" from a failed compile's log.
std::string first_error_message(std::string_view log, std::string_view file_name) {
  std::string first;
  std::size_t errors = 0;
  for (std::string_view line : split_lines(log)) {
    if (!is_error_line(line)) continue;
    if (errors++ == 0) first = gcc_style(line);
  }
  if (errors == 0) return fmt::format("{}: NVRTC failed without an error line", file_name);
  if (errors == 1) return first;
  return fmt::format("{} (and {} more error{})", first, errors - 1, errors == 2 ? "" : "s");
}

// ---------------------------------------------------------------------------------------------
// NVRTC calls

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

// A failure of NVRTC itself, or of the call kjudge made: never the source's fault.
[[noreturn]] void nvrtc_internal(nvrtcResult r, std::string_view what) {
  throw InternalError(fmt::format("NVRTC {} failed: {}", what, nvrtcGetErrorString(r)));
}

void nvrtc_try(nvrtcResult r, std::string_view what) {
  if (r != NVRTC_SUCCESS) nvrtc_internal(r, what);
}

struct RawCompile {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;
  std::vector<char> cubin;
  std::optional<std::string> ptx;   // nullopt where NVRTC gives none for the target
  std::vector<std::string> lowered; // per name expression, as given
};

RawCompile run_nvrtc(const std::string& source, const std::string& file_name,
                     const std::vector<std::string>& names, const std::vector<std::string>& argv,
                     bool want_cubin) {
  nvrtcProgram raw = nullptr;
  nvrtc_try(nvrtcCreateProgram(&raw, source.c_str(), file_name.c_str(), 0, nullptr, nullptr),
            "nvrtcCreateProgram");
  Program program(raw);
  std::set<std::string> registered;
  for (const auto& name : names) {
    if (registered.insert(name).second)
      nvrtc_try(nvrtcAddNameExpression(raw, name.c_str()), "nvrtcAddNameExpression");
  }
  std::vector<const char*> args;
  for (const auto& a : argv)
    args.push_back(a.c_str());

  RawCompile out;
  out.result = nvrtcCompileProgram(raw, static_cast<int>(args.size()), args.data());
  std::size_t log_size = 0;
  nvrtc_try(nvrtcGetProgramLogSize(raw, &log_size), "nvrtcGetProgramLogSize");
  out.log.resize(log_size);
  if (log_size > 0) nvrtc_try(nvrtcGetProgramLog(raw, out.log.data()), "nvrtcGetProgramLog");
  while (!out.log.empty() && out.log.back() == '\0')
    out.log.pop_back();
  if (out.result != NVRTC_SUCCESS) return out;

  if (want_cubin) {
    std::size_t size = 0;
    nvrtc_try(nvrtcGetCUBINSize(raw, &size), "nvrtcGetCUBINSize");
    KJ_EXPECTS(size > 0, "NVRTC gave no CUBIN for an sm_ target");
    out.cubin.resize(size);
    nvrtc_try(nvrtcGetCUBIN(raw, out.cubin.data()), "nvrtcGetCUBIN");
  }
  std::size_t ptx_size = 0;
  if (nvrtcGetPTXSize(raw, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
    std::string ptx(ptx_size, '\0');
    if (nvrtcGetPTX(raw, ptx.data()) == NVRTC_SUCCESS) {
      while (!ptx.empty() && ptx.back() == '\0')
        ptx.pop_back();
      out.ptx = std::move(ptx);
    }
  }
  for (const auto& name : names) {
    const char* lowered = nullptr;
    nvrtc_try(nvrtcGetLoweredName(raw, name.c_str(), &lowered), "nvrtcGetLoweredName");
    KJ_EXPECTS(lowered != nullptr, "a lowered name for every registered expression");
    out.lowered.emplace_back(lowered);
  }
  return out;
}

const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    nvrtc_try(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
    std::vector<int> v(static_cast<std::size_t>(n));
    if (n > 0) nvrtc_try(nvrtcGetSupportedArchs(v.data()), "nvrtcGetSupportedArchs");
    return v;
  }();
  return archs;
}

// ---------------------------------------------------------------------------------------------
// Kernel names

// "softmax_rows<ROWS>" for each __global__ function of the source, for messages.
std::vector<std::string> defined_kernels(std::string_view source) {
  std::vector<std::string> out;
  const lex::LexResult lexed = lex::tokenize(source);
  for (const auto& f : lex::find_functions(source, lexed)) {
    if (f.kind != lex::FunctionKind::global) continue;
    std::string name = f.qualified_name.empty() ? f.name : f.qualified_name;
    if (f.is_template) {
      name += '<';
      for (std::size_t i = 0; i < f.template_params.size(); ++i)
        name += (i ? ", " : "") + f.template_params[i];
      name += '>';
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

// "ns::k" of "ns::k<4, float>".
std::string base_name(std::string_view expression) {
  return std::string(trim(expression.substr(0, expression.find('<'))));
}

std::string kernels_list(const std::vector<std::string>& kernels) {
  if (kernels.empty()) return "no __global__ kernels are defined";
  constexpr std::size_t shown = 20; // a generated file can hold hundreds
  std::string out = "kernels defined: ";
  for (std::size_t i = 0; i < kernels.size() && i < shown; ++i)
    out += (i ? ", " : "") + kernels[i];
  if (kernels.size() > shown) out += fmt::format(" and {} more", kernels.size() - shown);
  return out;
}

// NVRTC reports a bad name expression as an error in the pseudo-file `__nv_name_map`, echoing
// `#pragma nv_mangled_name EXPR` on the next line. The first such error, if every error of the
// log is of that kind (an error in the source itself is reported as it is: it may be why the
// kernel is missing).
struct NameError {
  std::string expression;    // as the caller registered it where it can be matched
  std::string error;         // NVRTC's first error about it, without the location
  bool not_a_kernel = false; // it names a __device__ function or a variable
};
std::optional<NameError> failed_name_expression(std::string_view log,
                                                const std::vector<std::string>& names) {
  const std::vector<std::string_view> lines = split_lines(log);
  std::optional<NameError> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_error_line(lines[i])) continue;
    if (lines[i].rfind("__nv_name_map(", 0) != 0) return std::nullopt;
    constexpr std::string_view pragma = "#pragma nv_mangled_name ";
    const auto at = i + 1 < lines.size() ? lines[i + 1].find(pragma) : std::string_view::npos;
    if (at == std::string_view::npos) continue;
    const std::string echoed(trim(lines[i + 1].substr(at + pragma.size())));
    if (!found) {
      const auto text = lines[i].find("error: ");
      found = NameError{echoed, std::string(lines[i].substr(text + 7)), false};
    }
    if (echoed != found->expression) continue;
    // NVRTC's wording for a name expression that lowers to something other than a kernel.
    if (lines[i].find("non-__global__ function") != std::string_view::npos ||
        lines[i].find("must form address of a __global__ function") != std::string_view::npos)
      found->not_a_kernel = true;
  }
  if (found) {
    for (const auto& n : names) {
      if (trim(n) == found->expression) found->expression = n;
    }
  }
  return found;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Public functions

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

bool nvrtc_option_reserved(std::string_view option) {
  // The option's name: up to `=`; `-Ifoo` and `-DX` style forms by prefix.
  const std::string_view name = option.substr(0, option.find('='));
  static constexpr std::array<std::string_view, 26> reserved = {"-arch",
                                                                "--gpu-architecture",
                                                                "-I",
                                                                "--include-path",
                                                                "-include",
                                                                "--pre-include",
                                                                "-rdc",
                                                                "--relocatable-device-code",
                                                                "-dc",
                                                                "-dlto",
                                                                "--dlink-time-opt",
                                                                "-gen-opt-lto",
                                                                "--gen-opt-lto",
                                                                "-std",
                                                                "--std",
                                                                "-time",
                                                                "--time",
                                                                "-fdevice-time-trace",
                                                                "--fdevice-time-trace",
                                                                "-pch",
                                                                "--pch",
                                                                "--create-pch",
                                                                "--use-pch",
                                                                "--pch-dir",
                                                                "-frandom-seed",
                                                                "--frandom-seed"};
  for (std::string_view r : reserved) {
    if (name == r) return true;
  }
  // Joined forms: -I/usr/include, -arch=..., -std=...
  return option.rfind("-I", 0) == 0 || option.rfind("-ewp", 0) == 0 ||
         option.rfind("--extensible-whole-program", 0) == 0 || option.rfind("-optix-ir", 0) == 0 ||
         option.rfind("--optix-ir", 0) == 0 || option.rfind("-create-pch", 0) == 0 ||
         option.rfind("-use-pch", 0) == 0 || option.rfind("-pch-dir", 0) == 0;
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

std::optional<std::string> demangle(std::string_view lowered) {
  if (lowered.substr(0, 2) != "_Z") return std::nullopt;
  int status = 0;
  const std::string mangled(lowered);
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !text) return std::nullopt;
  return std::string(text.get());
}

std::vector<std::string> demangled_param_types(std::string_view demangled) {
  // The parameter list is the last balanced parenthesised group; parentheses inside it (function
  // pointer types, "(anonymous namespace)", parenthesised template arguments) nest.
  const auto close = demangled.rfind(')');
  if (close == std::string_view::npos) return {};
  int depth = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (demangled[i] == ')') ++depth;
    if (demangled[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos) return {};
  const std::string_view inner = demangled.substr(open + 1, close - open - 1);

  std::vector<std::string> out;
  int parens = 0, angles = 0, brackets = 0;
  std::size_t start = 0;
  auto flush = [&](std::size_t end) {
    const std::string_view part = trim(inner.substr(start, end - start));
    if (!part.empty()) out.emplace_back(part);
  };
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '(')
      ++parens;
    else if (c == ')')
      --parens;
    else if (c == '[' || c == '{')
      ++brackets;
    else if (c == ']' || c == '}')
      --brackets;
    // The demangler parenthesises template arguments that contain `>`, so angle brackets only
    // count outside parentheses.
    else if (c == '<' && parens == 0)
      ++angles;
    else if (c == '>' && parens == 0 && angles > 0)
      --angles;
    else if (c == ',' && parens == 0 && angles == 0 && brackets == 0) {
      flush(i);
      start = i + 1;
    }
  }
  flush(inner.size());
  if (out.size() == 1 && out[0] == "void") out.clear();
  return out;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc_try(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return fmt::format("{}.{}", major, minor);
}

std::string header_set_hash(const fs::path& kjudge_include) {
  return cuda_cache::pinned_header_set_hash(kjudge_include, toolkit_include_dirs());
}

namespace {

// What a compile of `source` runs NVRTC with, and its cache key.
struct CompilePlan {
  std::string file, src, arch_suffix;
  std::vector<std::string> argv;
  std::string key;
};

// The checks before any compile (a NUL byte, includes off the list: CompileError; kjudge's
// reserved options, an empty expression, an unsupported arch, no toolkit headers:
// InternalError), then the NVRTC arguments and the cache key.
CompilePlan plan_compile(std::string_view source, std::string_view file_name,
                         const std::vector<std::string>& name_expressions,
                         const CompileOptions& options) {
  CompilePlan plan;
  plan.file = code_name(file_name);
  if (source.find('\0') != std::string_view::npos) {
    const std::string message = fmt::format("{}: the source contains a NUL byte", plan.file);
    throw CompileError(message, message);
  }
  check_includes(source, file_name);
  for (const auto& name : name_expressions)
    KJ_EXPECTS(!trim(name).empty(), "a kernel name expression is empty");
  for (const auto& option : options.options)
    KJ_EXPECTS(!nvrtc_option_reserved(option),
               fmt::format("option '{}' is set by kjudge and cannot be passed", option));

  const auto& archs = supported_archs();
  if (std::find(archs.begin(), archs.end(), options.arch) == archs.end()) {
    std::string list;
    for (int a : archs)
      list += (list.empty() ? "" : ", ") + std::to_string(a);
    throw InternalError(fmt::format("NVRTC {} cannot compile for sm_{} (it supports {}): a GPU "
                                    "newer than the CUDA toolkit kjudge uses, or a wrong arch",
                                    nvrtc_version(), options.arch, list));
  }
  const std::vector<fs::path> toolkit = toolkit_include_dirs();
  if (toolkit.empty())
    throw InternalError("the CUDA toolkit headers were not found next to the NVRTC library, in "
                        "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda (looked for "
                        "include/cuda_fp16.h)");

  plan.arch_suffix = fmt::format("{}{}", options.arch, options.arch_specific ? "a" : "");
  // A fixed seed for the names NVRTC gives internal-linkage symbols: without it they carry the
  // process id and a random word, so the same source gives a different CUBIN in every process.
  // Modules are never linked together (no -rdc), so the names need not differ between modules.
  // -lineinfo puts the source lines into the PTX (.loc), for the static scan's messages; it
  // does not change the code.
  plan.argv = {"--gpu-architecture=sm_" + plan.arch_suffix, "-std=c++17", "-frandom-seed=1",
               "-lineinfo"};
  if (!options.kjudge_include.empty())
    plan.argv.push_back("--include-path=" + options.kjudge_include.string());
  for (const auto& dir : toolkit)
    plan.argv.push_back("--include-path=" + dir.string());
  plan.argv.insert(plan.argv.end(), options.options.begin(), options.options.end());

  plan.src = std::string(source);
  cuda_cache::KeyParts key_parts{
      cuda_cache::build_id(),
      cuda_cache::nvrtc_library_identity(),
      options.header_set_hash.empty()
          ? cuda_cache::pinned_header_set_hash(options.kjudge_include, toolkit)
          : options.header_set_hash,
      plan.argv,
      plan.file,
      name_expressions,
      plan.src};
  plan.key = cuda_cache::cache_key(key_parts);
  return plan;
}

} // namespace

std::optional<CompiledModule> cached_module(std::string_view source, std::string_view file_name,
                                            const std::vector<std::string>& name_expressions,
                                            const CompileOptions& options) {
  if (options.cache_dir.empty()) return std::nullopt;
  try {
    return cuda_cache::load(options.cache_dir,
                            plan_compile(source, file_name, name_expressions, options).key);
  } catch (const std::exception&) {
    return std::nullopt; // compile_module says what is wrong
  }
}

CompiledModule compile_module(std::string_view source, std::string_view file_name,
                              const std::vector<std::string>& name_expressions,
                              const CompileOptions& options) {
  const CompilePlan plan = plan_compile(source, file_name, name_expressions, options);
  const std::string& file = plan.file;
  const std::string& src = plan.src;
  const std::vector<std::string>& argv = plan.argv;
  const std::string& arch_suffix = plan.arch_suffix;
  const std::string& key = plan.key;
  if (!options.cache_dir.empty()) {
    if (auto hit = cuda_cache::load(options.cache_dir, key)) return std::move(*hit);
  }

  RawCompile raw = run_nvrtc(src, file, name_expressions, argv, true);
  switch (raw.result) {
  case NVRTC_SUCCESS:
    break;
  case NVRTC_ERROR_COMPILATION: {
    const std::string log = trim_log(raw.log);
    if (auto bad = failed_name_expression(raw.log, name_expressions)) {
      const std::vector<std::string> kernels = defined_kernels(source);
      if (bad->not_a_kernel)
        throw CompileError(fmt::format("'{}' in {} is not a __global__ kernel ({})",
                                       bad->expression, file, kernels_list(kernels)),
                           log);
      const std::string base = base_name(bad->expression);
      const auto same_base = std::find_if(kernels.begin(), kernels.end(),
                                          [&](const auto& k) { return base_name(k) == base; });
      if (same_base != kernels.end()) {
        throw CompileError(fmt::format("kernel '{}' does not name an instance of {} in {}: {}",
                                       bad->expression, *same_base, file, bad->error),
                           log);
      }
      throw CompileError(fmt::format("kernel '{}' is not defined in {} ({})", bad->expression, file,
                                     kernels_list(kernels)),
                         log);
    }
    throw CompileError(first_error_message(raw.log, file_name), log);
  }
  case NVRTC_ERROR_INVALID_OPTION:
    // kjudge's own options are fixed and the architecture was checked above, so an invalid
    // option is one of the caller's (a problem's allowed_options, a candidate's choice).
    if (!options.options.empty())
      throw CompileError(fmt::format("{}: invalid NVRTC option: {}", file,
                                     first_error_message(raw.log, file_name)),
                         trim_log(raw.log));
    nvrtc_internal(raw.result, "nvrtcCompileProgram (" + trim_log(raw.log) + ")");
  default:
    // Out of memory, a missing builtins library, an internal error: NVRTC's fault, not the
    // source's.
    nvrtc_internal(raw.result, "nvrtcCompileProgram");
  }

  CompiledModule module;
  module.cubin = std::move(raw.cubin);
  if (raw.ptx) {
    module.ptx = std::move(*raw.ptx);
  } else {
    std::vector<std::string> ptx_argv = argv;
    ptx_argv[0] = "--gpu-architecture=compute_" + arch_suffix;
    RawCompile again = run_nvrtc(src, file, name_expressions, ptx_argv, false);
    if (again.result != NVRTC_SUCCESS || !again.ptx)
      nvrtc_internal(again.result, "the compute_ compile for PTX");
    module.ptx = std::move(*again.ptx);
  }
  module.log = trim_log(raw.log);
  module.cache_key = key;

  for (std::size_t i = 0; i < name_expressions.size(); ++i) {
    KernelSymbol k;
    k.expression = name_expressions[i];
    k.lowered = raw.lowered[i];
    if (k.lowered.rfind("_Z", 0) != 0) {
      k.extern_c = true;
      k.demangled = k.lowered;
    } else {
      std::optional<std::string> text = demangle(k.lowered);
      if (!text)
        throw InternalError(fmt::format("cannot demangle the lowered name '{}' of kernel '{}'",
                                        k.lowered, k.expression));
      k.demangled = std::move(*text);
      k.param_types = demangled_param_types(k.demangled);
    }
    // A name expression may name a __device__ function or a variable: it lowers, but there is
    // no kernel to launch. The PTX lists every kernel as an .entry.
    const std::string entry = ".entry " + k.lowered + "(";
    if (module.ptx.find(entry) == std::string::npos) {
      const std::string message =
          fmt::format("'{}' in {} is not a __global__ kernel ({})", k.expression, file,
                      kernels_list(defined_kernels(source)));
      throw CompileError(message, module.log);
    }
    module.kernels.push_back(std::move(k));
  }

  if (!options.cache_dir.empty())
    cuda_cache::store(options.cache_dir, key, module, options.cache_cap_bytes);
  return module;
}


std::vector<std::pair<std::string, std::string>> nvrtc_predefined_macros(
    const std::vector<std::string>& names, const CompileOptions& options) {
  std::string probe = "#define KJ_STR2(...) #__VA_ARGS__\n#define KJ_STR(...) KJ_STR2(__VA_ARGS__)\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    probe += fmt::format("#ifdef {0}\n__device__ const char kj_macro_{1}[] = KJ_STR({0});\n#endif\n",
                         names[i], i);
  const CompiledModule m = compile_module(probe, "kjudge_macros.cu", {}, options);
  // `.global .align 1 .b8 kj_macro_7[7] = {50, 48, 49, 54, 48, 54, 76};`
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = 0;
  while ((at = m.ptx.find(" kj_macro_", at)) != std::string::npos) {
    at += 10;
    std::size_t end = at;
    while (end < m.ptx.size() && m.ptx[end] >= '0' && m.ptx[end] <= '9')
      ++end;
    const std::size_t index = std::stoul(m.ptx.substr(at, end - at));
    const std::size_t open = m.ptx.find('{', end), close = m.ptx.find('}', end);
    const std::size_t line_end = m.ptx.find('\n', end);
    std::string text;
    if (open < line_end && close < line_end) {
      std::istringstream bytes(m.ptx.substr(open + 1, close - open - 1));
      for (std::string b; std::getline(bytes, b, ',');)
        if (const int c = std::stoi(b); c != 0) text += static_cast<char>(c);
    }
    if (index < names.size()) out.emplace_back(names[index], text);
    at = end;
  }
  return out;
}

} // namespace kj
