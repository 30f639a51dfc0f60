// The static scan (kjudge/scan.hpp). The PTX is read line by line into statements: `.global`
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

// One of the qualifiers of op (`.s64` in `add.s64`), not its name.
bool has_qualifier(std::string_view op, std::string_view qualifier) {
  std::size_t at = op.find('.');
  while (at != std::string_view::npos) {
    const std::size_t next = op.find('.', at + 1);
    if (op.substr(at + 1, next == std::string_view::npos ? next : next - at - 1) == qualifier)
      return true;
    at = next;
  }
  return false;
}

bool is_number(std::string_view w) {
  return !w.empty() && w.front() >= '0' && w.front() <= '9';
}

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

// The state space a variable declaration opens with (`.global`, `.const`), after its linkage
// (`.visible .global .align 4 .u32 g_n;`); "" for any other line. Kernel parameters
// (`.param .u64 .ptr .global ...`) are not declarations of either.
std::string_view declared_space(std::string_view line) {
  while (true) {
    bool linkage = false;
    for (std::string_view w : {".visible", ".extern", ".weak", ".common"})
      if (line.starts_with(w) && line.size() > w.size() &&
          (line[w.size()] == ' ' || line[w.size()] == '\t')) {
        line = trim(line.substr(w.size()));
        linkage = true;
      }
    if (!linkage) break;
  }
  for (std::string_view space : {".global", ".const"})
    if (line.starts_with(space) && line.size() > space.size() &&
        (line[space.size()] == ' ' || line[space.size()] == '\t'))
      return space;
  return {};
}

struct Declarator {
  std::string name;
  std::string initializer; // what follows `=`; "" without one
};

// The variables a declaration statement names: `.global .align 4 .u32 a, b[4] = {1, 2, 3, 4};`
// is a and b (PTX takes a list, each with its own initializer).
std::vector<Declarator> declarators_of(std::string_view statement) {
  std::string_view rest = trim(statement);
  // The directives: linkage, state space, .align N, the type, .attribute(...), .v4, ...
  while (!rest.empty() && rest.front() == '.') {
    std::size_t end = rest.find_first_of(" \t");
    const std::size_t open = rest.find('(');
    if (open != std::string_view::npos && open < end) end = rest.find(')', open);
    const std::string_view directive = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end + 1));
    if (directive == ".align") {
      const std::size_t space = rest.find_first_of(" \t");
      rest = space == std::string_view::npos ? std::string_view() : trim(rest.substr(space));
    }
  }
  if (const std::size_t semicolon = rest.rfind(';'); semicolon != std::string_view::npos)
    rest = rest.substr(0, semicolon);
  std::vector<Declarator> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= rest.size(); ++i) {
    const char c = i < rest.size() ? rest[i] : ',';
    if (c == '{' || c == '(') ++depth;
    if (c == '}' || c == ')') --depth;
    if (c != ',' || depth > 0) continue;
    const std::string_view part = trim(rest.substr(start, i - start));
    start = i + 1;
    std::size_t end = 0;
    while (end < part.size() && word_char(part[end]))
      ++end;
    if (end == 0) continue;
    Declarator d;
    d.name = std::string(part.substr(0, end));
    if (const std::size_t eq = part.find('='); eq != std::string_view::npos)
      d.initializer = std::string(part.substr(eq + 1));
    out.push_back(std::move(d));
  }
  return out;
}

// A piece of a function's body without the block braces and labels that open it
// (`{ $L__BB0_2: mov.u32 ...`).
std::string_view without_braces_and_labels(std::string_view s) {
  while (true) {
    s = trim(s);
    if (!s.empty() && (s.front() == '{' || s.front() == '}')) {
      s.remove_prefix(1);
      continue;
    }
    std::size_t end = 0;
    while (end < s.size() && word_char(s[end]))
      ++end;
    if (end > 0 && end < s.size() && s[end] == ':' && (end + 1 == s.size() || s[end + 1] != ':')) {
      s.remove_prefix(end + 1);
      continue;
    }
    return s;
  }
}

// `[...]`: the first address operand of an instruction.
std::string_view address_operand(std::string_view s) {
  const std::size_t open = s.find('[');
  if (open == std::string_view::npos) return {};
  const std::size_t close = s.find(']', open);
  return s.substr(open + 1,
                  close == std::string_view::npos ? std::string_view::npos : close - open - 1);
}

