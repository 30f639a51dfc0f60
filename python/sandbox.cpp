// kjudge._sandbox: the confinement of kjudge.kernelbench's candidate worker, the same kernel
// mechanisms as the host worker's (src/backend/host/sandbox.cpp), for a Python process that
// must still run torch, compilers and the CUDA driver. A module of its own so the worker imports
// nothing else of kjudge's before it is confined.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "kjudge/host_backend.hpp"

namespace nb = nanobind;

namespace {

std::string confine(const std::vector<std::string>& readable,
                    const std::vector<std::string>& writable, std::uint64_t memory_bytes,
                    std::uint64_t shm_bytes) {
  kj::PythonSandbox sandbox;
  sandbox.memory_bytes = memory_bytes;
  sandbox.shm_bytes = shm_bytes;
  for (const auto& p : readable) sandbox.readable.emplace_back(p);
  for (const auto& p : writable) sandbox.writable.emplace_back(p);
  return kj::confine_python_worker(sandbox);
}

} // namespace

NB_MODULE(_sandbox, m) {
  m.doc() = "the KernelBench worker's confinement (use kjudge.kernelbench, not this module)";
  m.def("confine", &confine, nb::arg("readable"), nb::arg("writable"),
        nb::arg("memory_bytes") = 0, nb::arg("shm_bytes") = 64ull << 20,
        "Confines this single-threaded process for good: user, network, mount and PID "
        "namespaces (this call forks: the caller's process waits outside and ends as the child, "
        "which returns, ends), a private /dev/shm of shm_bytes, Landlock (readable: read and "
        "execute; writable: every right), data memory capped at memory_bytes (0: no cap), no "
        "capabilities, no signal, ptrace or process_vm access to other processes. \"\" when all "
        "is in force, else what is missing.");
}
