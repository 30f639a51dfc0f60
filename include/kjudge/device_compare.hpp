// The GPU comparator: one output of one case judged where it lies, in device memory, by the
// pass of detail/compare_pass_impl.hpp (detail/compare_kernels.cuh), with the same finding the
// host comparator (compare_output) gives for the same tensors, bit for bit: the same per-element
// code, the same chunk order and sum trees, the same finishing (src/compare/pass.cpp).
//
// One pass reads the candidate, the golden and the reference once and leaves every verdict
// quantity: counts, maxima and sums of squares per chunk (trees of them per slice and for the
// whole output), the non-finite rules, the first failing elements, the worst element, and the
// histograms of the binned percentiles. relative's second pass (only when some element is beyond
// its bound) counts those elements. What the pass does not judge (integer outputs, ratio,
// regions, the metrics, a slice axis with dimensions before it, exact percentiles) is copied to
// the host and judged by compare_output.
#pragma once

#include <memory>
#include <optional>

#include <cuda.h>

#include "kjudge/compare.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {

// A tensor in device memory, in the layout of HostTensor's storage.
struct DeviceTensor {
  CUdeviceptr ptr = 0;
  DType dtype = DType::f32;
};

// CompareInputs with device tensors.
struct DeviceCompareInputs : CompareRules {
  Shape shape;                          // of the candidate output, the golden and the reference
  DeviceTensor actual;
  std::optional<DeviceTensor> golden;   // golden_read_in_place (another dtype goes the host's way)
  std::optional<DeviceTensor> reference;
};

class DeviceComparator {
public:
  // Compiles (or takes from options.cache_dir) and loads the kernels in the context current on
  // this thread; `device` sizes the pass's grid. Throws InternalError when they do not compile.
  DeviceComparator(const DeviceInfo& device, const CompileOptions& options);
  ~DeviceComparator();
  DeviceComparator(const DeviceComparator&) = delete;
  DeviceComparator& operator=(const DeviceComparator&) = delete;

  // The finding for one output; synchronises `stream`. Throws SpecError as compare_output does.
  OutputFinding compare(const DeviceCompareInputs& in, CUstream stream);

  // Whether compare judges `in` on the device (else it copies the tensors to the host).
  static bool on_device(const DeviceCompareInputs& in);

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

// A device tensor copied to the host (the comparator's way back for what it does not judge).
HostTensor to_host(const DeviceTensor& t, const Shape& shape, CUstream stream);

// The comparator's compile step alone (no GPU needed), as compile_builtin_kernels.
CompiledModule compile_compare_kernels(const CompileOptions& options);

} // namespace kj
