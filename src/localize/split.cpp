// The split of a staged problem and of a candidate at each stage's cut (kjudge/localize.hpp):
// derived problems and candidates that the ordinary oracle and runners run, so localisation
// reuses every defence of a check.
#include <algorithm>

#include <fmt/format.h>

#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"

namespace kj::localize {

namespace {

bool names(const LaunchSpec& l, const std::string& tensor) {
  return std::find(l.args.begin(), l.args.end(), tensor) != l.args.end();
}

OutputSpec stage_output(const Problem& p, const StageSpec& s) {
  OutputSpec out;
  out.name = s.name;
  out.dtype = s.dtype;
  out.shape = s.shape;
  out.where = s.where;
  out.policy = parse_policy("relative", s.where);
  for (const OutputSpec& o : p.outputs)
    if (is_float(o.dtype)) {
      out.policy = o.policy;
      break;
    }
  return out;
}

InputSpec stage_input(const StageSpec& s) {
  InputSpec in;
  in.name = s.name;
  in.dtype = s.dtype;
  in.shape = s.shape;
  in.dist = parse_distribution("normal(0, 1)", s.where); // never drawn: prepare_on gives it
  in.where = s.where;
  return in;
}

// The index of the launch of `launches` that completes stage `stage`.
std::size_t completing_launch(const std::vector<LaunchSpec>& launches, const std::string& stage) {
  for (std::size_t k = 0; k < launches.size(); ++k)
    if (launches[k].stage == stage) return k;
  return launches.size();
}

const ScratchSpec* buffer_of(const Candidate& c, const std::string& stage) {
  for (const ScratchSpec& s : c.scratch)
    if (s.stage == stage) return &s;
  return nullptr;
}

// The candidate's launches with each stage buffer's name replaced by its stage's, and those
// buffers dropped from its scratch.
Candidate stages_renamed(const Candidate& c) {
  Candidate out = c;
  for (LaunchSpec& l : out.source.launches)
    for (std::string& a : l.args)
      for (const ScratchSpec& s : c.scratch)
        if (!s.stage.empty() && a == s.name) a = s.stage;
  std::erase_if(out.scratch, [](const ScratchSpec& s) { return !s.stage.empty(); });
  return out;
}

} // namespace

Problem with_stages_as_outputs(const Problem& problem) {
  Problem p = problem;
  for (const StageSpec& s : problem.stages) p.outputs.push_back(stage_output(problem, s));
  p.stages.clear();
  return p;
}

Candidate with_stages_as_outputs(const Problem& problem, const Candidate& candidate) {
  (void)problem;
  return stages_renamed(candidate);
}

Problem after_cut(const Problem& problem, std::size_t s) {
  Problem p = problem;
  const std::vector<LaunchSpec>& all = problem.reference.launches;
  const std::size_t k = completing_launch(all, problem.stages[s].name);
  p.reference.launches.assign(all.begin() + static_cast<std::ptrdiff_t>(k) + 1, all.end());
  p.inputs.push_back(stage_input(problem.stages[s]));
  for (std::size_t later = s + 1; later < problem.stages.size(); ++later)
    p.outputs.push_back(stage_output(problem, problem.stages[later]));
  p.stages.clear();
  p.adopted_cases.clear();
  return p;
}

Candidate after_cut(const Problem& problem, const Candidate& candidate, std::size_t s) {
  Candidate c = stages_renamed(candidate);
  const std::size_t k = completing_launch(candidate.source.launches, problem.stages[s].name);
  c.source.launches.erase(c.source.launches.begin(),
                          c.source.launches.begin() + static_cast<std::ptrdiff_t>(k) + 1);
  return c;
}

std::optional<std::string> unsplittable(const Problem& problem, const Candidate& c) {
  if (problem.stages.empty())
    return fmt::format("problem '{}' declares no [[stage]]: there is nothing to split",
                       problem.name);
  const std::vector<LaunchSpec>& launches = c.source.launches;
  std::size_t previous = 0;
  for (std::size_t s = 0; s < problem.stages.size(); ++s) {
    const std::string& stage = problem.stages[s].name;
    const ScratchSpec* buffer = buffer_of(c, stage);
    if (!buffer)
      return fmt::format("the candidate does not expose stage '{}': no [[scratch]] has `stage = "
                         "\"{}\"`",
                         stage, stage);
    const std::size_t k = completing_launch(launches, stage);
    if (k == launches.size())
      return fmt::format("the candidate does not say which launch completes stage '{}': give it "
                         "`stage = \"{}\"` in its [[launch]]",
                         stage, stage);
    if (s > 0 && k < previous)
      return fmt::format("launch[{}] completes stage '{}' before launch[{}] completes stage '{}': "
                         "the problem's stages come in that order",
                         k, stage, previous, problem.stages[s - 1].name);
    previous = k;
    const bool read_later = std::any_of(launches.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                        launches.end(),
                                        [&](const LaunchSpec& l) { return names(l, buffer->name); });
    if (!read_later)
      return fmt::format("stage '{}' is produced and consumed inside launch[{}] ('{}'): a fused "
                         "kernel cannot be split there (no later launch reads '{}')",
                         stage, k, launches[k].kernel, buffer->name);
    for (const ScratchSpec& other : c.scratch) {
      if (!other.stage.empty()) continue;
      const auto uses = [&](const LaunchSpec& l) { return names(l, other.name); };
      const bool before = std::any_of(launches.begin(),
                                      launches.begin() + static_cast<std::ptrdiff_t>(k) + 1, uses);
      const bool after = std::any_of(launches.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                     launches.end(), uses);
      if (before && after)
        return fmt::format("scratch '{}' is used on both sides of stage '{}''s cut (after "
                           "launch[{}]): the launches after a cut may read only the stage",
                           other.name, stage, k);
    }
    for (std::size_t earlier = 0; earlier < s; ++earlier) {
      const ScratchSpec* e = buffer_of(c, problem.stages[earlier].name);
      if (std::any_of(launches.begin() + static_cast<std::ptrdiff_t>(k) + 1, launches.end(),
                      [&](const LaunchSpec& l) { return names(l, e->name); }))
        return fmt::format("stage '{}''s buffer '{}' is read after stage '{}''s cut: each stage "
                           "feeds only the launches up to the next cut",
                           problem.stages[earlier].name, e->name, stage);
    }
  }
  return std::nullopt;
}

} // namespace kj::localize
