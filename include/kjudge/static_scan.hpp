// The static scan (docs/design.md "Defences"): what a candidate must not do, found in the PTX that
// NVRTC made of it, so that a macro, a helper or inline PTX cannot hide it: reading a clock
// (%clock, %clock_hi, %clock64, %globaltimer*, the performance counters %pm*), the SM's id
// (%smid) or what tells one launch or scheduling from another (%gridid, %nsmid, %warpid,
// %current_graph_exec); calling the device heap, printf or a device-side launch; and writing (a
// store, an atomic) to a __device__ variable, the state that outlives a launch and lets a kernel
// replay an earlier answer. Since a write through a pointer that came back from memory or a
// call cannot be traced to its variable, a variable's address may only be read through: taking
// it for anything else (storing it anywhere, passing it to a function, comparing it, computing
// on it beyond adding an offset), or putting it in another variable's initializer, is a finding
// too. Reads of __device__ and __constant__ variables, through computed indices too, are not.
// A problem's `forbid` adds names: an identifier is looked for in the source's code (not its
// comments or strings), a `%register` and a `ptx:opcode` in the PTX; `!%register` allows one of
// the special registers above, for a problem that needs it. Compiles carry -lineinfo, so a PTX
// finding has its source line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj {

struct ScanFinding {
  std::string what;     // "reads %globaltimer", "stores to the __device__ variable g_n",
                        // "takes the address of the __device__ variable g_n", ...
  std::string why;      // "a clock", "state kept between launches", "the problem forbids it"
  std::string file;     // the source file of the line ("" when the PTX gives none)
  int line = 0;         // 1-based; 0 when unknown (a module-scope declaration's finding)
  std::string function; // the PTX function (mangled) it is in; "" for a source finding or a
                        // module-scope declaration's
};

// The findings in a module's PTX, in PTX order, one per construct and line.
std::vector<ScanFinding> scan_ptx(std::string_view ptx, const std::vector<std::string>& forbid);

// The problem's forbidden identifiers in the source's code tokens and directive lines.
std::vector<ScanFinding> scan_source(std::string_view source, std::string_view file_name,
                                     const std::vector<std::string>& forbid);

// Both scans, as the message of a forbidden_construct verdict (the first few findings, with
// their lines); nullopt when there is nothing.
std::optional<std::string> forbidden_constructs(std::string_view source, std::string_view file_name,
                                                std::string_view ptx,
                                                const std::vector<std::string>& forbid);

// The "last block done" hand-off without its fence, as a race (nondeterministic): in one
// kernel's PTX, in text order, a store to global memory, then an atomic whose result is used
// (`atom`, not `red`) with no gpu- or system-scope fence (`__threadfence()`, a release atomic)
// between them, then a plain load from global memory. Nothing then orders the store before
// the atomic for the block that reads after seeing its result, so the reader may see stale
// data; the GPU rarely shows it, which is why it is found here. One message naming the three
// lines, or nullopt.
std::optional<std::string> unfenced_handoff(std::string_view ptx, std::string_view file_name);

} // namespace kj
