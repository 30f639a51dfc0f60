// The constants the policies start from when a problem does not give its own: relative's k per
// output dtype, torch's allclose defaults, and the CANN gate's thresholds. Each number is either
// quoted from reference/numerics.md or, where numerics.md has none (f16/bf16 k, fp8 allclose,
// f64 regions), a documented choice of kjudge that the audit is expected to revisit.
#include "kjudge/compare.hpp"

#include <cmath>

namespace kj {

// f32 and f64: 16, measured on KernelBench (numerics.md: 96 of 97 correct variants accepted,
// every bf16 and 104 of 112 TF32 downgrades rejected).
// f16 and bf16: 4, calibrated (docs/design.md "Audit", bench/calibrate_k.py): the reference's own
// error is its final rounding, under the one-ulp floor, so correct variants measured 0.5 to
// 0.51 times it (a double rounding would reach 1) and 16-bit accumulators 978 (bf16) and 2400
// (f16) at their worst case. fp8: 4 as well, provisional, with no fp8 output to measure.
double default_relative_k(DType output) {
  KJ_EXPECTS(is_float(output), "relative(k) applies to float outputs");
  switch (output) {
  case DType::f64:
  case DType::f32:
    return 16.0;
  default:
    return 4.0;
  }
}

// Half the digits: a reference that keeps fewer of them than that, against f64, is measuring
// its own failure rather than the answer (the audit's evidence is in docs/problems.md).
double reference_ceiling(DType output) {
  KJ_EXPECTS(is_float(output), "the reference ceiling applies to float outputs");
  return std::exp2(-0.5 * float_format(output).mantissa_bits);
}

// torch.testing.assert_close's table (numerics.md). torch has no entry for the fp8 types (its
// table falls back to 0, 0: exact), and bf16's rtol 1.6e-2 would still demand near-exact fp8
// results, since one e4m3 ulp is 12.5% of the value: a correct kernel whose f32 accumulation
// lands on the other side of a rounding boundary would fail. kjudge allows one ulp of the
// format instead: rtol = 2^-mantissa_bits (e4m3 0.125, e5m2 0.25) and atol = the smallest
// subnormal (e4m3 2^-9, e5m2 2^-16), one step of the grid near zero.
std::pair<double, double> torch_default_tolerances(DType output) {
  switch (output) {
  case DType::f16:
    return {1e-3, 1e-5};
  case DType::bf16:
    return {1.6e-2, 1e-5};
  case DType::f32:
    return {1.3e-6, 1e-5};
  case DType::f64:
    return {1e-7, 1e-7};
  case DType::fp8e4m3:
    return {0.125, std::ldexp(1.0, -9)};
  case DType::fp8e5m2:
    return {0.25, std::ldexp(1.0, -16)};
  default:
    return {0.0, 0.0}; // integers and bool: exact
  }
}

// numerics.md's CANN table. f64 is not in it: kjudge shifts every f32 constant down by the 29
// extra mantissa bits of f64 (T = 2^-42, small boundary 2^-43, small bound 2^-59, cancellation
// boundary 2^-37), so f64 gets the same headroom over its own epsilon that f32 gets over its.
// (A public CANN script reuses f32's constants for float64; that would accept an f64 output
// computed in f32, which is exactly the downgrade kjudge must catch.)
RegionConstants cann_constants(DType output) {
  KJ_EXPECTS(is_float(output), "the regions policy applies to float outputs");
  auto p2 = [](int e) { return std::ldexp(1.0, e); };
  RegionConstants c{};
  switch (output) {
  case DType::f16:
    c = {p2(-10), p2(-11), p2(-16), p2(-5), 0};
    break;
  case DType::bf16:
    c = {p2(-7), p2(-8), p2(-16), p2(-3), 0};
    break;
  case DType::f32:
    c = {p2(-13), p2(-14), p2(-30), p2(-8), 0};
    break;
  case DType::fp8e4m3:
    c = {p2(-3), p2(-4), p2(-6), p2(-1), 0};
    break;
  case DType::fp8e5m2:
    c = {p2(-2), p2(-3), p2(-5), p2(0), 0};
    break;
  case DType::f64:
    c = {p2(-42), p2(-43), p2(-59), p2(-37), 0};
    break;
  default:
    break;
  }
  c.cancel_abs_bound = 10.0 * c.threshold * c.cancel_boundary;
  return c;
}

} // namespace kj
