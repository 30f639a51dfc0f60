// JSON forms of the protocol messages (messages.hpp). Reading is strict: a missing or mistyped
// field is a ProtocolError naming it, because both ends are kjudge and a mismatch means
// a bug (or a worker whose memory was tampered with), never something to paper over.
#include "worker/messages.hpp"

#include <cstring>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "worker/protocol.hpp"

namespace kj::judge {

using nlohmann::json;

namespace {

[[noreturn]] void bad(std::string_view what) {
  throw ProtocolError(fmt::format("malformed protocol message: {}", what));
}

const json& field(const json& j, const char* name) {
  if (!j.is_object()) bad(fmt::format("expected an object holding '{}'", name));
  const auto it = j.find(name);
  if (it == j.end()) bad(fmt::format("missing field '{}'", name));
  return *it;
}

std::string get_string(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_string()) bad(fmt::format("field '{}' is not a string", name));
  return v.get<std::string>();
}

std::uint64_t get_u64(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    bad(fmt::format("field '{}' is not a non-negative integer", name));
  return v.get<std::uint64_t>();
}

unsigned get_unsigned(const json& j, const char* name) {
  const std::uint64_t v = get_u64(j, name);
  if (v > 0xFFFFFFFFu) bad(fmt::format("field '{}' exceeds 32 bits", name));
  return static_cast<unsigned>(v);
}

int get_int(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_number_integer()) bad(fmt::format("field '{}' is not an integer", name));
  return v.get<int>();
}

bool get_bool(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_boolean()) bad(fmt::format("field '{}' is not a boolean", name));
  return v.get<bool>();
}

const json& get_array(const json& j, const char* name) {
  const json& v = field(j, name);
  if (!v.is_array()) bad(fmt::format("field '{}' is not an array", name));
  return v;
}

std::vector<std::string> get_strings(const json& j, const char* name) {
  std::vector<std::string> out;
  for (const json& v : get_array(j, name)) {
    if (!v.is_string()) bad(fmt::format("an element of '{}' is not a string", name));
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::array<unsigned, 3> get_dim3(const json& j, const char* name) {
  const json& a = get_array(j, name);
  if (a.size() != 3) bad(fmt::format("field '{}' does not hold 3 values", name));
  std::array<unsigned, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!a[i].is_number_unsigned()) bad(fmt::format("field '{}' holds a non-count", name));
    const auto v = a[i].get<std::uint64_t>();
    if (v > 0xFFFFFFFFu) bad(fmt::format("field '{}' exceeds 32 bits", name));
    out[i] = static_cast<unsigned>(v);
  }
  return out;
}

std::string_view fill_kind_name(Fill::Kind k) {
  switch (k) {
  case Fill::Kind::none:
    return "none";
  case Fill::Kind::zero:
    return "zero";
  case Fill::Kind::pattern:
    return "pattern";
  case Fill::Kind::initial:
    return "initial";
  }
  return "none";
}

} // namespace

std::string_view role_name(BufferRole role) {
  switch (role) {
  case BufferRole::input:
    return "input";
  case BufferRole::output:
    return "output";
  case BufferRole::scratch:
    return "scratch";
  }
  return "output";
}

BufferRole parse_role(std::string_view name) {
  if (name == "input") return BufferRole::input;
  if (name == "output") return BufferRole::output;
  if (name == "scratch") return BufferRole::scratch;
  bad(fmt::format("unknown buffer role '{}'", name));
}

// The fields KernelSymbol and KernelInfo share: how NVRTC named the kernel and its parameters.
template <class Kernel>
json naming_json(const Kernel& k) {
  return {{"expression", k.expression},
          {"lowered", k.lowered},
          {"demangled", k.demangled},
          {"param_types", k.param_types}};
}

template <class Kernel>
void read_naming(const json& j, Kernel& k) {
  k.expression = get_string(j, "expression");
  k.lowered = get_string(j, "lowered");
  k.demangled = get_string(j, "demangled");
  k.param_types = get_strings(j, "param_types");
}

CompileOptions compile_options(const CompileRequest& r) {
  CompileOptions options;
  options.arch = r.arch;
  options.arch_specific = r.arch_specific;
  options.options = r.options;
  options.kjudge_include = r.kjudge_include;
  options.cache_dir = r.cache_dir;
  options.header_set_hash = r.header_set_hash;
  return options;
}

