// compile_host_module (kjudge/host_backend.hpp): a candidate's host build. The source is
// preprocessed as NVRTC saw it, rewritten for the host, compiled against cuda_emulation.hpp
// (plain or checked) by the host compiler run as a confined child, and kept as a shared object
// in a content-addressed cache next to the NVRTC one.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "backend/host/host_tools.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/lex.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/sha256.hpp"
#include "kjudge/spec.hpp"

namespace kj {

namespace fs = std::filesystem;
using detail::read_file;
using detail::resolve_program;
using detail::run;
using detail::run_host_tool;
using detail::coverage_notes;

namespace {

// The compiler's first --version line, part of the cache key.
std::string compiler_identity(const std::string& compiler, const fs::path& scratch) {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const fs::path log = scratch / "compiler-version.txt";
  if (run({compiler, "--version"}, log) != 0)
    throw CompileError(fmt::format("the host compiler '{}' does not run", compiler), "");
  const std::string text = read_file(log);
  return text.substr(0, text.find('\n'));
}

std::vector<fs::path> split_path_list(const char* variable) {
  std::vector<fs::path> out;
  const char* value = std::getenv(variable);
  std::istringstream parts(value ? value : "");
  for (std::string part; std::getline(parts, part, ':');)
    if (!part.empty()) out.emplace_back(part);
  return out;
}

std::vector<fs::path> existing(std::vector<fs::path> dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto& d : dirs)
    if (!d.empty() && fs::exists(d, ec) &&
        std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(std::move(d));
  return out;
}

} // namespace

std::vector<fs::path> host_include_dirs() {
  std::vector<fs::path> dirs = {KJ_BOOST_INCLUDE_DIR};
  for (auto& d : split_path_list("CPLUS_INCLUDE_PATH"))
    dirs.push_back(std::move(d));
  return existing(std::move(dirs));
}

std::vector<fs::path> host_library_dirs() {
  std::vector<fs::path> dirs = {fs::path(KJ_BOOST_CONTEXT_LIBRARY).parent_path()};
  for (auto& d : split_path_list("LIBRARY_PATH"))
    dirs.push_back(std::move(d));
  return existing(std::move(dirs));
}

std::vector<fs::path> host_module_libraries() {
  for (const fs::path& dir : host_library_dirs()) {
    std::error_code ec;
    if (const fs::path p = dir / "libboost_context.so"; fs::exists(p, ec)) return {p};
  }
  return {};
}

namespace {

// The macros NVRTC predefines beyond the host compiler's own names (NVRTC's documentation, and
// CUDART_VERSION, which libcu++ checks against the compiler's version), and NDEBUG, which a
// candidate's -DNDEBUG sets and its asserts read.
constexpr std::string_view kNvrtcMacroNames[] = {
    "__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__", "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__", "__CUDACC_RTC_INT128__", "__NVCC__",
    "__CUDACC_DEBUG__", "__CUDACC_RDC__", "__CUDACC_EWP__", "__CUDACC_RELAXED_CONSTEXPR__",
    "__CUDACC_EXTENDED_LAMBDA__", "__CUDA_ARCH_SPECIFIC__", "__CUDA_ARCH_FAMILY_SPECIFIC__",
    "__CUDA_ARCH_LIST__", "__USE_FAST_MATH__", "__CUDACC_DEVICE_ATOMIC_BUILTINS__",
    "__NVCC_DIAG_PRAGMA_SUPPORT__", "__CUDACC_RTC_MINIMAL__", "KJ_HOST_BACKEND", "NDEBUG",
    "CUDART_VERSION"};

// The names `g++ -dM -E` lists with these flags, asked once per process.
std::vector<std::string> macro_names(const fs::path& compiler, const std::vector<std::string>& flags,
                                     const fs::path& scratch) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>> known; // by compiler and flags
  const std::lock_guard lock(mutex);
  std::string key = compiler.string();
  for (const auto& f : flags)
    key += ' ' + f;
  if (const auto it = known.find(key); it != known.end()) return it->second;
  std::vector<std::string> argv = {compiler.string(), "-dM", "-E", "-x", "c++"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("/dev/null");
  const fs::path log = scratch / fmt::format("macros-{}-{}.txt", ::getpid(), ::gettid());
  const int rc = run(argv, log);
  std::istringstream lines(read_file(log));
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0) throw CompileError(fmt::format("'{} -dM -E' fails", compiler.string()), "");
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#define ", 0) != 0) continue;
    std::string name = line.substr(8, line.find_first_of(" (", 8) - 8);
    names.push_back(std::move(name));
  }
  return known[key] = names;
}

