// Compiling CUDA C++ with NVRTC: candidates and references alike. Every launch plan's `kernel` is
// registered as a name expression; NVRTC's lowered (mangled) name is demangled to get the exact
// parameter types, which the judge checks against the plan's tensors and scalars. Includes are
// limited to the pinned toolkit headers on an allow-list. Results are cached on disk by content
// (docs/design.md "The backends": the key covers everything that can change the CUBIN). NVRTC needs
// no GPU, so all of this runs (and is tested) on any machine with the toolkit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kjudge/error.hpp"

namespace kj {

struct CompileOptions {
  int arch = 90;                        // sm_XX of the CUBIN and of the PTX
  bool arch_specific = false;           // sm_XXa: the architecture-specific features (wgmma,
                                        // setmaxnreg on sm_90a); the CUBIN then runs on that
                                        // exact compute capability only
  std::vector<std::string> options;     // extra NVRTC options, already checked against the
                                        // problem's allowed_options (e.g. "-use_fast_math");
                                        // passed and keyed in this order (callers that want
                                        // one cache entry per set pass them sorted)
  std::filesystem::path kjudge_include; // folder holding kjudge/device.cuh
  std::filesystem::path cache_dir;      // empty = no cache
  // kjudge's own kernels (not a candidate's or a problem's) compiled when kjudge was built: a
  // read-only folder of cache entries (precompiled_kernels_dir), looked in after cache_dir.
  std::filesystem::path precompiled_dir;
  std::uint64_t cache_cap_bytes = 1ull << 30;
  // header_set_hash(kjudge_include), when the caller has it already (a compile-only worker is a
  // fresh process, and the walk over the toolkit's headers is most of a cached compile's time);
  // empty: computed here.
  std::string header_set_hash;
};

struct KernelSymbol {
  std::string expression;               // as registered: "softmax_rows<4>"
  std::string lowered;                  // mangled name to look up in the module
  std::string demangled;                // "void softmax_rows<4>(float const*, float*, int, int)"
  std::vector<std::string> param_types; // "float const*", "float*", "int", "int"
  bool extern_c = false;                // C linkage: the lowered name is the plain name and
                                        // carries no types, so param_types is empty and the
                                        // caller reads the signature with kj::lex instead
};

struct CompiledModule {
  std::vector<char> cubin;
  std::string ptx;                   // kept for the static scan
  std::vector<KernelSymbol> kernels; // one per registered expression, same order
  std::string log;                   // warnings, trimmed
  std::string cache_key;             // hex SHA-256
  bool from_cache = false;
};

// The headers a source may include, besides kjudge/device.cuh: cuda_fp16.h, cuda_bf16.h,
// cuda_fp8.h, cooperative_groups.h (and cooperative_groups/*), mma.h, cuda/pipeline,
// cuda/barrier, cuda/ptx, cuda/atomic, cuda/std/* (libcu++), cub/*. The delimiter does not matter
// ("kjudge/device.cuh" and <kjudge/device.cuh> alike); `..` in a path never passes.
bool include_allowed(std::string_view header);
// The allow-list as text, for messages: "kjudge/device.cuh, cuda_fp16.h, ..., cub/...".
std::string allowed_includes_text();
// Throws CompileError naming the first #include off the allow-list, with its line. Computed
// includes (#include MACRO), #include_next, #import and the %: digraph are covered too.
// compile_module calls it; it is public so that validate can report it early.
void check_includes(std::string_view source, std::string_view file_name);

// Options kjudge sets itself or never passes (architecture, include paths, -std, -rdc, options
// that read or write files): a problem's allowed_options must not list them.
bool nvrtc_option_reserved(std::string_view option);

// The pinned toolkit include folders: `include` of the toolkit that holds the NVRTC library in
// use (found with dladdr), else of $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, the first that has
// cuda_fp16.h; then its `cccl` subfolder where present (CUDA 13 moved CUB and libcu++ there).
// Empty when none is found.
std::vector<std::filesystem::path> toolkit_include_dirs();

// Those of `names` NVRTC does not declare at global scope for these options (no `using ::name;`
// compiles): probes compiled until one compiles, each dropping the names its errors' lines
// give. The host backend keeps the candidate's names apart from these (keep_own_names_apart).
// Throws CompileError or InternalError as compile_module does.
std::set<std::string> nvrtc_undeclared_names(const std::vector<std::string>& names,
                                             const CompileOptions& options);

// The macros NVRTC predefines among `names` for these options, each with its expansion as
// text ("__CUDA_ARCH__" -> "900", "__cpp_if_constexpr" -> "201606L"): read from the PTX of a
// probe that stringifies each. The host backend preprocesses a candidate with exactly these.
// Throws CompileError or InternalError as compile_module does.
std::vector<std::pair<std::string, std::string>> nvrtc_predefined_macros(
    const std::vector<std::string>& names, const CompileOptions& options);

// Compile `source` (shown as `file_name` in messages) for the given name expressions: one
// NVRTC compile gives the CUBIN and the PTX; the same inputs give the same bytes in every
// process. check_includes runs first. With a cache_dir, a verified entry is returned instead
// (from_cache); failed compiles are not cached. Throws CompileError (the source's fault: a
// syntax error, a kernel that is not defined or not __global__, an include off the list, an
// invalid option of the caller's) or InternalError (NVRTC itself failed, an unsupported arch,
// no toolkit headers, a reserved option in `options`).
CompiledModule compile_module(std::string_view source, std::string_view file_name,
                              const std::vector<std::string>& name_expressions,
                              const CompileOptions& options);

// The module compile_module would return from its cache for these arguments, without running
// NVRTC (no compiler touches the source: safe in the oracle's process); nullopt when there is no
// cache, no verified entry, or compile_module would throw.
std::optional<CompiledModule> cached_module(std::string_view source, std::string_view file_name,
                                            const std::vector<std::string>& name_expressions,
                                            const CompileOptions& options);

// A digest of the code in `ptx`, without its line information (.loc, .file) and comments: two
// sources NVRTC compiles into the same program have the same digest, whatever their lines and
// columns (a macro's expansion written out moves them).
std::string ptx_code_digest(std::string_view ptx);

// The C++ name a lowered (Itanium-mangled, "_Z...") symbol stands for; nullopt for a name that
// is not mangled or does not demangle.
std::optional<std::string> demangle(std::string_view lowered);

// Split a demangled signature "void k<4>(float const*, int)" into its parameter types.
std::vector<std::string> demangled_param_types(std::string_view demangled);

// What the compile cache keys the headers a compile can see by: kjudge's own (by content) and
// the pinned toolkit's (by name, size and time); computed once per process and folder.
std::string header_set_hash(const std::filesystem::path& kjudge_include);

// "13.0" style version of the NVRTC library in use.
std::string nvrtc_version();

} // namespace kj
