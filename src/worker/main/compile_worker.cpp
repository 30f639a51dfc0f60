// The compile-only worker: NVRTC in a process of its own. A candidate's source is untrusted
// input to the compiler too (template recursion, enormous constant tables, includes that pull
// in half of CCCL), so its compile runs where a runaway costs nothing but this process: under
// an address-space cap (setrlimit, set before anything is allocated), under the oracle's
// deadline (SIGKILL), and with no CUDA context at all, which is also why the cap is safe here
// (the driver reserves far more address space than any cap that would stop a compiler).
#include <nvrtc.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "worker/main/worker_mains.hpp"
#include "worker/messages.hpp"
#include "worker/protocol.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/static_scan.hpp"

namespace kj {

using nlohmann::json;
using namespace kj::judge;

namespace {

json compile_error_json(std::string message, std::string log) {
  return error_json("compile_error", std::move(message), std::move(log));
}

json internal_json(std::string message) { return error_json("internal", std::move(message)); }

json out_of_memory_json(std::uint64_t cap) {
  return compile_error_json(
      fmt::format("the compiler ran out of memory (the compile is capped at {} MiB)", cap >> 20),
      "");
}

json compile(const CompileRequest& r, std::uint64_t cap) {
  const CompileOptions options = compile_options(r);
  try {
    const CompiledModule compiled = compile_module(r.source, r.file_name, r.expressions, options);
    ModuleMessage m;
    m.cubin = compiled.cubin;
    m.kernels = compiled.kernels;
    m.log = compiled.log;
    m.from_cache = compiled.from_cache;
    m.forbidden = forbidden_constructs(r.source, r.file_name, compiled.ptx, r.forbid);
    m.unfenced = unfenced_handoff(compiled.ptx, r.file_name);
    m.code_digest = ptx_code_digest(compiled.ptx);
    return to_json(m, "");
  } catch (const CompileError& e) {
    std::string message = e.what();
    // NVRTC says only this when the cap stops it (measured with 64 MiB): name the cap.
    if (cap > 0 && (message.find("OUT_OF_MEMORY") != std::string::npos ||
                    message.find("BUILTIN_OPERATION_FAILURE") != std::string::npos))
      message += fmt::format(" (the compile's memory is capped at {} MiB)", cap >> 20);
    return compile_error_json(std::move(message), e.log());
  } catch (const std::bad_alloc&) {
    return out_of_memory_json(cap);
  }
}

} // namespace

int compile_worker_main(int socket_fd, std::uint64_t memory_cap_bytes) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the oracle
  // NVRTC is opened on its first call (nvrtc_loader.cpp): open it before the cap, so the cap
  // bounds the compile, not the library's mapping (as when NVRTC was linked).
  int nvrtc_major = 0, nvrtc_minor = 0;
  (void)nvrtcVersion(&nvrtc_major, &nvrtc_minor);
  if (memory_cap_bytes > 0) {
    const rlimit limit{memory_cap_bytes, memory_cap_bytes};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
      (void)write_message(
          socket_fd,
          internal_json(fmt::format("cannot cap the compile's memory: {}", std::strerror(errno))));
      return 3;
    }
  }
  if (!write_message(socket_fd,
                     json{{"ready", true}, {"pid", static_cast<long long>(::getpid())},
                          {"compiler", true}}))
    return 0;
  FrameDecoder decoder;
  const ReadResult got = read_message(socket_fd, decoder);
  if (got.status == ReadResult::Status::eof) return 0;
  if (got.status != ReadResult::Status::message) {
    (void)write_message(socket_fd, internal_json(got.error));
    return 3;
  }
  json reply;
  try {
    const json& request = got.message;
    if (!request.is_object() || request.value("op", "") != "compile")
      reply = internal_json("the compile-only worker takes one \"compile\" request");
    else
      reply = compile(compile_request_from_json(request), memory_cap_bytes);
  } catch (const std::bad_alloc&) {
    reply = out_of_memory_json(memory_cap_bytes);
  } catch (const std::exception& e) {
    reply = internal_json(e.what());
  }
  (void)write_message(socket_fd, reply);
  return 0;
}

} // namespace kj