// `# 12 "file" 1 3`: the line, the file, and whether it enters (1) or returns to (2) a file.
struct LineMarker {
  long line = 0;
  std::string file;
  bool enters = false, returns = false;
};
std::optional<LineMarker> line_marker(std::string_view text) {
  if (text.size() < 4 || text[0] != '#' || text[1] != ' ' || text[2] < '0' || text[2] > '9')
    return std::nullopt;
  LineMarker m;
  std::size_t i = 2;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    m.line = m.line * 10 + (text[i++] - '0');
  if (i + 1 >= text.size() || text[i] != ' ' || text[i + 1] != '"') return std::nullopt;
  std::size_t j = i + 2;
  for (; j < text.size() && text[j] != '"'; ++j) {
    if (text[j] == '\\' && j + 1 < text.size()) ++j;
    m.file += text[j];
  }
  const std::string_view flags = j + 1 < text.size() ? text.substr(j + 1) : std::string_view();
  m.enters = flags.starts_with(" 1");
  m.returns = flags.starts_with(" 2");
  return m;
}

// A directive line left in the preprocessed text: a pragma the host build may see (loop
// unrolling), another pragma (NVRTC's or the host compiler's business: a `GCC dependency` or
// `GCC system_header` would reach the host's files or rules), or anything else, which only a
// macro's expansion can have made.
enum class Directive { kept_pragma, dropped_pragma, made_by_a_macro };
Directive directive_kind(std::string_view line) {
  auto skip_blanks = [](std::string_view& t) {
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
      t.remove_prefix(1);
  };
  std::string_view rest = line.substr(1);
  skip_blanks(rest);
  if (!rest.starts_with("pragma")) return Directive::made_by_a_macro;
  rest.remove_prefix(6);
  skip_blanks(rest);
  const bool unrolling = rest.starts_with("unroll") || rest.starts_with("nounroll") ||
                         rest.starts_with("GCC unroll") || rest.starts_with("GCC ivdep");
  return unrolling ? Directive::kept_pragma : Directive::dropped_pragma;
}

} // namespace

std::vector<std::string> predefined_macro_names(const HostCompileOptions& options) {
  const fs::path scratch = options.cache_dir / "host";
  fs::create_directories(scratch);
  std::vector<std::string> names = macro_names(resolve_program(options.compiler),
                                               {"-std=c++20", "-O2", "-fPIC", "-pthread"}, scratch);
  for (const std::string_view n : kNvrtcMacroNames)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.emplace_back(n);
  return names;
}

namespace {

// The preprocessor's own names the two compilers answer differently (measured against NVRTC
// 13 and g++ 12): the feature probes, whose answers are each compiler's; the clock, which
// differs between NVRTC's compile and the host's (a day apart where the PTX was cached); and
// the names only g++ defines (`#ifdef __COUNTER__` took the host alone into a branch). Each is
// refused where the candidate writes it; those only g++ defines are also undefined, so that a
// name pasted together with `##` tests as NVRTC's does.
constexpr std::string_view kAnsweredOtherwise[] = {
    "__has_builtin", "__has_attribute", "__has_cpp_attribute", "__has_c_attribute",
    "__has_feature", "__has_extension", "__has_include", "__has_include_next", "__is_identifier",
    "__DATE__",      "__TIME__",        "__TIMESTAMP__",       "__COUNTER__",
    "__FILE_NAME__"};
constexpr std::string_view kOnlyTheHostDefines[] = {"__has_c_attribute", "__COUNTER__",
                                                    "__TIMESTAMP__", "__FILE_NAME__"};

void refuse_what_the_preprocessors_answer_otherwise(std::string_view source,
                                                    std::string_view file_name) {
  auto check = [&](std::string_view name, int line) {
    if (std::find(std::begin(kAnsweredOtherwise), std::end(kAnsweredOtherwise), name) !=
        std::end(kAnsweredOtherwise))
      throw UnsupportedOnHost(fmt::format(
          "unsupported on host backend: {} at {}:{} (the host compiler's preprocessor "
          "answers it otherwise than NVRTC's)",
          name, file_name, line));
  };
  for (const lex::Token& t : lex::tokenize(source).tokens) {
    if (t.kind == lex::TokenKind::identifier) check(t.text(source), t.line);
    if (t.kind != lex::TokenKind::preprocessor) continue;
    // A directive's words, lexed again without its '#'.
    const std::string_view line = t.text(source);
    const std::string_view words = line.substr(std::min(line.find('#') + 1, line.size()));
    for (const lex::Token& w : lex::tokenize(words).tokens)
      if (w.kind == lex::TokenKind::identifier) check(w.text(words), t.line + w.line - 1);
  }
}

} // namespace

