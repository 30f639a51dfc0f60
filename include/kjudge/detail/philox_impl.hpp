// The random stream of kjudge's inputs, shared by the host generator and device code: the
// Philox4x32-10 block function (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"),
// the mapping of an element of an input to its block, and the per-element draws of every random
// distribution. Each element owns one whole block, so any element can be produced on its own.
//
//   block(e)  = philox4x32_10(counter {e lo32, e hi32, input_index, visit}, key {seed lo, hi})
//   u(a, b)   = (2*m + 1) / 2^53 with m = the top 52 bits of (a << 32 | b): open (0, 1),
//               symmetric (1 - u is on the same grid), exact in double
//   normal    = mean + std * sqrt(-2 log u(w0, w1)) * cos(2 pi * u(w2, w3))    (Box-Muller)
//   uniform   = lo + (hi - lo) * u(w0, w1)
//   int       = lo + ((w0 << 32 | w1) mod (hi - lo + 1))                      (64-bit words)
//   bernoulli = u(w0, w1) < p ? 1 : 0
//   pareto    = exp(log u(w0, w1) * (-1 / alpha))                             (support >= 1)
//
// Everything here is integer arithmetic or kjmath_impl.hpp, so the bits match on both sides.
#pragma once

#include "kjudge/detail/kjmath_impl.hpp"

namespace kj::detail {

struct philox_block {
  unsigned int w[4];
};

KJ_HD philox_block philox4x32_10(philox_block ctr, unsigned int k0, unsigned int k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // the key schedule: Weyl sequence bumps between rounds
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = 0xD2511F53ull * ctr.w[0];
    const unsigned long long p1 = 0xCD9E8D57ull * ctr.w[2];
    const unsigned int hi0 = static_cast<unsigned int>(p0 >> 32);
    const unsigned int lo0 = static_cast<unsigned int>(p0);
    const unsigned int hi1 = static_cast<unsigned int>(p1 >> 32);
    const unsigned int lo1 = static_cast<unsigned int>(p1);
    philox_block next;
    next.w[0] = hi1 ^ ctr.w[1] ^ k0;
    next.w[1] = lo1;
    next.w[2] = hi0 ^ ctr.w[3] ^ k1;
    next.w[3] = lo0;
    ctr = next;
  }
  return ctr;
}

// The block owned by flat element `element` of the input stream (seed, input_index, visit).
KJ_HD philox_block element_block(unsigned long long seed, unsigned int input_index,
                                 unsigned int visit, unsigned long long element) {
  philox_block ctr;
  ctr.w[0] = static_cast<unsigned int>(element);
  ctr.w[1] = static_cast<unsigned int>(element >> 32);
  ctr.w[2] = input_index;
  ctr.w[3] = visit;
  return philox4x32_10(ctr, static_cast<unsigned int>(seed),
                       static_cast<unsigned int>(seed >> 32));
}

// A uniform double in the open interval (0, 1) from two words (hi first): odd multiples of
// 2^-53, so never 0 or 1 and exact in double.
KJ_HD double uniform_open(unsigned int hi, unsigned int lo) {
  const unsigned long long m = ((static_cast<unsigned long long>(hi) << 32) | lo) >> 12;
  return static_cast<double>(2 * m + 1) * 0x1p-53;
}

KJ_HD double draw_normal(const philox_block& b, double mean, double std_dev) {
  const double u1 = uniform_open(b.w[0], b.w[1]);
  const double u2 = uniform_open(b.w[2], b.w[3]);
  const double radius = sqrt_hd(mul(-2.0, log_impl(u1)));
  double s, c;
  sincos_impl(mul(0x1.921fb54442d18p+2, u2), &s, &c);  // angle 2*pi*u2
  return mean + mul(std_dev, mul(radius, c));
}

KJ_HD double draw_uniform(const philox_block& b, double lo, double hi) {
  return lo + mul(hi - lo, uniform_open(b.w[0], b.w[1]));
}

// lo + a 64-bit word reduced modulo span (span = hi - lo + 1 computed in 64-bit unsigned
// arithmetic; 0 stands for the full 2^64). The modulo bias is span / 2^64, nil in practice.
KJ_HD long long draw_int(const philox_block& b, long long lo, unsigned long long span) {
  const unsigned long long word = (static_cast<unsigned long long>(b.w[0]) << 32) | b.w[1];
  const unsigned long long r = span == 0 ? word : word % span;
  return static_cast<long long>(static_cast<unsigned long long>(lo) + r);
}

KJ_HD double draw_bernoulli(const philox_block& b, double p) {
  return uniform_open(b.w[0], b.w[1]) < p ? 1.0 : 0.0;
}

KJ_HD double draw_pareto(const philox_block& b, double alpha) {
  const double u = uniform_open(b.w[0], b.w[1]);
  return exp_impl(mul(log_impl(u), -1.0 / alpha));
}

}  // namespace kj::detail