// The operands outside the first `[...]`.
std::string outside_address(std::string_view s) {
  const std::size_t open = s.find('[');
  if (open == std::string_view::npos) return std::string(s);
  const std::size_t close = s.find(']', open);
  return std::string(s.substr(0, open)) +
         (close == std::string_view::npos ? "" : std::string(s.substr(close + 1)));
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

// One statement of a function body or of the module: an instruction (`op operands;`) or a
// variable declaration (op is its state space, operands the whole statement).
struct Statement {
  bool declaration = false;
  std::string op;
  std::string operands;
  int line = 0;
  int file_index = 0;
  int function = -1; // index into the module's function names; -1 at module scope
};

// What a register holds, as far as a variable's address goes. `offset`: the variable's address
// plus a value that does not depend on it (so the difference of two such registers of one
// variable is that value alone). `either`: that, or a value unrelated to any address (a selp
// between the two, or two variables). `derived`: computed from an address in a way that is
// already a finding; still followed, so that a store through it is named as a write.
enum class Holding { offset, either, derived };

struct Held {
  Holding how = Holding::offset;
  std::string variable;
};

using Registers = std::map<std::string, Held, std::less<>>;

// What one instruction does with the addresses it is given.
struct Effect {
  std::optional<Held> result; // what its destination registers then hold
  std::string writes;         // the variable it stores to or makes an atomic on
  std::string lets_out;       // the variable whose address it lets out of the registers
};

// The destination registers of an instruction: `%r1`, `{%f1, %f2}`; none when its operands
// open with an address (`st [a], v`, `red [a], v`).
std::vector<std::string_view> destinations_of(std::string_view operands) {
  if (operands.empty() || operands.front() == '[') return {};
  if (operands.front() == '{') return words_of(operands.substr(0, operands.find('}')));
  const std::vector<std::string_view> w = words_of(operands);
  if (w.empty()) return {};
  return {w.front()};
}

class AddressFlow {
public:
  AddressFlow(const std::set<std::string, std::less<>>& variables, const Registers& registers)
      : variables_(variables), registers_(registers) {}

  // What the word holds: a variable's symbol is its address; a register what the walk found.
  std::optional<Held> held(std::string_view w) const {
    if (variables_.count(w) != 0) return Held{Holding::offset, std::string(w)};
    if (auto r = registers_.find(w); r != registers_.end()) return r->second;
    return std::nullopt;
  }

  Effect effect_of(const Statement& s) const {
    const std::string_view op = s.op;
    const std::string_view operands = s.operands;
    Effect e;
    const std::vector<std::string_view> dests = destinations_of(operands);
    std::vector<std::string_view> sources = words_of(operands);
    sources.erase(sources.begin(), sources.begin() + static_cast<std::ptrdiff_t>(dests.size()));

    // The operands other than the address and the destinations (which come first).
    const std::string outside_text = outside_address(operands);
    std::vector<std::string_view> values = words_of(outside_text);
    values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(
                                                      std::min(dests.size(), values.size())));
    // A load, or a prefetch: an address is its operand, the value loaded is not an address
    // (no variable's initializer holds one, and storing one is a finding).
    if (opcode_is(op, "ld") || opcode_is(op, "ldu") || opcode_is(op, "prefetch") ||
        opcode_is(op, "prefetchu")) {
      lets_out_any(values, {}, e);
      return e;
    }
    // A store or an atomic writes through its address; the value it stores must be no address.
    if (opcode_is(op, "st") || opcode_is(op, "atom") || opcode_is(op, "red")) {
      for (std::string_view w : words_of(address_operand(operands)))
        if (auto h = held(w)) {
          e.writes = h->variable;
          break;
        }
      lets_out_any(values, {}, e);
      return e;
    }
    if (opcode_is(op, "call")) {
      lets_out_any(words_of(operands), {}, e);
      return e;
    }
    // The operations that keep an address an address. Integer arithmetic at the address's
    // width only: a float add rounds the address, a carry or a saturation tells something of
    // it, and each would let its bits reach a value.
    const bool wide =
        has_qualifier(op, "s64") || has_qualifier(op, "u64") || has_qualifier(op, "b64");
    const bool plain = !has_qualifier(op, "cc") && !has_qualifier(op, "sat") &&
                       !has_qualifier(op, "hi") && !opcode_is(op, "addc") &&
                       !opcode_is(op, "subc") && !opcode_is(op, "madc");
    const bool vector = operands.find('{') != std::string_view::npos;
    if (dests.size() == 1 && !vector && plain) {
      // mov d, a / mov d, sym+8 / cvta[.to].space d, a
      if ((opcode_is(op, "mov") || opcode_is(op, "cvta")) && !sources.empty() &&
          std::all_of(sources.begin() + 1, sources.end(), is_number)) {
        e.result = held(sources[0]);
        return e;
      }
      // add d, a, b with one of them an address
      if (opcode_is(op, "add") && wide && sources.size() == 2) {
        const std::optional<Held> a = held(sources[0]), b = held(sources[1]);
        if (a.has_value() != b.has_value()) {
          e.result = a ? a : b;
          return e;
        }
      }
      // sub d, a, b: an address less an offset, or the offset between two of one variable
      if (opcode_is(op, "sub") && wide && sources.size() == 2) {
        const std::optional<Held> a = held(sources[0]), b = held(sources[1]);
        if (a && !b) {
          e.result = a;
          return e;
        }
        if (a && b && a->how == Holding::offset && b->how == Holding::offset &&
            a->variable == b->variable)
          return e;
      }
      // mad d, i, stride, base (mad.wide.s32 of an index onto an address)
      if (opcode_is(op, "mad") && (wide || has_qualifier(op, "wide")) && sources.size() == 3 &&
          !held(sources[0]) && !held(sources[1]) && held(sources[2])) {
        e.result = held(sources[2]);
        return e;
      }
      // selp d, a, b, p
      if (opcode_is(op, "selp") && sources.size() == 3 && !held(sources[2]) &&
          (held(sources[0]) || held(sources[1]))) {
        const std::optional<Held> a = held(sources[0]), b = held(sources[1]);
        Held h = a ? *a : *b;
        if (!(a && b && a->how == Holding::offset && b->how == Holding::offset &&
              a->variable == b->variable))
          h.how = Holding::either;
        if ((a && a->how == Holding::derived) || (b && b->how == Holding::derived))
          h.how = Holding::derived;
        e.result = h;
        return e;
      }
      // setp.eq/ne d, a, b of two addresses in one variable: as equal as their offsets
      if (opcode_is(op, "setp") && wide && sources.size() == 2 &&
          (has_qualifier(op, "eq") || has_qualifier(op, "ne"))) {
        const std::optional<Held> a = held(sources[0]), b = held(sources[1]);
        if (a && b && a->how == Holding::offset && b->how == Holding::offset &&
            a->variable == b->variable)
          return e;
      }
    }
    lets_out_any(sources, dests, e);
    return e;
  }

private:
  // An address among `words` leaves the registers (a `derived` one has been found already);
  // the destinations then hold something computed from it.
  void lets_out_any(const std::vector<std::string_view>& words,
                    const std::vector<std::string_view>& dests, Effect& e) const {
    for (std::string_view w : words) {
      const std::optional<Held> h = held(w);
      if (!h) continue;
      if (h->how != Holding::derived && e.lets_out.empty()) e.lets_out = h->variable;
      if (!dests.empty() && !e.result) e.result = Held{Holding::derived, h->variable};
    }
  }

  const std::set<std::string, std::less<>>& variables_;
  const Registers& registers_;
};

