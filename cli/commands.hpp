// The kjudge command line as a library call, so tests run it in-process. `run` parses the
// arguments with CLI11, dispatches to the subcommand, prints to the given streams and returns
// docs/design.md's exit code; it never lets an exception escape.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace kj::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kj::cli
