// libFuzzer target for the expression language: any text may be parsed, checked against a set
// of names and evaluated in a small environment with extreme values; the only exception allowed
// out is SpecError (its ExprError subclass included). Anything else, a crash or a sanitizer
// report, is a bug.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "kjudge/expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const kj::Env env{{"R", 4096},
                           {"C", 1000},
                           {"i", 3},
                           {"Z", 0},
                           {"N", -7},
                           {"BIG", std::numeric_limits<std::int64_t>::max()},
                           {"MIN", std::numeric_limits<std::int64_t>::min()}};
  const kj::Location where{"fuzz.toml", "fuzz", 1, 1};
  try {
    const kj::Expr e = kj::Expr::parse(text, where);
    (void)e.names();
    try {
      e.check_names({"R", "C"});
    } catch (const kj::SpecError&) {
    }
    (void)e.eval(env);
  } catch (const kj::SpecError&) {
  }
  return 0;
}
