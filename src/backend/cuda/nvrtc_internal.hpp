// What nvrtc.cpp (the compile) takes from nvrtc_log.cpp (NVRTC's log, and the kernel names that
// messages about a failed compile show) and nvrtc_includes.cpp shares with both (trim). Private
// to src/backend/cuda.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::detail {

std::string_view trim(std::string_view s); // without leading and trailing whitespace

// The first lines of a log (at most 30 lines and 4 KiB), starting early enough to show the first
// error: when warnings fill the head of the log, the window starts at the first error instead.
std::string trim_log(std::string_view log);
// "cand.cu:10: error: expected an expression (and 2 more errors)" from a failed compile's log.
std::string first_error_message(std::string_view log, std::string_view file_name);

// NVRTC reports a bad name expression as an error in the pseudo-file `__nv_name_map`, echoing
// `#pragma nv_mangled_name EXPR` on the next line. The first such error, if every error of the
// log is of that kind (an error in the source itself is reported as it is: it may be why the
// kernel is missing).
struct NameError {
  std::string expression;    // as the caller registered it where it can be matched
  std::string error;         // NVRTC's first error about it, without the location
  bool not_a_kernel = false; // it names a __device__ function or a variable
};
std::optional<NameError> failed_name_expression(std::string_view log,
                                                const std::vector<std::string>& names);

// "softmax_rows<ROWS>" for each __global__ function of the source, for messages.
std::vector<std::string> defined_kernels(std::string_view source);
// "ns::k" of "ns::k<4, float>".
std::string base_name(std::string_view expression);
// "kernels defined: a, b" (the first 20), or that there are none.
std::string kernels_list(const std::vector<std::string>& kernels);

// The address of nvrtcVersion in the NVRTC library nvrtc_loader.cpp opened (nullptr where none
// was found): dladdr of it names the library file, which kjudge's own nvrtc* entry points don't.
void* nvrtc_library_entry_point();

} // namespace kj::detail
