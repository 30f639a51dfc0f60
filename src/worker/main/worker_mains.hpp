// The worker processes' mains: what `kjudge --worker ...` runs. Only the CLI's dispatch and the
// tests include this; nothing on the judge's side does (docs/design.md "The processes").
#pragma once

#include <cstdint>
#include <string>

namespace kj {

// The CUDA worker's loop on an inherited socket: 0 when the oracle closed the socket or said
// "exit", 1 after a sticky CUDA error, 3 when it could not start or refused the device.
int worker_main(int socket_fd, int device = 0);

// The compile-only worker: caps its own address space at `memory_cap_bytes` (0: no cap),
// greets, compiles one "compile" request with NVRTC (no CUDA context is ever made here) and
// replies with the module or a compile_error. 0 after replying or when the oracle closed the
// socket, 3 when it cannot start.
int compile_worker_main(int socket_fd, std::uint64_t memory_cap_bytes);

// The host worker: confines itself (confine_host_worker: `module_dir`, the module cache, is all
// it may read), then loads a candidate's shared object from it and runs it on the shared arena
// `arena_fd`. Its greeting is an error naming the mechanism when the confinement is incomplete.
// 0 when the oracle is done with it, 3 on a protocol fault or an incomplete confinement.
int host_worker_main(int socket_fd, int arena_fd, const std::string& module_dir);

} // namespace kj
