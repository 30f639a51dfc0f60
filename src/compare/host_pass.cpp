// The host's pass (pass.hpp): the GPU comparator's chunks, lanes and sum trees replayed on the
// CPU, so a host finding is the device's bit for bit. Chunks are independent until the trees, so
// CompareInputs::threads workers judge them at once, each chunk as one worker alone would.
#include "pass.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "format.hpp"
#include "percentiles.hpp"

namespace kj {

using compare_format::kNaN;
using detail::cmp_element;
using detail::cmp_stats;
using detail::compare_params;

namespace {

constexpr int kThreads = detail::cmp_threads;
constexpr int kPerThread = detail::cmp_per_thread;

// Element i of a tensor as a double (HostTensor::get's value; f32 and f64 read directly), NaN
// for a missing tensor.
double read_or_nan(const HostTensor* t, std::int64_t i) {
  if (!t) return kNaN;
  if (t->dtype() == DType::f32) return static_cast<double>(t->data<float>()[i]);
  if (t->dtype() == DType::f64) return t->data<double>()[i];
  return t->get(i);
}

// The stride-doubling tree over stats[first, first + count): the tree of chunks (a slice's, or
// the whole output's). Power-of-two groups of it are themselves trees, so the device may
// reduce it group by group.
cmp_stats tree_of(std::vector<cmp_stats> stats) {
  cmp_stats none;
  detail::empty_stats(none);
  if (stats.empty()) return none;
  const std::size_t m = stats.size();
  for (std::size_t s = 1; s < m; s <<= 1)
    for (std::size_t i = 0; i + s < m; i += 2 * s)
      detail::combine_stats(stats[i], stats[i + s]);
  return stats[0];
}

// The flat index of position q of slice s (slice-major order; flat order when outer == 1).
std::int64_t flat_of(const SliceLayout& l, std::int64_t s, std::int64_t q) {
  if (l.axis < 0) return q;
  const std::int64_t o = q / l.inner, i = q % l.inner;
  return (o * l.extent + s) * l.inner + i;
}

// One worker's scratch: a lane per device thread, a chunk's terms, the lanes' sums, and its own
// histogram counts (added up after the pass).
struct ChunkScratch {
  std::vector<detail::cmp_lane> lanes;
  std::vector<double> terms, lane_e, lane_r, lane_g;
  std::vector<unsigned long long> hist;

  ChunkScratch(const compare_params& p, bool histograms)
      : lanes(kThreads),
        // No chunk holds more than a slice's elements (a small output allocates little: the
        // whole chunk's 393 KB made a 16-element comparison cost 34 us).
        terms(3 * static_cast<std::size_t>(std::min<std::int64_t>(detail::cmp_chunk, p.slice_len))),
        lane_e(kThreads), lane_r(kThreads), lane_g(kThreads),
        hist(histograms ? static_cast<std::size_t>(detail::cmp_histograms) * detail::cmp_hist_bins : 0) {}
};

// Judges one chunk of a pass into its statistics, as the device's block does: one lane per
// device thread, each taking its elements in the device's order (lane t: the chunk's elements
// t, t + kThreads, ...), so the sums add in the same order.
class ChunkJudge {
public:
  ChunkJudge(HostPassSource& source, const SliceLayout& l, const compare_params& p,
             const std::vector<double>* bounds, bool histograms)
      : source_(source), l_(l), p_(p), bounds_(bounds), histograms_(histograms),
        scaled_(detail::scaled_sums(p)) {}

