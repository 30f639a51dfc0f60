// The static scan (kjudge/static_scan.hpp). The PTX is read line by line into statements: `.global`
// and `.const` declarations (at module scope, or inside a function, where inline PTX may put
// one) name the variables and their initializers, `.file` and `.loc` give each instruction its
// source line. Then each function's registers are followed from a `.global` variable's address:
// mov of the symbol, cvta, adding an offset to it or subtracting one from it (64-bit integer
// arithmetic), mad with it as the addend, selp with it as a choice keep it an address, which a
// load may use; the difference of two addresses in one variable, and their eq/ne comparison, are
// their offsets' and tell nothing of the address. Any other use is a finding: a store or an
// atomic through it (a write to the variable), and everything else, which lets the address out
// of the registers to where the scan cannot follow it to a store: stored to memory of any state
// space, passed to a function, compared or computed on otherwise (its bits could rebuild it as a
// plain number). So are an address in a variable's initializer and the special registers that
// clock a kernel or tell one launch, SM or warp slot from another. The walk over a function
// repeats until its registers settle, so that a loop's registers, defined again after their
// uses (NVRTC's PTX is SSA outside loops), are followed too.
#include "kjudge/static_scan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "backend/cuda/ptx_scan_internal.hpp"
#include "kjudge/lex.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {

using detail::ptx::AddressFlow;
using detail::ptx::callee_of;
using detail::ptx::Declarator;
using detail::ptx::declarators_of;
using detail::ptx::declared_space;
using detail::ptx::Effect;
using detail::ptx::function_name;
using detail::ptx::has_qualifier;
using detail::ptx::opcode_is;
using detail::ptx::Registers;
using detail::ptx::registers_of;
using detail::ptx::Statement;
using detail::ptx::trim;
using detail::ptx::without_braces_and_labels;
using detail::ptx::words_of;

