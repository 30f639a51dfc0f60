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
//
// This file holds the compile itself; the include allow-list and the toolkit's folders are in
// nvrtc_includes.cpp, the reading of NVRTC's log and the kernel names for messages in
// nvrtc_log.cpp.
#include "kjudge/nvrtc.hpp"

#include <cxxabi.h>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "backend/cuda/compile_cache.hpp"
#include "backend/cuda/nvrtc_internal.hpp"
#include "kjudge/error.hpp"
#include "kjudge/sha256.hpp"
#include "kjudge/spec.hpp"

namespace kj {

namespace fs = std::filesystem;
using detail::base_name;
using detail::defined_kernels;
using detail::failed_name_expression;
using detail::first_error_message;
using detail::kernels_list;
using detail::trim;
using detail::trim_log;

namespace {

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

} // namespace

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
  if (!options.kjudge_include.empty()) {
    plan.argv.push_back("--include-path=" + options.kjudge_include.string());
    // cuda_runtime.h, cuda.h, assert.h and cassert: kjudge's stand-ins, before the toolkit's.
    plan.argv.push_back("--include-path=" + (options.kjudge_include / "kjudge" / "compat").string());
    plan.argv.push_back("--pre-include=kjudge/prelude.cuh");
  }
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


std::string ptx_code_digest(std::string_view ptx) {
  std::string code;
  code.reserve(ptx.size());
  while (!ptx.empty()) {
    const std::size_t end = std::min(ptx.find('\n'), ptx.size());
    std::string_view line = ptx.substr(0, end);
    ptx.remove_prefix(std::min(end + 1, ptx.size()));
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    if (line.starts_with(".loc") || line.starts_with(".file") || line.starts_with("//")) continue;
    code.append(line).push_back('\n');
  }
  return sha256_hex(code);
}

std::set<std::string> nvrtc_undeclared_names(const std::vector<std::string>& names,
                                             const CompileOptions& options) {
  std::set<std::string> undeclared;
  std::vector<std::string> left = names;
  while (!left.empty()) {
    std::string probe;
    for (std::size_t i = 0; i < left.size(); ++i)
      probe += fmt::format("namespace kj_name_{} {{ using ::{}; }}\n", i, left[i]);
    std::set<std::size_t> refused; // the probe's lines NVRTC refused, from 1
    try {
      (void)compile_module(probe, "kjudge_names.cu", {}, options);
      return undeclared;
    } catch (const CompileError& e) {
      // "kjudge_names.cu(12): error: ..."
      const std::string& log = e.log();
      for (std::size_t at = log.find("kjudge_names.cu("); at != std::string::npos;
           at = log.find("kjudge_names.cu(", at + 1)) {
        const std::size_t digits = at + 16, close = log.find(')', digits);
        if (close == std::string::npos || log.compare(close, 9, "): error:") != 0) continue;
        refused.insert(std::stoul(log.substr(digits, close - digits)));
      }
      if (refused.empty()) throw;
    }
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < left.size(); ++i) {
      if (refused.count(i + 1) != 0) undeclared.insert(left[i]);
      else kept.push_back(left[i]);
    }
    left = std::move(kept);
  }
  return undeclared;
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
