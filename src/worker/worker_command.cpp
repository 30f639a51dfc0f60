// A worker's command line, written and read (worker_command.hpp).
#include "worker/worker_command.hpp"

#include <fmt/format.h>

#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"

namespace kj::judge {

WorkerCommand cuda_worker_command(int device) {
  WorkerCommand c;
  c.device = device;
  return c;
}

WorkerCommand compile_worker_command(std::uint64_t memory_cap_bytes) {
  WorkerCommand c;
  c.kind = WorkerCommand::Kind::compile_only;
  c.memory_cap_bytes = memory_cap_bytes;
  return c;
}

WorkerCommand host_worker_command(const std::filesystem::path& module_dir) {
  WorkerCommand c;
  c.kind = WorkerCommand::Kind::host;
  c.module_dir = module_dir;
  return c;
}

std::vector<std::string> worker_argv(const std::filesystem::path& self_exe,
                                     const WorkerCommand& command) {
  std::vector<std::string> argv{self_exe.string(), "--worker"};
  switch (command.kind) {
  case WorkerCommand::Kind::cuda:
    argv.insert(argv.end(), {"--fd", "{fd}", "--device", std::to_string(command.device)});
    break;
  case WorkerCommand::Kind::compile_only:
    argv.insert(argv.end(), {"--compile-only", "--fd", "{fd}", "--memory-mb",
                             std::to_string(command.memory_cap_bytes >> 20)});
    break;
  case WorkerCommand::Kind::host:
    argv.insert(argv.end(), {"--host", "--fd", "{fd}", "--arena-fd", "{shared_fd}", "--module-dir",
                             command.module_dir.string()});
    break;
  }
  return argv;
}

WorkerCommand parse_worker_args(const std::vector<std::string>& args) {
  auto refuse = [](const std::string& where, const std::string& why) {
    return SpecError({"", where, 0, 0}, why);
  };
  auto value = [&](std::size_t i, const std::string& option) -> const std::string& {
    if (i >= args.size()) throw refuse(option, "a value is missing");
    return args[i];
  };
  auto number = [&](std::size_t i, const std::string& option) {
    const std::string& text = value(i, option);
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || v < 0)
      throw refuse(option, fmt::format("'{}' is not a non-negative number", text));
    return v;
  };
  WorkerCommand c;
  bool capped = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--fd") {
      c.fd = number(++i, a);
    } else if (a == "--device") {
      c.device = number(++i, a);
    } else if (a == "--compile-only") {
      c.kind = WorkerCommand::Kind::compile_only;
    } else if (a == "--memory-mb") {
      c.memory_cap_bytes = static_cast<std::uint64_t>(number(++i, a)) << 20;
      capped = true;
    } else if (a == "--host") {
      c.kind = WorkerCommand::Kind::host;
    } else if (a == "--arena-fd") {
      c.arena_fd = number(++i, a);
    } else if (a == "--module-dir") {
      c.module_dir = value(++i, a);
    } else {
      throw refuse("--worker", fmt::format("unknown argument '{}'", a));
    }
  }
  if (c.fd < 0)
    throw refuse("--fd", "--fd N is required (the worker is started by `kjudge check`)");
  if (c.kind == WorkerCommand::Kind::host && c.arena_fd < 0)
    throw refuse("--arena-fd", "the host worker needs --arena-fd N");
  if (c.kind == WorkerCommand::Kind::compile_only && !capped)
    c.memory_cap_bytes = kCompileMemoryCapBytes;
  return c;
}

} // namespace kj::judge
