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
//
// judge_chunks_lean: f32 outputs under an elementwise policy go through it first. It keeps only
// what a chunk of ordinary elements (finite, within the bound: a right answer) needs, with two
// blocks an SM, and hands every other chunk back to judge_chunks (see "the lean pass" below).
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

// The chunk's statistics into st once the warps' parts are in s (after a barrier): warp 0 folds
// the warps' worst elements in any order and their sums by the tree; s is reset for the chunk
// after next. Every thread of the block calls it.
__device__ void finish_warps(chunk_shared& s, int first_count, long long base, long long ee,
                             long long er, long long eg, cmp_stats& st) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
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
  finish_warps(s, first_count, base, ee, er, eg, st);
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
// Exact matches (bin 0 in every histogram) are only counted, and added at the chunk's end: they
// are a right answer's most common value, and as one hot bin they would serialise the atomics.
struct bin_runs {
  unsigned int key[cmp_histograms], count[cmp_histograms];
  unsigned int zeros;
};

__device__ void empty_runs(bin_runs& r) {
  for (int h = 0; h < cmp_histograms; ++h) r.count[h] = 0u;
  r.zeros = 0u;
}

// A finished run of one bin into histogram h's 16-bit shared counts.
__device__ void emit_run(unsigned int* words, int h, unsigned int key, unsigned int count) {
  atomicAdd(&words[h * hist_words + (key >> 1)], count << (16u * (key & 1u)));
}

// An element's bins (lane_add's keys; cmp_no_key: none) into the thread's runs.
__device__ void count_keys(bin_runs& r, unsigned int* words, const unsigned int* keys) {
  if ((keys[0] | keys[1] | keys[2]) == 0u) {
    ++r.zeros;
    return;
  }
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

// The thread's open runs emitted, at the end of a chunk (so a flush window counts whole chunks);
// the warp's exact matches summed first, as they all go to bin 0.
__device__ void flush_runs(bin_runs& r, unsigned int* words) {
  const unsigned int zeros = __reduce_add_sync(full_mask, r.zeros);
#pragma unroll
  for (int h = 0; h < cmp_histograms; ++h) {
    if (r.count[h] != 0u) emit_run(words, h, r.key[h], r.count[h]);
    if ((threadIdx.x & 31) == 0 && zeros != 0u) emit_run(words, h, 0u, zeros);
  }
  empty_runs(r);
}

// The pass over p.chunks chunks, or over the chunks `redo` lists (its count, then the chunks,
// cmp_redo_bins set on those whose bins are still to count): out[c] gets chunk c's statistics;
// `hist` (3 x cmp_hist_bins counts, zeroed by the caller) the histograms, or null for none
// (relative's second pass); `bounds` relative's bound per slice in its second pass.
template <bool scaled, int policy, int dtype>
__global__ void __launch_bounds__(cmp_threads, 1)
judge_chunks(compare_params params, const void* actual, const void* golden, const void* reference,
             const double* bounds, const unsigned int* redo, cmp_stats* out,
             unsigned long long* hist) {
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

  const long long todo = redo != nullptr ? static_cast<long long>(redo[0]) : p.chunks;
  for (long long i = blockIdx.x; i < todo; i += gridDim.x, parity ^= 1) {
    const unsigned int entry = redo != nullptr ? redo[1 + i] : 0u;
    const long long c = redo != nullptr ? static_cast<long long>(entry & ~cmp_redo_bins) : i;
    // A chunk the lean pass judged has its bins counted already.
    const bool bins = histograms && (redo == nullptr || (entry & cmp_redo_bins) != 0u);
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
          if (golden != nullptr) gv[u] = load_golden(golden, i, p);
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
                   bins ? keys : nullptr);
        }
        if (bins) count_keys(runs, hist_words_s, keys);
      }
    }
    if (bins) flush_runs(runs, hist_words_s);
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
        const double gj = golden != nullptr ? load_golden(golden, i, p) : quiet_nan();
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

