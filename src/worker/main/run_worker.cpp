// `kjudge --worker ...` (kjudge/worker.hpp): the command line read and the worker it names run.
#include "kjudge/worker.hpp"

#include "worker/main/worker_mains.hpp"
#include "worker/worker_command.hpp"

namespace kj {

int run_worker(const std::vector<std::string>& args) {
  const judge::WorkerCommand c = judge::parse_worker_args(args);
  switch (c.kind) {
  case judge::WorkerCommand::Kind::host:
    return host_worker_main(c.fd, c.arena_fd, c.module_dir.string());
  case judge::WorkerCommand::Kind::compile_only:
    return compile_worker_main(c.fd, c.memory_cap_bytes);
  case judge::WorkerCommand::Kind::cuda:
    break;
  }
  return worker_main(c.fd, c.device);
}

} // namespace kj
