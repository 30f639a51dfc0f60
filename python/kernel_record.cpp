// kjudge._kernel_record: the KernelBench worker's record of the device kernels a call ran, from
// CUPTI's activity API in native code, so that a candidate's Python cannot rewrite it (torch's
// profiler record is read through Python objects a candidate can replace). CUPTI is opened at
// run time, the copy torch already loaded first, so the extension needs no CUDA library to load
// and the process never holds two CUPTIs. One record per process: CUPTI's activity callbacks are
// process-wide, so nothing else may use CUPTI's activity API while the worker records (torch's
// profiler is then used for CPU ops only).
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <cupti.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace {

// The fields read from a kernel record sit at the same offsets in every record version since
// CUpti_ActivityKernel4 (CUDA 10) up to the header's own; the library fills its newest version,
// which may be newer than the header, so the record is read through the oldest layout.
using KernelRecord = CUpti_ActivityKernel4;
#define KJ_SAME_OFFSET(field)                                                                     \
  static_assert(offsetof(CUpti_ActivityKernel4, field) == offsetof(CUpti_ActivityKernel10, field))
KJ_SAME_OFFSET(start);
KJ_SAME_OFFSET(end);
KJ_SAME_OFFSET(deviceId);
KJ_SAME_OFFSET(streamId);
KJ_SAME_OFFSET(name);
#undef KJ_SAME_OFFSET

// A kernel as the judge reads it: name, CUPTI's stream id, device, start and end (ns).
using Kernel = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t>;

struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
};

constexpr std::size_t kBufferBytes = 4u << 20;
// Buffers past this many are refused: CUPTI then drops records and counts them, which the judge
// reads as a record it cannot trust (a call that launches millions of kernels).
constexpr std::size_t kMaxBuffers = 16;

std::mutex record_mutex;
Cupti cupti;
std::string library_path;
std::vector<Kernel> kernels;
std::size_t buffers_out = 0;
bool recording = false;

// "kb_relu_kernel(float const*, float*, long)" for "_Z14kb_relu_kernelPKfPfl": the name the
// candidate's source spells (Triton's and extern "C" kernels are not mangled).
std::string readable_name(const char* name) {
  if (!name) return "";
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string readable = status == 0 && demangled ? demangled : name;
  std::free(demangled);
  return readable;
}

void CUPTIAPI request_buffer(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  std::lock_guard lock(record_mutex);
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  if (buffers_out >= kMaxBuffers) return;
  void* memory = std::aligned_alloc(8, kBufferBytes);
  if (!memory) return;
  ++buffers_out;
  *buffer = static_cast<std::uint8_t*>(memory);
  *size = kBufferBytes;
}

void CUPTIAPI complete_buffer(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                              std::size_t valid) {
  std::lock_guard lock(record_mutex);
  CUpti_Activity* record = nullptr;
  while (cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (!recording || record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const KernelRecord*>(record);
    kernels.emplace_back(readable_name(kernel->name), kernel->streamId, kernel->deviceId,
                         kernel->start, kernel->end);
  }
  std::free(buffer);
  --buffers_out;
}

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cupti.result_string) cupti.result_string(result, &text);
  return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

template <typename Function>
bool bind(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

// Opens CUPTI (a copy this process already loaded, by soname, else the first of `paths` that
// opens) and registers the record's callbacks. "" when the record can run, else why not.
std::string open_record(const std::vector<std::string>& paths) {
  std::lock_guard lock(record_mutex);
  if (cupti.enable) return "";
  void* library = nullptr;
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if ((library = dlopen(soname, RTLD_NOW | RTLD_NOLOAD))) {
      library_path = soname;
      break;
    }
  }
  std::string tried;
  for (std::size_t i = 0; !library && i < paths.size(); ++i) {
    if ((library = dlopen(paths[i].c_str(), RTLD_NOW | RTLD_LOCAL))) {
      library_path = paths[i];
    } else {
      const char* why = dlerror();
      tried += "; " + paths[i] + ": " + (why ? why : "not opened");
    }
  }
  if (!library) return "no CUPTI library is loaded or found" + tried;
  Cupti found;
  if (!bind(library, "cuptiActivityRegisterCallbacks", found.register_callbacks) ||
      !bind(library, "cuptiActivityEnable", found.enable) ||
      !bind(library, "cuptiActivityDisable", found.disable) ||
      !bind(library, "cuptiActivityFlushAll", found.flush_all) ||
      !bind(library, "cuptiActivityGetNextRecord", found.next_record) ||
      !bind(library, "cuptiActivityGetNumDroppedRecords", found.dropped_records) ||
      !bind(library, "cuptiGetResultString", found.result_string)) {
    return library_path + " lacks a function of CUPTI's activity API";
  }
  cupti = found;
  if (CUptiResult r = cupti.register_callbacks(request_buffer, complete_buffer); r != CUPTI_SUCCESS) {
    cupti = {};
    return "cuptiActivityRegisterCallbacks: " + result_text(r);
  }
  return "";
}

void start_record() {
  if (!cupti.enable) throw std::runtime_error("the kernel record is not open");
  {
    std::lock_guard lock(record_mutex);
    kernels.clear();
    recording = true;
  }
  // The buffers are ours again for this record: torch's profiler (Kineto), whose CPU record
  // runs around this one, registers its own with CUPTI, which has one pair per process, and then
  // received every kernel (the worker's record saw none on the H100 and fell back to the
  // profiler's).
  if (CUptiResult r = cupti.register_callbacks(request_buffer, complete_buffer); r != CUPTI_SUCCESS)
    throw std::runtime_error("cuptiActivityRegisterCallbacks: " + result_text(r));
  if (CUptiResult r = cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
    throw std::runtime_error("cuptiActivityEnable: " + result_text(r));
  }
}

// Ends the record (the caller has synchronised the device, so every kernel has ended): the
// kernels as CUPTI delivered them (the caller orders them by start), and how many records CUPTI
// dropped.
std::tuple<std::vector<Kernel>, std::size_t> stop_record() {
  if (!cupti.enable) throw std::runtime_error("the kernel record is not open");
  CUptiResult flushed = cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::size_t dropped = 0;
  cupti.dropped_records(nullptr, 0, &dropped);
  std::lock_guard lock(record_mutex);
  recording = false;
  if (flushed != CUPTI_SUCCESS) throw std::runtime_error("cuptiActivityFlushAll: " + result_text(flushed));
  std::vector<Kernel> taken;
  taken.swap(kernels);
  return {std::move(taken), dropped};
}

} // namespace

NB_MODULE(_kernel_record, m) {
  m.doc() = "the KernelBench worker's CUPTI record of kernels (use kjudge.kernelbench, not this)";
  m.def("open", &open_record, nb::arg("paths"),
        "Opens CUPTI (the copy already loaded, else the first of paths) and registers the "
        "record's callbacks. \"\" when the record can run, else why not.");
  m.def("library", [] { return library_path; }, "The CUPTI the record opened.");
  m.def("start", &start_record, "Clears the record and starts recording kernels.");
  m.def("stop", &stop_record,
        "Flushes and stops the record (synchronise the device first): ([(name, stream, device, "
        "start_ns, end_ns)], records dropped).");
}
