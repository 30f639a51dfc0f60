// The host backend (docs/design.md "The backends"): a CUDA C++ source run on the CPU. The source is
// rewritten by the lexer (every `__shared__` declaration becomes per-block storage; constructs
// the CPU cannot run are refused with their place), compiled by the host compiler against
// kjudge/host/cuda_emulation.hpp into a shared object that holds the whole runtime (threads of
// a block as fibers, blocks over CPU threads), and loaded with dlopen. Launches take the
// arguments as cuLaunchKernel does: an array of pointers to each argument's value.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kjudge/error.hpp"

namespace kj {

// A construct the host backend cannot run: "unsupported on host backend: inline PTX (asm) at
// cand.cu:12". Never a wrong verdict: the caller reports it as such.
class UnsupportedOnHost : public ErrorOfKind<ErrorKind::unsupported> {
  using ErrorOfKind::ErrorOfKind;
};

// The source as the host compiler compiles it: each `__shared__` declaration replaced, on its
// own line, by a reference to per-block storage (so line numbers stay the source's), and, at
// the end, one entry per name expression plus the `kj_host_launch` the loader calls. Throws
// UnsupportedOnHost for inline PTX, tensor-core instructions, grid-wide synchronisation,
// cooperative groups and CUB, the compilers' own spellings (__PRETTY_FUNCTION__), and for a
// `__shared__` declaration it cannot read. With `nvrtc_known` (nvrtc_names), the source's own
// names and the expressions' are first kept apart from the host's (keep_own_names_apart).
std::string rewrite_for_host(std::string_view source, std::string_view file_name,
                             const std::vector<std::string>& expressions,
                             const std::set<std::string, std::less<>>* nvrtc_known = nullptr);

// The names NVRTC gives a source without its declaring them: the language's words, the
// identifiers of the toolkit's device headers it provides with no #include (crt/, sm_*,
// device_*, vector_*, ...) and of `headers` (those the source's preprocessing entered), less
// `nvrtc_lacks`. Read from the headers' text,
// the identifiers include words NVRTC does not declare (a parameter's name, a host-only
// declaration's); those the host's C library also has are what `nvrtc_lacks` takes back out
// (host_library_names, then nvrtc_undeclared_names: `time`, `random`, `error`); `nvrtc_knows`
// adds what NVRTC was found to define beyond its files (the macros of its builtin header).
std::set<std::string, std::less<>> nvrtc_names(const std::filesystem::path& cuda_include,
                                               const std::vector<std::filesystem::path>& headers,
                                               const std::set<std::string>& nvrtc_lacks = {},
                                               const std::set<std::string>& nvrtc_knows = {});

// The identifiers of `source` (its code and its directives) outside `known`: what to ask NVRTC
// about (its macros: INFINITY is defined in NVRTC's builtin header, in no file of the toolkit).
std::vector<std::string> words_outside(std::string_view source,
                                       const std::set<std::string, std::less<>>& known);

// Those of `names` the C and C++ libraries loaded in this process define (dlsym finds them).
std::vector<std::string> host_library_names(const std::set<std::string, std::less<>>& names);

// `text` (the candidate's lines as preprocess_as_nvrtc gives them) with every identifier outside
// `nvrtc_known`, and the host's own namespaces (std, kjh, boost, ...) wherever a toolkit header
// mentions them, given the prefix `kjc_`: the candidate's own names, which then never meet a
// name of the C or C++ library's headers the host compiler also reads (an overload g++ alone
// sees, a function argument-dependent lookup finds only there). `cuda::std` keeps its name.
std::string keep_own_names_apart(std::string_view text,
                                 const std::set<std::string, std::less<>>& nvrtc_known);

// A message of the host compiler's about the kept-apart text, with the candidate's own names.
std::string with_own_names_restored(std::string_view text);

// The candidate's host build ran past its deadline or its memory cap: the candidate's
// compile_error, naming the limit.
class HostCompileLimit : public ErrorOfKind<ErrorKind::candidate> {
  using ErrorOfKind::ErrorOfKind;
};

// A shared object that would run code of the source's as it is loaded, before the worker's
// confinement could matter: a static constructor or destructor, an initialiser array, an ifunc
// resolver. The candidate's forbidden_construct.
class HostLoadTimeCode : public ErrorOfKind<ErrorKind::candidate> {
  using ErrorOfKind::ErrorOfKind;
};

struct HostCompileOptions {
  std::filesystem::path kjudge_include; // folder holding kjudge/ (device.cuh, host/)
  std::filesystem::path cuda_include;   // the toolkit's include folder (cuda_fp16.h, ...)
  std::filesystem::path cache_dir;      // where sources and shared objects go; required
  std::string compiler = "g++";
  std::vector<std::string> flags;       // extra flags, after kjudge's own
  // The checked build: every load and store of the kernel calls a hook over kjudge's shadow
  // memory (cuda_emulation.hpp, "the checked build"), which finds races (accesses no barrier or
  // atomic orders) and exact out-of-bounds accesses. Built with the compiler's ThreadSanitizer
  // instrumentation and -g, without the sanitizer's runtime; several times slower.
  bool checked = false;
  // The plain build with the compiler's coverage instrumentation on the source's own lines
  // (gcov's arc counters, kept in a section rather than registered at load): the module's
  // kj_host_coverage hands the counters out, read_line_coverage names the lines that ran.
  bool coverage = false;
  // NVRTC's predefined macros with their expansions (nvrtc_predefined_macros): when given, the
  // source is first preprocessed with exactly these and none of the host compiler's, so its
  // conditionals take the branches NVRTC took (preprocess_as_nvrtc).
  std::vector<std::pair<std::string, std::string>> device_macros;
  // The compile's limits (a HostCompileLimit past either).
  double deadline_s = 60;
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;
  // Off only in the tests that show what each defence stops: the compile's confinement (an
  // empty environment and Landlock) and the refusal of code that runs at load.
  bool confine_compile = true;
  bool refuse_load_time_code = true;
  // The host compiles the program NVRTC compiled (the `one_program` defence): the preprocessor's
  // names it answers otherwise refused or undefined, the compilers' own spellings refused, the
  // candidate's names kept apart from the host libraries' (keep_own_names_apart).
  bool one_program = true;
  // The names of the host's C library that nvrtc_names reads from the toolkit's headers though
  // NVRTC does not declare them (nvrtc_undeclared_names); kept apart too.
  std::set<std::string> nvrtc_lacks;
  // The source's words NVRTC defines as macros in its builtin header alone (INFINITY): NVRTC's.
  std::set<std::string> nvrtc_knows;
  // The text the host would compile, as preprocess_as_nvrtc made it, handed over before it is
  // built (one_program): it must be the program NVRTC compiled. The caller compiles it with
  // NVRTC and compares the module with the candidate's; throws UnsupportedOnHost where they
  // differ. Empty: not asked.
  std::function<void(const std::string& text)> nvrtc_compiles_the_same;
};

// The names of the macros the host compiler predefines for a C++ source (g++ -dM), and those
// NVRTC is known to predefine: what nvrtc_predefined_macros is asked about.
std::vector<std::string> predefined_macro_names(const HostCompileOptions& options);

// The source as NVRTC's preprocessor sees it, line for line: its conditionals decided and its
// macros expanded with `options.device_macros` alone (g++ -E -undef -nostdinc, the allow-listed
// headers read as NVRTC reads them), each of its #include lines left for the host build to
// include under the host's macros. Throws UnsupportedOnHost for a directive a macro made or a
// header outside the include folders, CompileError or HostCompileLimit as the compile does.
// `entered`, when given, receives every header file the preprocessing read.
std::string preprocess_as_nvrtc(std::string_view source, std::string_view file_name,
                                const HostCompileOptions& options,
                                std::vector<std::filesystem::path>* entered = nullptr);

// Whether preprocess_as_nvrtc's `preprocessed` text is `source` token for token: the source has
// no directive but #include and #pragma, includes the same headers, and no macro expanded in its
// lines. Then neither preprocessor decided anything, and NVRTC need not be asked whether the
// text is its program (HostCompileOptions::nvrtc_compiles_the_same).
bool preprocessing_kept_the_tokens(std::string_view source, std::string_view preprocessed);

// The folders the host compiler and the loader find Boost.Context in: those of kjudge's own
// build, then CPLUS_INCLUDE_PATH and LIBRARY_PATH of kjudge's environment (the compile gets an
// empty one, so they reach it as -I and -L).
std::vector<std::filesystem::path> host_include_dirs();
std::vector<std::filesystem::path> host_library_dirs();
// The libraries a module links beyond the C and C++ runtime (Boost.Context), for the worker to
// load before its confinement.
std::vector<std::filesystem::path> host_module_libraries();
// Why the shared object would run code as it is loaded (its dynamic section has an initialiser
// or finaliser, its relocations an ifunc), or "" when it would not.
std::string load_time_code(const std::filesystem::path& shared_object);

// A failed device assert on the host, as the emulation caught it: the candidate's own text
// (the condition, the file its #line named), which a message shows only quoted
// (kjudge/candidate_text.hpp).
struct HostAssertion {
  bool caught = false; // the launch failed by an assertion, read into the fields below
  std::string condition, file;
  unsigned line = 0;
  unsigned block[3] = {0, 0, 0}, thread[3] = {0, 0, 0};
};

// A loaded shared object made from one source.
class HostModule {
public:
  explicit HostModule(const std::filesystem::path& shared_object);
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  // The kernels in the order of the expressions given to rewrite_for_host.
  int kernel_count() const;
  // A checked build: launches are checked against shadow memory for the ranges given to track.
  bool checked() const { return track_ != nullptr; }
  // Checked build: before the next launches, track [lo, lo + bytes), where only `spans` (pairs
  // of offset from lo and length) may be touched; reports give offsets from `origin`. `races`
  // off leaves the bounds checks alone. "" or what went wrong.
  std::string track(const void* lo, std::size_t bytes, const void* origin,
                    const std::vector<unsigned long>& spans, bool races) const;
  // Runs kernel `index` over the grid with `workers` CPU threads. Returns "" on success, else
  // what went wrong (an exception in a kernel thread, threads of a block at different barriers,
  // __trap). A failed device assert returns "device assertion failed" and fills `assertion`.
  std::string launch(int index, const unsigned grid[3], const unsigned block[3],
                     unsigned shared_bytes, void** args, unsigned workers,
                     HostAssertion* assertion = nullptr) const;
  // The CPU time of the last launch, summed over the CPU threads that ran its blocks.
  double last_launch_cpu_ms() const;
  // A coverage build's counters since it was loaded, in gcov's data-file form (at most
  // `capacity` bytes; nullopt for a build without coverage or counters that do not fit).
  std::optional<std::vector<std::byte>> coverage(std::size_t capacity) const;

private:
  void* handle_ = nullptr;
  int (*count_)() = nullptr;
  int (*launch_)(int, const unsigned*, const unsigned*, unsigned, void**, unsigned,
                 void (*)(unsigned, void (*)(void*), void*), char*, unsigned long) = nullptr;
  int (*track_)(const void*, unsigned long, const void*, const unsigned long*, unsigned, int) = nullptr;
  unsigned long long (*cpu_ns_)() = nullptr;
  unsigned long (*coverage_)(unsigned char*, unsigned long) = nullptr;
};

// Rewrite and compile, or find in the cache (the key covers the rewritten text, the compiler's
// version line, the flags and the emulation header); the shared object's path. Throws
// UnsupportedOnHost, HostCompileLimit, HostLoadTimeCode, or CompileError (kjudge/error.hpp) with
// the compiler's log when the host compiler refuses it.
std::filesystem::path build_host_module(std::string_view source, std::string_view file_name,
                                        const std::vector<std::string>& expressions,
                                        const HostCompileOptions& options);
// build_host_module, then load it here.
std::unique_ptr<HostModule> compile_host_module(std::string_view source, std::string_view file_name,
                                                const std::vector<std::string>& expressions,
                                                const HostCompileOptions& options);

// Which lines of the source a coverage build ran: `lines` holds every line with code, `unrun`
// those of them no run reached (both ascending).
struct LineCoverage {
  std::vector<unsigned> lines, unrun;
};
// The counters HostModule::coverage handed out, read against the notes the coverage build of
// `shared_object` left beside it (`<key>.gcno`), by the compiler's gcov run confined as a build
// step; the lines of `file_name` only. nullopt with `why` set when they cannot be read (the
// counters are the candidate's memory: malformed ones are no finding, only no coverage).
std::optional<LineCoverage> read_line_coverage(const std::filesystem::path& shared_object,
                                               std::span<const std::byte> counters,
                                               std::string_view file_name,
                                               const HostCompileOptions& options, std::string& why);

// One access a checked build reports.
struct ShadowAccess {
  std::string kind;          // "read", "write", "atomic read", "atomic write"
  std::uint64_t pc = 0;      // its code address, from the module's start
  std::string place;         // "cand.cu:16" once place_finding found it, else ""
  std::string block, thread; // "block (1,0,0)", "thread (3,0,0)"
  // "read at cand.cu:16 by block (1,0,0) thread (3,0,0)"
  std::string described() const;
};

// What a checked build found (a race, or an access outside every buffer): the one line its
// hooks write to stderr before the process ends with status 66, read back.
struct ShadowFinding {
  bool race = false;              // else out of bounds
  bool shared = false;            // in the block's shared memory, else in the arena
  std::int64_t offset = 0;        // from the arena's start, or from the block's shared memory
  std::uint64_t size = 0;         // bytes of the access
  std::uint64_t shared_bytes = 0; // the block's shared memory in use
  ShadowAccess current, previous; // previous: races only

