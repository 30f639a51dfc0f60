// libFuzzer target for the spec parsers: any text is read as a problem.toml (files it names are
// served from memory, so no disk is touched) and as a candidate .cu against a fixed problem.
// Only SpecError may come out. A problem that loads must also survive export: the exported TOML
// has to load again, or export wrote something the loader rejects.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kjudge/spec.hpp"

namespace {

std::optional<std::string> fake_read(const std::filesystem::path& p) {
  return "// " + p.filename().string() + "\n";
}

const kj::Problem& fixed_problem() {
  static const kj::Problem p = kj::parse_problem_text(R"toml(name = "fixed"
allowed_options = ["-use_fast_math"]
[dims]
public = [{ R = 64, C = 100 }]
hidden = [{ R = 3, C = 7 }]
[[scalar]]
name = "n"
dtype = "i32"
value = 8
[[input]]
name = "x"
dtype = "f32"
shape = ["R", "C"]
[[output]]
name = "y"
dtype = "f32"
shape = ["R", "C"]
[reference]
source = "ref.cu"
[[reference.launch]]
kernel = "k<T>"
grid = ["R"]
block = [128]
args = ["x", "y", "R", "C"]
)toml",
                                                      "/fuzz", "fixed.toml", fake_read);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const kj::Problem p = kj::parse_problem_text(text, "/fuzz", "fuzz.toml", fake_read);
    const std::string exported = kj::export_problem_toml(p);
    try {
      (void)kj::parse_problem_text(exported, "/fuzz", "exported.toml", fake_read);
    } catch (const kj::SpecError&) {
      std::abort();  // export wrote a problem the loader rejects
    }
  } catch (const kj::SpecError&) {
  }
  try {
    (void)kj::parse_candidate(text, "fuzz.cu", fixed_problem());
  } catch (const kj::SpecError&) {
  }
  return 0;
}
