// kj::cli::run: parse, dispatch, and turn every way a command can end into docs/design.md's exit
// code. Nothing escapes: a user's mistake (SpecError, a parse error) is a message and exit 2,
// anything else is "internal error" and exit 3, never an uncaught exception.
#include "commands.hpp"

#include <charconv>
#include <filesystem>
#include <iostream>
#include <ostream>

#include "app.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/worker.hpp"

namespace kj::cli {

namespace {

// The command the user was in when parsing stopped, for the usage hint.
std::string selected_command(CLI::App& app) {
  for (auto* sub : app.get_subcommands())
    return sub->get_name();
  return "";
}

int dispatch(CLI::App& app, const Invocation& in, std::ostream& out, std::ostream& err) {
  if (app.got_subcommand("validate")) return run_validate(in.validate, out, err);
  if (app.got_subcommand("export")) return run_export(in.export_, out, err);
  if (app.got_subcommand("cases")) return run_cases(in.cases, out, err);
  if (app.got_subcommand("compare")) return run_compare(in.compare, out, err);
  if (app.got_subcommand("check")) return run_check(in.check, out, err);
  if (app.got_subcommand("bench")) return run_check(in.bench, out, err);
  if (app.got_subcommand("serve")) return run_serve(in.serve, std::cin, out, err);
  if (app.got_subcommand("cache")) return run_cache(in.cache, out, err);
  if (app.got_subcommand("run")) return run_run(in.run, out, err);
  if (app.got_subcommand("merge")) return run_merge(in.merge, out, err);
  if (app.got_subcommand("mutate")) return run_mutate(in.mutate, out, err);
  if (app.got_subcommand("audit")) return run_audit(in.audit, out, err);
  if (app.got_subcommand("localize")) return run_localize(in.localize, out, err);
  if (app.got_subcommand("whatif")) return run_whatif(in.whatif, out, err);
  if (app.got_subcommand("card")) return run_card(in.card, out, err);
  if (app.got_subcommand("kernelbench"))
    return run_python_module("kernelbench", "kjudge.kernelbench",
                             std::vector<std::string>(in.words.begin() + 1, in.words.end()), err);
  throw InternalError("a subcommand was parsed but not dispatched");
}

// `kjudge --precompile-kernels ARCH...`: kjudge's own kernels compiled for each sm_ARCH into
// precompiled_kernels_dir of this executable, with the include folder a check would find.
int precompile_own_kernels(const std::vector<std::string>& args, std::ostream& err) {
  std::vector<int> archs;
  for (const std::string& a : args) {
    int arch = 0;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), arch);
    if (ec != std::errc() || end != a.data() + a.size() || arch < 50 || arch > 199) {
      err << "kjudge --precompile-kernels: '" << a << "' is not an architecture like 90\n";
      return static_cast<int>(ExitCode::spec_error);
    }
    archs.push_back(arch);
  }
  const std::filesystem::path exe = self_executable();
  const int compiled =
      precompile_kernels(precompiled_kernels_dir(exe), archs, find_kjudge_include(exe));
  err << "kjudge: " << compiled << " of " << 2 * archs.size()
      << " modules of kjudge's own kernels compiled ahead (the rest were there)\n";
  return 0;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    // The worker is kjudge re-executed by `check`'s oracle, not a command a user types.
    if (!args.empty() && args[0] == "--worker")
      return kj::run_worker(std::vector<std::string>(args.begin() + 1, args.end()));
    // The build's last step (cli/CMakeLists.txt), not a command a user types either.
    if (!args.empty() && args[0] == "--precompile-kernels")
      return precompile_own_kernels(std::vector<std::string>(args.begin() + 1, args.end()), err);
    Invocation in;
    auto app = make_app(in);
    // A mistyped command with --help must not get the general help and exit 0.
    if (!args.empty() && !args[0].empty() && args[0][0] != '-' &&
        app->get_subcommands([&](CLI::App* sub) { return sub->get_name() == args[0]; }).empty()) {
      err << "kjudge: unknown command '" << args[0] << "'\nRun 'kjudge --help' for usage.\n";
      return static_cast<int>(ExitCode::spec_error);
    }
    try {
      // CLI11 takes its arguments last-first.
      app->parse(std::vector<std::string>(args.rbegin(), args.rend()));
    } catch (const CLI::CallForHelp&) {
      out << app->help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      out << app->help();
      return 0;
    } catch (const CLI::CallForVersion& e) {
      out << e.what() << '\n';
      return 0;
    } catch (const CLI::ParseError& e) {
      const std::string sub = selected_command(*app);
      const std::string where = sub.empty() ? "kjudge" : "kjudge " + sub;
      err << where << ": " << e.what();
      err << "\nRun '" << where << " --help' for usage.\n";
      return static_cast<int>(ExitCode::spec_error);
    }
    in.words = args;
    return dispatch(*app, in, out, err);
  } catch (const SpecError& e) {
    err << "kjudge: error: " << e.what() << '\n';
    return static_cast<int>(ExitCode::spec_error);
  } catch (const std::exception& e) {  // InternalError and anything unforeseen
    err << "kjudge: internal error: " << e.what() << '\n';
    return static_cast<int>(ExitCode::internal);
  } catch (...) {
    err << "kjudge: internal error: unknown exception\n";
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace kj::cli