// ---- the lean pass ----------------------------------------------------------------------------
// f32 outputs under an elementwise policy whose expected value is the basis (the golden rounded
// to f32, or the reference where there is no golden) are judged here first. The pass bets that
// every element of a chunk is ordinary (candidate and expected value finite, the error within
// the bound), as in a right answer, and keeps only what such a chunk's statistics need: every
// other count of an ordinary chunk is zero or its length, and nothing fails. A chunk that loses
// the bet is listed in `redo` (the count, then the chunks) for judge_chunks, which judges it
// whole but counts no bins: an element's bins depend only on its candidate and expected value,
// and this pass counted them for every element. An output wrong throughout would be judged
// twice, so once a sixteenth of the chunks have been handed back the blocks hand back the rest
// unjudged (cmp_redo_bins: judge_chunks counts their bins). With 64 registers, and histograms
// cut to the bins f32 statistics reach, two blocks share an SM (judge_chunks: one).

// The shared bins (compare_pass_impl.hpp's cmp_lean_*); other keys go to the global counts.
constexpr unsigned int lean_first_key = cmp_lean_first_key;
constexpr unsigned int lean_window = cmp_lean_window;
constexpr unsigned int lean_bins = cmp_lean_bins;
// error_statistics' cap on a statistic (the largest double), and its bin.
constexpr double big_statistic = 0x1.fffffffffffffp1023;
constexpr unsigned int big_key = 0x7fefu;
// Elements a thread loads at once (fewer than judge_chunks: registers are scarcer).
constexpr int lean_group = 4;
// Chunks a block judges between flushes of its counts: a chunk adds at most cmp_chunk to a bin.
constexpr int lean_flush_chunks = 1 << 17;

// Counts into the lean pass's windowed bins: `words_at` is their shared-space address (the adds
// go out as red.shared, with no generic-to-shared conversion per element).
struct windowed_counts {
  unsigned int words_at;
  unsigned long long* hist;
  __device__ void operator()(int h, unsigned int key, unsigned int count) const {
    const unsigned int at = key - lean_first_key;
    if (at < lean_window)
      add(h * lean_bins + at, count);
    else if (key == 0u)
      add(h * lean_bins + lean_window, count);
    else
      atomicAdd(&hist[h * cmp_hist_bins + key], static_cast<unsigned long long>(count));
  }
  __device__ void add(unsigned int word, unsigned int count) const {
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(words_at + 4u * word), "r"(count) : "memory");
  }
};

// The block's windowed counts added to the global ones and cleared.
__device__ void flush_windowed(unsigned int* words, unsigned long long* hist) {
  for (int k = threadIdx.x; k < static_cast<int>(cmp_histograms * lean_bins); k += cmp_threads) {
    const unsigned int w = words[k];
    if (w == 0u) continue;
    words[k] = 0u;
    const unsigned int h = k / lean_bins, at = k % lean_bins;
    const unsigned int key = at == lean_window ? 0u : lean_first_key + at;
    atomicAdd(&hist[h * cmp_hist_bins + key], static_cast<unsigned long long>(w));
  }
}

// The worst element of a thread's ordinary elements: cmp_severity without `failing` (0, or -1
// for none).
struct lean_worst {
  long long index;
  double ratio, error;
};

__device__ lean_worst no_lean_worst() {
  const cmp_severity none = no_severity();
  return lean_worst{none.index, none.ratio, none.error};
}

__device__ cmp_severity severity_of(const lean_worst& w) {
  if (w.index == cmp_none) return no_severity();
  cmp_severity s;
  s.index = w.index;
  s.failing = 0;
  s.ratio = w.ratio;
  s.error = w.error;
  return s;
}

// The warp's largest v >= 0 rounded down to a float: at most the largest v.
__device__ double warp_floor(double v) {
  const unsigned int bits = __float_as_uint(__double2float_rd(v));
  return static_cast<double>(__uint_as_float(__reduce_max_sync(full_mask, bits)));
}

