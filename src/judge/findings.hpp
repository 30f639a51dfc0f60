// What the oracle concludes from the bytes a worker left behind, on the host: damaged red zones
// (oob_write), elements never written (unwritten_output: poison of its run in both runs), and
// outputs that differ between the two runs (nondeterministic). Each becomes a message naming
// the tensor and the first place, in the words of docs/design.md's verdicts. No GPU needed; the
// unit tests feed byte buffers directly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

struct RedzoneScan {
  std::uint64_t before = 0;         // damaged bytes in the zone before the tensor
  std::uint64_t after = 0;          // and after it
  std::uint64_t nearest_before = 0; // distance from the tensor's start of the closest one (1 =
                                    // the byte just before it); valid when before > 0
  std::uint64_t first_after = 0; // offset past the tensor's end of the first; valid when after > 0
  bool damaged() const { return before + after > 0; }
};
RedzoneScan scan_redzones(std::span<const std::byte> before, std::span<const std::byte> after,
                          std::uint8_t fill);
// "output 'y': 16 bytes written past its end (the first at +0) and 0 before its start"
std::string redzone_message(std::string_view role, std::string_view name, const RedzoneScan& s);

// Elements whose bytes equal the poison of their run in run 0 and, when there was one, run 1.
struct Unwritten {
  std::int64_t count = 0;
  std::vector<std::int64_t> first; // flat indices, at most kFirstShown
};
inline constexpr std::size_t kFirstShown = 10;
Unwritten find_unwritten(const HostTensor& run0, std::uint32_t pattern0, const HostTensor* run1,
                         std::uint32_t pattern1);
// The finding of an output with unwritten elements; `golden` (f64, may be null) gives the
// expected values shown.
OutputFinding unwritten_finding(const OutputSpec& spec, const Shape& shape, const Unwritten& u,
                                const HostTensor& actual, const HostTensor* golden);

// Elements whose bytes differ between two runs.
struct Differences {
  std::int64_t count = 0;
  std::vector<std::int64_t> first;
};
Differences find_differences(const HostTensor& a, const HostTensor& b);
OutputFinding nondeterministic_finding(const OutputSpec& spec, const Shape& shape,
                                       const Differences& d, const HostTensor& a,
                                       const HostTensor& b);

// Bytes that differ between two equally long buffers, and the offset of the first.
struct ByteDiff {
  std::uint64_t count = 0;
  std::uint64_t first = 0;
};
ByteDiff diff_bytes(std::span<const std::byte> a, std::span<const std::byte> b);

} // namespace kj::judge