json to_json(const CompileRequest& r) {
  return {{"op", "compile"},
          {"source", r.source},
          {"file_name", r.file_name},
          {"expressions", r.expressions},
          {"options", r.options},
          {"cache_dir", r.cache_dir},
          {"kjudge_include", r.kjudge_include},
          {"arch", r.arch},
          {"arch_specific", r.arch_specific},
          {"header_set_hash", r.header_set_hash},
          {"forbid", r.forbid}};
}

CompileRequest compile_request_from_json(const json& j) {
  CompileRequest r;
  r.source = get_string(j, "source");
  r.file_name = get_string(j, "file_name");
  r.expressions = get_strings(j, "expressions");
  r.options = get_strings(j, "options");
  r.cache_dir = get_string(j, "cache_dir");
  r.kjudge_include = get_string(j, "kjudge_include");
  r.arch = get_int(j, "arch");
  r.arch_specific = get_bool(j, "arch_specific");
  if (j.contains("header_set_hash")) r.header_set_hash = get_string(j, "header_set_hash");
  if (j.contains("forbid")) r.forbid = get_strings(j, "forbid");
  return r;
}

json to_json(const ModuleMessage& m, std::string_view op) {
  json kernels = json::array();
  for (const KernelSymbol& k : m.kernels) {
    json o = naming_json(k);
    o["extern_c"] = k.extern_c;
    kernels.push_back(std::move(o));
  }
  json j = {{"cubin", to_hex(std::as_bytes(std::span(m.cubin)))},
            {"kernels", std::move(kernels)},
            {"log", m.log},
            {"from_cache", m.from_cache},
            {"code_digest", m.code_digest}};
  if (m.forbidden) j["forbidden"] = *m.forbidden;
  if (m.unfenced) j["unfenced"] = *m.unfenced;
  if (op.empty())
    j["ok"] = true;
  else
    j["op"] = op;
  return j;
}

ModuleMessage module_message_from_json(const json& j) {
  ModuleMessage m;
  const std::vector<std::byte> bytes = from_hex(get_string(j, "cubin"));
  m.cubin.resize(bytes.size());
  std::memcpy(m.cubin.data(), bytes.data(), bytes.size());
  for (const json& k : get_array(j, "kernels")) {
    KernelSymbol s;
    read_naming(k, s);
    s.extern_c = get_bool(k, "extern_c");
    m.kernels.push_back(std::move(s));
  }
  m.log = get_string(j, "log");
  m.from_cache = get_bool(j, "from_cache");
  if (j.contains("code_digest")) m.code_digest = get_string(j, "code_digest");
  if (j.contains("forbidden")) m.forbidden = get_string(j, "forbidden");
  if (j.contains("unfenced")) m.unfenced = get_string(j, "unfenced");
  return m;
}

namespace {

json launches_json(const std::vector<LaunchRequest>& launches) {
  json out = json::array();
  for (const auto& l : launches) {
    json args = json::array();
    for (const auto& a : l.args) {
      if (a.kind == ArgRequest::Kind::buffer)
        args.push_back({{"buffer", a.buffer}});
      else
        args.push_back({{"value", to_hex(a.bytes)}});
    }
    out.push_back({{"lowered", l.lowered},
                   {"label", l.label},
                   {"grid", l.dims.grid},
                   {"block", l.dims.block},
                   {"cluster", l.dims.cluster},
                   {"shared", l.dims.shared_bytes},
                   {"cooperative", l.dims.cooperative},
                   {"args", std::move(args)}});
  }
  return out;
}

std::vector<LaunchRequest> launches_from_json(const json& j) {
  std::vector<LaunchRequest> launches;
  for (const json& l : get_array(j, "launches")) {
    LaunchRequest q;
    q.lowered = get_string(l, "lowered");
    q.label = get_string(l, "label");
    q.dims.grid = get_dim3(l, "grid");
    q.dims.block = get_dim3(l, "block");
    q.dims.cluster = get_dim3(l, "cluster");
    q.dims.shared_bytes = get_unsigned(l, "shared");
    q.dims.cooperative = get_bool(l, "cooperative");
    for (const json& a : get_array(l, "args")) {
      ArgRequest arg;
      if (a.is_object() && a.contains("buffer")) {
        arg.kind = ArgRequest::Kind::buffer;
        arg.buffer = get_string(a, "buffer");
      } else {
        arg.kind = ArgRequest::Kind::value;
        try {
          arg.bytes = from_hex(get_string(a, "value"));
        } catch (const ProtocolError& e) {
          bad(fmt::format("argument value: {}", e.what()));
        }
      }
      q.args.push_back(std::move(arg));
    }
    launches.push_back(std::move(q));
  }
  return launches;
}

} // namespace