  void judge(std::int64_t c, ChunkScratch& w, cmp_stats& st) const {
    const std::int64_t s = c / p_.chunks_per_slice;
    const std::int64_t q0 = (c % p_.chunks_per_slice) * detail::cmp_chunk;
    const std::int64_t q1 = std::min(q0 + detail::cmp_chunk, p_.slice_len);
    const double bound = bounds_ ? (*bounds_)[static_cast<std::size_t>(s)] : kNaN;
    detail::empty_stats(st);
    // Only lanes holding elements (an empty one is every merge's identity and adds +0.0).
    const auto active = static_cast<std::size_t>(std::min<std::int64_t>(q1 - q0, kThreads));
    for (detail::cmp_lane& lane : std::span(w.lanes).first(active))
      detail::empty_lane(lane);
    for (std::int64_t q = q0; q < q1; ++q) {
      const std::int64_t flat = flat_of(l_, s, q);
      const auto k = static_cast<unsigned int>(q - q0);
      const ElementValues v = source_.at(flat);
      const cmp_element el = detail::judge_element_hd(p_, v.c, v.g, v.r, bound);
      unsigned int keys[detail::cmp_histograms];
      detail::lane_add(p_, w.lanes[k % kThreads], el, v.c, k, flat, static_cast<int>(k / kThreads),
                       scaled_, &w.terms[3 * static_cast<std::size_t>(k)],
                       histograms_ ? keys : nullptr);
      // The histograms' counts, in any order.
      for (int h = 0; histograms_ && h < detail::cmp_histograms; ++h)
        if (keys[h] != detail::cmp_no_key)
          ++w.hist[static_cast<std::size_t>(h) * detail::cmp_hist_bins + keys[h]];
      if (el.status == detail::st_fail_nonfinite)
        st.first_nonfinite = std::min<long long>(st.first_nonfinite, flat);
      if (el.status == detail::st_fail_mismatch)
        st.first_mismatch = std::min<long long>(st.first_mismatch, flat);
      const bool failing = el.status == detail::st_fail_nonfinite ||
                           el.status == detail::st_fail_mismatch || el.bad;
      if (failing && st.first_count < detail::cmp_first_max) st.first[st.first_count++] = flat;
    }
    unsigned long long count[detail::c_slots] = {};
    for (const detail::cmp_lane& lane : std::span(w.lanes).first(active)) {
      for (int k = 0; k < detail::c_slots; ++k)
        count[k] += lane.count[k];
      st.worst = detail::worse_of(st.worst, lane.worst);
      st.worst_bad = detail::worse_of(st.worst_bad, lane.worst_bad);
      st.max_e = std::max(st.max_e, lane.max_e);
      st.max_r = std::max(st.max_r, lane.max_r);
      st.max_g = std::max(st.max_g, lane.max_g);
      st.max_ratio = std::max(st.max_ratio, lane.max_ratio);
      st.max_abs = std::max(st.max_abs, lane.max_abs);
      st.max_rel = std::max(st.max_rel, lane.max_rel);
      st.max_ulp = std::max(st.max_ulp, lane.max_ulp);
    }
    st.judged = static_cast<long long>(count[detail::c_judged]);
    st.settled = static_cast<long long>(count[detail::c_settled]);
    st.excused = static_cast<long long>(count[detail::c_excused]);
    st.overflows = static_cast<long long>(count[detail::c_overflows]);
    st.nonfinite = static_cast<long long>(count[detail::c_nonfinite]);
    st.mismatch = static_cast<long long>(count[detail::c_mismatch]);
    st.bad = static_cast<long long>(count[detail::c_bad]);
    st.err_count = static_cast<long long>(count[detail::c_err]);
    st.ref_count = static_cast<long long>(count[detail::c_ref]);
    st.ref_nonfinite = static_cast<long long>(count[detail::c_ref_nonfinite]);
    st.stat_count = static_cast<long long>(count[detail::c_stat]);
    // The sums in the device's order: each thread's elements in turn, then the trees.
    const long long ee = detail::chunk_exponent(p_, st.max_e), er = detail::chunk_exponent(p_, st.max_r),
                    eg = detail::chunk_exponent(p_, st.max_g);
    const std::size_t warps_active = (active + 31) / 32; // their empty lanes must add zeros
    for (std::vector<double>* v : {&w.lane_e, &w.lane_r, &w.lane_g})
      std::fill(v->begin() + active, v->begin() + warps_active * 32, 0.0); // (the trees sum in place)
    for (int t = 0; t < static_cast<int>(active); ++t) {
      const detail::cmp_lane& lane = w.lanes[static_cast<std::size_t>(t)];
      double se = lane.sum_e, sr = lane.sum_r, sg = lane.sum_g;
      for (int j = 0; scaled_ && j < kPerThread; ++j) {
        const std::int64_t k = static_cast<std::int64_t>(j) * kThreads + t;
        if (k >= q1 - q0) break;
        const double* tm = &w.terms[3 * static_cast<std::size_t>(k)];
        if (tm[0] > 0.0) se = se + detail::scaled_square(tm[0], ee);
        if (tm[1] > 0.0) sr = sr + detail::scaled_square(tm[1], er);
        if (tm[2] > 0.0) sg = sg + detail::scaled_square(tm[2], eg);
      }
      w.lane_e[static_cast<std::size_t>(t)] = se;
      w.lane_r[static_cast<std::size_t>(t)] = sr;
      w.lane_g[static_cast<std::size_t>(t)] = sg;
    }
    double warp_e[detail::cmp_warps] = {}, warp_r[detail::cmp_warps] = {},
           warp_g[detail::cmp_warps] = {};
    for (int v = 0; v < static_cast<int>(warps_active); ++v) {
      warp_e[v] = detail::warp_tree_sum(&w.lane_e[static_cast<std::size_t>(v) * 32], 32);
      warp_r[v] = detail::warp_tree_sum(&w.lane_r[static_cast<std::size_t>(v) * 32], 32);
      warp_g[v] = detail::warp_tree_sum(&w.lane_g[static_cast<std::size_t>(v) * 32], 32);
    }
    st.sum_e = detail::warp_tree_sum(warp_e, detail::cmp_warps);
    st.sum_r = detail::warp_tree_sum(warp_r, detail::cmp_warps);
    st.sum_g = detail::warp_tree_sum(warp_g, detail::cmp_warps);
    st.exp_e = ee;
    st.exp_r = er;
    st.exp_g = eg;
  }

private:
  HostPassSource& source_;
  const SliceLayout& l_;
  const compare_params& p_;
  const std::vector<double>* bounds_;
  bool histograms_, scaled_;
};

// Every chunk's statistics, over up to `threads` workers (chunk c to worker c mod workers; the
// caller's thread is worker 0), and the histograms' counts summed.
std::vector<cmp_stats> judge_chunks(const ChunkJudge& judge, const compare_params& p,
                                    bool histograms, int threads,
                                    std::vector<unsigned long long>& hist) {
  std::vector<cmp_stats> chunks(static_cast<std::size_t>(p.chunks));
  const std::int64_t workers = std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(p.chunks, 1));
  std::vector<ChunkScratch> scratch;
  for (std::int64_t t = 0; t < workers; ++t) scratch.emplace_back(p, histograms);
  std::exception_ptr failed;
  std::mutex failed_mutex;
  const auto work = [&](std::int64_t t) {
    try {
      for (std::int64_t c = t; c < p.chunks; c += workers)
        judge.judge(c, scratch[static_cast<std::size_t>(t)], chunks[static_cast<std::size_t>(c)]);
    } catch (...) {
      const std::lock_guard lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool; // (joined before the scratch goes)
    for (std::int64_t t = 1; t < workers; ++t) {
      try {
        pool.emplace_back(work, t);
      } catch (const std::system_error&) {
        work(t); // no thread to be had: this one takes the worker's share
      }
    }
    work(0);
  }
  if (failed) std::rethrow_exception(failed);
  for (const ChunkScratch& w : scratch)
    for (std::size_t i = 0; i < w.hist.size(); ++i) hist[i] += w.hist[i];
  return chunks;
}

} // namespace

HostPassSource::HostPassSource(const CompareInputs& in)
    : in_(in), layout_(slice_layout(*in.spec, in.actual->shape())) {}

ElementValues HostPassSource::at(std::int64_t flat) {
  return {read_or_nan(in_.actual, flat), read_or_nan(in_.golden, flat),
          read_or_nan(in_.reference, flat)};
}

PassSummary HostPassSource::run(const compare_params& p, const std::vector<double>* bounds,
                                bool histograms) {
  const SliceLayout& l = layout_;
  std::vector<unsigned long long> hist;
  if (histograms) hist.assign(static_cast<std::size_t>(detail::cmp_histograms) * detail::cmp_hist_bins, 0);
  const ChunkJudge judge(*this, l, p, bounds, histograms);
  std::vector<cmp_stats> chunks = judge_chunks(judge, p, histograms, in_.threads, hist);

  PassSummary out;
  if (l.axis >= 0 && p.chunks_per_slice > 0) {
    const auto cps = static_cast<std::size_t>(p.chunks_per_slice);
    for (std::int64_t s = 0; s < l.extent; ++s) {
      const auto first = chunks.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * cps);
      out.slices.push_back(tree_of(std::vector<cmp_stats>(first, first + static_cast<std::ptrdiff_t>(cps))));
    }
  } else if (l.axis >= 0) {
    cmp_stats none;
    detail::empty_stats(none);
    out.slices.assign(static_cast<std::size_t>(l.extent), none);
  }
  out.whole = tree_of(std::move(chunks));
  // Slice-major order is not flat order when the axis has dimensions before it: the first
  // failing elements are found again in flat order.
  if (l.outer > 1 && out.whole.first_count > 0) {
    out.whole.first_count = 0;
    for (std::int64_t flat = 0; flat < p.n && out.whole.first_count < detail::cmp_first_max; ++flat) {
      const std::int64_t s = (flat / l.inner) % l.extent;
      const double bound = bounds ? (*bounds)[static_cast<std::size_t>(s)] : kNaN;
      const ElementValues v = at(flat);
      const cmp_element el = detail::judge_element_hd(p, v.c, v.g, v.r, bound);
      if (el.status == detail::st_fail_nonfinite || el.status == detail::st_fail_mismatch || el.bad)
        out.whole.first[out.whole.first_count++] = flat;
    }
  }
  if (histograms) out.binned = binned_percentiles(hist, static_cast<unsigned long long>(out.whole.stat_count));
  return out;
}

