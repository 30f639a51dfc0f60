// A check's backend opened outside a check, over one derived problem: localize's sides and
// whatif's oracles run the check's oracle and runners on cases of their own choosing.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "judge/backend.hpp"
#include "judge/check_settings.hpp"
#include "judge/trace.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"

namespace kj::localize {

struct OpenedBackend {
  Problem problem;
  CheckOptions options;
  judge::CheckSettings settings{options}; // (refers to `options`: the object stays where made)
  judge::PhaseTrace trace;
  Verdict verdict;
  std::unique_ptr<judge::CheckBackend> backend;

  // `command` prefixes a refusal of the settings ("localize", "whatif").
  OpenedBackend(Problem p, const CheckOptions& o, Backend b, const std::string& command)
      : problem(std::move(p)), options(o) {
    options.backend = b;
    settings.backend = b;
    settings.trace = &trace;
    if (auto refused = judge::resolve_check_settings(settings, verdict))
      throw SpecError({}, command + ": " + *refused);
    CaseCache* no_cache = nullptr;
    backend = judge::make_backend(settings, problem, no_cache, verdict);
  }
  OpenedBackend(const OpenedBackend&) = delete;
  OpenedBackend& operator=(const OpenedBackend&) = delete;
};

} // namespace kj::localize