template <int policy>
__global__ void __launch_bounds__(cmp_threads, 2)
judge_chunks_lean(compare_params params, const float* actual, const void* expected,
                  unsigned int* redo, cmp_stats* out, unsigned long long* hist) {
  extern __shared__ unsigned int lean_words[];
  __shared__ chunk_shared chunk_state[2];
  compare_params p = params;
  p.policy = policy;
  p.dtype = dt_f32;
  const int t = threadIdx.x, lane = t & 31;
  const bool histograms = hist != nullptr;
  // Without histograms the launch gives no dynamic shared memory: nothing is counted there.
  for (int k = t; histograms && k < static_cast<int>(cmp_histograms * lean_bins); k += cmp_threads)
    lean_words[k] = 0u;
  if (t == 0) {
    reset(chunk_state[0]);
    reset(chunk_state[1]);
  }
  __syncthreads();
  const windowed_counts emit{static_cast<unsigned int>(__cvta_generic_to_shared(lean_words)), hist};
  int parity = 0, since_flush = 0;
  const unsigned long long give_up_after = static_cast<unsigned long long>(p.chunks / 16 + 1);
  __shared__ int bets_off;

  for (long long c = blockIdx.x; c < p.chunks; c += gridDim.x) {
    const chunk_place at = place_of(p, c);
    const long long base = at.base, count = at.count;
    // What an ordinary chunk's statistics need from this thread (lane_add's judged, passing
    // branch); allclose's and exact's error is |c - x|, so their max_e is also max_abs.
    constexpr bool error_is_abs = policy != cmp_ulp;
    double max_ratio = 0.0, max_e = 0.0, sum_e = 0.0, max_abs = 0.0, max_ulp = 0.0;
    float max_rel = 0.0f; // the relative errors' f32 quotients (Inf: `big`)
    lean_worst worst = no_lean_worst();
    bool ordinary = true;
    // The histograms: exact matches counted, ulps in runs (a right answer's ulp errors repeat),
    // the other two bin by bin (theirs seldom do).
    unsigned int zeros = 0u, ulp_key = 0u, ulp_run = 0u;
    // The chunk's elements by their offsets in it (32-bit: a chunk holds cmp_chunk).
    const int here = static_cast<int>(count);
    const float* const c_at = actual + base;
    // The expected values: the reference's, or an f32 golden's, as they are; an f64 golden's
    // rounded to f32.
    const bool x_f32 = p.has_golden == 0 || p.golden_dtype == dt_f32;
    const float* const x32_at = static_cast<const float*>(expected) + base;
    const double* const x64_at = static_cast<const double*>(expected) + base;
#pragma unroll 1
    for (int j0 = 0; j0 < cmp_per_thread; j0 += lean_group) {
      float cv[lean_group], xv[lean_group];
#pragma unroll
      for (int u = 0; u < lean_group; ++u) {
        const int k = (j0 + u) * cmp_threads + t;
        cv[u] = xv[u] = 0.0f;
        if (k < here) {
          cv[u] = c_at[k];
          xv[u] = x_f32 ? x32_at[k] : static_cast<float>(x64_at[k]);
        }
      }
      // Raised to the warp's largest ratio so far (rounded down): the chunk's largest is
      // unchanged, and fewer elements can reach it, so fewer quotients are needed.
      max_ratio = max_hd(max_ratio, warp_floor(max_ratio));
      // ratio_reaching's test: an error below this times the bound has a quotient below max_ratio.
      double reach = mul(max_ratio, 1.0 - 0x1p-50);
#pragma unroll
      for (int u = 0; u < lean_group; ++u) {
        const int k = (j0 + u) * cmp_threads + t;
        if (k >= here) continue;
        const float cf = cv[u], xf = xv[u];
        if (!isfinite(cf) || !isfinite(xf)) { // no bins: not judged, or no expected value
          ordinary = false;
          continue;
        }
        const double cd = cf, x = xf;
        cmp_element e;
        elementwise_error(p, cd, x, e);
        if (e.bad) ordinary = false;
        // ratio_reaching for a passing element (the bound is then positive unless the error is
        // 0), where a zero error matters only while nothing larger is known.
        const bool reaches = e.err != 0.0 ? !(e.err < mul(reach, e.allowed)) : !(max_ratio > 0.0);
        if (reaches) {
          const double r = e.err != 0.0 ? e.err / e.allowed : 0.0;
          max_ratio = max_hd(max_ratio, r);
          reach = mul(max_ratio, 1.0 - 0x1p-50);
          // Elements come in flat order: among equals the earlier one stays (worse_of's rule).
          if (r > worst.ratio || (r == worst.ratio && e.err > worst.error)) {
            worst.index = base + k;
            worst.ratio = r;
            worst.error = e.err;
          }
        }
        max_e = max_hd(max_e, e.err);
        sum_e = sum_e + mul(e.err, e.err); // (a zero term leaves the sum as it is)
        // The statistics (maxima and bins of |c - x|, relative and ulp errors) only where the
        // percentiles are wanted: the verdict pass needs none of them (pass.cpp takes a
        // finding's statistics from a pass that counted the bins).
        if (!histograms) continue;
        // error_statistics(dt_f32, cd, x, true, ...), from the f32 values: |c - x| rounded to f32
        // is |c - x| computed in f32 (one rounding of the exact difference), and the ulp of x a
        // power of two an f32 holds.
        const double a = abs_of(cd - x);
        if (!error_is_abs) max_abs = max_hd(max_abs, a);
        if (a == 0.0) { // c == x: every statistic is 0
          ++zeros;
          continue;
        }
        const unsigned int field = (__float_as_uint(xf) >> 23) & 0xffu;
        const unsigned int f32_field = field > 0u ? field : 1u; // ulp_of_f32_value's rule
        const float unit = f32_field > 23u ? __uint_as_float((f32_field - 23u) << 23)
                                           : __uint_as_float(1u << (f32_field - 1u));
        const float q = __fdiv_rn(fabsf(__fsub_rn(cf, xf)), fmaxf(fabsf(xf), unit));
        max_rel = fmaxf(max_rel, q);
        const double u_err = mul(a, pow2i(150 - static_cast<int>(f32_field)));
        max_ulp = max_hd(max_ulp, u_err);
        emit(0, hist_key(a), 1u);
        emit(1, q <= 0x1.fffffep127f ? hist_key(static_cast<double>(q)) : big_key, 1u);
        const unsigned int key = hist_key(u_err);
        if (ulp_run != 0u && key != ulp_key) {
          emit(2, ulp_key, ulp_run);
          ulp_run = 0u;
        }
        ulp_key = key;
        ++ulp_run;
      }
    }
    if (histograms) {
      if (ulp_run != 0u) emit(2, ulp_key, ulp_run);
      zeros = __reduce_add_sync(full_mask, zeros);
      if (lane == 0 && zeros != 0u)
        for (int h = 0; h < cmp_histograms; ++h) emit(h, 0u, zeros);
    }
    if (__syncthreads_or(!ordinary)) {
      if (t == 0) {
        unsigned int at = atomicAdd(redo, 1u);
        redo[1 + at] = static_cast<unsigned int>(c);
        bets_off = at + 1ull >= give_up_after;
        if (bets_off) {
          const long long rest = (p.chunks - 1 - c) / gridDim.x; // c + gridDim.x, ... < p.chunks
          at = atomicAdd(redo, static_cast<unsigned int>(rest));
          for (long long k = 1; k <= rest; ++k)
            redo[at + k] = static_cast<unsigned int>(c + k * gridDim.x) | cmp_redo_bins;
        }
      }
      __syncthreads();
      if (bets_off) break;
    } else {
      // What finish_chunk makes of such a chunk: its length as the judged, error and statistic
      // counts, no failure, sums and maxima of the error alone, unscaled (exponent 0).
      chunk_shared& s = chunk_state[parity];
      max_into(s, m_e, max_e, lane);
      max_into(s, m_ratio, max_ratio, lane);
      max_into(s, m_abs, error_is_abs ? max_e : max_abs, lane);
      const double rel = max_rel <= 0x1.fffffep127f ? static_cast<double>(max_rel) : big_statistic;
      max_into(s, m_rel, rel, lane);
      max_into(s, m_ulp, max_ulp, lane);
      sum_e = warp_tree(sum_e);
      const cmp_severity worst_of_warp = warp_worst(severity_of(worst));
      if (lane == 0) {
        const int warp = t >> 5;
        s.warp_sum[0][warp] = sum_e;
        s.warp_sum[1][warp] = s.warp_sum[2][warp] = 0.0;
        s.warp_worst[warp] = worst_of_warp;
        s.warp_worst_bad[warp] = no_severity();
      }
      if (t == 0)
        s.count[c_judged] = s.count[c_err] = s.count[c_stat] = static_cast<unsigned int>(count);
      __syncthreads();
      finish_warps(s, 0, base, 0, 0, 0, out[c]);
      parity ^= 1;
    }
    if (histograms && ++since_flush == lean_flush_chunks) {
      __syncthreads();
      flush_windowed(lean_words, hist);
      since_flush = 0;
      __syncthreads();
    }
  }
  if (histograms) {
    __syncthreads();
    flush_windowed(lean_words, hist);
  }
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
