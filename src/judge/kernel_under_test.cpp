// The pieces of running an untrusted kernel that both backends share (kernel_under_test.hpp):
// the compile in its own worker, the plan of one run, a failed reply read as the run's outcome.
#include "judge/kernel_under_test.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "kjudge/error.hpp"
#include "kjudge/static_scan.hpp"
#include "kjudge/validate.hpp"
#include "worker/worker_command.hpp"

namespace kj::judge {

// A worker process: a spare when the check keeps them, else started now.
std::unique_ptr<WorkerProcess> start_worker(const CheckSettings& settings,
                                            const WorkerCommand& command) {
  const std::vector<std::string> argv = worker_argv(settings.asked.self_exe, command);
  if (settings.asked.spare_workers) return settings.asked.spare_workers->take(argv);
  return std::make_unique<WorkerProcess>(argv);
}

namespace {

// NVRTC in a compile-only worker process (its memory cap and deadline): the module of
// `request`, or the candidate's compile_error / launch_error, or internal.
std::optional<StartFailure> compile_by_worker(const std::string& role, const Candidate& kernel,
                                              const Problem& problem, const CheckSettings& settings,
                                              const CompileRequest& request,
                                              ModuleMessage& module) {
  auto fail = [](Reason reason, std::string message) {
    return StartFailure{reason, std::move(message)};
  };
  std::unique_ptr<WorkerProcess> compiler;
  try {
    compiler =
        start_worker(settings, compile_worker_command(settings.asked.compile_memory_cap));
  } catch (const std::exception& e) {
    return fail(Reason::internal, fmt::format("cannot start the compiler's worker: {}", e.what()));
  }
  const Reply hello = compiler->hello(deadline_after(settings.asked.startup_deadline_s));
  if (hello.status != Reply::Status::ok)
    return fail(Reason::internal,
                fmt::format("the compiler's worker did not start: {}",
                            hello.status == Reply::Status::error ? hello.error.message
                                                                 : hello.detail));
  const Reply reply =
      compiler->request(to_json(request), deadline_after(settings.asked.compile_deadline_s));
  if (settings.asked.spare_workers)
    settings.asked.spare_workers->retire(std::move(compiler)); // it exits on its own
  switch (reply.status) {
  case Reply::Status::ok:
    break;
  case Reply::Status::error:
    if (reply.error.error == "compile_error") {
      std::string message = reply.error.message;
      const std::string log = first_lines(reply.error.log, 20);
      if (!log.empty() && message.find(log) == std::string::npos) message += "\n" + log;
      // A plan naming a kernel the source does not define (or with template arguments it
      // does not take) fails NVRTC's name expression: that is a plan/kernel mismatch, the
      // candidate's launch_error (docs/design.md), with the lexer's reading as the explanation.
      for (const Diagnostic& d :
           check_launch_signatures(problem, kernel.source, kernel.scratch)) {
        const std::string& field = d.where.field;
        if (d.severity == Diagnostic::Severity::error && field.size() >= 7 &&
            field.compare(field.size() - 7, 7, ".kernel") == 0)
          return fail(Reason::launch_error, fmt::format("{}\n{}", format_diagnostic(d), message));
      }
      return fail(Reason::compile_error, message);
    }
    return fail(Reason::internal, fmt::format("the compiler's worker failed on the {}: {}", role,
                                              reply.error.message));
  case Reply::Status::timeout:
    return fail(Reason::compile_error, fmt::format("the {} did not compile within {:.0f} s", role,
                                                   settings.asked.compile_deadline_s));
  case Reply::Status::died:
    return fail(Reason::compile_error,
                fmt::format("the compiler died compiling the {} ({}; its memory is capped at {} "
                            "MiB)",
                            role, reply.detail, settings.asked.compile_memory_cap >> 20));
  case Reply::Status::protocol:
    return fail(Reason::internal, fmt::format("compiler protocol: {}", reply.detail));
  }
  try {
    module = module_message_from_json(reply.message);
  } catch (const ProtocolError& e) {
    return fail(Reason::internal, e.what());
  }
  if (module.kernels.size() != request.expressions.size())
    return fail(Reason::internal, "the compiler's reply lists the wrong number of kernels");
  return std::nullopt;
}

} // namespace

std::optional<StartFailure> compile_in_worker(const std::string& role, const Candidate& kernel,
                                              const Problem& problem, const CheckSettings& settings,
                                              int arch, bool arch_specific,
                                              std::vector<std::size_t>& index_of_launch,
                                              ModuleMessage& module) {
  auto fail = [](Reason reason, std::string message) {
    return StartFailure{reason, std::move(message)};
  };
  CompileRequest request;
  request.source = kernel.source.text;
  request.file_name = kernel.path.filename().string();
  request.expressions = distinct_expressions(kernel.source.launches, index_of_launch);
  request.options = kernel.options;
  request.cache_dir = settings.asked.cache_dir.string();
  request.kjudge_include = settings.kjudge_include.string();
  request.arch = arch;
  request.arch_specific = arch_specific;
  // Walked once in this process (once per `kjudge serve`), not once per compile worker.
  request.header_set_hash = header_set_hash(settings.kjudge_include);
  request.forbid = problem.forbid;
  // A module the compile cache holds needs no compiler: it is read and scanned here, and no
  // process starts; otherwise the compile worker compiles and scans it.
  if (auto hit = cached_module(request.source, request.file_name, request.expressions,
                               compile_options(request))) {
    module.cubin = std::move(hit->cubin);
    module.kernels = std::move(hit->kernels);
    module.log = std::move(hit->log);
    module.from_cache = true;
    module.code_digest = ptx_code_digest(hit->ptx);
    if (settings.defences.static_scan) {
      module.forbidden =
          forbidden_constructs(request.source, request.file_name, hit->ptx, problem.forbid);
      module.unfenced = unfenced_handoff(hit->ptx, request.file_name);
    }
  } else if (auto failed = compile_by_worker(role, kernel, problem, settings, request, module)) {
    return failed;
  }
  if (settings.defences.static_scan && module.forbidden)
    return fail(Reason::forbidden_construct, *module.forbidden);
  if (settings.defences.static_scan && module.unfenced)
    return fail(Reason::nondeterministic, *module.unfenced);
  return std::nullopt;
}

PlanContext candidate_plan_context(const std::string& role, const Problem& problem,
                                   const Candidate& kernel, const DeviceInfo& device) {
  PlanContext context;
  context.owner = role;
  for (const auto& in : problem.inputs)
    context.tensors.push_back({in.name, in.dtype});
  for (const auto& out : problem.outputs)
    context.tensors.push_back({out.name, out.dtype});
  for (const auto& s : kernel.scratch)
    context.tensors.push_back({s.name, s.dtype});
  context.scalars = problem.scalars;
  context.device = device;
  return context;
}

bool plan_run(const std::string& role, const Candidate& kernel, const Problem& problem,
              const std::vector<LaunchSpec>& launches,
              const std::vector<const PlanKernel*>& per_launch, const PlanContext& context,
              const CaseData& data, int run_index, const CheckSettings& settings,
              RunRequest& request, RunOutcome& out) {
  // The plan on this case's shapes: a launch that does not fit is the kernel's failure here.
  std::vector<Shape> scratch_shapes;
  try {
    for (const auto& s : kernel.scratch) {
      scratch_shapes.push_back(eval_shape(s.shape, data.env, s.name, s.where));
      // The byte count must not wrap (nor the red zones added to it): 2^56 bytes is beyond
      // any device.
      if (checked_numel(scratch_shapes.back()) > (std::int64_t{1} << 53))
        throw PlanError(fmt::format("{}: scratch '{}' of shape {} is larger than any device", role,
                                    s.name, shape_string(scratch_shapes.back())));
    }
    request.launches = marshal_launches(launches, per_launch, context, data.env);
  } catch (const PlanError& e) {
    out.reason = Reason::launch_error;
    out.message = e.what();
    return false;
  } catch (const SpecError& e) {
    out.reason = Reason::launch_error;
    out.message = fmt::format("{}: {}", role, e.what());
    return false;
  }
  request.redzone_bytes = settings.defences.redzone ? kRedzoneBytes : 0;
  request.redzone_byte = redzone_byte(run_index);

  std::uint64_t total = 0;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
    BufferRequest b;
    b.name = problem.inputs[i].name;
    b.role = BufferRole::input;
    b.bytes = tensor_bytes(problem.inputs[i].dtype, data.input_shapes[i]);
    total += b.bytes;
    request.buffers.push_back(std::move(b));
  }
  auto fill_for = [&](InitRule init, DType dtype) {
    Fill f;
    if (init == InitRule::zero) {
      f.kind = Fill::Kind::zero;
    } else if (init == InitRule::drawn) {
      f.kind = Fill::Kind::initial;
    } else if (settings.defences.poison) {
      f.kind = Fill::Kind::pattern;
      f.pattern = poison_pattern(run_index, dtype);
    }
    return f;
  };
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const OutputSpec& spec = problem.outputs[o];
    const InitRule init = spec.init;
    BufferRequest b;
    b.name = spec.name;
    b.role = BufferRole::output;
    b.bytes = tensor_bytes(spec.dtype, data.output_shapes[o]);
    b.fill = fill_for(init, spec.dtype);
    out.poisoned.push_back(b.fill.kind == Fill::Kind::pattern);
    total += b.bytes;
    request.buffers.push_back(std::move(b));
  }
  for (std::size_t s = 0; s < kernel.scratch.size(); ++s) {
    BufferRequest b;
    b.name = kernel.scratch[s].name;
    b.role = BufferRole::scratch;
    b.bytes = tensor_bytes(kernel.scratch[s].dtype, scratch_shapes[s]);
    b.fill = fill_for(kernel.scratch[s].init, kernel.scratch[s].dtype);
    total += b.bytes;
    request.buffers.push_back(std::move(b));
  }
  if (settings.memory_cap > 0 && total > settings.memory_cap) {
    out.reason = Reason::launch_error;
    out.message = fmt::format("{}: the run holds {} bytes (inputs, outputs and scratch), more than "
                              "this machine gives a run ({} bytes)",
                              role, total, settings.memory_cap);
    return false;
  }
  if (problem.memory_limit) {
    const std::int64_t limit = problem.memory_limit->eval(data.env);
    if (static_cast<std::int64_t>(total) > limit) {
      out.reason = Reason::launch_error;
      out.message = fmt::format("{}: the run holds {} bytes (inputs, outputs and scratch), over "
                                "the problem's memory_limit of {} bytes ('{}')",
                                role, total, limit, problem.memory_limit->text());
      return false;
    }
  }
  out.deadline_s = run_deadline_s(data.reference_s, settings.asked.deadline_factor,
                                  settings.deadline_min_s, total);
  return true;
}

