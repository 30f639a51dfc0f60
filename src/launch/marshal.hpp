// Launch-plan marshalling: from a declarative plan (kernel, grid, block, shared, args, repeat)
// and the exact parameter types of the compiled kernels to the launches a worker performs,
// with every argument as the bytes of its parameter's type. This is where docs/design.md's "exact
// argument types" hold: a tensor goes only to a pointer whose element type is the tensor's
// dtype, a scalar or an integer expression only to a value parameter it fits, and grid, block
// and shared memory stay within the device's limits. Nothing here touches a GPU, so all of it
// is unit-tested anywhere. A PlanError is the plan's fault; the caller makes it a launch_error
// for a candidate and a spec_error for the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "worker/messages.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace kj::judge {

// The scalar types a parameter can hold, by representation (so `long` and `long long` are
// both i64 on the LP64 hosts CUDA supports).
enum class ValueType {
  unknown,
  boolean,
  i8,
  u8,
  i16,
  u16,
  i32,
  u32,
  i64,
  u64,
  f16,
  bf16,
  f32,
  f64,
  fp8e4m3,
  fp8e5m2
};
std::string_view value_type_name(ValueType t); // "int32", "float16", ...; "unknown"
std::size_t value_type_size(ValueType t);      // 0 for unknown
// The value type of a tensor dtype's elements.
ValueType dtype_value_type(DType d);

// A kernel parameter's type as NVRTC's demangler ("float const*", "unsigned int") or the lexer
// ("const float*", "uint32_t") spells it, reduced to what marshalling needs.
struct ParamType {
  std::string text;       // as given
  int pointer_depth = 0;  // top-level `*` count
  bool reference = false; // `&`: no plan argument can bind to it
  std::string element;    // the pointee (or the type), qualifiers dropped, synonyms folded:
                          // "float", "long", "unsigned int", "__half", "float4"
  ValueType value = ValueType::unknown; // of the element (of a vector's lanes)
  int lanes = 1;                        // CUDA vector types: float4 -> f32 with 4 lanes
  bool pointer() const { return pointer_depth == 1 && !reference; }
};
ParamType parse_param_type(std::string_view text);

// Whether a pointer parameter may receive a tensor of `dtype`: its element is the dtype's type
// or a CUDA vector of it (float4 for f32, __half2 for f16, ...). void* is refused: a plan
// states its element types.
bool pointer_accepts(const ParamType& p, DType dtype);

// A plan that does not fit its kernels or its case: a candidate's launch_error, a reference's
// spec_error.
class PlanError : public ErrorOfKind<ErrorKind::candidate> {
  using ErrorOfKind::ErrorOfKind;
};

// A tensor a plan may name, with the dtype this plan sees (the golden sees float tensors as
// f64).
struct PlanTensor {
  std::string name;
  DType dtype = DType::f32;
};

// One kernel of a loaded module, as the plan needs it.
struct PlanKernel {
  std::string expression; // as registered
  std::string lowered;
  std::vector<ParamType> params;
  std::vector<std::size_t> param_sizes; // the driver's ABI view; empty = unknown
  int static_shared = 0;
  int max_threads = 0; // most threads per block this kernel can launch with; 0 = unknown
};
PlanKernel plan_kernel(const KernelInfo& info, const std::vector<std::string>& param_types);

// The parameter types of a compiled kernel: the demangled ones when the name is mangled (C++
// linkage), else (extern "C", whose lowered name is the plain name) the lexer's reading of the
// __global__ function of that name in `source`. Throws PlanError when neither is available.
std::vector<std::string> kernel_param_types(const KernelInfo& info, std::string_view source);

struct PlanContext {
  std::string owner;                // "candidate", "reference", "golden": for messages
  std::vector<PlanTensor> tensors;  // inputs, outputs and (candidates) scratch
  std::vector<ScalarSpec> scalars;  // the problem's
  std::optional<DeviceInfo> device; // limits to check; nullopt in unit tests
};

// The largest `repeat` a launch may ask for (the spec's limit on the public shapes, applied to
// every case): a plan is not a loop of a million launches.
inline constexpr std::int64_t kMaxRepeat = 4096;

// The case-independent checks, done once before any case: each launch's argument count against
// its kernel's parameters, tensors to pointers of their dtype, scalars and expressions to value
// parameters of a type they can be converted to, and the sizes the driver reports.
// `kernels` is parallel to `launches`.
void check_plan_types(const std::vector<LaunchSpec>& launches,
                      const std::vector<const PlanKernel*>& kernels, const PlanContext& ctx);

// The launches of one case: repeats unrolled with `i` bound, every expression evaluated in
// `env`, grid/block/shared checked against the device, arguments encoded. Throws PlanError
// (and lets an expression's SpecError through as a PlanError too).
std::vector<LaunchRequest> marshal_launches(const std::vector<LaunchSpec>& launches,
                                            const std::vector<const PlanKernel*>& kernels,
                                            const PlanContext& ctx, const Env& env);

// An integer as the bytes of a value parameter; throws PlanError (with `what` in front) when it
// does not fit, or is not exact in a floating-point parameter.
std::vector<std::byte> encode_integer(ValueType t, std::int64_t v, std::string_view what);
// A floating-point value rounded to a floating-point parameter; throws PlanError for an integer
// parameter or a finite value that overflows the type.
std::vector<std::byte> encode_float(ValueType t, double v, std::string_view what);

// The reference's float role: "softmax_ref<T>" -> "softmax_ref<float>", each identifier `T`
// inside the template arguments replaced by `type`; a name without template arguments gets
// "<type>" appended when `bare_template` (a one-parameter template launched bare).
std::string instantiate_kernel(std::string_view kernel, std::string_view type, bool bare_template);

} // namespace kj::judge