  // `where`: the bytes, as the caller who knows the buffers names them ("of output 'y' (byte
  // 68)", "4 bytes past the end of input 'x' (80044 bytes)").
  // "data race on 4 bytes <where>: a write at cand.cu:16 by block (0,0,0) thread (1,0,0), and an
  // earlier read at cand.cu:16 by block (0,0,0) thread (0,0,0), with no barrier or atomic between
  // them"; "out-of-bounds read of 4 bytes, <where>, at cand.cu:12 by block (3,0,0) thread (5,0,0)"
  std::string message(std::string_view where) const;
  // `where` for shared memory.
  std::string shared_where() const;
};

// The finding in a checked build's stderr; nullopt when there is none (or only part of one).
std::optional<ShadowFinding> parse_shadow_finding(std::string_view log);
// Fills in the places of the finding's accesses from the module's debug information (addr2line;
// the innermost inlined frame in `file_name`); left empty where that is not possible.
void place_finding(ShadowFinding& finding, const std::filesystem::path& shared_object,
                   std::string_view file_name);
// "race.cu:16" from a line naming ".../race.cu:16" (the compiler may have recorded any folder in
// front of the candidate's file name); empty when the line names another file.
std::string place_in_frame(const std::string& frame, std::string_view file_name);

// ---- the host worker's confinement (sandbox.cpp) ---------------------------------------------

// kjudge's CPU threads that run a launch's blocks, one set per process, started on first use or
// by start_block_threads: the host worker starts them before its filter refuses new threads.
void start_block_threads(unsigned count);
// Runs work(context) on `count` of them at once (on the calling thread when count <= 1) and
// returns when every one has returned. One launch at a time per process.
void run_on_block_threads(unsigned count, void (*work)(void*), void* context);

struct HostSandbox {
  std::vector<std::filesystem::path> readable; // the module cache, the libraries' folders
  std::vector<std::filesystem::path> preload;  // libraries the modules need, loaded first
  unsigned block_threads = 1;
};
// The host worker's sandbox: `readable` (the module cache) and the libraries' folders to read,
// the libraries modules link loaded first, `block_threads` threads.
HostSandbox host_worker_sandbox(std::vector<std::filesystem::path> readable, unsigned block_threads);
// Confines the calling process for good, single-threaded, before any of the candidate's code is
// loaded: its own user namespace, Landlock (only `readable`, to read), no capabilities, the
// block threads, then a seccomp allow-list for every thread that still lets files be opened to
// read (for dlopen). "" when every mechanism is in force (confinement_gaps), else the missing
// one and why: the host backend then refuses to run.
std::string confine_host_worker(const HostSandbox& sandbox);
// Once the module is loaded: the allow-list without opening files.
void seal_host_worker();
// What the confinement must refuse, tried: "" when it all is, else the first gap ("Landlock:
// /proc/self/status is readable").
std::string confinement_gaps();

// ---- the Python worker's confinement (kjudge.kernelbench's candidate process) -----------------

struct PythonSandbox {
  std::vector<std::filesystem::path> readable; // to read and execute: the toolchain, Python, torch
  std::vector<std::filesystem::path> writable; // every right: the build folder, the GPU's devices
  std::uint64_t memory_bytes = 0;              // RLIMIT_DATA of it and what it starts (0: none)
  std::uint64_t shm_bytes = 64ull << 20;       // the size of its private /dev/shm
};
// Confines the calling process for good; it must be single-threaded (before torch is imported):
// user, network, mount and PID namespaces of its own (no network; a /dev/shm of its own, gone
// with it; every process it starts dies with it, setsid or not), Landlock over the two lists
// (nothing else of the file system; no signal or abstract socket leaves it where the kernel has
// ABI 6), a cap on its data memory, no capabilities, and a seccomp filter refusing signals to
// other processes, ptrace, process_vm access and clearing the parent-death signal.
//
// The PID namespace takes a fork: the calling process stays outside, waits for the child (the
// namespace's first process, which returns from here and goes on) and ends as it ended; when
// the judge that started it is gone, or it is killed, the child is killed and with it the whole
// namespace. So the caller's pid (the judge's handle) stands for everything the worker runs.
// "" when all is in force (the parent's memory and signals tried), else the missing mechanism
// and why (then no fork was made).
std::string confine_python_worker(const PythonSandbox& sandbox);

} // namespace kj
