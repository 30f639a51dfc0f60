// The messages of the oracle/worker protocol as C++ values, with their JSON forms. The oracle
// builds every request (it alone knows the problem); the worker only allocates, copies, fills,
// launches and hands back handles, so its replies carry no judgement the oracle would have to
// trust. Message list (docs/cli.md "kjudge check" has the prose version):
//
//   worker -> oracle, once at start   {"ready": true, "pid", "device", "cc"}
//                                     or {"error": "internal", "message"} and exit
//   {"op": "load", ...ModuleMessage}  -> {"ok": true, "kernels": [...], "log", "from_cache"}
//                                        or {"error": "compile_error", "message"} (the
//                                        driver refuses the CUBIN)
//
// The compile-only worker (`kjudge --worker --compile-only`), one request per process:
//   worker -> oracle, once at start   {"ready": true, "pid", "compiler": true}
//   {"op": "compile", ...CompileRequest} -> {"ok": true, ...ModuleMessage}
//                                        or {"error": "compile_error", "message", "log"}
//   {"op": "run", ...RunRequest}      -> {"ok": true, "buffers": [...], "elapsed_ms"}
//                                        or {"error": "launch_error" | "crash" |
//                                            "out_of_memory" | "internal", "message", ...}
//   {"op": "time", ...TimeRequest}    -> {"ok": true, "ms": [...], "blocks_per_sm": [...]}
//                                        or the errors of "run" (bench's timed runs)
//   {"op": "release"}                 -> {"ok": true} (buffers of the last run freed)
//   {"op": "exit"}                    -> the worker exits 0 without replying
//
// The host worker (`kjudge --worker --host`) takes the same "run" with each buffer's
// "arena_offset" in the shared arena it was started with and the arena's "arena_bytes"; its
// reply is {"ok": true, "elapsed_ms", "cpu_ms"} (wall time, and CPU time over the launches'
// threads): the oracle reads the arena itself. Its "load" is
//   {"op": "load", "shared_object", "lowered": [...], "check_races"} -> {"ok": true, "kernels": N}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/cuda.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj::judge {

enum class BufferRole { input, output, scratch };
std::string_view role_name(BufferRole role);
BufferRole parse_role(std::string_view name); // throws ProtocolError

// How the worker initialises an output or scratch buffer before the launches.
struct Fill {
  // initial: an in-out tensor's initial values, copied like an input's (source_ipc/source_ptr).
  enum class Kind { none, zero, pattern, initial };
  Kind kind = Kind::none;
  std::uint32_t pattern = 0; // repeated 32-bit word, little-endian in memory
};

struct BufferRequest {
  std::string name;
  BufferRole role = BufferRole::output;
  std::uint64_t bytes = 0;
  // Inputs and in-out outputs (Fill::Kind::initial): where the worker copies the contents
  // from. A CUDA IPC handle (hex) of the oracle's staging copy, or, only when the worker runs
  // inside the oracle (the isolation test switch), a device pointer of the same context.
  std::string source_ipc;
  std::uint64_t source_ptr = 0;
  Fill fill; // outputs and scratch
  // Host backend: where the buffer's red zone starts in the shared arena; the oracle has
  // already written the contents, the fills and the red zones there.
  std::uint64_t arena_offset = 0;
};

struct ArgRequest {
  enum class Kind { buffer, value };
  Kind kind = Kind::value;
  std::string buffer;           // Kind::buffer: the name of a BufferRequest
  std::vector<std::byte> bytes; // Kind::value: the parameter's bytes, exactly its size
};

struct LaunchRequest {
  std::string lowered; // the kernel's mangled name in the loaded module
  std::string label;   // "launch[1] 'finish' (i = 3)", for messages
  LaunchDims dims;
  std::vector<ArgRequest> args;
};

struct RunRequest {
  std::string case_id;
  std::vector<BufferRequest> buffers;
  std::vector<LaunchRequest> launches;
  std::uint64_t redzone_bytes = 0; // before and after every buffer
  std::uint8_t redzone_byte = 0;   // the red zones' fill
  std::uint64_t arena_bytes = 0;   // host backend: the shared arena's size for this run
  // CUDA: the worker keeps up to kBufferSets sets of buffers between runs, and this run uses
  // set `buffer_set`. Prepared: the set holds these buffers (the same names, sizes and red
  // zones) from an earlier run, and the oracle has already written their contents, fills and
  // red zones through its mappings of them: the worker launches only (and refuses when the set
  // differs). Not prepared: the set's buffers are freed and made afresh. `release`: sets freed
  // first (the oracle keeps the memory held within its budget).
  bool prepared = false;
  int buffer_set = 0;
  std::vector<int> release;
};
// Whether `held` (anything with a name and a byte count: the worker's allocations, the
// oracle's mappings of them, a reply's handles) are exactly the buffers `r` names, in order.
template <class Held>
bool names_the_buffers(const RunRequest& r, const std::vector<Held>& held) {
  if (held.size() != r.buffers.size()) return false;
  for (std::size_t k = 0; k < held.size(); ++k)
    if (held[k].name != r.buffers[k].name || held[k].bytes != r.buffers[k].bytes) return false;
  return true;
}

// Buffer sets a CUDA worker keeps: a check's cases come in a few shapes, and a run on a kept
// set needs no allocation, IPC export or mapping (each a call into the driver, slow while
// another process starts a context). The bench rotates its input sets over as many.
constexpr int kBufferSets = 8;

