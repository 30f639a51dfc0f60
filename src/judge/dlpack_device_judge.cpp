// kj::DeviceTensorJudge (judge.hpp): kjudge.compare's arrays in a CUDA device's memory (DLPack
// arrays of PyTorch, CuPy, ...) judged where they lie by the GPU comparator, with the verdict
// compare_tensors gives for the same values: the same TensorComparison decides the output, the
// rules and the verdict, and the comparator's finding is the host comparator's bit for bit (one
// arithmetic for both, docs/design.md "Comparison"). What compare_tensors converts on the host
// (an expected widened to f64, an actual or reference of another dtype than the output's) is
// converted here on the device by the builtin kernels, which read and round as HostTensor does;
// an f32 or f64 expected is read where it lies, as there.
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/cuda/driver_loader.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/judge.hpp"

namespace kj {

namespace {

// Makes `ctx` current on this thread for a scope and puts the caller's back: the judge shares
// the primary context with the Python process's framework, which may have another current.
class CurrentContext {
public:
  explicit CurrentContext(CUcontext ctx) {
    KJ_CU_TRY(cuda_detail::cu().cuCtxGetCurrent(&previous_));
    if (previous_ != ctx) KJ_CU_TRY(cuda_detail::cu().cuCtxSetCurrent(ctx));
    else previous_ = nullptr;
  }
  ~CurrentContext() {
    if (previous_ != nullptr) KJ_CU_CLEANUP(cuda_detail::cu().cuCtxSetCurrent(previous_));
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

private:
  CUcontext previous_ = nullptr;
};

CompileOptions compile_options(const DeviceInfo& device, const std::filesystem::path& self_exe,
                               const std::filesystem::path& cache_dir) {
  CompileOptions options;
  options.arch = device.cc_major * 10 + device.cc_minor;
  options.kjudge_include = find_kjudge_include(self_exe);
  if (options.kjudge_include.empty())
    throw InternalError("cannot find kjudge/device.cuh for the GPU comparator's kernels: set "
                        "KJUDGE_INCLUDE to the folder that holds kjudge/");
  options.cache_dir = cache_dir;
  options.precompiled_dir = precompiled_kernels_dir(self_exe);
  return options;
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

} // namespace

struct DeviceTensorJudge::Impl {
  CudaContext context;
  CompileOptions compile;
  DeviceComparator comparator;
  // The conversions' kernels, loaded when a comparison first needs one.
  std::unique_ptr<BuiltinKernels> builtins;
  // One comparison at a time: the comparator's scratch is shared (the package lets go of the
  // GIL while the device works).
  std::mutex mutex;

  Impl(int ordinal, const std::filesystem::path& self_exe, const std::filesystem::path& cache_dir)
      : context(ordinal), compile(compile_options(context.info(), self_exe, cache_dir)),
        comparator(context.info(), compile) {}

  const BuiltinKernels& conversions() {
    if (!builtins) builtins = std::make_unique<BuiltinKernels>(compile);
    return *builtins;
  }
};

DeviceTensorJudge::DeviceTensorJudge(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DeviceTensorJudge::~DeviceTensorJudge() = default;

DeviceTensorJudge& DeviceTensorJudge::of_device(int ordinal, const std::filesystem::path& self_exe,
                                                const std::filesystem::path& cache_dir) {
  // Never destroyed: at the process's exit the driver and the framework sharing the primary
  // context tear down in an order nothing here controls, and releasing it then can only fail.
  static std::mutex made_mutex;
  static auto* made = new std::map<int, DeviceTensorJudge*>();
  const std::lock_guard lock(made_mutex);
  auto [it, fresh] = made->try_emplace(ordinal, nullptr);
  if (fresh) {
    try {
      it->second = new DeviceTensorJudge(std::make_unique<Impl>(ordinal, self_exe, cache_dir));
    } catch (...) {
      made->erase(it);
      throw;
    }
  }
  return *it->second;
}

std::uintptr_t DeviceTensorJudge::stream() const {
  return reinterpret_cast<std::uintptr_t>(impl_->context.stream());
}

Verdict DeviceTensorJudge::compare(const DeviceArray& actual, const DeviceArray& expected,
                                   const std::optional<DeviceArray>& reference,
                                   const CompareSettings& settings, const TensorNames& names) {
  const TensorComparison comparison(settings, names, actual.dtype, actual.shape, expected.shape,
                                    reference ? &reference->shape : nullptr);
  const DType dtype = comparison.dtype();
  const std::lock_guard lock(impl_->mutex);
  const CurrentContext current(impl_->context.get());
  const CUstream s = impl_->context.stream();
  const std::int64_t n = element_count(actual.shape);

  Verdict verdict;
  // Two kinds go the host's way, copied: integer outputs, which a check judges on the host too
  // (judge_device_outputs: the pass judges floats), and an i64 rounded to a narrower dtype,
  // which takes HostTensor::converted's odd rounding where the device kernels widen to the
  // nearest double first.
  const auto narrows_i64 = [&](const DeviceArray& a) {
    return a.dtype == DType::i64 && a.dtype != dtype;
  };
  if (!is_float(dtype) || narrows_i64(actual) || (reference && narrows_i64(*reference))) {
    std::optional<HostTensor> ref_host;
    if (reference)
      ref_host = to_host(DeviceTensor{reference->ptr, reference->dtype}, reference->shape, s);
    verdict = compare_tensors(to_host(DeviceTensor{actual.ptr, actual.dtype}, actual.shape, s),
                              to_host(DeviceTensor{expected.ptr, expected.dtype}, expected.shape, s),
                              std::move(ref_host), settings, names);
  } else {
    // compare_tensors' conversions, into device scratch freed when the comparison is done
    // (addresses taken at once: the vector moves its buffers as it grows).
    std::vector<DeviceBuffer> scratch;
    const auto converted = [&](const DeviceArray& a, DType to) {
      if (a.dtype == to || n == 0) return DeviceTensor{a.ptr, to};
      const BuiltinKernels& k = impl_->conversions();
      const CUdeviceptr wide =
          scratch.emplace_back(static_cast<std::size_t>(n) * sizeof(double)).ptr();
      k.widen_to_f64(wide, a.ptr, a.dtype, n, s);
      if (to == DType::f64) return DeviceTensor{wide, to};
      const CUdeviceptr narrow = scratch.emplace_back(tensor_bytes(to, actual.shape)).ptr();
      k.round_from_f64(narrow, to, wide, n, s);
      return DeviceTensor{narrow, to};
    };
    DeviceCompareInputs in;
    static_cast<CompareRules&>(in) = comparison.rules();
    in.shape = actual.shape;
    in.actual = converted(actual, dtype);
    in.golden = golden_read_in_place(expected.dtype) ? DeviceTensor{expected.ptr, expected.dtype}
                                                     : converted(expected, DType::f64);
    if (reference) in.reference = converted(*reference, dtype);
    verdict = comparison.verdict(impl_->comparator.compare(in, s));
  }
  verdict.manifest.gpu = impl_->context.info().name;
  verdict.manifest.device = impl_->context.info().ordinal;
  return verdict;
}

} // namespace kj
