// What static_scan.cpp (scan_ptx: the PTX read into statements, the findings) takes from
// ptx_address_flow.cpp: the words and directives of PTX text, and the registers that hold a
// .global variable's address. Private to src/backend/cuda; a namespace of its own, since this
// trim is not detail::trim (nvrtc_internal.hpp), which takes more whitespace.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kj::detail::ptx {

// The words of a PTX line: registers, symbols, numbers (what is between its punctuation).
std::vector<std::string_view> words_of(std::string_view s);
std::string_view trim(std::string_view s);
// op is `name` or `name.<qualifiers>`.
bool opcode_is(std::string_view op, std::string_view name);
// One of the qualifiers of op (`.s64` in `add.s64`), not its name.
bool has_qualifier(std::string_view op, std::string_view qualifier);

// The function a header line (`.entry NAME(`, `.func (.param ...) NAME(`) declares.
std::string function_name(std::string_view line);
// The state space a variable declaration opens with (`.global`, `.const`), after its linkage
// (`.visible .global .align 4 .u32 g_n;`); "" for any other line. Kernel parameters
// (`.param .u64 .ptr .global ...`) are not declarations of either.
std::string_view declared_space(std::string_view line);

struct Declarator {
  std::string name;
  std::string initializer; // what follows `=`; "" without one
};

// The variables a declaration statement names: `.global .align 4 .u32 a, b[4] = {1, 2, 3, 4};`
// is a and b (PTX takes a list, each with its own initializer).
std::vector<Declarator> declarators_of(std::string_view statement);

// A piece of a function's body without the block braces and labels that open it
// (`{ $L__BB0_2: mov.u32 ...`).
std::string_view without_braces_and_labels(std::string_view s);

// The callee of `call[.uni] (ret), NAME, (args);` or `call NAME, (args);`.
std::string_view callee_of(std::string_view operands);

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

class AddressFlow {
public:
  AddressFlow(const std::set<std::string, std::less<>>& variables, const Registers& registers)
      : variables_(variables), registers_(registers) {}

  // What the word holds: a variable's symbol is its address; a register what the walk found.
  std::optional<Held> held(std::string_view w) const;

  Effect effect_of(const Statement& s) const;

private:
  // An address among `words` leaves the registers (a `derived` one has been found already);
  // the destinations then hold something computed from it.
  void lets_out_any(const std::vector<std::string_view>& words,
                    const std::vector<std::string_view>& dests, Effect& e) const;

  const std::set<std::string, std::less<>>& variables_;
  const Registers& registers_;
};

// The registers of one function that hold a variable's address, walked until they settle. A
// register that some other instruction defines too (a loop's, or a branch's) holds the address
// or that other value: `either`.
Registers registers_of(const std::vector<const Statement*>& body,
                       const std::set<std::string, std::less<>>& variables);

} // namespace kj::detail::ptx
