// kjudge's own kernels compiled at build time (builtin_kernels.hpp, precompile_kernels): the
// build runs `kjudge --precompile-kernels`, which fills the folder beside the executable with
// ordinary compile-cache entries, so the oracle finds them under the keys it would have written.
#include <exception>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "kjudge/builtin_kernels.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/error.hpp"

namespace kj {

std::filesystem::path precompiled_kernels_dir(const std::filesystem::path& self_exe) {
  return self_exe.empty() ? std::filesystem::path{} : self_exe.parent_path() / "kjudge-kernels";
}

int precompile_kernels(const std::filesystem::path& dir, const std::vector<int>& archs,
                       const std::filesystem::path& kjudge_include) {
  using Compile = CompiledModule (*)(const CompileOptions&);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failures(archs.size() * 2);
  std::vector<int> compiled(archs.size() * 2, 0);
  for (std::size_t a = 0; a < archs.size(); ++a) {
    int k = 0;
    for (const Compile compile : {&compile_builtin_kernels, &compile_compare_kernels}) {
      const std::size_t slot = 2 * a + static_cast<std::size_t>(k++);
      threads.emplace_back([&, a, slot, compile] {
        try {
          CompileOptions o;
          o.arch = archs[a];
          o.kjudge_include = kjudge_include;
          o.cache_dir = dir;
          compiled[slot] = compile(o).from_cache ? 0 : 1;
        } catch (...) {
          failures[slot] = std::current_exception();
        }
      });
    }
  }
  for (auto& t : threads)
    t.join();
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
  int n = 0;
  for (const int c : compiled)
    n += c;
  return n;
}

} // namespace kj