// What a register holds after one more definition: the same, or, from two different ones,
// either (an address or not), or derived once any definition is.
Held joined(const Held& was, const Held& now) {
  if (was.how == Holding::derived || now.how == Holding::derived)
    return Held{Holding::derived, was.variable};
  if (was.how == Holding::offset && now.how == Holding::offset && was.variable == now.variable)
    return was;
  return Held{Holding::either, was.variable};
}

bool same(const Held& a, const Held& b) {
  return a.how == b.how && a.variable == b.variable;
}

// The registers of one function that hold a variable's address, walked until they settle. A
// register that some other instruction defines too (a loop's, or a branch's) holds the address
// or that other value: `either`.
Registers registers_of(const std::vector<const Statement*>& body,
                       const std::set<std::string, std::less<>>& variables) {
  Registers registers;
  std::set<std::string, std::less<>> defined_otherwise; // by an instruction holding no address
  bool changed = true;
  auto settle = [&](Held& h, const std::string& reg) {
    if (h.how == Holding::offset && defined_otherwise.count(reg) != 0) {
      h.how = Holding::either;
      changed = true;
    }
  };
  while (changed) {
    changed = false;
    for (const Statement* s : body) {
      if (s->declaration) continue;
      const Effect e = AddressFlow(variables, registers).effect_of(*s);
      for (std::string_view d : destinations_of(s->operands)) {
        const std::string reg(d);
        if (!e.result) {
          if (!defined_otherwise.insert(reg).second) continue;
          if (auto at = registers.find(reg); at != registers.end()) settle(at->second, reg);
          continue;
        }
        auto [at, inserted] = registers.try_emplace(reg, *e.result);
        if (inserted) {
          changed = true;
        } else if (const Held j = joined(at->second, *e.result); !same(j, at->second)) {
          at->second = j;
          changed = true;
        }
        settle(at->second, reg);
      }
    }
  }
  return registers;
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

} // namespace kj
