// The GPU comparator's kernels (DeviceComparator, device_compare.hpp): the pass of
// compare_pass_impl.hpp over an output's chunks, the trees that combine chunks into slices and
// the whole output, and the binned percentiles. NVRTC compiles this file at run time from the
// one-line source `#include "kjudge/detail/compare_kernels.cuh"`, with --fmad=false.
//
// judge_chunks: one block per SM (the histograms take most of its shared memory), each taking
// chunks in turn. Per chunk, thread t takes its elements (t, t + cmp_threads, ...) a group at a
// time, the group's loads issued before any use, and judges them with the shared per-element
// code into its lane (compare_pass_impl.hpp's lane_add); counts, maxima and the worst element
// combine in any order (warp reductions, then shared atomics); the sums of squares follow the
// fixed tree (shuffles within a warp, warp 0 over the warps). The histograms count runs of equal
// bins into 16-bit halves of shared words, flushed to the global 64-bit counts every few chunks
// before a half can overflow. Per-chunk state is double buffered, so one barrier after the
// elements and one at the end separate chunk from chunk. The policy and dtype may be template
// constants (-1: read from the parameters), so f32 outputs get code folded for their policy.
#pragma once

#include "kjudge/detail/compare_pass_impl.hpp"

namespace kj::cmp {

using namespace kj::detail;

constexpr unsigned full_mask = 0xffffffffu;
constexpr int hist_words = cmp_hist_words;
// Chunks between flushes of the 16-bit shared counts: at most 65535 elements.
constexpr int window_chunks = static_cast<int>(65535 / cmp_chunk) > 0 ? static_cast<int>(65535 / cmp_chunk) : 1;
// Elements a thread loads at once (the rest of its chunk's elements follow group by group).
constexpr int load_group = 8;
constexpr unsigned no_offset = cmp_no_offset;
constexpr int group = cmp_tree_group;

// Maxima a chunk keeps (non-negative doubles, compared by their bits).
enum max_slot { m_e, m_r, m_g, m_ratio, m_abs, m_rel, m_ulp, m_slots };

struct chunk_shared {
  unsigned int count[c_slots];
  unsigned long long max_bits[m_slots];
  unsigned int first_nonfinite, first_mismatch; // offsets in the chunk
  double warp_sum[3][cmp_warps];
  cmp_severity warp_worst[cmp_warps], warp_worst_bad[cmp_warps];
  long long first[cmp_first_max];
  int warp_failing[cmp_warps];
};

__device__ void reset(chunk_shared& s) {
  for (int k = 0; k < c_slots; ++k) s.count[k] = 0;
  for (int k = 0; k < m_slots; ++k) s.max_bits[k] = 0;
  s.first_nonfinite = no_offset;
  s.first_mismatch = no_offset;
}

__device__ double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = max_hd(v, __shfl_xor_sync(full_mask, v, o));
  return v;
}

// The stride-halving tree of compare_pass_impl.hpp's warp_tree_sum: lane 0 ends with it.
__device__ double warp_tree(double v) {
  for (int s = 16; s > 0; s >>= 1) v = v + __shfl_down_sync(full_mask, v, s);
  return v;
}

__device__ cmp_severity warp_worst(cmp_severity s) {
  for (int o = 16; o > 0; o >>= 1) {
    cmp_severity other;
    other.index = __shfl_xor_sync(full_mask, s.index, o);
    other.failing = __shfl_xor_sync(full_mask, s.failing, o);
    other.ratio = __shfl_xor_sync(full_mask, s.ratio, o);
    other.error = __shfl_xor_sync(full_mask, s.error, o);
    s = worse_of(s, other);
  }
  return s;
}

__device__ void add_count(chunk_shared& s, int slot, unsigned int v, int lane) {
  const unsigned int total = __reduce_add_sync(full_mask, v);
  if (lane == 0 && total != 0) atomicAdd(&s.count[slot], total);
}

__device__ void max_into(chunk_shared& s, int slot, double v, int lane) {
  v = warp_max(v);
  if (lane == 0 && v > 0.0) atomicMax(&s.max_bits[slot], bits_of(v));
}