namespace {

// The header an #include line names, without its quotes or brackets; nullopt for another
// directive. Set `other` when it is neither an #include nor a #pragma.
std::optional<std::string> included_header(std::string_view directive, bool& other) {
  const lex::LexResult words = lex::tokenize(directive.substr(directive.find('#') + 1));
  const std::vector<lex::Token> tokens = lex::code_tokens(words);
  const std::string_view text = directive.substr(directive.find('#') + 1);
  const std::string_view name = tokens.empty() ? "" : tokens[0].text(text);
  if (name == "pragma") return std::nullopt;
  if (name != "include" || tokens.size() < 2) {
    other = true;
    return std::nullopt;
  }
  std::string header;
  for (std::size_t i = 1; i < tokens.size(); ++i)
    header += tokens[i].text(text);
  if (header.size() >= 2 && (header.front() == '<' || header.front() == '"'))
    header = header.substr(1, header.size() - 2);
  return header;
}

} // namespace

bool preprocessing_kept_the_tokens(std::string_view source, std::string_view preprocessed) {
  struct Reading {
    std::vector<std::string_view> tokens;
    std::vector<std::string> headers;
    bool other_directive = false;
  };
  auto read = [](std::string_view text) {
    Reading r;
    for (const lex::Token& t : lex::tokenize(text).tokens) {
      if (t.kind == lex::TokenKind::comment) continue;
      if (t.kind != lex::TokenKind::preprocessor) {
        r.tokens.push_back(t.text(text));
      } else if (auto header = included_header(t.text(text), r.other_directive)) {
        r.headers.push_back(std::move(*header));
      }
    }
    return r;
  };
  const Reading before = read(source), after = read(preprocessed);
  return !before.other_directive && !after.other_directive && before.headers == after.headers &&
         before.tokens == after.tokens;
}

