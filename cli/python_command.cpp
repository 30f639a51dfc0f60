// `kjudge kernelbench` and `kjudge audit --kernelbench`: KernelBench-format problems are
// PyTorch code, judged by the Python package (python/kjudge/kernelbench). These commands start
// that Python (KJUDGE_PYTHON, else python3) as a child with the user's own arguments, so the
// two entry points parse the same words, and hand back its exit status.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "app.hpp"
#include "kjudge/error.hpp"

extern char** environ;

namespace kj::cli {

namespace {

// Exits 2, naming what is missing, when the package or torch does not import: a missing
// package must not read as a FAIL (1).
constexpr const char* kBootstrap =
    "import sys, runpy\n"
    "try:\n"
    "    import torch, kjudge.kernelbench\n"
    "except ImportError as e:\n"
    "    print(f'{sys.argv[1]}: needs the kjudge Python package and torch in '\n"
    "          f'{sys.executable} ({e}); pip install . in the kjudge checkout, or set '\n"
    "          f'KJUDGE_PYTHON to a Python that has them', file=sys.stderr)\n"
    "    sys.exit(2)\n"
    "module = sys.argv[2]\n"
    "sys.argv = [sys.argv[1]] + sys.argv[3:]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n";

} // namespace

int run_python_module(const std::string& command, const std::string& module,
                      const std::vector<std::string>& args, std::ostream& err) {
  const char* chosen = std::getenv("KJUDGE_PYTHON");
  const std::string python = chosen && *chosen ? chosen : "python3";
  std::vector<std::string> argv{python, "-c", kBootstrap, "kjudge " + command, module};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  pid_t child = 0;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3); // the standard streams only
  const int e = ::posix_spawnp(&child, python.c_str(), &actions, nullptr, raw.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (e != 0) {
    err << "kjudge " << command << ": cannot start " << python
        << " (set KJUDGE_PYTHON to a Python with the kjudge package and torch)\n";
    return static_cast<int>(ExitCode::spec_error);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  err << "kjudge " << command << ": " << python << " ended by signal " << WTERMSIG(status) << '\n';
  return static_cast<int>(ExitCode::internal);
}

} // namespace kj::cli