// The block's 16-bit shared counts added to the global 64-bit ones and cleared.
__device__ void flush_histograms(unsigned int* words, unsigned long long* hist) {
  for (int k = threadIdx.x; k < cmp_histograms * hist_words; k += cmp_threads) {
    const unsigned int w = words[k];
    if (w == 0u) continue;
    words[k] = 0u;
    const int h = k / hist_words;
    const int bin = 2 * (k % hist_words);
    if ((w & 0xffffu) != 0u)
      atomicAdd(&hist[h * cmp_hist_bins + bin], static_cast<unsigned long long>(w & 0xffffu));
    if ((w >> 16) != 0u)
      atomicAdd(&hist[h * cmp_hist_bins + bin + 1], static_cast<unsigned long long>(w >> 16));
  }
}

// The chunk's maxima that the sums' scales come from; whether any thread has a failing element.
__device__ int chunk_maxima(chunk_shared& s, const cmp_lane& L, int lane) {
  max_into(s, m_e, L.max_e, lane);
  max_into(s, m_r, L.max_r, lane);
  max_into(s, m_g, L.max_g, lane);
  return __syncthreads_or(L.failing_mask != 0u);
}

// The rest of chunk c's statistics into out: the lanes' sums (se, sr, sg at the chunk's
// exponents ee, er, eg) by the fixed tree, the counts, first failures, maxima and worst
// elements; s is reset for the chunk after next. Every thread of the block calls it.
__device__ void finish_chunk(chunk_shared& s, const cmp_lane& L, double se, double sr, double sg,
                             long long ee, long long er, long long eg, int any_failing,
                             long long base, cmp_stats& st) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  se = warp_tree(se);
  sr = warp_tree(sr);
  sg = warp_tree(sg);
  if (lane == 0) {
    s.warp_sum[0][warp] = se;
    s.warp_sum[1][warp] = sr;
    s.warp_sum[2][warp] = sg;
  }
#pragma unroll
  for (int k = 0; k < c_slots; ++k) add_count(s, k, L.count[k], lane);
  {
    const unsigned int fn = __reduce_min_sync(full_mask, L.first_nonfinite);
    const unsigned int fm = __reduce_min_sync(full_mask, L.first_mismatch);
    if (lane == 0 && fn != no_offset) atomicMin(&s.first_nonfinite, fn);
    if (lane == 0 && fm != no_offset) atomicMin(&s.first_mismatch, fm);
  }
  max_into(s, m_ratio, L.max_ratio, lane);
  max_into(s, m_abs, L.max_abs, lane);
  max_into(s, m_rel, L.max_rel, lane);
  max_into(s, m_ulp, L.max_ulp, lane);
  const cmp_severity worst = warp_worst(L.worst);
  const cmp_severity worst_bad = warp_worst(L.worst_bad);
  if (lane == 0) {
    s.warp_worst[warp] = worst;
    s.warp_worst_bad[warp] = worst_bad;
  }
  // The first failing elements in flat order: round by round, warp by warp, lane by lane.
  int first_count = 0;
  if (any_failing) {
    for (int j = 0; j < cmp_per_thread && first_count < cmp_first_max; ++j) {
      const bool failing = ((L.failing_mask >> j) & 1u) != 0u;
      const unsigned int ballot = __ballot_sync(full_mask, failing);
      if (lane == 0) s.warp_failing[warp] = __popc(ballot);
      __syncthreads();
      int before = 0, total = 0;
      for (int w = 0; w < cmp_warps; ++w) {
        if (w < warp) before += s.warp_failing[w];
        total += s.warp_failing[w];
      }
      if (failing) {
        const int at = first_count + before + __popc(ballot & ((1u << lane) - 1u));
        if (at < cmp_first_max) s.first[at] = base + static_cast<long long>(j) * cmp_threads + t;
      }
      __syncthreads();
      first_count += total;
    }
  }
  __syncthreads();

  // Warp 0 folds the warps' parts: the worst elements in any order, the sums by the tree.
  if (warp == 0) {
    const bool has = lane < cmp_warps;
    const cmp_severity w_all = warp_worst(has ? s.warp_worst[lane] : no_severity());
    const cmp_severity w_bad = warp_worst(has ? s.warp_worst_bad[lane] : no_severity());
    double sums[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      double v = has ? s.warp_sum[k][lane] : 0.0;
      for (int step = cmp_warps / 2; step > 0; step >>= 1)
        v = v + __shfl_down_sync(full_mask, v, step);
      sums[k] = v;
    }
    if (lane == 0) { // written field by field: no copy of the statistics in local memory
      st.first_count = 0;
      st.judged = s.count[c_judged];
      st.settled = s.count[c_settled];
      st.excused = s.count[c_excused];
      st.overflows = s.count[c_overflows];
      st.nonfinite = s.count[c_nonfinite];
      st.mismatch = s.count[c_mismatch];
      st.bad = s.count[c_bad];
      st.err_count = s.count[c_err];
      st.ref_count = s.count[c_ref];
      st.ref_nonfinite = s.count[c_ref_nonfinite];
      st.stat_count = s.count[c_stat];
      st.first_nonfinite = s.first_nonfinite != no_offset ? base + s.first_nonfinite : cmp_none;
      st.first_mismatch = s.first_mismatch != no_offset ? base + s.first_mismatch : cmp_none;
      const int firsts = first_count < cmp_first_max ? first_count : cmp_first_max;
      st.first_count = firsts;
      for (int k = 0; k < cmp_first_max; ++k) st.first[k] = k < firsts ? s.first[k] : cmp_none;
      st.worst = w_all;
      st.worst_bad = w_bad;
      st.max_e = double_of(s.max_bits[m_e]);
      st.max_r = double_of(s.max_bits[m_r]);
      st.max_g = double_of(s.max_bits[m_g]);
      st.max_ratio = double_of(s.max_bits[m_ratio]);
      st.max_abs = double_of(s.max_bits[m_abs]);
      st.max_rel = double_of(s.max_bits[m_rel]);
      st.max_ulp = double_of(s.max_bits[m_ulp]);
      st.sum_e = sums[0];
      st.sum_r = sums[1];
      st.sum_g = sums[2];
      st.exp_e = ee;
      st.exp_r = er;
      st.exp_g = eg;
      reset(s);
    }
  }
}

