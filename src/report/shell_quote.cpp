// Quoting for the replay commands verdicts print: a word a POSIX shell reads back unchanged.
#include <string>

#include "kjudge/report.hpp"

namespace kj {

std::string shell_quote(const std::string& word) {
  // No `~`: the shell expands it at the start of a word.
  const bool plain =
      !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                              "OPQRSTUVWXYZ0123456789_./:=+-,@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (const char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace kj
