// `kjudge --worker ...`: the processes a check starts (docs/design.md "The processes"), not a
// command for users. Public only so that the kjudge executable can dispatch to it.
#pragma once

#include <string>
#include <vector>

namespace kj {

// Run the worker that `args` (those after "--worker", as the judge wrote them) name; returns its
// exit code. A malformed command line is a SpecError naming the argument.
int run_worker(const std::vector<std::string>& args);

} // namespace kj