ErrorStats HostPassSource::exact_statistics(const compare_params& p) {
  std::vector<double> a, rel, u;
  for (std::int64_t i = 0; i < p.n; ++i) {
    const ElementValues v = at(i);
    const cmp_element el = detail::judge_element_hd(p, v.c, v.g, v.r, kNaN);
    if (el.status != detail::st_judged || !detail::is_finite_hd(el.x)) continue;
    double x, y, z;
    detail::error_statistics(p.dtype, v.c, el.x, detail::expected_in_dtype(p), &x, &y, &z);
    a.push_back(x);
    rel.push_back(y);
    u.push_back(z);
  }
  ErrorStats s;
  s.abs = exact_percentiles_in_place(a);
  s.rel = exact_percentiles_in_place(rel);
  s.ulp = exact_percentiles_in_place(u);
  return s;
}

detail::cmp_percentiles binned_percentiles(const std::vector<unsigned long long>& histograms,
                                           unsigned long long count) {
  detail::cmp_percentiles out{};
  if (count == 0) return out;
  const unsigned long long ranks[3] = {detail::percentile_rank(count, 50, 100),
                                       detail::percentile_rank(count, 99, 100),
                                       detail::percentile_rank(count, 999, 1000)};
  for (int h = 0; h < detail::cmp_histograms; ++h) {
    const unsigned long long* bins = histograms.data() + static_cast<std::size_t>(h) * detail::cmp_hist_bins;
    unsigned long long below = 0;
    int q = 0;
    for (unsigned int b = 0; b < static_cast<unsigned int>(detail::cmp_hist_bins) && q < 3; ++b) {
      below += bins[b];
      while (q < 3 && ranks[q] < below)
        out.value[h * 3 + q++] = detail::hist_edge(b);
    }
  }
  return out;
}

} // namespace kj