json to_json(const RunRequest& r) {
  json buffers = json::array();
  for (const auto& b : r.buffers) {
    json o = {{"name", b.name}, {"role", role_name(b.role)}, {"bytes", b.bytes}};
    if (b.arena_offset != 0) o["arena_offset"] = b.arena_offset;
    if (b.role != BufferRole::input) {
      o["fill"] = fill_kind_name(b.fill.kind);
      o["pattern"] = b.fill.pattern;
    }
    if (b.role == BufferRole::input || b.fill.kind == Fill::Kind::initial) {
      o["ipc"] = b.source_ipc;
      o["ptr"] = b.source_ptr;
    }
    buffers.push_back(std::move(o));
  }
  json j = {{"op", "run"},
            {"case_id", r.case_id},
            {"buffers", std::move(buffers)},
            {"launches", launches_json(r.launches)},
            {"redzone_bytes", r.redzone_bytes},
            {"redzone_byte", r.redzone_byte}};
  if (r.arena_bytes != 0) j["arena_bytes"] = r.arena_bytes;
  if (r.prepared) j["prepared"] = true;
  if (r.buffer_set != 0) j["buffer_set"] = r.buffer_set;
  if (!r.release.empty()) j["release"] = r.release;
  return j;
}

RunRequest run_request_from_json(const json& j) {
  RunRequest r;
  r.case_id = get_string(j, "case_id");
  for (const json& b : get_array(j, "buffers")) {
    BufferRequest q;
    q.name = get_string(b, "name");
    q.role = parse_role(get_string(b, "role"));
    q.bytes = get_u64(b, "bytes");
    if (b.contains("arena_offset")) q.arena_offset = get_u64(b, "arena_offset");
    if (q.role != BufferRole::input) {
      const std::string kind = get_string(b, "fill");
      if (kind == "none")
        q.fill.kind = Fill::Kind::none;
      else if (kind == "zero")
        q.fill.kind = Fill::Kind::zero;
      else if (kind == "pattern")
        q.fill.kind = Fill::Kind::pattern;
      else if (kind == "initial" && q.role == BufferRole::output)
        q.fill.kind = Fill::Kind::initial;
      else
        bad(fmt::format("unknown fill '{}'", kind));
      q.fill.pattern = get_unsigned(b, "pattern");
    }
    if (q.role == BufferRole::input || q.fill.kind == Fill::Kind::initial) {
      q.source_ipc = get_string(b, "ipc");
      q.source_ptr = get_u64(b, "ptr");
    }
    r.buffers.push_back(std::move(q));
  }
  r.launches = launches_from_json(j);
  r.redzone_bytes = get_u64(j, "redzone_bytes");
  const std::uint64_t byte = get_u64(j, "redzone_byte");
  if (byte > 255) bad("field 'redzone_byte' exceeds a byte");
  r.redzone_byte = static_cast<std::uint8_t>(byte);
  if (j.contains("arena_bytes")) r.arena_bytes = get_u64(j, "arena_bytes");
  if (j.contains("prepared")) r.prepared = get_bool(j, "prepared");
  auto buffer_set = [&](int v) {
    if (v < 0 || v >= kBufferSets)
      bad(fmt::format("buffer set {} is not one of 0..{}", v, kBufferSets - 1));
    return v;
  };
  if (j.contains("buffer_set")) r.buffer_set = buffer_set(get_int(j, "buffer_set"));
  if (j.contains("release")) {
    const json& sets = j["release"];
    if (!sets.is_array()) bad("field 'release' is not an array");
    for (const json& v : sets) {
      if (!v.is_number_integer()) bad("field 'release' holds a non-integer");
      r.release.push_back(buffer_set(v.get<int>()));
    }
  }
  return r;
}

json to_json(const LoadReply& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) {
    json o = naming_json(k);
    o["param_sizes"] = k.param_sizes;
    o["registers"] = k.registers;
    o["static_shared"] = k.static_shared;
    o["local_bytes"] = k.local_bytes;
    o["max_threads"] = k.max_threads;
    kernels.push_back(std::move(o));
  }
  return {
      {"ok", true}, {"kernels", std::move(kernels)}, {"log", r.log}, {"from_cache", r.from_cache}};
}