std::string preprocess_as_nvrtc(std::string_view source, std::string_view file_name,
                                const HostCompileOptions& options,
                                std::vector<fs::path>* entered_headers) {
  if (options.one_program) refuse_what_the_preprocessors_answer_otherwise(source, file_name);
  const fs::path dir = options.cache_dir / "host";
  fs::create_directories(dir);
  const fs::path compiler = resolve_program(options.compiler);
  const std::string name = code_name(file_name);
  // What g++ still predefines with -undef -nostdinc (the standard's few) goes, unless NVRTC has
  // it too; then every macro NVRTC predefines, with its expansion.
  std::vector<std::string> argv = {compiler.string(), "-E", "-undef", "-nostdinc", "-std=c++17",
                                   "-x", "c++", "-I" + options.kjudge_include.string(),
                                   "-I" + (options.kjudge_include / "kjudge" / "compat").string()};
  if (!options.cuda_include.empty()) argv.push_back("-I" + options.cuda_include.string());
  // libcu++ (cuda/std/...), which NVRTC finds there too and cooperative_groups.h includes.
  const fs::path cccl = options.cuda_include.empty() ? fs::path() : options.cuda_include / "cccl";
  std::error_code no_cccl;
  if (!cccl.empty() && fs::is_directory(cccl, no_cccl)) argv.push_back("-I" + cccl.string());
  std::map<std::string, std::string> nvrtc(options.device_macros.begin(),
                                           options.device_macros.end());
  for (const std::string& left : macro_names(compiler, {"-undef", "-nostdinc", "-std=c++17"}, dir)) {
    const auto it = nvrtc.find(left);
    if (it == nvrtc.end()) argv.push_back("-U" + left);
    else nvrtc.erase(it); // the same standard macro in both
  }
  for (const auto& [macro, value] : nvrtc)
    argv.push_back("-D" + macro + "=" + value);
  if (options.one_program)
    for (const std::string_view builtin : kOnlyTheHostDefines)
      argv.push_back("-U" + std::string(builtin));
  // NVRTC's own headers define assert before the source; so does this, read first.
  argv.insert(argv.end(),
              {"-include", (options.kjudge_include / "kjudge" / "compat" / "assert.h").string()});

  static std::atomic<unsigned> serial{0};
  const std::string stem = fmt::format("pp.{}.{}", ::getpid(), serial++);
  const fs::path in = dir / (stem + ".cu"), out = dir / (stem + ".i"), log = dir / (stem + ".log");
  std::ofstream(in, std::ios::binary) << "#line 1 \"" << name << "\"\n" << source;
  argv.insert(argv.end(), {in.string(), "-o", out.string()});
  auto remove_temporaries = [&] {
    std::error_code ec;
    for (const fs::path& p : {in, out, log})
      fs::remove(p, ec);
  };
  (void)run_host_tool(argv, log, dir, options, file_name,
                      "the host compiler's preprocessor refuses", remove_temporaries);
  const std::string text = read_file(out);
  remove_temporaries();

  // Each line of the candidate's own text back on its line; each header it included directly
  // becomes an #include of the host build, by its name under an include folder.
  std::vector<fs::path> roots = {options.kjudge_include};
  if (!options.cuda_include.empty()) {
    roots.push_back(cccl); // before the folder holding it
    roots.push_back(options.cuda_include);
    roots.push_back(fs::weakly_canonical(options.cuda_include));
  }
  auto include_name = [&](const std::string& header) -> std::string {
    for (const fs::path& root : roots) {
      const std::string prefix = root.string() + (root.string().ends_with('/') ? "" : "/");
      if (header.rfind(prefix, 0) == 0) return header.substr(prefix.size());
    }
    throw UnsupportedOnHost(fmt::format(
        "unsupported on host backend: {} includes {}, outside kjudge's and the toolkit's headers",
        file_name, header));
  };
  std::vector<std::string> lines(1);
  auto put = [&](long at, const std::string& what) {
    if (at < 1) at = 1;
    if (static_cast<std::size_t>(at) >= lines.size()) lines.resize(static_cast<std::size_t>(at) + 1);
    std::string& slot = lines[static_cast<std::size_t>(at)];
    slot += slot.empty() ? what : " " + what;
  };
  int depth = -1; // -1: before the candidate's first line; 0: in it; >0: in a header
  long next = 1;
  std::string entered;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    if (const auto m = line_marker(line)) {
      if (entered_headers && m->file != name && !m->file.starts_with("<")) {
        const fs::path header = m->file;
        if (std::find(entered_headers->begin(), entered_headers->end(), header) ==
            entered_headers->end())
          entered_headers->push_back(header);
      }
      if (m->file == name && depth <= 0) {
        depth = 0;
        next = m->line;
      } else if (m->enters) {
        if (depth == 0) entered = m->file;
        if (depth >= 0) ++depth;
      } else if (m->returns && depth > 0 && --depth == 0) {
        next = m->line;
        put(next - 1, "#include <" + include_name(entered) + ">");
      }
      continue;
    }
    if (depth != 0) continue;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') {
      switch (directive_kind(std::string_view(line).substr(first))) {
      case Directive::kept_pragma: put(next, line); break;
      case Directive::dropped_pragma: break;
      case Directive::made_by_a_macro:
        throw UnsupportedOnHost(fmt::format(
            "unsupported on host backend: a directive made by macro expansion at {}:{}",
            file_name, next));
      }
      ++next;
      continue;
    }
    put(next++, line);
  }
  std::string joined;
  for (std::size_t i = 1; i < lines.size(); ++i)
    joined += lines[i] + '\n';
  return joined;
}