RunOutcome failed_run(const Reply& reply, const RunOutcome& planned, const Candidate& kernel,
                      double reference_s, const CheckSettings& settings, bool& worker_lost) {
  RunOutcome out;
  out.deadline_s = planned.deadline_s;
  worker_lost = true;
  switch (reply.status) {
  case Reply::Status::ok:
    KJ_EXPECTS(false, "failed_run of a failed reply");
    break;
  case Reply::Status::timeout:
    out.reason = Reason::timeout;
    if (reply.limit == Reply::Limit::wall)
      out.message = fmt::format(
          "no result within {:.2f} s (max({:g} x the reference's {:.4f} s, {:g} s) plus the "
          "copies' allowance); the worker was killed",
          out.deadline_s, settings.asked.deadline_factor, reference_s, settings.deadline_min_s);
    else // the host backend's deadline in CPU time: the reply says which limit ended the run
      out.message = fmt::format(
          "{}; the deadline is max({:g} x the reference's {:.4f} s of CPU time, {:g} s) plus "
          "the copies' allowance; the worker was killed",
          reply.detail, settings.asked.deadline_factor, reference_s, settings.deadline_min_s);
    break;
  case Reply::Status::died:
    out.reason = Reason::crash;
    out.message = reply.detail;
    break;
  case Reply::Status::protocol:
    out.reason = Reason::internal;
    out.message = fmt::format("worker protocol: {}", reply.detail);
    break;
  case Reply::Status::error: {
    const ErrorReply& e = reply.error;
    out.message = e.message;
    if (e.error == "crash") {
      out.reason = Reason::crash;
    } else if (e.error == "launch_error") {
      worker_lost = false;
      out.reason = Reason::launch_error;
    } else if (e.error == "out_of_memory") {
      worker_lost = false;
      const bool scratch = std::any_of(kernel.scratch.begin(), kernel.scratch.end(),
                                       [&](const ScratchSpec& s) { return s.name == e.buffer; });
      out.reason = scratch ? Reason::launch_error : Reason::internal;
    } else {
      out.reason = Reason::internal;
      out.message = fmt::format("the worker failed: {}", e.message);
    }
    break;
  }
  }
  // On the host backend the candidate is native code in the worker's own process, so it can
  // write to the judge's channel: whatever that worker answers that would be kjudge's fault (a
  // reply off the protocol, "internal", memory the judge's run did not fit) may be forged, and is
  // the candidate's FAIL. A CUDA worker runs no code of the candidate's on its host side.
  if (settings.backend == Backend::host && out.reason == Reason::internal) {
    out.reason = Reason::crash;
    out.message = fmt::format("the host worker, which runs the candidate's code, answered what "
                              "the worker itself never does ({}): the candidate's fault",
                              out.message);
  }
  return out;
}

void reason_from_damage(RunOutcome& out) {
  auto join = [](const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items)
      s += (s.empty() ? "" : "; ") + i;
    return s;
  };
  if (!out.oob.empty()) {
    out.reason = Reason::oob_write;
    out.message = join(out.oob);
  } else if (!out.inputs_modified.empty()) {
    out.reason = Reason::input_modified;
    out.message = join(out.inputs_modified);
  }
}

} // namespace kj::judge