LoadReply load_reply_from_json(const json& j) {
  LoadReply r;
  for (const json& k : get_array(j, "kernels")) {
    KernelInfo info;
    read_naming(k, info);
    for (const json& s : get_array(k, "param_sizes")) {
      if (!s.is_number_unsigned()) bad("a parameter size is not a count");
      info.param_sizes.push_back(s.get<std::size_t>());
    }
    info.registers = get_int(k, "registers");
    info.static_shared = get_int(k, "static_shared");
    info.local_bytes = get_int(k, "local_bytes");
    info.max_threads = get_int(k, "max_threads");
    r.kernels.push_back(std::move(info));
  }
  r.log = get_string(j, "log");
  r.from_cache = get_bool(j, "from_cache");
  return r;
}

json to_json(const RunReply& r) {
  json buffers = json::array();
  for (const auto& b : r.buffers)
    buffers.push_back({{"name", b.name},
                       {"ipc", b.ipc},
                       {"ptr", b.ptr},
                       {"redzone_bytes", b.redzone_bytes},
                       {"bytes", b.bytes}});
  return {{"ok", true}, {"buffers", std::move(buffers)}, {"elapsed_ms", r.elapsed_ms}};
}

json to_json(const TimeRequest& r) {
  return {{"op", "time"},
          {"sets", r.sets},
          {"launches", launches_json(r.launches)},
          {"flush_bytes", r.flush_bytes}};
}

json to_json(const TimeReply& r) {
  return {{"ok", true}, {"ms", r.ms}, {"blocks_per_sm", r.blocks_per_sm}};
}

TimeRequest time_request_from_json(const json& j) {
  TimeRequest r;
  for (const json& v : get_array(j, "sets")) {
    if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() >= kBufferSets)
      bad(fmt::format("field 'sets' holds {}, not a buffer set 0..{}", v.dump(),
                      kBufferSets - 1));
    r.sets.push_back(v.get<int>());
  }
  r.launches = launches_from_json(j);
  r.flush_bytes = get_u64(j, "flush_bytes");
  return r;
}

TimeReply time_reply_from_json(const json& j) {
  TimeReply r;
  for (const json& v : get_array(j, "ms")) {
    if (!v.is_number()) bad("field 'ms' holds a non-number");
    r.ms.push_back(v.get<double>());
  }
  for (const json& v : get_array(j, "blocks_per_sm")) {
    if (!v.is_number_integer()) bad("field 'blocks_per_sm' holds a non-integer");
    r.blocks_per_sm.push_back(v.get<int>());
  }
  return r;
}

RunReply run_reply_from_json(const json& j) {
  RunReply r;
  for (const json& b : get_array(j, "buffers")) {
    BufferHandle h;
    h.name = get_string(b, "name");
    h.ipc = get_string(b, "ipc");
    h.ptr = get_u64(b, "ptr");
    h.redzone_bytes = get_u64(b, "redzone_bytes");
    h.bytes = get_u64(b, "bytes");
    r.buffers.push_back(std::move(h));
  }
  const json& ms = field(j, "elapsed_ms");
  if (!ms.is_number()) bad("field 'elapsed_ms' is not a number");
  r.elapsed_ms = ms.get<double>();
  return r;
}

json to_json(const ErrorReply& r) {
  json j = {{"error", r.error}, {"message", r.message}};
  if (!r.log.empty()) j["log"] = r.log;
  if (!r.buffer.empty()) j["buffer"] = r.buffer;
  return j;
}

std::optional<ErrorReply> error_reply_from_json(const json& j) {
  if (!j.is_object() || !j.contains("error")) return std::nullopt;
  ErrorReply r;
  r.error = get_string(j, "error");
  r.message = j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>()
                                                                : std::string();
  if (j.contains("log") && j["log"].is_string()) r.log = j["log"].get<std::string>();
  if (j.contains("buffer") && j["buffer"].is_string()) r.buffer = j["buffer"].get<std::string>();
  return r;
}

json error_json(std::string error, std::string message, std::string log) {
  ErrorReply e;
  e.error = std::move(error);
  e.message = std::move(message);
  e.log = std::move(log);
  return to_json(e);
}

KernelInfo kernel_info(const KernelSymbol& symbol, const KernelAttributes& attributes) {
  KernelInfo info;
  info.expression = symbol.expression;
  info.lowered = symbol.lowered;
  info.demangled = symbol.demangled;
  info.param_types = symbol.param_types;
  info.param_sizes = attributes.param_sizes;
  info.registers = attributes.registers;
  info.static_shared = attributes.static_shared;
  info.local_bytes = attributes.local_bytes;
  info.max_threads = attributes.max_threads;
  return info;
}

std::string first_lines(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

} // namespace kj::judge