namespace {

// A symbol as C++ names it (mangled ones demangled).
std::string demangled(std::string_view name) {
  return demangle(name).value_or(std::string(name));
}

// A .global variable as a message names it: NVVM's string literals ($str, $str$1, ...) are
// .global too, and as writable as any.
std::string described(std::string_view variable) {
  if (variable.starts_with("$str")) return fmt::format("the string literal {}", variable);
  return fmt::format("the __device__ variable {}", demangled(variable));
}

// Special registers a kernel must not read, with the reason: the clocks and counters (a kernel
// that can time itself can tell a timed run from a judged one), and what tells one launch, SM,
// warp slot or graph from another (a launch counter needs no state when %gridid counts for it).
const std::map<std::string, std::string, std::less<>>& special_registers() {
  static const std::map<std::string, std::string, std::less<>> regs = [] {
    std::map<std::string, std::string, std::less<>> r = {
        {"%clock", "a clock"},
        {"%clock_hi", "a clock"},
        {"%clock64", "a clock"},
        {"%globaltimer", "a clock"},
        {"%globaltimer_lo", "a clock"},
        {"%globaltimer_hi", "a clock"},
        {"%smid", "the SM it runs on"},
        {"%nsmid", "the number of SMs"},
        {"%warpid", "the warp slot it runs in"},
        {"%gridid", "the launch's id"},
        {"%current_graph_exec", "the CUDA graph it runs in"}};
    for (int i = 0; i < 8; ++i) {
      r[fmt::format("%pm{}", i)] = "a performance counter";
      r[fmt::format("%pm{}_64", i)] = "a performance counter";
    }
    return r;
  }();
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

struct PendingFinding {
  ScanFinding finding;
  int file_index = 0;
};

} // namespace

std::vector<ScanFinding> scan_ptx(std::string_view ptx, const std::vector<std::string>& forbid) {
  std::set<std::string, std::less<>> forbidden_registers, forbidden_opcodes, allowed_registers;
  for (const std::string& f : forbid) {
    if (f.starts_with("%")) forbidden_registers.insert(f);
    if (f.starts_with("ptx:")) forbidden_opcodes.insert(f.substr(4));
    if (f.starts_with("!%")) allowed_registers.insert(f.substr(1));
  }

  // Read the PTX into statements.
  std::set<std::string, std::less<>> variables; // .global symbols, wherever declared
  std::map<int, std::string> files;
  std::vector<std::string> functions;
  std::set<std::string, std::less<>> external; // functions declared, not defined, here
  std::vector<Statement> statements;
  int depth = 0, loc_file = 0, loc_line = 0;
  int function = -1;
  std::string pending;     // an instruction's lines before its ';'
  std::string declaration; // a declaration's lines before its ';'
  std::string_view declaration_space;
  auto add_declaration = [&](std::string_view space, std::string text) {
    Statement s;
    s.declaration = true;
    s.op = std::string(space);
    s.operands = std::move(text);
    s.line = depth > 0 ? loc_line : 0;
    s.file_index = depth > 0 ? loc_file : 0;
    s.function = depth > 0 ? function : -1;
    if (s.op == ".global")
      for (const Declarator& d : declarators_of(s.operands))
        variables.insert(d.name);
    statements.push_back(std::move(s));
  };
  // One statement of a function's body, without its ';': [@guard] opcode operands, or a
  // directive (.reg, .pragma, ...: nothing to scan), or a variable declaration, which inline
  // PTX may make inside a function.
  auto add_statement = [&](std::string_view text) {
    if (text.empty()) return;
    if (text.front() == '.') {
      if (const std::string_view space = declared_space(text); !space.empty())
        add_declaration(space, std::string(text));
      return;
    }
    if (text.front() == '@')
      text = trim(text.substr(std::min(text.find_first_of(" \t"), text.size())));
    const std::size_t space = text.find_first_of(" \t");
    Statement s;
    s.op = std::string(text.substr(0, space));
    s.operands = space == std::string_view::npos ? "" : std::string(trim(text.substr(space)));
    s.line = loc_line;
    s.file_index = loc_file;
    s.function = function;
    statements.push_back(std::move(s));
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
    // A module-scope variable declaration, whole up to its ';' (its braces are its
    // initializer's).
    if (depth == 0 && pending.empty() && declaration.empty())
      declaration_space = declared_space(line);
    if (!declaration_space.empty()) {
      declaration += ' ';
      declaration += line;
      if (line.find(';') == std::string_view::npos) continue;
      add_declaration(declaration_space, std::exchange(declaration, std::string()));
      declaration_space = {};
      continue;
    }
    if (depth == 0 && (line.find(".entry") != std::string_view::npos ||
                       line.find(".func") != std::string_view::npos)) {
      functions.push_back(function_name(line));
      function = static_cast<int>(functions.size()) - 1;
      loc_line = loc_file = 0;
      if (line.find(".extern") != std::string_view::npos) external.insert(functions.back());
    }
    for (char c : line) {
      if (c == '{') ++depth;
      if (c == '}') depth = std::max(0, depth - 1);
    }
    if (pending.empty() && depth == 0) continue; // headers, parameters, the closing brace
    // A function's body: its statements end at ';'. One may span lines (a call's operands
    // do), and inline PTX may put several on a line, with a block's braces and labels.
    pending += ' ';
    pending += line;
    for (std::size_t semicolon = pending.find(';'); semicolon != std::string::npos;
         semicolon = pending.find(';')) {
      add_statement(without_braces_and_labels(std::string_view(pending).substr(0, semicolon)));
      pending.erase(0, semicolon + 1);
    }
    if (without_braces_and_labels(pending).empty()) pending.clear();
  }

  // Each function's registers that hold an address.
  std::vector<std::vector<const Statement*>> bodies(functions.size());
  for (const Statement& s : statements)
    if (s.function >= 0) bodies[static_cast<std::size_t>(s.function)].push_back(&s);
  std::vector<Registers> registers(functions.size());
  for (std::size_t f = 0; f < functions.size(); ++f)
    registers[f] = registers_of(bodies[f], variables);

  // The findings, in PTX order. An address passed as an argument waits for its call: the
  // toolkit's own __assertfail (assert) and vprintf (printf, a finding of its own) only read
  // the strings they are given, which are .global variables too.
  std::vector<PendingFinding> found;
  std::vector<PendingFinding> arguments; // the next call's, until it comes
  int arguments_function = -1;           // the function they are in
  const Registers none;
  for (const Statement& s : statements) {
    auto finding = [&](std::string what, std::string why) {
      PendingFinding p;
      p.finding.what = std::move(what);
      p.finding.why = std::move(why);
      p.finding.line = s.line;
      p.finding.function = s.function >= 0 ? functions[static_cast<std::size_t>(s.function)] : "";
      p.file_index = s.file_index;
      return p;
    };
    auto add = [&](std::string what, std::string why) {
      found.push_back(finding(std::move(what), std::move(why)));
    };
    auto flush_arguments = [&](bool keep) {
      if (keep) found.insert(found.end(), arguments.begin(), arguments.end());
      arguments.clear();
    };
    if (s.function != arguments_function) flush_arguments(true);
    arguments_function = s.function;
    if (s.declaration) {
      for (const Declarator& d : declarators_of(s.operands))
        for (std::string_view w : words_of(d.initializer))
          if (variables.count(w) != 0) {
            add(fmt::format("initializes {} with the address of {}", demangled(d.name),
                            described(w)),
                "an address kept in memory, which a load hands to a store the scan does not see");
            break;
          }
      continue;
    }
    const std::vector<std::string_view> words = words_of(s.operands);
    for (std::string_view w : words) {
      if (auto reg = special_registers().find(w);
          reg != special_registers().end() && allowed_registers.count(w) == 0)
        add(fmt::format("reads {}", w), reg->second);
      if (forbidden_registers.count(w) != 0)
        add(fmt::format("reads {}", w), "the problem forbids it");
    }
    for (const std::string& f : forbidden_opcodes)
      if (opcode_is(s.op, f))
        add(fmt::format("uses the PTX instruction {}", s.op), "the problem forbids it");
    if (opcode_is(s.op, "call")) {
      const std::string_view callee = callee_of(s.operands);
      flush_arguments(
          !((callee == "__assertfail" || callee == "vprintf") && external.count(callee) != 0));
      if (auto why = forbidden_call(callee))
        add(fmt::format("calls {}", callee), std::string(*why));
    }
    const Effect e =
        AddressFlow(variables,
                    s.function >= 0 ? registers[static_cast<std::size_t>(s.function)] : none)
            .effect_of(s);
    if (!e.writes.empty())
      add(fmt::format("{} {}", opcode_is(s.op, "st") ? "stores to" : "makes an atomic on",
                      described(e.writes)),
          "state kept between launches, with which a kernel can replay an earlier answer");
    if (!e.lets_out.empty()) {
      PendingFinding p = finding(fmt::format("takes the address of {}", described(e.lets_out)),
                                 "only a load may use its address: stored, passed or computed "
                                 "on, it can come back to a store the scan does not see");
      if (opcode_is(s.op, "st") && has_qualifier(s.op, "param"))
        arguments.push_back(std::move(p));
      else
        found.push_back(std::move(p));
    }
  }
  found.insert(found.end(), arguments.begin(), arguments.end()); // a call that never came

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

std::optional<std::string> unfenced_handoff(std::string_view ptx, std::string_view file_name) {
  // Source lines (0: none yet): the latest unfenced global store; the first atomic after one,
  // and that store.
  int store = 0, handoff = 0, handed = 0;
  bool in_function = false, pending_store = false, pending_handoff = false;
  int loc = 0;
  std::string function;
  auto fence = [](std::string_view op) {
    const bool wide = has_qualifier(op, "gpu") || has_qualifier(op, "sys");
    return opcode_is(op, "membar") ? !has_qualifier(op, "cta")
           : opcode_is(op, "fence")
               ? wide && (has_qualifier(op, "sc") || has_qualifier(op, "acq_rel"))
               : false;
  };
  std::size_t pos = 0;
  while (pos < ptx.size()) {
    std::size_t end = ptx.find('\n', pos);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = trim(ptx.substr(pos, end - pos));
    pos = end + 1;
    if (line.starts_with(".loc")) {
      const std::vector<std::string_view> w = words_of(line.substr(4));
      if (w.size() >= 2) loc = std::atoi(std::string(w[1]).c_str());
      continue;
    }
    if (line.find(".entry") != std::string_view::npos ||
        line.find(".func") != std::string_view::npos) {
      function = function_name(line);
      in_function = true;
      pending_store = pending_handoff = false;
      continue;
    }
    line = without_braces_and_labels(line);
    const std::string_view op = line.substr(0, line.find_first_of(" \t"));
    if (!in_function) continue;
    if (fence(op)) {
      pending_store = false;
    } else if (opcode_is(op, "st") && has_qualifier(op, "global")) {
      pending_store = true;
      store = loc;
    } else if (opcode_is(op, "atom") && !has_qualifier(op, "shared")) {
      const bool releases = (has_qualifier(op, "release") || has_qualifier(op, "acq_rel")) &&
                            (has_qualifier(op, "gpu") || has_qualifier(op, "sys"));
      if (releases) pending_store = false;
      if (pending_store && !pending_handoff) {
        pending_handoff = true;
        handoff = loc;
        handed = store;
      }
    } else if (pending_handoff && opcode_is(op, "ld") && has_qualifier(op, "global") &&
               !has_qualifier(op, "nc")) {
      return fmt::format("data race: a store to global memory at {0}:{1} reaches an atomic at "
                         "{0}:{2} with no __threadfence() between them, and a load at {0}:{3} "
                         "follows the atomic in {4}: a block that reads after seeing the "
                         "atomic's result may read the store's old value (the \"last block "
                         "done\" pattern needs the fence)",
                         file_name, handed, handoff, loc, demangled(function));
    }
  }
  return std::nullopt;
}

} // namespace kj
