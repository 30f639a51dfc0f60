// Driving an untrusted kernel on the host backend (host_runner.hpp). The arena is one memfd
// shared with the worker: per run it holds every buffer as [red zone | tensor | red zone], each
// at a 256-byte aligned offset, written by this side before the request and read by this side
// after the reply. The worker's reply says only that the launches returned.
#include "judge/host/host_runner.hpp"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/findings.hpp"
#include "judge/defences.hpp"
#include "worker/worker_command.hpp"
#include "worker/worker_process.hpp"
#include "kjudge/error.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj::judge {

namespace {


std::uint64_t align256(std::uint64_t n) {
  return (n + 255) & ~std::uint64_t{255};
}

int make_memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) throw InternalError(fmt::format("memfd_create: {}", std::strerror(errno)));
  return fd;
}

StartFailure unsupported(std::string message) {
  return StartFailure{Reason::internal, std::move(message), true};
}

// The host compiler's errors in its log ("file:line:col: error: ..."), at most three, joined; the
// log's first lines when it names none. The log's other lines (the function an error is in, the
// notes after it) say where but not what.
std::string host_compiler_errors(const std::string& log) {
  std::string out;
  int shown = 0;
  std::size_t at = 0;
  while (at < log.size() && shown < 3) {
    std::size_t end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    const std::string_view line(log.data() + at, end - at);
    if (line.find(": error: ") != std::string_view::npos ||
        line.find(": fatal error: ") != std::string_view::npos) {
      out += (shown++ > 0 ? "; " : "") + std::string(line);
    }
    at = end + 1;
  }
  return shown > 0 ? out : first_lines(log, 3);
}

// The arena's bytes at `offset` from its start, named by the buffer they belong to: "of output
// 'y' (byte 68)" inside one, "4 bytes past the end of input 'x' (80044 bytes)" in a red zone or
// the padding after it, "outside every buffer" in the guard regions around the arena.
std::string arena_where(const RunRequest& request, std::int64_t offset) {
  const std::uint64_t rz = request.redzone_bytes;
  const BufferRequest* owner = nullptr;
  for (const BufferRequest& b : request.buffers)
    if (offset >= 0 && b.arena_offset <= static_cast<std::uint64_t>(offset)) owner = &b;
  if (owner == nullptr || static_cast<std::uint64_t>(offset) >= request.arena_bytes)
    return "outside every buffer (beyond the red zones)";
  const std::string name = fmt::format("{} '{}'", role_name(owner->role), owner->name);
  const std::int64_t start = static_cast<std::int64_t>(owner->arena_offset + rz);
  const std::int64_t end = start + static_cast<std::int64_t>(owner->bytes);
  if (offset < start)
    return fmt::format("{} bytes before the start of {}", start - offset, name);
  if (offset >= end)
    return fmt::format("{} bytes past the end of {} ({} bytes)", offset - end, name, owner->bytes);
  return fmt::format("of {} (byte {})", name, offset - start);
}

} // namespace

HostKernelRunner::HostKernelRunner(std::string role, const Candidate& kernel,
                                   const Problem& problem, const CheckSettings& settings,
                                   HostCompileOptions host)
    : role_(std::move(role)), kernel_(kernel), problem_(problem), settings_(settings),
      host_(std::move(host)) {
  checked_.checked = true;
  context_ = candidate_plan_context(role_, problem, kernel, host_device_info());
}

HostKernelRunner::~HostKernelRunner() {
  for (Worker* w : {&plain_, &checked_}) {
    w->link.reset();
    if (w->log_fd >= 0) ::close(w->log_fd);
  }
  if (arena_) ::munmap(arena_, arena_bytes_);
  if (arena_fd_ >= 0) ::close(arena_fd_);
}

// What NVRTC is asked about the host build (its macros, the names it lacks): the candidate's
// options, once per process and set of options, since the answer is NVRTC's, not the candidate's.
CompileOptions HostKernelRunner::nvrtc_probe_options(int arch) const {
  CompileOptions probe;
  probe.arch = arch;
  probe.kjudge_include = settings_.kjudge_include;
  probe.cache_dir = settings_.asked.cache_dir;
  probe.options = kernel_.options;
  return probe;
}