// Where chunk c lies: its first flat index and its element count (slices are contiguous, as
// the axis has no dimension before it, so a chunk's elements are base, base + 1, ...).
struct chunk_place {
  long long base, count, slice;
};

__device__ chunk_place place_of(const compare_params& p, long long c) {
  chunk_place at;
  at.slice = c / p.chunks_per_slice;
  const long long q0 = (c % p.chunks_per_slice) * cmp_chunk;
  at.count = (q0 + cmp_chunk < p.slice_len ? q0 + cmp_chunk : p.slice_len) - q0;
  at.base = at.slice * p.slice_len + q0;
  return at;
}

// The block's histogram counts zeroed and its chunk state reset, before the first chunk.
__device__ void start_block(unsigned int* words, bool histograms, chunk_shared* state) {
  if (histograms)
    for (int k = threadIdx.x; k < cmp_histograms * hist_words; k += cmp_threads) words[k] = 0u;
  if (threadIdx.x == 0) {
    reset(state[0]);
    reset(state[1]);
  }
  __syncthreads();
}

// The block's 16-bit counts flushed after every window_chunks chunks, before a half can fill.
__device__ void after_chunk(unsigned int* words, unsigned long long* hist, int& window) {
  if (hist != nullptr && ++window == window_chunks) {
    flush_histograms(words, hist);
    window = 0;
    __syncthreads(); // the next chunk counts into the cleared words
  }
}

// A thread's histogram counts, held back while the same bin repeats (a right answer's errors
// often do: exact zeros, whole ulps), so that most elements touch no shared memory.
struct bin_runs {
  unsigned int key[cmp_histograms], count[cmp_histograms];
};

__device__ void empty_runs(bin_runs& r) {
  for (int h = 0; h < cmp_histograms; ++h) r.count[h] = 0u;
}

// A finished run of one bin into histogram h's 16-bit counts.
__device__ void emit_run(unsigned int* words, int h, unsigned int key, unsigned int count) {
  atomicAdd(&words[h * hist_words + (key >> 1)], count << (16u * (key & 1u)));
}

