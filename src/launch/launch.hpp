// Marshalled launches made: on the GPU by the driver (the CUDA worker and the CUDA oracle), on
// the CPU through a host module (the host worker and the host oracle). Both sides of the trust
// line launch this way, so it lives apart from either.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kjudge/cuda.hpp"
#include "kjudge/host_backend.hpp"
#include "worker/messages.hpp"

namespace kj::judge {

// Launch `launches` on `stream`; buffer arguments are resolved by name through `pointers`,
// kernels by lowered name through `functions`. Throws CudaError from the driver, InternalError
// for a kernel or buffer the request names but the caller does not hold; `failed` is set to the
// index of the launch that failed (launches.size() once all were made).
void launch_all(const std::vector<LaunchRequest>& launches,
                const std::map<std::string, CUfunction>& functions,
                const std::map<std::string, CUdeviceptr>& pointers, CUstream stream,
                std::size_t* failed = nullptr);

// The CPU threads a host launch's blocks spread over.
unsigned cpu_threads();

// The same on a host module with the given buffers (name -> address). Returns "" or what failed,
// with the launch's label; `cpu_ms` (when given) gets the launches' CPU time.
std::string launch_on_host(const HostModule& module, const std::map<std::string, int>& index,
                           const std::vector<LaunchRequest>& launches,
                           const std::map<std::string, void*>& pointers, double* cpu_ms = nullptr);

} // namespace kj::judge