namespace {

// `ask(probe)`, asked once per process and set of probe options (each `Ask` keeps its own answers).
template <class Ask>
auto asked_once_per_options(const CompileOptions& probe, Ask ask) {
  using Answer = decltype(ask(probe));
  static std::mutex mutex;
  static std::map<std::string, Answer> known;
  const std::string key = fmt::format("{}|{}", probe.arch, fmt::join(probe.options, " "));
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  return known[key] = ask(probe);
}

} // namespace

std::vector<std::pair<std::string, std::string>> HostKernelRunner::device_macros(int arch) const {
  return asked_once_per_options(nvrtc_probe_options(arch), [&](const CompileOptions& probe) {
    return nvrtc_predefined_macros(predefined_macro_names(host_), probe);
  });
}

// The host C library's names NVRTC's headers mention but NVRTC does not declare.
std::set<std::string> HostKernelRunner::nvrtc_lacks(int arch) const {
  return asked_once_per_options(nvrtc_probe_options(arch), [&](const CompileOptions& probe) {
    return nvrtc_undeclared_names(host_library_names(nvrtc_names(host_.cuda_include, {})), probe);
  });
}

// Those of `words` (the candidate's) NVRTC defines as macros for the candidate's options. A probe
// the candidate's words break is no ERROR of the judge's: without the answer a macro of NVRTC's is
// kept apart too, and g++'s refusal is then the candidate's FAIL.
std::set<std::string> HostKernelRunner::nvrtc_macros_among(const std::vector<std::string>& words,
                                                          int arch) const {
  std::set<std::string> out;
  try {
    for (const auto& [name, value] : nvrtc_predefined_macros(words, nvrtc_probe_options(arch)))
      out.insert(name);
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

// What the preprocessors answer otherwise (a feature probe, even pasted together or inside a
// header's macro; a header's macro whose expansion is each compiler's) is seen here, whatever
// its spelling: the text g++ would compile, given to NVRTC, must give the program the
// candidate's source gave, line information aside.
std::function<void(const std::string&)> HostKernelRunner::nvrtc_compiles_the_same(int arch) const {
  struct Answer {
    std::mutex mutex;
    std::optional<std::string> text, refusal;
  };
  auto answer = std::make_shared<Answer>();
  return [this, arch, answer](const std::string& text) {
    const std::lock_guard lock(answer->mutex);
    if (answer->text != text) { // asked once for both builds' (equal) text
      answer->text = text;
      answer->refusal = preprocessing_kept_the_tokens(kernel_.source.text, text)
                            ? std::nullopt
                            : why_nvrtc_compiles_another_program(text, arch);
    }
    if (answer->refusal)
      throw UnsupportedOnHost(fmt::format("unsupported on host backend: {}: {}",
                                          kernel_.path.filename().string(), *answer->refusal));
  };
}

// NVRTC's compile of `text` in the compile worker, against the candidate's module: why it is
// not the candidate's program, or nullopt when it is.
std::optional<std::string> HostKernelRunner::why_nvrtc_compiles_another_program(
    const std::string& text, int arch) const {
  Candidate preprocessed = kernel_;
  preprocessed.source.text = text;
  ModuleMessage module;
  std::vector<std::size_t> index_of_launch;
  if (auto failed = compile_in_worker(role_, preprocessed, problem_, settings_, arch, false,
                                      index_of_launch, module))
    return fmt::format("NVRTC refuses the text the host would compile ({})",
                       first_lines(failed->message, 3));
  if (module.code_digest != module_.code_digest)
    return "the text the host would compile is not the program NVRTC compiled (a conditional "
           "or a macro the host's preprocessor answers otherwise: a feature probe, a header's "
           "macro)";
  return std::nullopt;
}

std::optional<StartFailure> HostKernelRunner::start() {
  // The oracle's memory is no other process's to read: without CAP_SYS_PTRACE in kjudge's own
  // user namespace, which the worker never has, /proc/<oracle>/mem and ptrace are refused.
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (auto why = unsupported_launch(kernel_.source.launches)) return unsupported(*why);
  // NVRTC first: it rejects what CUDA rejects (host calls in device code, off-list headers),
  // and its symbols carry the exact parameter types.
  const DeviceInfo device = host_device_info();
  if (auto failed = compile_in_worker(role_, kernel_, problem_, settings_,
                                      device.cc_major * 10 + device.cc_minor, false,
                                      index_of_launch_, module_))
    return failed;
  try {
    read_symbols(module_.kernels, kernel_.source.text, built_);
    per_launch_.clear();
    for (std::size_t k = 0; k < kernel_.source.launches.size(); ++k)
      per_launch_.push_back(&built_.kernels.at(module_.kernels[index_of_launch_[k]].expression));
    check_plan_types(kernel_.source.launches, per_launch_, context_);
  } catch (const PlanError& e) {
    return StartFailure{Reason::launch_error, e.what()};
  }

  std::vector<std::string> expressions;
  for (const KernelSymbol& k : module_.kernels)
    expressions.push_back(k.expression);
  try {
    host_.device_macros = device_macros(device.cc_major * 10 + device.cc_minor);
    if (host_.one_program) {
      const int arch = device.cc_major * 10 + device.cc_minor;
      host_.nvrtc_lacks = nvrtc_lacks(arch);
      host_.nvrtc_knows = nvrtc_macros_among(
          words_outside(kernel_.source.text, nvrtc_names(host_.cuda_include, {})), arch);
      host_.nvrtc_compiles_the_same = nvrtc_compiles_the_same(arch);
    }
  } catch (const std::exception& e) {
    return StartFailure{Reason::internal,
                        fmt::format("NVRTC's predefined macros could not be read: {}", e.what())};
  }
  try {
    // The two builds are independent compiles: side by side.
    const std::string file = kernel_.path.filename().string();
    std::future<std::filesystem::path> checked_build;
    if (settings_.asked.race_detection || settings_.asked.exact_bounds) {
      HostCompileOptions checked = host_;
      checked.checked = true;
      checked_build = std::async(std::launch::async, [this, file, expressions, checked] {
        return build_host_module(kernel_.source.text, file, expressions, checked);
      });
    }
    HostCompileOptions plain = host_;
    plain.checked = false;
    std::exception_ptr plain_failed;
    try {
      plain_.shared_object = build_host_module(kernel_.source.text, file, expressions, plain);
    } catch (...) {
      plain_failed = std::current_exception();
    }
    if (checked_build.valid()) checked_.shared_object = checked_build.get();
    if (plain_failed) std::rethrow_exception(plain_failed);
  } catch (const HostLoadTimeCode& e) {
    return StartFailure{Reason::forbidden_construct, e.what()};
  } catch (const HostCompileLimit& e) {
    return StartFailure{Reason::compile_error, e.what()};
  } catch (const UnsupportedOnHost& e) {
    return unsupported(e.what());
  } catch (const CompileError& e) {
    // NVRTC accepted it, so it is CUDA: what the host compiler refuses is the emulation's gap.
    return unsupported(fmt::format("unsupported on host backend: the host compiler refuses what "
                                   "NVRTC accepts: {}",
                                   with_own_names_restored(e.log().empty()
                                                               ? e.what()
                                                               : host_compiler_errors(e.log()))));
  } catch (const std::exception& e) {
    return StartFailure{Reason::internal, fmt::format("host build: {}", e.what())};
  }
  try {
    if (arena_fd_ < 0) arena_fd_ = make_memfd("kjudge-arena");
  } catch (const InternalError& e) {
    return StartFailure{Reason::internal, e.what()};
  }
  return spawn_and_load(plain_);
}

std::optional<StartFailure> HostKernelRunner::spawn_and_load(Worker& w) {
  w.link.reset();
  auto fail = [&](std::string message, Reason reason = Reason::internal) {
    w.link.reset();
    return StartFailure{reason, std::move(message)};
  };
  SpawnExtras extras;
  try {
    if (w.log_fd >= 0) ::close(w.log_fd);
    w.log_fd = make_memfd("kjudge-worker-stderr");
    extras.stderr_fd = w.log_fd;
    extras.shared_fd = arena_fd_;
    w.link = std::make_unique<WorkerProcess>(
        worker_argv(settings_.asked.self_exe, host_worker_command(host_.cache_dir / "host")),
        extras);
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot start a host worker: {}", e.what()));
  }
  const Reply hello = w.link->hello(deadline_after(settings_.asked.startup_deadline_s));
  if (hello.status != Reply::Status::ok)
    return fail(fmt::format("the host worker did not start: {}",
                            hello.status == Reply::Status::error ? hello.error.message
                                                                 : hello.detail));
  const nlohmann::json load = {{"op", "load"},
                               {"shared_object", w.shared_object.string()},
                               {"lowered", built_.lowered},
                               {"check_races", settings_.asked.race_detection}};
  const Reply reply = w.link->request(load, deadline_after(settings_.asked.startup_deadline_s));
  // Loading runs the module's own code in the worker, which could answer anything: the
  // kernel's crash, never kjudge's ERROR.
  if (reply.status != Reply::Status::ok)
    return fail(fmt::format("the host worker did not load the {}: {}", role_,
                            reply.status == Reply::Status::error ? reply.error.message
                                                                 : reply.detail),
                Reason::crash);
  ++w.starts;
  return std::nullopt;
}

std::optional<LineCoverage> HostKernelRunner::lines_reached(std::string& why) {
  if (!host_.coverage) {
    why = "the build has no coverage instrumentation";
    return std::nullopt;
  }
  if (!plain_.link || !plain_.link->alive() || plain_.starts != 1) {
    why = "the candidate's worker was replaced, and its counters with it";
    return std::nullopt;
  }
  const Reply reply = plain_.link->request({{"op", "coverage"}},
                                           deadline_after(settings_.asked.startup_deadline_s));
  const nlohmann::json* hex = reply.status == Reply::Status::ok && reply.message.is_object() &&
                                      reply.message.contains("coverage") &&
                                      reply.message["coverage"].is_string()
                                  ? &reply.message["coverage"]
                                  : nullptr;
  if (!hex) {
    why = "the candidate's worker did not hand out its counters";
    if (reply.status != Reply::Status::ok) plain_.link.reset();
    return std::nullopt;
  }
  std::vector<std::byte> counters;
  try {
    counters = from_hex(hex->get<std::string>());
  } catch (const std::exception&) {
    why = "the candidate's worker handed out malformed counters";
    return std::nullopt;
  }
  return read_line_coverage(plain_.shared_object, counters, kernel_.path.filename().string(),
                            host_, why);
}

bool HostKernelRunner::map_arena(std::uint64_t bytes) {
  if (bytes == arena_bytes_) return true;
  if (arena_) ::munmap(arena_, arena_bytes_);
  arena_ = nullptr;
  arena_bytes_ = 0;
  if (::ftruncate(arena_fd_, static_cast<off_t>(bytes)) != 0) return false;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd_, 0);
  if (p == MAP_FAILED) return false;
  arena_ = static_cast<std::byte*>(p);
  arena_bytes_ = bytes;
  return true;
}

bool HostKernelRunner::finding_in_log(const Worker& w, const RunRequest& request,
                                      RunOutcome& out) const {
  if (w.log_fd < 0) return false;
  std::string text;
  char chunk[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(w.log_fd, chunk, sizeof chunk, at);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    at += n;
    if (text.size() > (1u << 20)) break; // the finding ends the process: it is the last line
  }
  std::optional<ShadowFinding> finding = parse_shadow_finding(text);
  if (!finding) return false;
  place_finding(*finding, w.shared_object, code_name(kernel_.path.filename().string()));
  const std::string where =
      finding->shared ? finding->shared_where() : arena_where(request, finding->offset);
  out.message = finding->message(where);
  out.reason = finding->race ? Reason::nondeterministic
               : finding->current.kind.find("write") != std::string::npos ? Reason::oob_write
                                                                          : Reason::crash;
  out.outputs.clear();
  return true;
}

RunOutcome HostKernelRunner::run(const Case& c, const CaseData& data, int run_index) {
  const bool checked = settings_.asked.exact_bounds ||
                       (run_index == 0 && screened_ != nullptr && screened_->contains(&c) &&
                        settings_.asked.race_detection);
  return run_in(checked ? checked_ : plain_, c, data, run_index);
}

RunOutcome HostKernelRunner::timed_run(const Case& c, const CaseData& data, int run_index) {
  return run_in(plain_, c, data, run_index); // a time of the kernel, not of the checks
}

RunOutcome HostKernelRunner::run_in(Worker& w, const Case& c, const CaseData& data,
                                    int run_index) {
  RunOutcome out;
  if (!w.link || !w.link->alive()) {
    if (auto failed = spawn_and_load(w)) {
      out.reason = Reason::internal;
      out.message = fmt::format("cannot replace the {}'s host worker: {}", role_, failed->message);
      return out;
    }
  }
  RunRequest request;
  request.case_id = c.id;
  if (!plan_run(role_, kernel_, problem_, kernel_.source.launches, per_launch_, context_, data,
                run_index, settings_, request, out))
    return out;
  if (w.checked) {
    // The checked build: plan_run's deadline, stretched for its slowdown.
    std::uint64_t bytes = 0;
    for (const BufferRequest& b : request.buffers)
      bytes += b.bytes;
    out.deadline_s =
        run_deadline_s(data.reference_s * settings_.slowdown, settings_.asked.deadline_factor,
                       settings_.deadline_min_s * 4, bytes);
  }

  // Lay out and fill the arena.
  const std::uint64_t rz = request.redzone_bytes;
  std::uint64_t total = 0;
  for (BufferRequest& b : request.buffers) {
    b.arena_offset = total;
    total += align256(2 * rz + std::max<std::uint64_t>(b.bytes, 1));
  }
  request.arena_bytes = std::max<std::uint64_t>(total, 256);
  if (!map_arena(request.arena_bytes)) {
    out.reason = Reason::internal;
    out.message = fmt::format("cannot size the host arena to {} bytes: {}", request.arena_bytes,
                              std::strerror(errno));
    return out;
  }
  for (std::size_t k = 0; k < request.buffers.size(); ++k) {
    const BufferRequest& b = request.buffers[k];
    std::byte* base = arena_ + b.arena_offset;
    std::memset(base, request.redzone_byte, rz);
    std::memset(base + rz + b.bytes, request.redzone_byte, rz);
    std::byte* inner = base + rz;
    if (b.role == BufferRole::input)
      std::memcpy(inner, data.host_master[k].bytes().data(), b.bytes);
    else if (b.fill.kind == Fill::Kind::initial)
      std::memcpy(inner, data.initial[k - problem_.inputs.size()].bytes().data(), b.bytes);
    else if (b.fill.kind == Fill::Kind::pattern)
      fill_pattern({inner, b.bytes}, b.fill.pattern);
    else
      std::memset(inner, 0, b.bytes);
  }

  // Times taken from outside the worker: a candidate's code in it cannot change them.
  const std::optional<double> cpu_before = w.link->cpu_seconds();
  const auto wall_before = Clock::now();
  // The deadline is the worker's CPU time, which a loaded machine does not stretch; the
  // backstop ends a worker that uses none.
  const Reply reply = w.link->request_within_cpu_time(
      to_json(request), CpuDeadline{out.deadline_s, host_wall_backstop_s(out.deadline_s)});
  const std::optional<double> cpu_after = w.link->cpu_seconds();
  if (reply.status != Reply::Status::ok) {
    if (w.checked && reply.status == Reply::Status::died && finding_in_log(w, request, out)) {
      w.link.reset();
      return out;
    }
    bool lost = false;
    RunOutcome failed = failed_run(reply, out, kernel_, data.reference_s, settings_, lost);
    if (lost) w.link.reset();
    return failed;
  }

  out.cpu_ms = cpu_before && cpu_after ? (*cpu_after - *cpu_before) * 1e3 : 0.0;
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - wall_before).count();
  for (std::size_t k = 0; k < request.buffers.size(); ++k) {
    const BufferRequest& b = request.buffers[k];
    const std::byte* base = arena_ + b.arena_offset;
    const std::byte* inner = base + rz;
    if (rz > 0) {
      const RedzoneScan scan =
          scan_redzones({base, rz}, {inner + b.bytes, rz}, request.redzone_byte);
      if (scan.damaged()) out.oob.push_back(redzone_message(role_name(b.role), b.name, scan));
    }
    if (b.role == BufferRole::input && settings_.defences.input_hash) {
      const std::uint64_t changed =
          count_changed_bytes({inner, b.bytes}, data.host_master[k].bytes().first(b.bytes));
      if (changed > 0)
        out.inputs_modified.push_back(
            fmt::format("input '{}': {} of {} bytes changed", b.name, changed, b.bytes));
    }
    if (b.role == BufferRole::output) {
      const std::size_t o = k - problem_.inputs.size();
      HostTensor t(problem_.outputs[o].dtype, data.output_shapes[o]);
      std::memcpy(t.bytes().data(), inner, t.nbytes());
      out.outputs.push_back(std::move(t));
    }
  }
  reason_from_damage(out);
  return out;
}

} // namespace kj::judge