// An element's bins (lane_add's keys; cmp_no_key: none) into the thread's runs.
__device__ void count_keys(bin_runs& r, unsigned int* words, const unsigned int* keys) {
#pragma unroll
  for (int h = 0; h < cmp_histograms; ++h) {
    if (keys[h] == cmp_no_key) continue;
    if (r.count[h] != 0u && r.key[h] != keys[h]) {
      emit_run(words, h, r.key[h], r.count[h]);
      r.count[h] = 0u;
    }
    r.key[h] = keys[h];
    ++r.count[h];
  }
}

// The thread's open runs emitted, at the end of a chunk (so a flush window counts whole chunks).
__device__ void flush_runs(bin_runs& r, unsigned int* words) {
#pragma unroll
  for (int h = 0; h < cmp_histograms; ++h)
    if (r.count[h] != 0u) emit_run(words, h, r.key[h], r.count[h]);
  empty_runs(r);
}

// The pass over p.chunks chunks: out[c] gets chunk c's statistics; `hist` (3 x cmp_hist_bins
// counts, zeroed by the caller) the histograms, or null for none (relative's second pass);
// `bounds` relative's bound per slice in its second pass.
template <bool scaled, int policy, int dtype>
__global__ void __launch_bounds__(cmp_threads, 1)
judge_chunks(compare_params params, const void* actual, const double* golden, const void* reference,
             const double* bounds, cmp_stats* out, unsigned long long* hist) {
  extern __shared__ unsigned int hist_words_s[];
  __shared__ chunk_shared chunk_state[2];
  // The policy and dtype as constants (-1: from the parameters), so the per-element code folds.
  compare_params p = params;
  if (policy >= 0) p.policy = policy;
  if (dtype >= 0) p.dtype = dtype;
  const int t = threadIdx.x, lane = t & 31;
  const bool histograms = hist != nullptr;
  start_block(hist_words_s, histograms, chunk_state);
  int window = 0, parity = 0;

  for (long long c = blockIdx.x; c < p.chunks; c += gridDim.x, parity ^= 1) {
    const chunk_place at = place_of(p, c);
    const long long base = at.base, count = at.count;
    const double bound = bounds != nullptr ? bounds[at.slice] : quiet_nan();

    cmp_lane L;
    empty_lane(L);
    bin_runs runs;
    empty_runs(runs);
    // The thread's elements a group at a time, each group's loads issued before any use.
#pragma unroll 1
    for (int j0 = 0; j0 < cmp_per_thread; j0 += load_group) {
      double cv[load_group], gv[load_group], rv[load_group];
#pragma unroll
      for (int u = 0; u < load_group; ++u) {
        const long long k = static_cast<long long>(j0 + u) * cmp_threads + t;
        cv[u] = gv[u] = rv[u] = quiet_nan();
        if (k < count) {
          const unsigned long long i = static_cast<unsigned long long>(base + k);
          cv[u] = load_value(actual, i, p.dtype);
          if (golden != nullptr) gv[u] = golden[i];
          if (reference != nullptr) rv[u] = load_value(reference, i, p.dtype);
        }
      }
#pragma unroll
      for (int u = 0; u < load_group; ++u) {
        const long long k = static_cast<long long>(j0 + u) * cmp_threads + t;
        double terms[3];
        unsigned int keys[cmp_histograms] = {cmp_no_key, cmp_no_key, cmp_no_key};
        if (k < count) {
          const cmp_element el = judge_element_hd(p, cv[u], gv[u], rv[u], bound);
          lane_add(p, L, el, cv[u], static_cast<unsigned int>(k), base + k, j0 + u, scaled, terms,
                   histograms ? keys : nullptr);
        }
        if (histograms) count_keys(runs, hist_words_s, keys);
      }
    }
    if (histograms) flush_runs(runs, hist_words_s);
    chunk_shared& s = chunk_state[parity];
    const int any_failing = chunk_maxima(s, L, lane);
    const long long ee = chunk_exponent(p, double_of(s.max_bits[m_e]));
    const long long er = chunk_exponent(p, double_of(s.max_bits[m_r]));
    const long long eg = chunk_exponent(p, double_of(s.max_bits[m_g]));
    double se = L.sum_e, sr = L.sum_r, sg = L.sum_g;
    if (scaled) {
      // The terms again, now at the chunk's scale (the chunk is still in L2).
#pragma unroll 1
      for (int j = 0; j < cmp_per_thread; ++j) {
        const long long k = static_cast<long long>(j) * cmp_threads + t;
        if (k >= count) break;
        const unsigned long long i = static_cast<unsigned long long>(base + k);
        const double cj = load_value(actual, i, p.dtype);
        const double gj = golden != nullptr ? golden[i] : quiet_nan();
        const double rj = reference != nullptr ? load_value(reference, i, p.dtype) : quiet_nan();
        const cmp_terms tm = sum_terms(p, judge_element_hd(p, cj, gj, rj, bound));
        if (tm.e > 0.0) se = se + scaled_square(tm.e, ee);
        if (tm.r > 0.0) sr = sr + scaled_square(tm.r, er);
        if (tm.g > 0.0) sg = sg + scaled_square(tm.g, eg);
      }
    }
    finish_chunk(s, L, se, sr, sg, ee, er, eg, any_failing, base, out[c]);
    after_chunk(hist_words_s, hist, window);
  }
  if (histograms) flush_histograms(hist_words_s, hist);
}