struct BufferHandle {
  std::string name;
  std::string ipc;       // hex CUDA IPC handle of the whole allocation (red zones included)
  std::uint64_t ptr = 0; // in-process worker only: the allocation's device pointer
  std::uint64_t redzone_bytes = 0;
  std::uint64_t bytes = 0; // the inner size, as requested
};

struct RunReply {
  std::vector<BufferHandle> buffers;
  double elapsed_ms = 0; // host wall time of the launches and the synchronisation
};

// "time" (bench on the GPU): the launches run once on each of `sets` in turn, sets the oracle
// has prepared through its mappings (inputs, poison, red zones), each run after an L2 flush (a
// write of `flush_bytes` to the worker's own buffer) and timed between two CUDA events. The
// oracle then reads every set's red zones, inputs and outputs as after a "run".
struct TimeRequest {
  std::vector<int> sets;
  std::vector<LaunchRequest> launches; // buffer arguments name each set's buffers
  std::uint64_t flush_bytes = 0;
};

struct TimeReply {
  std::vector<double> ms;         // per set, in the request's order
  std::vector<int> blocks_per_sm; // per launch: the blocks an SM can hold (occupancy)
};

// "compile", to the compile-only worker (`kjudge --worker --compile-only`): NVRTC runs in a
// process of its own, with no CUDA context and under a memory cap, so a source that makes the
// compiler explode costs that process only.
struct CompileRequest {
  std::string source;
  std::string file_name;
  std::vector<std::string> expressions;
  std::vector<std::string> options;
  std::string cache_dir;      // empty: no cache
  std::string kjudge_include; // folder holding kjudge/device.cuh; empty: the default
  int arch = 90;
  bool arch_specific = false;
  std::string header_set_hash; // the oracle's (CompileOptions::header_set_hash); empty: none
  std::vector<std::string> forbid; // the problem's, for the static scan (kjudge/static_scan.hpp)
};

// The compile options a request asks for.
CompileOptions compile_options(const CompileRequest& request);

// The compiled module as the compile-only worker replies it and the CUDA worker's "load"
// receives it: the CUBIN and the kernels' symbols (the CUDA worker never sees the source).
struct ModuleMessage {
  std::vector<char> cubin;
  std::vector<KernelSymbol> kernels; // one per expression, same order
  std::string log;
  bool from_cache = false;
  // The compile worker's static scan of the PTX (forbidden_constructs); none when it is clean.
  std::optional<std::string> forbidden;
  // Its unfenced "last block done" hand-off (unfenced_handoff): a race, FAIL(nondeterministic).
  std::optional<std::string> unfenced;
  // ptx_code_digest of its PTX: the host build's text must compile to the same (one_program).
  std::string code_digest;
};

struct KernelInfo {
  std::string expression, lowered, demangled;
  std::vector<std::string> param_types; // from the demangled name; empty for extern "C"
  std::vector<std::size_t> param_sizes; // cuFuncGetParamInfo; empty when unavailable
  int registers = 0, static_shared = 0, local_bytes = 0, max_threads = 0;
};

// What the oracle and the worker both learn of a loaded kernel: NVRTC's reading of its name and
// parameters, and the driver's attributes.
KernelInfo kernel_info(const KernelSymbol& symbol, const KernelAttributes& attributes);

// The first `lines` lines of a (compiler) log, for messages that must stay short.
std::string first_lines(const std::string& text, int lines);

struct LoadReply {
  std::vector<KernelInfo> kernels; // one per expression, same order
  std::string log;
  bool from_cache = false;
};

// A failure reply: the worker's reading of what happened, mapped to a verdict by the oracle.
struct ErrorReply {
  std::string error; // "compile_error", "launch_error", "crash", "out_of_memory", "internal"
  std::string message;
  std::string log;    // compile_error: NVRTC's log
  std::string buffer; // out_of_memory: the buffer that did not fit
};

nlohmann::json to_json(const CompileRequest& r);
// A module as a "load" request (op = "load") or as the compile reply (op empty: {"ok": true}).
nlohmann::json to_json(const ModuleMessage& m, std::string_view op);
nlohmann::json to_json(const RunRequest& r);
nlohmann::json to_json(const LoadReply& r);
nlohmann::json to_json(const RunReply& r);
nlohmann::json to_json(const ErrorReply& r);
nlohmann::json to_json(const TimeRequest& r);
nlohmann::json to_json(const TimeReply& r);
// An error reply from its parts: {"error", "message"} (and "log" when not empty).
nlohmann::json error_json(std::string error, std::string message, std::string log = {});

// The inverses; they throw ProtocolError naming the field on a malformed message.
CompileRequest compile_request_from_json(const nlohmann::json& j);
ModuleMessage module_message_from_json(const nlohmann::json& j);
RunRequest run_request_from_json(const nlohmann::json& j);
LoadReply load_reply_from_json(const nlohmann::json& j);
RunReply run_reply_from_json(const nlohmann::json& j);
TimeRequest time_request_from_json(const nlohmann::json& j);
TimeReply time_reply_from_json(const nlohmann::json& j);
// nullopt when `j` is not an error reply ({"error": ...}).
std::optional<ErrorReply> error_reply_from_json(const nlohmann::json& j);

} // namespace kj::judge
