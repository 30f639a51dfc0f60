// The decomposition's arithmetic, apart from the backends that feed it: the tensors of one cut on
// one case, and the accumulator that turns them into terms, statistics and a culprit.
#pragma once

#include <cstdint>
#include <vector>

#include "kjudge/localize.hpp"
#include "kjudge/tensor.hpp"

namespace kj::localize {

// One problem output at one stage's cut on one case (all f64 but the device's and the
// reference's, in the output's dtype; read through HostTensor::get).
struct CutTensors {
  const HostTensor& truth;          // exact_C(exact_B): the golden
  const HostTensor& total;          // device_C(device_B): the candidate
  const HostTensor& inherited;      // exact_C(device_B)
  const HostTensor& own;            // device_C(round(exact_B))
  const HostTensor& conversion;     // exact_C(round(exact_B))
  const HostTensor& ref_total;      // reference_C(reference_B): the reference
  const HostTensor& ref_inherited;  // exact_C(reference_B)
  const HostTensor& ref_own;        // reference_C(round(exact_B))
};

// Percentiles from a strided sample of at most kSampleCap elements per case and term (the
// maximum and the moments over every element): a public case holds tens of millions.
inline constexpr std::int64_t kSampleCap = std::int64_t{1} << 20;

// Signed errors in the statistic of one output's gate: absolute, relative (to |golden|), or
// the regions gate's mix (absolute where the golden is small or cancels, relative elsewhere).
class Statistic {
public:
  explicit Statistic(const OutputSpec& out);
  double operator()(double error, double golden) const;
  const std::string& name() const { return name_; }

private:
  enum class Kind { absolute, relative, regions } kind_ = Kind::absolute;
  double small_ = 0; // regions: |golden| below it is judged by absolute error
  std::string name_;
};

// The figures of one signed error series.
class Series {
public:
  void add(double e, bool sampled);
  TermStats stats() const;
  double sum = 0, sum_sq = 0, max = 0;
  std::int64_t count = 0;

private:
  std::vector<float> sample_; // |e|
};

class Accumulator {
public:
  explicit Accumulator(const Problem& problem);
  // The stage's own tensor against the golden's, for the candidate and the reference.
  void stage_error(std::size_t stage, const HostTensor& exact, const HostTensor& device,
                   const HostTensor& reference);
  void cut(std::size_t stage, std::size_t output, const CutTensors& t);
  // The statistics, the orthogonality diagnostic and the culprit into `l`.
  void finish(Localization& l) const;

private:
  struct AtOutput {
    Series kernel[5], reference[5]; // inherited, own, interaction, total, conversion
    double cross = 0, ref_cross = 0; // sum of inherited x own
    bool seen = false;
  };
  const Problem& problem_;
  std::vector<Statistic> statistics_;
  std::vector<std::vector<AtOutput>> cuts_; // [stage][output]
  std::vector<std::pair<Series, Series>> stages_;
};

// The culprit of a finished localisation (its cuts filled): see Localization::culprit.
void name_culprit(const Problem& problem, Localization& l);

} // namespace kj::localize