namespace {

// The coverage build's flags: gcov's arc counters on the functions of the candidate's file
// alone (not the emulation's, not kjudge's entries), atomic because a block's CPU threads share
// them (a lost update could make a derived count zero), and kept in the section kj_gcov instead
// of being registered by a constructor, which the module may not have.
void append_coverage_flags(std::vector<std::string>& argv, std::string_view code_file) {
  std::string pattern = "(^|/)";
  for (const char c : code_file) {
    if (std::string_view(".[]{}()*+?^$|\\").find(c) != std::string_view::npos) pattern += '\\';
    pattern += c == ';' ? '.' : c; // ';' separates the option's patterns
  }
  argv.insert(argv.end(), {"-fprofile-arcs", "-ftest-coverage", "-fprofile-update=atomic",
                           "-fprofile-info-section=kj_gcov",
                           "-fprofile-filter-files=" + pattern + "$"});
}

// kj_host_coverage(out, capacity): each translation unit's counters as gcov's data file, behind
// its length as 4 little-endian bytes; returns the bytes it needed (more than `capacity`: cut).
constexpr const char* kCoverageEntry = R"(extern "C" {
struct gcov_info;
void __gcov_info_to_gcda(const gcov_info*, void (*)(const char*, void*),
                         void (*)(const void*, unsigned, void*), void* (*)(unsigned, void*), void*);
extern const gcov_info* const __start_kj_gcov[] __attribute__((weak, visibility("hidden")));
extern const gcov_info* const __stop_kj_gcov[] __attribute__((weak, visibility("hidden")));
}
namespace {
struct KjCoverageOut { unsigned char* out; unsigned long capacity, used; };
void kj_coverage_put(const void* data, unsigned n, void* arg) {
  auto* o = static_cast<KjCoverageOut*>(arg);
  for (unsigned i = 0; i < n; ++i, ++o->used)
    if (o->used < o->capacity) o->out[o->used] = static_cast<const unsigned char*>(data)[i];
}
void kj_coverage_name(const char*, void*) {}
void* kj_coverage_allocate(unsigned n, void*) { return __builtin_malloc(n); }
}
extern "C" unsigned long kj_host_coverage(unsigned char* out, unsigned long capacity) {
  KjCoverageOut o{out, capacity, 0};
  for (const gcov_info* const* p = __start_kj_gcov; p && p != __stop_kj_gcov; ++p) {
    const unsigned long length_at = o.used;
    const unsigned char zero[4] = {0, 0, 0, 0};
    kj_coverage_put(zero, 4, &o);
    __gcov_info_to_gcda(*p, kj_coverage_name, kj_coverage_put, kj_coverage_allocate, &o);
    const unsigned long length = o.used - length_at - 4;
    for (int b = 0; b < 4; ++b)
      if (length_at + b < capacity) out[length_at + b] = static_cast<unsigned char>(length >> (8 * b));
  }
  return o.used;
}
)";

} // namespace

fs::path detail::coverage_notes(const fs::path& shared_object) {
  fs::path notes = shared_object;
  return notes.replace_extension(".gcno");
}

