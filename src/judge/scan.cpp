// The static scan (kjudge/scan.hpp). The PTX is read line by line: module-scope `.global`
// declarations name the __device__ variables, `.file` and `.loc` give each instruction its source
// line, and within a function a register that holds a variable's address (mov of the symbol,
// cvta, arithmetic on such a register) marks the stores and atomics through it. NVRTC's PTX gives
// each virtual register one definition outside loops, so one forward walk suffices.
#include "kjudge/scan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "kjudge/lex.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%';
}

// The words of a PTX line: registers, symbols, numbers (what is between its punctuation).
std::vector<std::string_view> words_of(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (!word_char(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && (word_char(s[j]) || s[j] == '.'))
      ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// op is `name` or `name.<qualifiers>`.
bool opcode_is(std::string_view op, std::string_view name) {
  return op == name || (op.starts_with(name) && op.size() > name.size() && op[name.size()] == '.');
}

// A symbol as C++ names it (mangled ones demangled).
std::string demangled(std::string_view name) {
  return demangle(name).value_or(std::string(name));
}

// Special registers a kernel must not read, with the reason.
const std::map<std::string_view, std::string_view>& special_registers() {
  static const std::map<std::string_view, std::string_view> regs = {
      {"%clock", "a clock"},          {"%clock64", "a clock"},
      {"%globaltimer", "a clock"},    {"%globaltimer_lo", "a clock"},
      {"%globaltimer_hi", "a clock"}, {"%smid", "the SM it runs on"}};
  return regs;
}

// Device-side calls a kernel must not make, with the reason.
std::optional<std::string_view> forbidden_call(std::string_view callee) {
  if (callee == "vprintf") return "device printf";
  if (callee == "malloc" || callee == "free" || callee == "__nv_aligned_device_malloc")
    return "the device heap";
  if (callee.starts_with("cudaLaunchDevice") || callee.starts_with("cudaGetParameterBuffer"))
    return "a launch from the device";
  return std::nullopt;
}

// The function a header line (`.entry NAME(`, `.func (.param ...) NAME(`) declares.
std::string function_name(std::string_view line) {
  std::size_t at = line.find(".entry");
  std::size_t skip = 6;
  if (at == std::string_view::npos) {
    at = line.find(".func");
    skip = 5;
  }
  std::string_view rest = trim(line.substr(at + skip));
  if (!rest.empty() && rest.front() == '(') { // the return parameter
    const std::size_t close = rest.find(')');
    rest = close == std::string_view::npos ? std::string_view() : trim(rest.substr(close + 1));
  }
  std::size_t end = 0;
  while (end < rest.size() && (word_char(rest[end]) || rest[end] == '.'))
    ++end;
  return std::string(rest.substr(0, end));
}

// The variable a module-scope `.global` declaration names (`.global .align 4 .u32 g_n;`).
std::string declared_variable(std::string_view line) {
  std::string_view rest = line.substr(line.find(".global") + 7);
  while (!rest.empty()) {
    rest = trim(rest);
    const std::size_t space = rest.find_first_of(" \t");
    const std::string_view w = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space);
    if (w.empty() || w.front() == '.' || (w.front() >= '0' && w.front() <= '9')) continue;
    return std::string(w.substr(0, w.find_first_of("[;= ")));
  }
  return {};
}

// `[...]`: the first address operand of an instruction.
std::string_view address_operand(std::string_view s) {
  const std::size_t open = s.find('[');
  if (open == std::string_view::npos) return {};
  const std::size_t close = s.find(']', open);
  return s.substr(open + 1,
                  close == std::string_view::npos ? std::string_view::npos : close - open - 1);
}

// The callee of `call[.uni] (ret), NAME, (args);` or `call NAME, (args);`.
std::string_view callee_of(std::string_view operands) {
  std::size_t depth = 0;
  std::size_t i = 0;
  while (i < operands.size()) {
    const char c = operands[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && word_char(c) && c != '%') {
      std::size_t j = i;
      while (j < operands.size() && (word_char(operands[j]) || operands[j] == '.'))
        ++j;
      return operands.substr(i, j - i);
    }
    ++i;
  }
  return {};
}

struct PendingFinding {
  ScanFinding finding;
  int file_index = 0;
};

} // namespace

