// NVRTC's log read for the messages of a failed compile (nvrtc_internal.hpp): trimmed to its
// first errors, the first error in gcc's style, a bad kernel name expression told from an error
// in the source, and the kernels a source defines, listed to say what could have been meant.
#include <algorithm>

#include <fmt/format.h>

#include "backend/cuda/nvrtc_internal.hpp"
#include "kjudge/lex.hpp"

namespace kj::detail {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\f\v");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n\f\v");
  return s.substr(b, e - b + 1);
}

namespace {

// ---------------------------------------------------------------------------------------------
// NVRTC logs

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_error_line(std::string_view line) {
  return line.find("): error") != std::string_view::npos ||
         line.find("): catastrophic error") != std::string_view::npos ||
         line.rfind("nvrtc: error", 0) == 0 || line.rfind("error:", 0) == 0;
}

// A diagnostic line of NVRTC ("file.cu(12): error: text") as "file.cu:12: error: text"; other
// lines unchanged.
std::string gcc_style(std::string_view line) {
  const auto close = line.find("): ");
  if (close == std::string_view::npos) return std::string(line);
  const auto open = line.rfind('(', close);
  if (open == std::string_view::npos || open == 0) return std::string(line);
  const std::string_view number = line.substr(open + 1, close - open - 1);
  if (number.empty() ||
      !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::string(line);
  return fmt::format("{}:{}: {}", line.substr(0, open), number, line.substr(close + 3));
}

constexpr std::size_t log_max_lines = 30;
constexpr std::size_t log_max_bytes = 4096;

} // namespace

std::string trim_log(std::string_view log) {
  std::vector<std::string_view> lines = split_lines(log);
  while (!lines.empty() && trim(lines.back()).empty())
    lines.pop_back();
  std::size_t first = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_error_line(lines[i])) {
      if (i + 4 > log_max_lines) first = i;
      break;
    }
  }
  std::string out;
  if (first > 0) out += fmt::format("... ({} lines of warnings left out)\n", first);
  std::size_t i = first;
  for (; i < lines.size() && i - first < log_max_lines; ++i) {
    if (out.size() + lines[i].size() + 1 > log_max_bytes && i > first) break;
    out.append(lines[i].substr(0, log_max_bytes));
    out += '\n';
  }
  if (i < lines.size()) out += fmt::format("... ({} more lines)\n", lines.size() - i);
  return out;
}

std::string first_error_message(std::string_view log, std::string_view file_name) {
  std::string first;
  std::size_t errors = 0;
  for (std::string_view line : split_lines(log)) {
    if (!is_error_line(line)) continue;
    if (errors++ == 0) first = gcc_style(line);
  }
  if (errors == 0) return fmt::format("{}: NVRTC failed without an error line", file_name);
  if (errors == 1) return first;
  return fmt::format("{} (and {} more error{})", first, errors - 1, errors == 2 ? "" : "s");
}

// ---------------------------------------------------------------------------------------------
// Kernel names

std::vector<std::string> defined_kernels(std::string_view source) {
  std::vector<std::string> out;
  const lex::LexResult lexed = lex::tokenize(source);
  for (const auto& f : lex::find_functions(source, lexed)) {
    if (f.kind != lex::FunctionKind::global) continue;
    std::string name = f.qualified_name.empty() ? f.name : f.qualified_name;
    if (f.is_template) {
      name += '<';
      for (std::size_t i = 0; i < f.template_params.size(); ++i)
        name += (i ? ", " : "") + f.template_params[i];
      name += '>';
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

std::string base_name(std::string_view expression) {
  return std::string(trim(expression.substr(0, expression.find('<'))));
}

std::string kernels_list(const std::vector<std::string>& kernels) {
  if (kernels.empty()) return "no __global__ kernels are defined";
  constexpr std::size_t shown = 20; // a generated file can hold hundreds
  std::string out = "kernels defined: ";
  for (std::size_t i = 0; i < kernels.size() && i < shown; ++i)
    out += (i ? ", " : "") + kernels[i];
  if (kernels.size() > shown) out += fmt::format(" and {} more", kernels.size() - shown);
  return out;
}

std::optional<NameError> failed_name_expression(std::string_view log,
                                                const std::vector<std::string>& names) {
  const std::vector<std::string_view> lines = split_lines(log);
  std::optional<NameError> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_error_line(lines[i])) continue;
    if (lines[i].rfind("__nv_name_map(", 0) != 0) return std::nullopt;
    constexpr std::string_view pragma = "#pragma nv_mangled_name ";
    const auto at = i + 1 < lines.size() ? lines[i + 1].find(pragma) : std::string_view::npos;
    if (at == std::string_view::npos) continue;
    const std::string echoed(trim(lines[i + 1].substr(at + pragma.size())));
    if (!found) {
      const auto text = lines[i].find("error: ");
      found = NameError{echoed, std::string(lines[i].substr(text + 7)), false};
    }
    if (echoed != found->expression) continue;
    // NVRTC's wording for a name expression that lowers to something other than a kernel.
    if (lines[i].find("non-__global__ function") != std::string_view::npos ||
        lines[i].find("must form address of a __global__ function") != std::string_view::npos)
      found->not_a_kernel = true;
  }
  if (found) {
    for (const auto& n : names) {
      if (trim(n) == found->expression) found->expression = n;
    }
  }
  return found;
}

} // namespace kj::detail