fs::path build_host_module(std::string_view source, std::string_view file_name,
                           const std::vector<std::string>& expressions,
                           const HostCompileOptions& options) {
  if (options.cache_dir.empty())
    throw CompileError("the host backend needs a cache folder for its shared objects", "");
  const fs::path dir = options.cache_dir / "host";
  fs::create_directories(dir);

  const fs::path emulation = options.kjudge_include / "kjudge" / "host" / "cuda_emulation.hpp";
  const std::string emulation_text = read_file(emulation);
  if (emulation_text.empty())
    throw CompileError(fmt::format("cannot read {}", emulation.string()), "");
  const fs::path compiler = resolve_program(options.compiler);
  // -B: with no PATH the driver finds the assembler and linker beside itself. -nostartfiles:
  // no C runtime start files, whose initialiser and finaliser entries would hide the
  // candidate's (load_time_code refuses any).
  std::vector<std::string> argv = {compiler.string(), "-B" + compiler.parent_path().string() + "/",
                                   "-std=c++20", "-O2", "-fPIC", "-shared", "-nostartfiles",
                                   "-pipe", "-pthread", "-ffp-contract=off", "-w",
                                   "-I" + options.kjudge_include.string(),
                                   "-I" + (options.kjudge_include / "kjudge" / "compat").string()};
  // The host's own cooperative_groups.h and cooperative_groups/*.h, found before the toolkit's
  // (device code).
  argv.push_back("-I" + (options.kjudge_include / "kjudge" / "host" / "toolkit").string());
  if (!options.cuda_include.empty()) argv.push_back("-I" + options.cuda_include.string());
  for (const auto& d : host_include_dirs())
    argv.push_back("-I" + d.string());
  // The checked build: the sanitizer's instrumentation (a hook call per load and store) with
  // the hooks of cuda_emulation.hpp; compiled and linked apart, so the driver does not link
  // the sanitizer's own runtime.
  if (options.checked)
    argv.insert(argv.end(), {"-fsanitize=thread", "--param", "tsan-instrument-func-entry-exit=0",
                             "-g"});
  const bool coverage = options.coverage && !options.checked;
  if (coverage) append_coverage_flags(argv, code_name(file_name));
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-include", "kjudge/host/cuda_emulation.hpp"});
  std::vector<std::string> link = {"-nostartfiles"};
  for (const auto& d : host_library_dirs())
    link.insert(link.end(), {"-L" + d.string(), "-Wl,-rpath," + d.string()});
  link.push_back("-lboost_context");
  if (coverage) link.push_back("-lgcov"); // __gcov_info_to_gcda, which calls nothing at load

  std::string key_text = compiler_identity(compiler.string(), dir) + '\0';
  for (const auto& a : argv)
    key_text += a + '\0';
  for (const auto& a : link)
    key_text += a + '\0';
  // A module made without a defence (a test's) is never another build's.
  key_text += options.refuse_load_time_code ? "refused\0" : "unchecked\0";
  key_text += options.confine_compile ? "confined\0" : "open\0";
  // A module built before keep_own_names_apart is never reused.
  key_text += options.one_program ? "one program\0" : "two programs\0";
  key_text += options.nvrtc_compiles_the_same ? "compared with NVRTC's\0" : "not compared\0";
  // What the text compiled is made from: NVRTC's macros, the expressions and the source.
  for (const auto& [macro, value] : options.device_macros)
    key_text += macro + '=' + value + '\0';
  for (const std::string& name : options.nvrtc_lacks)
    key_text += "lacks " + name + '\0';
  for (const std::string& name : options.nvrtc_knows)
    key_text += "knows " + name + '\0';
  for (const auto& e : expressions)
    key_text += e + '\0';
  // kjudge's stand-ins for the headers a source includes (assert.h decides what assert does).
  std::vector<fs::path> compat;
  std::error_code listed;
  for (const auto& entry :
       fs::directory_iterator(options.kjudge_include / "kjudge" / "compat", listed))
    compat.push_back(entry.path());
  std::sort(compat.begin(), compat.end());
  for (const fs::path& h : compat)
    key_text += h.filename().string() + '=' + sha256_hex(read_file(h)) + '\0';
  // The rest of the emulation: cooperative_groups.hpp and the toolkit/ stand-ins for its names.
  std::vector<fs::path> host_headers;
  std::error_code unlisted;
  for (const auto& entry : fs::recursive_directory_iterator(
           options.kjudge_include / "kjudge" / "host", unlisted))
    if (entry.is_regular_file()) host_headers.push_back(entry.path());
  std::sort(host_headers.begin(), host_headers.end());
  for (const fs::path& h : host_headers)
    key_text += h.string() + '=' + sha256_hex(read_file(h)) + '\0';
  key_text += sha256_hex(emulation_text) + '\0' + std::string(file_name) + '\0' +
              std::string(source);
  const std::string key = sha256_hex(key_text);
  const fs::path so = dir / (key + ".so");
  if (fs::exists(so)) return so;

  // The text NVRTC compiled, as NVRTC's preprocessor saw it (no branch of the source is the
  // host's alone), with the candidate's own names kept apart from the host libraries'
  // (keep_own_names_apart): g++ compiles the program NVRTC compiled.
  std::string text;
  if (options.device_macros.empty()) {
    text = rewrite_for_host(source, file_name, expressions);
  } else if (!options.one_program) {
    text = rewrite_for_host(preprocess_as_nvrtc(source, file_name, options), file_name, expressions);
  } else {
    std::vector<fs::path> headers;
    const std::string seen = preprocess_as_nvrtc(source, file_name, options, &headers);
    if (options.nvrtc_compiles_the_same) options.nvrtc_compiles_the_same(seen);
    const auto known =
        nvrtc_names(options.cuda_include, headers, options.nvrtc_lacks, options.nvrtc_knows);
    text = rewrite_for_host(seen, file_name, expressions, &known);
  }

  // A unique name per process and call, renamed into place: concurrent checks never see half a
  // file.
  static std::atomic<unsigned> serial{0};
  const std::string stem = fmt::format("{}.{}.{}", key, ::getpid(), serial++);
  const fs::path cpp = dir / (stem + ".cpp"), tmp_so = dir / (stem + ".so"),
                 log = dir / (stem + ".log"), tmp_notes = dir / (stem + ".gcno");
  {
    std::ofstream f(cpp, std::ios::binary);
    // The C runtime's start files are not linked: __dso_handle is the handle they would give
    // the module's registered destructors, and kj_host_finalize (called before dlclose) their
    // __cxa_finalize at unload. Then the candidate's text, its messages naming its file and lines.
    f << "__attribute__((visibility(\"hidden\"))) void* __dso_handle = &__dso_handle;\n"
         "extern \"C\" void __cxa_finalize(void*);\n"
         "extern \"C\" void kj_host_finalize() { __cxa_finalize(&__dso_handle); }\n"
      << (coverage ? kCoverageEntry : "") << "#line 1 \"" << code_name(file_name) << "\"\n"
      << text;
  }
  const fs::path object = dir / (stem + ".o");
  std::error_code ec;
  auto remove_temporaries = [&] {
    for (const fs::path& p : {cpp, object, log, tmp_so, tmp_notes})
      fs::remove(p, ec);
  };
  // The notes' path is the build's own, outside the key.
  if (coverage) argv.push_back("-fprofile-note=" + tmp_notes.string());
  auto compile = [&](const std::vector<std::string>& args) {
    (void)run_host_tool(args, log, dir, options, file_name, "the host compiler refuses",
                        remove_temporaries);
  };
  if (options.checked) {
    std::vector<std::string> c = argv;
    c.insert(c.end(), {"-c", cpp.string(), "-o", object.string()});
    compile(c);
    // The sanitizer's instrumentation adds a constructor (calling the emulation's empty
    // __tsan_init): the checked build drops every initialiser section instead of refusing it,
    // while the plain build, always made too, refuses the candidate's own.
    std::error_code none;
    fs::path objcopy = compiler.parent_path() / "objcopy";
    if (!fs::exists(objcopy, none)) objcopy = resolve_program("objcopy");
    compile({objcopy.string(), "--remove-section=.init_array*", "--remove-section=.rela.init_array*",
             "--remove-section=.fini_array*", "--remove-section=.rela.fini_array*",
             "--remove-section=.ctors*", "--remove-section=.rela.ctors*",
             "--remove-section=.dtors*", "--remove-section=.rela.dtors*",
             "--remove-section=.preinit_array*", "--remove-section=.rela.preinit_array*",
             object.string()});
    std::vector<std::string> l = {compiler.string(), "-B" + compiler.parent_path().string() + "/",
                                  "-shared", "-pthread", object.string(), "-o", tmp_so.string()};
    l.insert(l.end(), link.begin(), link.end());
    compile(l);
  } else {
    std::vector<std::string> c = argv;
    c.insert(c.end(), {cpp.string(), "-o", tmp_so.string()});
    c.insert(c.end(), link.begin(), link.end());
    compile(c);
  }
  if (const std::string why = options.refuse_load_time_code ? load_time_code(tmp_so) : "";
      !why.empty()) {
    remove_temporaries();
    throw HostLoadTimeCode(fmt::format(
        "{} would run host code as it is loaded: {}", file_name, why));
  }
  // The notes first: a module in the cache always has its own beside it.
  if (coverage) fs::rename(tmp_notes, coverage_notes(so), ec);
  if (!ec) fs::rename(tmp_so, so, ec);
  for (const fs::path& p : {cpp, object, log})
    fs::remove(p, ec);
  if (ec) fs::remove(tmp_so, ec);
  return so;
}

std::unique_ptr<HostModule> compile_host_module(std::string_view source, std::string_view file_name,
                                                const std::vector<std::string>& expressions,
                                                const HostCompileOptions& options) {
  return std::make_unique<HostModule>(build_host_module(source, file_name, expressions, options));
}

} // namespace kj
