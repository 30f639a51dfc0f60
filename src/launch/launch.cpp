// Marshalled launches made (launch.hpp): one argument packing for the GPU and the CPU.
#include "launch/launch.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "kjudge/candidate_text.hpp"
#include "kjudge/error.hpp"

namespace kj::judge {

namespace {

// A launch's kernel parameters: each points at its value's bytes, or (for a buffer) at its slot
// in `slots`, which holds the buffer's address for as long as the launch call needs it. "" or
// the buffer the request names that `pointers` does not hold.
template <typename Ptr>
std::string pack_params(const LaunchRequest& l, const std::map<std::string, Ptr>& pointers,
                        std::vector<Ptr>& slots, std::vector<void*>& params) {
  slots.assign(l.args.size(), Ptr{});
  params.assign(l.args.size(), nullptr);
  for (std::size_t i = 0; i < l.args.size(); ++i) {
    const ArgRequest& a = l.args[i];
    if (a.kind == ArgRequest::Kind::buffer) {
      const auto p = pointers.find(a.buffer);
      if (p == pointers.end()) return fmt::format("{}: no buffer '{}'", l.label, a.buffer);
      slots[i] = p->second;
      params[i] = &slots[i];
    } else {
      params[i] = const_cast<std::byte*>(a.bytes.data());
    }
  }
  return {};
}

} // namespace

void launch_all(const std::vector<LaunchRequest>& launches,
                const std::map<std::string, CUfunction>& functions,
                const std::map<std::string, CUdeviceptr>& pointers, CUstream stream,
                std::size_t* failed) {
  std::vector<CUdeviceptr> slots;
  std::vector<void*> params;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    if (failed) *failed = k;
    const LaunchRequest& l = launches[k];
    const auto f = functions.find(l.lowered);
    if (f == functions.end())
      throw InternalError(fmt::format("{}: kernel '{}' is not loaded", l.label, l.lowered));
    if (const std::string missing = pack_params(l, pointers, slots, params); !missing.empty())
      throw InternalError(missing);
    launch_kernel(f->second, l.dims, params.empty() ? nullptr : params.data(), stream);
  }
  if (failed) *failed = launches.size();
}

unsigned cpu_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string launch_on_host(const HostModule& module, const std::map<std::string, int>& index,
                           const std::vector<LaunchRequest>& launches,
                           const std::map<std::string, void*>& pointers, double* cpu_ms) {
  if (cpu_ms) *cpu_ms = 0;
  std::vector<void*> slots;
  std::vector<void*> params;
  for (const LaunchRequest& l : launches) {
    const auto k = index.find(l.lowered);
    if (k == index.end()) return fmt::format("{}: kernel '{}' is not loaded", l.label, l.lowered);
    if (std::string missing = pack_params(l, pointers, slots, params); !missing.empty())
      return missing;
    const bool cluster = l.dims.cluster[0] > 1 || l.dims.cluster[1] > 1 || l.dims.cluster[2] > 1;
    if (cluster || l.dims.cooperative)
      return fmt::format("{}: unsupported on host backend: {} launch", l.label,
                         cluster ? "a thread-block cluster" : "a cooperative");
    HostAssertion assertion;
    const std::string failed =
        module.launch(k->second, l.dims.grid.data(), l.dims.block.data(), l.dims.shared_bytes,
                      params.data(), cpu_threads(), &assertion);
    if (!failed.empty() && assertion.caught) {
      DeviceAssertion a{assertion.condition, assertion.file, assertion.line, {}, {}};
      std::copy(assertion.block, assertion.block + 3, a.block.begin());
      std::copy(assertion.thread, assertion.thread + 3, a.thread.begin());
      return fmt::format("{}: {}", l.label, device_assertion_message(a));
    }
    if (!failed.empty()) return fmt::format("{}: {}", l.label, failed);
    if (cpu_ms) *cpu_ms += module.last_launch_cpu_ms();
  }
  return {};
}

} // namespace kj::judge