// One level of the chunk trees: block b combines the stride-doubling tree of `group`
// consecutive entries of its segment (segments of `per_segment` entries, `groups` groups each).
__global__ void __launch_bounds__(group)
combine_groups(const cmp_stats* in, cmp_stats* out, long long per_segment, long long groups) {
  __shared__ cmp_stats items[group];
  const long long segment = blockIdx.x / groups;
  const long long g = blockIdx.x % groups;
  const long long first = g * group;
  const long long m = (per_segment - first < group ? per_segment - first : group);
  const int i = threadIdx.x;
  if (i < m) items[i] = in[segment * per_segment + first + i];
  for (int s = 1; s < m; s <<= 1) {
    __syncthreads();
    if (i % (2 * s) == 0 && i + s < m) combine_stats(items[i], items[i + s]);
  }
  __syncthreads();
  if (i == 0) out[blockIdx.x] = items[0];
}

// The binned percentiles of the three histograms over `whole->stat_count` values (pass.cpp's
// binned_percentiles, the same rule): one block; each thread sums a run of bins, a scan gives
// each run's first rank, and the thread whose run holds a percentile's rank finds its bin.
__global__ void __launch_bounds__(1024)
percentiles(const unsigned long long* hist, const cmp_stats* whole, cmp_percentiles* out) {
  __shared__ unsigned long long scan[1024];
  constexpr int per_thread = cmp_hist_bins / 1024;
  const int t = threadIdx.x;
  const unsigned long long n = static_cast<unsigned long long>(whole->stat_count);
  const unsigned long long ranks[3] = {percentile_rank(n, 50, 100), percentile_rank(n, 99, 100),
                                       percentile_rank(n, 999, 1000)};
  for (int h = 0; h < cmp_histograms; ++h) {
    const unsigned long long* bins = hist + h * cmp_hist_bins + t * per_thread;
    unsigned long long mine = 0;
    for (int b = 0; b < per_thread; ++b) mine += bins[b];
    scan[t] = mine;
    __syncthreads();
    for (int step = 1; step < 1024; step <<= 1) { // inclusive scan (Hillis-Steele)
      const unsigned long long add = t >= step ? scan[t - step] : 0ull;
      __syncthreads();
      scan[t] += add;
      __syncthreads();
    }
    const unsigned long long below = scan[t] - mine;
    for (int q = 0; q < 3; ++q) {
      if (n == 0) {
        if (t == 0) out->value[h * 3 + q] = 0.0;
      } else if (below <= ranks[q] && ranks[q] < scan[t]) {
        unsigned long long seen = below;
        int b = 0;
        while (seen + bins[b] <= ranks[q]) seen += bins[b++];
        out->value[h * 3 + q] = hist_edge(static_cast<unsigned int>(t * per_thread + b));
      }
    }
    __syncthreads();
  }
}

}  // namespace kj::cmp