std::vector<ScanFinding> scan_ptx(std::string_view ptx, const std::vector<std::string>& forbid) {
  std::set<std::string, std::less<>> variables; // module-scope .global symbols
  std::map<int, std::string> files;
  std::vector<PendingFinding> found;
  std::set<std::string, std::less<>> forbidden_registers, forbidden_opcodes;
  for (const std::string& f : forbid) {
    if (f.starts_with("%")) forbidden_registers.insert(f);
    if (f.starts_with("ptx:")) forbidden_opcodes.insert(f.substr(4));
  }

  int depth = 0, loc_file = 0, loc_line = 0;
  std::string function;
  std::map<std::string, std::string, std::less<>> holds; // register -> the variable it points into
  std::string pending;                                   // an instruction's lines before its ';'

  auto add = [&](std::string what, std::string why) {
    PendingFinding p;
    p.finding.what = std::move(what);
    p.finding.why = std::move(why);
    p.finding.line = loc_line;
    p.finding.function = function;
    p.file_index = loc_file;
    found.push_back(std::move(p));
  };

  std::size_t pos = 0;
  while (pos < ptx.size()) {
    std::size_t end = ptx.find('\n', pos);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(pos, end - pos);
    pos = end + 1;
    if (const std::size_t comment = line.find("//"); comment != std::string_view::npos)
      line = line.substr(0, comment);
    line = trim(line);
    if (line.empty()) continue;

    if (line.starts_with(".file")) {
      const std::vector<std::string_view> w = words_of(line.substr(5));
      const std::size_t q1 = line.find('"'), q2 = line.find('"', q1 + 1);
      if (!w.empty() && q1 != std::string_view::npos && q2 != std::string_view::npos)
        files[std::atoi(std::string(w.front()).c_str())] =
            std::string(line.substr(q1 + 1, q2 - q1 - 1));
      continue;
    }
    if (line.starts_with(".loc")) {
      const std::vector<std::string_view> w = words_of(line.substr(4));
      if (w.size() >= 2) {
        loc_file = std::atoi(std::string(w[0]).c_str());
        loc_line = std::atoi(std::string(w[1]).c_str());
      }
      continue;
    }
    if (depth == 0) {
      if (line.find(".entry") != std::string_view::npos ||
          line.find(".func") != std::string_view::npos) {
        function = function_name(line);
        holds.clear();
        loc_line = loc_file = 0;
      } else if (line.find(".global") != std::string_view::npos) {
        if (std::string name = declared_variable(line); !name.empty()) variables.insert(name);
      }
    }
    for (char c : line) {
      if (c == '{') ++depth;
      if (c == '}') depth = std::max(0, depth - 1);
    }
    if (pending.empty() && (depth == 0 || line.front() == '.' || line.front() == '{' ||
                            line.front() == '}' || line.back() == ':'))
      continue;
    // An instruction may span lines (a call's operands do): it ends at its ';'.
    pending += ' ';
    pending += line;
    if (line.find(';') == std::string_view::npos) continue;
    const std::string statement = std::exchange(pending, std::string());

    // An instruction: [@guard] opcode operands;
    std::string_view rest = trim(statement);
    if (rest.front() == '@')
      rest = trim(rest.substr(std::min(rest.find_first_of(" \t"), rest.size())));
    const std::size_t space = rest.find_first_of(" \t");
    const std::string_view op = rest.substr(0, space);
    const std::string_view operands =
        space == std::string_view::npos ? "" : trim(rest.substr(space));
    const std::vector<std::string_view> words = words_of(operands);

    for (std::string_view w : words) {
      if (auto reg = special_registers().find(w); reg != special_registers().end())
        add(fmt::format("reads {}", w), std::string(reg->second));
      if (forbidden_registers.count(w) != 0)
        add(fmt::format("reads {}", w), "the problem forbids it");
    }
    for (const std::string& f : forbidden_opcodes)
      if (opcode_is(op, f))
        add(fmt::format("uses the PTX instruction {}", op), "the problem forbids it");
    if (opcode_is(op, "call")) {
      const std::string_view callee = callee_of(operands);
      if (auto why = forbidden_call(callee))
        add(fmt::format("calls {}", callee), std::string(*why));
      continue;
    }
    const bool writes = opcode_is(op, "st") || opcode_is(op, "atom") || opcode_is(op, "red");
    if (writes) {
      for (std::string_view w : words_of(address_operand(operands))) {
        std::string variable;
        if (variables.count(w) != 0)
          variable = std::string(w);
        else if (auto h = holds.find(w); h != holds.end())
          variable = h->second;
        if (variable.empty()) continue;
        add(fmt::format("{} the __device__ variable {}",
                        opcode_is(op, "st") ? "stores to" : "makes an atomic on",
                        demangled(variable)),
            "state kept between launches, with which a kernel can replay an earlier answer");
        break;
      }
    }
    // A register defined from a variable's address, or from a register holding one, holds it
    // too; a load's result is a value, not the address.
    if (!writes && !opcode_is(op, "ld") && !opcode_is(op, "ldu") && words.size() >= 2 &&
        words.front().starts_with("%")) {
      for (std::size_t k = 1; k < words.size(); ++k) {
        std::string variable;
        if (variables.count(words[k]) != 0)
          variable = std::string(words[k]);
        else if (auto h = holds.find(words[k]); h != holds.end())
          variable = h->second;
        if (variable.empty()) continue;
        holds[std::string(words.front())] = variable;
        break;
      }
    }
  }

  std::vector<ScanFinding> out;
  std::set<std::tuple<std::string, int, int>> seen;
  for (PendingFinding& p : found) {
    if (!seen.insert({p.finding.what, p.file_index, p.finding.line}).second) continue;
    if (auto f = files.find(p.file_index); f != files.end()) p.finding.file = f->second;
    out.push_back(std::move(p.finding));
  }
  return out;
}

