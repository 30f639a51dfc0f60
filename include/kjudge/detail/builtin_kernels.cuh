// kjudge's own device kernels (BuiltinKernels, builtin_kernels.hpp): the device twin of the input
// generator, exact widening to f64 and rounding from it, and byte patterns for poison and red
// zones. NVRTC compiles this file at run time from the one-line source
// `#include "kjudge/detail/builtin_kernels.cuh"` with kjudge's include folder on its path.
//
// Everything above the kernels is also plain host C++ (KJ_HD): the per-element generator
// generate_value + store_rounded is the same code on both sides, and the gpu_tests executable
// runs it on the host against kj::generate_input, so the device logic is checked even where no
// GPU is. The arithmetic is that of philox_impl.hpp, kjmath_impl.hpp (products through mul(),
// never fused) and dtype_bits_impl.hpp (integer operations on the bits), so the bits agree.
#pragma once

#include "kjudge/detail/philox_impl.hpp"
#include "kjudge/detail/dtype_bits_impl.hpp"

namespace kj::detail {

// Distribution codes in the order of kj::Distribution::Kind (spec.hpp); checked on the host.
constexpr int dist_normal = 0, dist_uniform = 1, dist_integer = 2, dist_bernoulli = 3,
              dist_pareto = 4, dist_constant = 5, dist_arange = 6;

// Everything generate needs about one input of one case, passed by value to the kernel. The
// layout is the same for the host compiler and NVRTC (natural alignment, 64-bit); the size is
// checked on both sides.
struct generate_params {
  double a, b;                  // the distribution's parameters (Distribution::a, b)
  double factor;                // the transform's factor, applied when `transformed`
  double offset;                // then the transform's offset (no fused multiply-add)
  double range_lo, range_hi;    // saturation to the dtype's finite range
  double special;               // the value planted when `plant_special`
  long long int_lo;             // int(lo, hi): lo
  unsigned long long int_span;  // int(lo, hi): hi - lo + 1 in 64-bit unsigned (0 = 2^64)
  unsigned long long seed;      // StreamId
  long long numel;
  long long special_stride;     // kj::special_stride
  unsigned int input_index, visit;  // StreamId
  int dist;                     // dist_* code
  int dtype;                    // dt_* code
  int transformed;              // 0 or 1
  int floating;                 // the dtype is a float: saturation keeps NaN (else NaN -> 0)
  int plant_special;            // 0 or 1
};
static_assert(sizeof(generate_params) == 128, "generate_params has one layout on both sides");

// The value generate_input stores at flat index i, before rounding to the dtype: the draw, the
// transform, saturation, or the planted special value (generate.cpp, step for step).
KJ_HD double generate_value(const generate_params& g, unsigned long long i) {
  if (g.plant_special != 0 &&
      (i % static_cast<unsigned long long>(g.special_stride) == 0u ||
       i == static_cast<unsigned long long>(g.numel) - 1u))
    return g.special;
  double v;
  if (g.dist == dist_constant) {
    v = g.a;
  } else if (g.dist == dist_arange) {
    v = static_cast<double>(static_cast<long long>(i));
  } else {
    const philox_block blk = element_block(g.seed, g.input_index, g.visit, i);
    switch (g.dist) {
      case dist_normal: v = draw_normal(blk, g.a, g.b); break;
      case dist_uniform: v = draw_uniform(blk, g.a, g.b); break;
      case dist_integer: v = static_cast<double>(draw_int(blk, g.int_lo, g.int_span)); break;
      case dist_bernoulli: v = draw_bernoulli(blk, g.a); break;
      default: v = draw_pareto(blk, g.a); break;  // dist_pareto
    }
  }
  if (g.transformed != 0) v = mul(v, g.factor) + g.offset;
  if (is_nan(v)) return g.floating != 0 ? v : 0.0;
  return v < g.range_lo ? g.range_lo : (v > g.range_hi ? g.range_hi : v);
}

// A byte range split for 16-byte vector access: `head` loose bytes up to the first aligned
// address, `vectors` aligned 16-byte chunks, then the loose tail (bytes - head - 16 * vectors).
// A range that cannot be vectorised (two buffers of different alignment) is all head.
struct byte_span {
  unsigned long long bytes;
  unsigned long long head;
  unsigned long long vectors;
};

// Patterns are aligned to the buffer start: byte o of the buffer is byte (o mod 4) of the
// pattern, little-endian, whatever the address.
KJ_HD unsigned char pattern_byte(unsigned int pattern, unsigned long long offset) {
  return static_cast<unsigned char>(pattern >> (8u * static_cast<unsigned int>(offset & 3u)));
}

// The 32-bit word of the pattern that starts at buffer offset `offset`.
KJ_HD unsigned int pattern_word_at(unsigned int pattern, unsigned long long offset) {
  const unsigned int s = 8u * static_cast<unsigned int>(offset & 3u);
  return s == 0u ? pattern : (pattern >> s) | (pattern << (32u - s));
}

// Number of non-zero bytes of x: bit 7 of each byte of t is set iff the byte is non-zero (the
// low seven bits plus 0x7f carry into bit 7 without leaving the byte).
KJ_HD unsigned int nonzero_bytes(unsigned int x) {
  const unsigned int t = (((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned int>(__popc(t));
#else
  return static_cast<unsigned int>(__builtin_popcount(t));
#endif
}

// The buffer offset of loose byte m (head bytes first, then the tail after the vectors).
KJ_HD unsigned long long loose_offset(const byte_span& s, unsigned long long m) {
  return m < s.head ? m : s.head + 16u * s.vectors + (m - s.head);
}

}  // namespace kj::detail

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

// C++ linkage: BuiltinKernels registers each as an NVRTC name expression, like any kernel.
namespace kj::builtin {

__device__ __forceinline__ unsigned long long thread_index() {
  return static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long thread_count() {
  return static_cast<unsigned long long>(gridDim.x) * blockDim.x;
}

__global__ void generate(void* out, kj::detail::generate_params g) {
  const unsigned long long n = static_cast<unsigned long long>(g.numel);
  for (unsigned long long i = thread_index(); i < n; i += thread_count())
    kj::detail::store_rounded(out, i, g.dtype, kj::detail::generate_value(g, i));
}

__global__ void widen_to_f64(double* dst, const void* src, int dtype, long long n) {
  for (unsigned long long i = thread_index(); i < static_cast<unsigned long long>(n);
       i += thread_count())
    dst[i] = kj::detail::load_widened(src, i, dtype);
}

__global__ void round_from_f64(void* dst, const double* src, int dtype, long long n) {
  for (unsigned long long i = thread_index(); i < static_cast<unsigned long long>(n);
       i += thread_count())
    kj::detail::store_rounded(dst, i, dtype, src[i]);
}

__global__ void fill_pattern(unsigned char* dst, kj::detail::byte_span s, unsigned int pattern) {
  const unsigned int w = kj::detail::pattern_word_at(pattern, s.head);
  uint4* body = reinterpret_cast<uint4*>(dst + s.head);
  for (unsigned long long k = thread_index(); k < s.vectors; k += thread_count())
    body[k] = make_uint4(w, w, w, w);
  const unsigned long long loose = s.bytes - 16u * s.vectors;
  for (unsigned long long m = thread_index(); m < loose; m += thread_count()) {
    const unsigned long long j = kj::detail::loose_offset(s, m);
    dst[j] = kj::detail::pattern_byte(pattern, j);
  }
}

// Bytes of `a` that differ from `b` (against_pattern = 0) or from the pattern aligned to a's
// start (against_pattern = 1, b unused), added to *count.
__global__ void count_differences(const unsigned char* a, const unsigned char* b,
                                  kj::detail::byte_span s, unsigned int pattern,
                                  int against_pattern, unsigned long long* count) {
  unsigned long long local = 0;
  const unsigned int w = kj::detail::pattern_word_at(pattern, s.head);
  const uint4* av = reinterpret_cast<const uint4*>(a + s.head);
  for (unsigned long long k = thread_index(); k < s.vectors; k += thread_count()) {
    const uint4 x = av[k];
    const uint4 y = against_pattern != 0 ? make_uint4(w, w, w, w)
                                         : reinterpret_cast<const uint4*>(b + s.head)[k];
    local += kj::detail::nonzero_bytes(x.x ^ y.x) + kj::detail::nonzero_bytes(x.y ^ y.y) +
             kj::detail::nonzero_bytes(x.z ^ y.z) + kj::detail::nonzero_bytes(x.w ^ y.w);
  }
  const unsigned long long loose = s.bytes - 16u * s.vectors;
  for (unsigned long long m = thread_index(); m < loose; m += thread_count()) {
    const unsigned long long j = kj::detail::loose_offset(s, m);
    const unsigned char want = against_pattern != 0 ? kj::detail::pattern_byte(pattern, j) : b[j];
    local += a[j] != want ? 1u : 0u;
  }
  // Every thread of the (full, 32-multiple) block gets here: a warp sum, one atomic per warp.
  for (int offset = 16; offset > 0; offset >>= 1)
    local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31u) == 0u && local != 0u) atomicAdd(count, local);
}

// Elements of `a` (n of `width` bytes: 1, 2, 4 or 8, a aligned to it) whose bytes are all the
// pattern aligned to a's start, added to *count: the elements a run's poison still fills.
__global__ void count_pattern_elements(const unsigned char* a, unsigned long long n, int width,
                                       unsigned int pattern, unsigned long long* count) {
  unsigned long long local = 0;
  const unsigned long long mask = width >= 8 ? ~0ull : (1ull << (8 * width)) - 1ull;
  for (unsigned long long i = thread_index(); i < n; i += thread_count()) {
    const unsigned long long at = i * static_cast<unsigned long long>(width);
    const unsigned long long want =
        (static_cast<unsigned long long>(kj::detail::pattern_word_at(pattern, at)) |
         static_cast<unsigned long long>(kj::detail::pattern_word_at(pattern, at + 4)) << 32) &
        mask;
    unsigned long long got = 0;
    switch (width) {
    case 1: got = a[at]; break;
    case 2: got = *reinterpret_cast<const unsigned short*>(a + at); break;
    case 4: got = *reinterpret_cast<const unsigned int*>(a + at); break;
    default: got = *reinterpret_cast<const unsigned long long*>(a + at); break;
    }
    local += got == want ? 1u : 0u;
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31u) == 0u && local != 0u) atomicAdd(count, local);
}

// One thread busy for `cycles` SM clock cycles, then stamps[0] = the cycles it counted and
// stamps[1] = the nanoseconds %globaltimer saw pass meanwhile: the bench's reading of the SM
// clock, free of any launch latency.
__global__ void spin(long long cycles, unsigned long long* stamps) {
  unsigned long long t0 = 0, t1 = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles)
    now = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  stamps[0] = static_cast<unsigned long long>(now - start);
  stamps[1] = t1 - t0;
}

}  // namespace kj::builtin

#endif
