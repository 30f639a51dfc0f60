// What the CUDA driver prints when a device assertion fails, read back into its fields. After a
// kernel's assert (or a direct call of the toolkit's __assertfail) fails, the context fails
// with CUDA_ERROR_ASSERT and the driver has written, for each failing thread (up to a limit of
// its own),
//   k.cu:12: void k(int): block: [1,0,0], thread: [3,0,0] Assertion `i < n` failed.
// to the process's stderr (driver 580; stdout with some older drivers). The CUDA worker keeps
// both in a memory file and reads the first such line from it. Every text in it is the
// candidate's (the condition, the file its #line names, the function), so the parse trusts
// nothing but the numbers, and the message quotes the rest (kjudge/candidate_text.hpp).
#pragma once

#include <optional>
#include <string_view>

#include "kjudge/candidate_text.hpp"

namespace kj::judge {

// The first assertion the driver's output holds; nullopt when it holds none. A condition that
// runs past the output (the driver's own cut, or the reader's) is kept as far as it goes.
std::optional<DeviceAssertion> parse_driver_assertion(std::string_view printed);

} // namespace kj::judge