std::vector<ScanFinding> scan_source(std::string_view source, std::string_view file_name,
                                     const std::vector<std::string>& forbid) {
  std::vector<ScanFinding> out;
  std::set<std::pair<std::string, int>> seen;
  const lex::LexResult lexed = lex::tokenize(source);
  for (const lex::Token& t : lexed.tokens) {
    if (t.kind != lex::TokenKind::identifier && t.kind != lex::TokenKind::preprocessor) continue;
    const std::vector<std::string_view> words = t.kind == lex::TokenKind::identifier
                                                    ? std::vector<std::string_view>{t.text(source)}
                                                    : words_of(t.text(source));
    for (std::string_view w : words) {
      if (std::find(forbid.begin(), forbid.end(), w) == forbid.end()) continue;
      if (!seen.insert({std::string(w), t.line}).second) continue;
      ScanFinding f;
      f.what = fmt::format("uses {}", w);
      f.why = "the problem forbids it";
      f.file = std::string(file_name);
      f.line = t.line;
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::optional<std::string> forbidden_constructs(std::string_view source, std::string_view file_name,
                                                std::string_view ptx,
                                                const std::vector<std::string>& forbid) {
  std::vector<ScanFinding> all = scan_source(source, file_name, forbid);
  for (ScanFinding& f : scan_ptx(ptx, forbid))
    all.push_back(std::move(f));
  if (all.empty()) return std::nullopt;
  constexpr std::size_t shown = 5;
  std::string message = "forbidden construct:";
  for (std::size_t i = 0; i < all.size() && i < shown; ++i) {
    const ScanFinding& f = all[i];
    message += fmt::format("{} {} ({})", i == 0 ? "" : ";", f.what, f.why);
    if (f.line > 0) {
      // The line in the candidate's own file by its number; in a header by the header's name.
      const std::size_t slash = f.file.find_last_of('/');
      const std::string base = slash == std::string::npos ? f.file : f.file.substr(slash + 1);
      message += base == file_name || base.empty() ? fmt::format(" at line {}", f.line)
                                                   : fmt::format(" at {}:{}", base, f.line);
    }
    if (!f.function.empty()) message += fmt::format(" in {}", demangled(f.function));
  }
  if (all.size() > shown) message += fmt::format("; {} more", all.size() - shown);
  return message;
}

} // namespace kj
