// The defences' constants and the small rules built on them: the deadline of a run (and the host
// backend's wall-clock backstop of it), the poison patterns of the two runs of a case, the red
// zones, and the test switches that turn defences off (kjudge/test_switches.hpp). Kept apart
// from the oracle so the unit tests pin each rule without a GPU.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "kjudge/tensor.hpp"

namespace kj::judge {

// Red zone before and after every worker buffer. A multiple of 256 keeps the tensor at the
// alignment cuMemAlloc gives; 64 KiB catches a whole row written past the end of a matrix with
// rows of up to 16K floats.
inline constexpr std::uint64_t kRedzoneBytes = 64 * 1024;
// The red zones' byte per run: a stray write that happens to store one of them in one run will
// not in the other.
std::uint8_t redzone_byte(int run);

// The poison of output and scratch buffers in run 0 and run 1 of a case, as a 32-bit word
// repeated from the buffer start. Both are NaN in every float dtype (so a poisoned element left
// unwritten fails the non-finite rules even when only one run happens), and the element values
// of the two differ for every dtype (0xFF.. vs 0x7F.. per byte; 0xFFFF vs 0x7FFF per 16 bits;
// ...), so an element equal to its run's poison in both runs was never written: a kernel that
// writes it writes the same value both times.
//   run 0: 0xFFFFFFFF    run 1: 0x7F7F7F7F for 1-byte dtypes, 0x7FFF7FFF otherwise
std::uint32_t poison_pattern(int run, DType dtype);

// Fill host memory with a repeated 32-bit word (little-endian), the tail bytes as the same word
// would have them: the host backend's poison, as the device's fill writes it.
void fill_pattern(std::span<std::byte> bytes, std::uint32_t pattern);

// Bytes that differ between `now` and `was` (same length): a host copy of an input against its
// master, the host backend's input check.
std::uint64_t count_changed_bytes(std::span<const std::byte> now, std::span<const std::byte> was);

// Whether the element at flat index `i` of a tensor holds the poison `pattern` (element bytes
// compared with the pattern's bytes at the element's offset).
bool holds_pattern(const HostTensor& t, std::int64_t i, std::uint32_t pattern);

// The watchdog deadline of one run request, in seconds: max(factor x the reference's time on
// the case, min_s), plus an allowance for what the worker does around the launches (copying the
// inputs in, filling outputs and red zones, exporting handles): 1 s + 1 s per GB moved, a
// pessimistic device bandwidth, so a big case does not time out on its copies.
double run_deadline_s(double reference_s, double factor, double min_s, std::uint64_t bytes);

// The host backend counts that deadline in the worker's CPU time (a loaded machine slows a run's
// wall-clock time, not the CPU time it needs); this is the wall-clock backstop that ends a run
// using no CPU (blocked or stopped), which would never reach it: max(4 x the CPU deadline, the
// CPU deadline + 10 s). The factor 4 lets a candidate that computes on one thread get a quarter
// of a core (three other busy processes per core) and still meet its CPU deadline first; the
// 10 s keep a short deadline from turning a moment of scheduling or paging into a timeout.
double host_wall_backstop_s(double cpu_deadline_s);

// The defences of docs/design.md "Defences" that a test switch can turn off (KJ_TEST_DISABLE,
// honoured only where kjudge/test_switches.hpp allows them); all on otherwise.
struct Defences {
  bool isolation = true;   // the candidate in a worker process of its own
  bool redzone = true;     // red zones around its buffers, checked after each run
  bool poison = true;      // outputs and scratch poisoned before the launches
  bool input_hash = true;  // its input copies compared with the master
  bool rerun = true;       // two runs a case
  bool static_scan = true; // its PTX and source scanned for forbidden constructs
  bool regenerate = true;  // the bench's inputs drawn afresh on every visit (host: timed run)
  bool one_program = true; // the host compiles the program NVRTC compiled (HostCompileOptions)
  // Every defence on but those named (kDefences' names; others are refused before this).
  static Defences all_but(const std::set<std::string>& disabled);
};

// The defence names KJ_TEST_DISABLE may hold.
inline constexpr std::string_view kDefences[] = {
    "isolation", "redzone",    "poison",     "input_hash",
    "rerun",     "static_scan", "regenerate", "one_program"};
// "poison, redzone" -> {"poison", "redzone"}: comma-separated, blanks trimmed, empty items
// ignored. Unknown names are kept (Defences::all_but turns nothing off for them) and reported by
// unknown_defences, so a typo cannot silently leave a test's defence on.
std::set<std::string> parse_disabled(std::string_view value);
std::set<std::string> unknown_defences(const std::set<std::string>& names);


} // namespace kj::judge
