// The PTX text read word by word (its words, statements, declarations, call targets), and the
// walk that follows a .global variable's address through a function's registers and says what
// each instruction does with it (static_scan.cpp opens with the whole account; what is shared is
// in ptx_scan_internal.hpp).
#include <algorithm>
#include <utility>

#include "backend/cuda/ptx_scan_internal.hpp"

namespace kj::detail::ptx {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%';
}

bool is_number(std::string_view w) {
  return !w.empty() && w.front() >= '0' && w.front() <= '9';
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

// The destination registers of an instruction: `%r1`, `{%f1, %f2}`; none when its operands
// open with an address (`st [a], v`, `red [a], v`).
std::vector<std::string_view> destinations_of(std::string_view operands) {
  if (operands.empty() || operands.front() == '[') return {};
  if (operands.front() == '{') return words_of(operands.substr(0, operands.find('}')));
  const std::vector<std::string_view> w = words_of(operands);
  if (w.empty()) return {};
  return {w.front()};
}

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

} // namespace

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

bool opcode_is(std::string_view op, std::string_view name) {
  return op == name || (op.starts_with(name) && op.size() > name.size() && op[name.size()] == '.');
}

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

std::optional<Held> AddressFlow::held(std::string_view w) const {
  if (variables_.count(w) != 0) return Held{Holding::offset, std::string(w)};
  if (auto r = registers_.find(w); r != registers_.end()) return r->second;
  return std::nullopt;
}

Effect AddressFlow::effect_of(const Statement& s) const {
  const std::string_view op = s.op;
  const std::string_view operands = s.operands;
  Effect e;
  const std::vector<std::string_view> dests = destinations_of(operands);
  std::vector<std::string_view> sources = words_of(operands);
  sources.erase(sources.begin(), sources.begin() + static_cast<std::ptrdiff_t>(dests.size()));

  // The operands other than the address and the destinations (which come first).
  const std::string outside_text = outside_address(operands);
  std::vector<std::string_view> values = words_of(outside_text);
  values.erase(values.begin(),
               values.begin() + static_cast<std::ptrdiff_t>(std::min(dests.size(), values.size())));
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
                     !has_qualifier(op, "hi") && !opcode_is(op, "addc") && !opcode_is(op, "subc") &&
                     !opcode_is(op, "madc");
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

void AddressFlow::lets_out_any(const std::vector<std::string_view>& words,
                               const std::vector<std::string_view>& dests, Effect& e) const {
  for (std::string_view w : words) {
    const std::optional<Held> h = held(w);
    if (!h) continue;
    if (h->how != Holding::derived && e.lets_out.empty()) e.lets_out = h->variable;
    if (!dests.empty() && !e.result) e.result = Held{Holding::derived, h->variable};
  }
}

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

} // namespace kj::detail::ptx
