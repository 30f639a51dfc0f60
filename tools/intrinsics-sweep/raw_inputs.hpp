// Inputs of the raw PTX approximate instructions (ex2/lg2/sin/cos/rcp/rsqrt .approx) that the
// sweep also evaluates, densely, to model the hardware units behind the intrinsics. Their results
// are working data for deriving the host emulation, too large to commit; the host test uses only
// tests/support/intrinsic_inputs.hpp. Every input is exact (power-of-two steps or bit steps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../tests/support/intrinsic_inputs.hpp"

namespace kj::sweep {

struct Segment {
  enum Kind { linear, bits } kind;
  double lo;           // linear: first value; bits: first value, whose bit pattern starts
  double step;         // linear: a power of two, so lo + i * step is exact; bits: pattern step
  std::uint32_t count; //
  bool negative = false;
};

struct RawOp {
  const char* ptx;  // the instruction, as in the asm statement
  const char* file; // the output file it goes into (several ops share one)
  std::vector<Segment> segments;
};

inline const std::vector<RawOp>& raw_ops() {
  using S = Segment;
  static const std::vector<RawOp> ops = {
      {"ex2.approx.ftz.f32",
       "mufu_ex2.bin",
       {{S::linear, 0, 0x1p-20, 1u << 20},
        {S::linear, -0x1p-20, -0x1p-20, 1u << 19},
        {S::bits, 0x1p-40, 10240, 1u << 15},
        {S::bits, 0x1p-40, 10240, 1u << 15, true},
        {S::linear, 5, 0x1p-16, 1u << 16}}},
      {"ex2.approx.f32", "mufu_ex2.bin", {{S::linear, -152, 0x1p-11, 27u << 11}}},
      {"lg2.approx.ftz.f32",
       "mufu_lg2.bin",
       {{S::bits, 1.0, 8, 1u << 20},
        {S::bits, 0.5, 32, 1u << 18},
        {S::bits, 0x1p-149, 1 << 13, 0x7f800000u >> 13}}},
      {"lg2.approx.f32", "mufu_lg2.bin", {{S::bits, 0x1p-149, 64, 1u << 17}}},
      {"sin.approx.f32",
       "mufu_trig.bin",
       {{S::linear, -8, 0x1p-16, 1u << 20}, {S::bits, 0x1p-40, 10240, 1u << 15}}},
      {"cos.approx.f32",
       "mufu_trig.bin",
       {{S::linear, -8, 0x1p-16, 1u << 20}, {S::bits, 0x1p-40, 10240, 1u << 15}}},
      {"rcp.approx.ftz.f32", "mufu_rcp.bin", {{S::bits, 1.0, 8, 1u << 20}}},
      {"rcp.approx.f32", "mufu_rcp.bin", {{S::bits, 0x1p-149, 64, 1u << 17}}},
      {"rsqrt.approx.ftz.f32", "mufu_rcp.bin", {{S::bits, 1.0, 8, 1u << 21}}},
      {"rsqrt.approx.f32", "mufu_rcp.bin", {{S::bits, 0x1p-149, 64, 1u << 17}}},
  };
  return ops;
}

inline std::vector<float> raw_inputs(const RawOp& op) {
  using test::intrinsics::from_bits;
  using test::intrinsics::to_bits;
  std::vector<float> v;
  for (const Segment& s : op.segments)
    for (std::uint32_t i = 0; i < s.count; ++i) {
      if (s.kind == Segment::linear) {
        v.push_back(static_cast<float>(s.lo + s.step * i));
      } else {
        const std::uint32_t b =
            to_bits(static_cast<float>(s.lo)) + static_cast<std::uint32_t>(s.step) * i;
        v.push_back(from_bits(b | (s.negative ? 0x80000000u : 0u)));
      }
    }
  return v;
}

} // namespace kj::sweep
