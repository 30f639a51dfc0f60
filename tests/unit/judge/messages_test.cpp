// The protocol's messages: each request and reply survives its JSON form unchanged (argument
// bytes, fills, dims, handles), a malformed message names the field that is wrong, and replies
// are classified as ok, error or protocol failure.
#include <gtest/gtest.h>

#include "worker/messages.hpp"
#include "worker/protocol.hpp"
#include "worker/worker_process.hpp"

namespace {

using namespace kj::judge;
using nlohmann::json;

// Through the wire format too, so the round trip is the one the worker sees.
json wire(const json& j) {
  FrameDecoder d;
  d.feed(encode_frame(j));
  return *d.next();
}

RunRequest sample_run() {
  RunRequest r;
  r.case_id = "08089ad7:public0:1:id";
  BufferRequest in;
  in.name = "x";
  in.role = BufferRole::input;
  in.bytes = 4096;
  in.source_ipc = std::string(128, 'a');
  BufferRequest out;
  out.name = "y";
  out.role = BufferRole::output;
  out.bytes = 4099;
  out.fill = {Fill::Kind::pattern, 0x7FFF7FFFu};
  BufferRequest scratch;
  scratch.name = "partial";
  scratch.role = BufferRole::scratch;
  scratch.bytes = 12;
  scratch.fill = {Fill::Kind::zero, 0};
  r.buffers = {in, out, scratch};
  LaunchRequest l;
  l.lowered = "_Z12softmax_rowsILi4EEvPKfPfii";
  l.label = "candidate launch[0] 'softmax_rows<4>'";
  l.dims.grid = {1024, 2, 1};
  l.dims.block = {128, 1, 1};
  l.dims.cluster = {2, 1, 1};
  l.dims.shared_bytes = 65536;
  l.dims.cooperative = true;
  ArgRequest buf;
  buf.kind = ArgRequest::Kind::buffer;
  buf.buffer = "x";
  ArgRequest val;
  val.kind = ArgRequest::Kind::value;
  val.bytes = {std::byte{0x00}, std::byte{0x10}, std::byte{0xff}, std::byte{0x7f}};
  l.args = {buf, val};
  r.launches = {l};
  r.redzone_bytes = 65536;
  r.redzone_byte = 0xA5;
  return r;
}

TEST(Messages, RunRequestRoundTrip) {
  const RunRequest r = sample_run();
  const json j = wire(to_json(r));
  EXPECT_EQ(j["op"], "run");
  const RunRequest back = run_request_from_json(j);
  EXPECT_EQ(back.case_id, r.case_id);
  ASSERT_EQ(back.buffers.size(), 3u);
  EXPECT_EQ(back.buffers[0].role, BufferRole::input);
  EXPECT_EQ(back.buffers[0].source_ipc, r.buffers[0].source_ipc);
  EXPECT_EQ(back.buffers[1].bytes, 4099u);
  EXPECT_EQ(back.buffers[1].fill.kind, Fill::Kind::pattern);
  EXPECT_EQ(back.buffers[1].fill.pattern, 0x7FFF7FFFu);
  EXPECT_EQ(back.buffers[2].role, BufferRole::scratch);
  EXPECT_EQ(back.buffers[2].fill.kind, Fill::Kind::zero);
  ASSERT_EQ(back.launches.size(), 1u);
  const LaunchRequest& l = back.launches[0];
  EXPECT_EQ(l.lowered, r.launches[0].lowered);
  EXPECT_EQ(l.label, r.launches[0].label);
  EXPECT_EQ(l.dims.grid, (std::array<unsigned, 3>{1024, 2, 1}));
  EXPECT_EQ(l.dims.cluster, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_EQ(l.dims.shared_bytes, 65536u);
  EXPECT_TRUE(l.dims.cooperative);
  ASSERT_EQ(l.args.size(), 2u);
  EXPECT_EQ(l.args[0].kind, ArgRequest::Kind::buffer);
  EXPECT_EQ(l.args[0].buffer, "x");
  EXPECT_EQ(l.args[1].kind, ArgRequest::Kind::value);
  EXPECT_EQ(l.args[1].bytes, r.launches[0].args[1].bytes);
  EXPECT_EQ(back.redzone_bytes, 65536u);
  EXPECT_EQ(back.redzone_byte, 0xA5);
}

// The host worker's run: buffers by their offset in the shared arena, and the arena's size;
// both absent from a CUDA run's message.
TEST(Messages, HostArenaFieldsRoundTrip) {
  RunRequest r = sample_run();
  EXPECT_FALSE(to_json(r).contains("arena_bytes"));
  EXPECT_FALSE(to_json(r)["buffers"][0].contains("arena_offset"));
  r.arena_bytes = 1u << 20;
  r.buffers[1].arena_offset = 196608;
  const RunRequest back = run_request_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(back.arena_bytes, 1u << 20);
  EXPECT_EQ(back.buffers[0].arena_offset, 0u);
  EXPECT_EQ(back.buffers[1].arena_offset, 196608u);
}

// A CUDA run on the buffers the worker already holds: the flag travels; a fresh run leaves it
// out of the message.
TEST(Messages, PreparedRunRoundTrip) {
  RunRequest r = sample_run();
  EXPECT_FALSE(to_json(r).contains("prepared"));
  EXPECT_FALSE(run_request_from_json(wire(to_json(r))).prepared);
  r.prepared = true;
  EXPECT_TRUE(run_request_from_json(wire(to_json(r))).prepared);
}

// The worker's buffer sets: which one a run uses and which it frees first; a set outside
// 0..kBufferSets-1 is refused before the worker indexes with it.
TEST(Messages, BufferSetsRoundTrip) {
  RunRequest r = sample_run();
  EXPECT_FALSE(to_json(r).contains("buffer_set"));
  EXPECT_FALSE(to_json(r).contains("release"));
  r.buffer_set = kBufferSets - 1;
  r.release = {0, 1};
  const RunRequest back = run_request_from_json(wire(to_json(r)));
  EXPECT_EQ(back.buffer_set, kBufferSets - 1);
  EXPECT_EQ(back.release, (std::vector<int>{0, 1}));
  for (const json& bad_set : {json(kBufferSets), json(-1)}) {
    json j = to_json(r);
    j["buffer_set"] = bad_set;
    EXPECT_THROW(run_request_from_json(j), ProtocolError) << bad_set;
    j = to_json(r);
    j["release"] = json::array({bad_set});
    EXPECT_THROW(run_request_from_json(j), ProtocolError) << bad_set;
  }
  json j = to_json(r);
  j["release"] = "0";
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
}

// The bench's timed runs: which sets, the launches (as a run's), the flush; the reply's times
// and occupancy. A set outside 0..kBufferSets-1 or a time that is not a number is refused.
TEST(Messages, TimeRequestAndReplyRoundTrip) {
  TimeRequest t;
  t.sets = {0, 3, kBufferSets - 1};
  t.launches = sample_run().launches;
  t.flush_bytes = 125829120;
  const json j = wire(to_json(t));
  EXPECT_EQ(j["op"], "time");
  const TimeRequest back = time_request_from_json(j);
  EXPECT_EQ(back.sets, t.sets);
  EXPECT_EQ(back.flush_bytes, t.flush_bytes);
  ASSERT_EQ(back.launches.size(), 1u);
  EXPECT_EQ(back.launches[0].lowered, t.launches[0].lowered);
  EXPECT_EQ(back.launches[0].args[1].bytes, t.launches[0].args[1].bytes);
  EXPECT_EQ(back.launches[0].dims.shared_bytes, 65536u);
  for (const json& bad_set : {json(kBufferSets), json(-1), json("0")}) {
    json bad = to_json(t);
    bad["sets"] = json::array({bad_set});
    EXPECT_THROW(time_request_from_json(bad), ProtocolError) << bad_set;
  }

  TimeReply r;
  r.ms = {0.0125, 0.0131};
  r.blocks_per_sm = {8};
  const TimeReply got = time_reply_from_json(wire(to_json(r)));
  EXPECT_EQ(got.ms, r.ms);
  EXPECT_EQ(got.blocks_per_sm, r.blocks_per_sm);
  json bad = to_json(r);
  bad["ms"] = json::array({"fast"});
  EXPECT_THROW(time_reply_from_json(bad), ProtocolError);
}

TEST(Messages, CompileRequestRoundTrip) {
  CompileRequest r;
  r.source = "__global__ void k(float* x) {}\n";
  r.file_name = "cand.cu";
  r.expressions = {"k", "t<4>"};
  r.options = {"-use_fast_math"};
  r.cache_dir = "/tmp/c";
  r.kjudge_include = "/src/include";
  r.arch = 90;
  r.arch_specific = true;
  r.forbid = {"atomicAdd", "%laneid"};
  const json j = wire(to_json(r));
  EXPECT_EQ(j["op"], "compile");
  const CompileRequest b = compile_request_from_json(j);
  EXPECT_EQ(b.source, r.source);
  EXPECT_EQ(b.file_name, r.file_name);
  EXPECT_EQ(b.expressions, r.expressions);
  EXPECT_EQ(b.options, r.options);
  EXPECT_EQ(b.cache_dir, r.cache_dir);
  EXPECT_EQ(b.kjudge_include, r.kjudge_include);
  EXPECT_EQ(b.arch, 90);
  EXPECT_TRUE(b.arch_specific);
  EXPECT_EQ(b.forbid, r.forbid);
}

TEST(Messages, ModuleRoundTripAsLoadRequestAndAsCompileReply) {
  ModuleMessage m;
  m.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
  kj::KernelSymbol k;
  k.expression = "t<4>";
  k.lowered = "_Z1tILi4EEvPf";
  k.demangled = "void t<4>(float*)";
  k.param_types = {"float*"};
  m.kernels = {k};
  m.log = "warning: unused";
  m.from_cache = true;
  const json load = wire(to_json(m, "load"));
  EXPECT_EQ(load["op"], "load");
  const json reply = wire(to_json(m, ""));
  EXPECT_EQ(reply["ok"], true);
  for (const json& j : {load, reply}) {
    const ModuleMessage b = module_message_from_json(j);
    EXPECT_EQ(b.cubin, m.cubin);
    ASSERT_EQ(b.kernels.size(), 1u);
    EXPECT_EQ(b.kernels[0].lowered, k.lowered);
    EXPECT_EQ(b.kernels[0].demangled, k.demangled);
    EXPECT_EQ(b.kernels[0].param_types, k.param_types);
    EXPECT_FALSE(b.kernels[0].extern_c);
    EXPECT_EQ(b.log, m.log);
    EXPECT_TRUE(b.from_cache);
    EXPECT_FALSE(b.forbidden.has_value());
  }
  m.forbidden = "forbidden construct: reads %smid (the SM it runs on) at line 3 in k(float*)";
  EXPECT_EQ(module_message_from_json(wire(to_json(m, ""))).forbidden, m.forbidden);
  json broken = load;
  broken["cubin"] = "abc"; // odd length
  EXPECT_THROW(module_message_from_json(broken), ProtocolError);
}

TEST(Messages, RepliesRoundTrip) {
  LoadReply lr;
  KernelInfo k;
  k.expression = "softmax_rows<4>";
  k.lowered = "_Z12softmax_rowsILi4EEvPKfPfii";
  k.demangled = "void softmax_rows<4>(float const*, float*, int, int)";
  k.param_types = {"float const*", "float*", "int", "int"};
  k.param_sizes = {8, 8, 4, 4};
  k.registers = 32;
  k.static_shared = 1024;
  k.local_bytes = 0;
  k.max_threads = 1024;
  lr.kernels = {k};
  lr.log = "warning: ...";
  lr.from_cache = true;
  const json lj = wire(to_json(lr));
  EXPECT_EQ(lj["ok"], true);
  const LoadReply lb = load_reply_from_json(lj);
  ASSERT_EQ(lb.kernels.size(), 1u);
  EXPECT_EQ(lb.kernels[0].param_types, k.param_types);
  EXPECT_EQ(lb.kernels[0].param_sizes, k.param_sizes);
  EXPECT_EQ(lb.kernels[0].static_shared, 1024);
  EXPECT_EQ(lb.kernels[0].max_threads, 1024);
  EXPECT_TRUE(lb.from_cache);

  RunReply rr;
  rr.buffers = {{"x", std::string(128, 'b'), 0, 65536, 4096}, {"y", "", 0x7f0000001000ull, 0, 12}};
  rr.elapsed_ms = 1.25;
  const RunReply rb = run_reply_from_json(wire(to_json(rr)));
  ASSERT_EQ(rb.buffers.size(), 2u);
  EXPECT_EQ(rb.buffers[0].ipc, rr.buffers[0].ipc);
  EXPECT_EQ(rb.buffers[0].redzone_bytes, 65536u);
  EXPECT_EQ(rb.buffers[1].ptr, 0x7f0000001000ull);
  EXPECT_EQ(rb.buffers[1].bytes, 12u);
  EXPECT_DOUBLE_EQ(rb.elapsed_ms, 1.25);

  ErrorReply e;
  e.error = "out_of_memory";
  e.message = "scratch 'p' of 1e12 bytes does not fit";
  e.buffer = "p";
  const auto eb = error_reply_from_json(wire(to_json(e)));
  ASSERT_TRUE(eb);
  EXPECT_EQ(eb->error, "out_of_memory");
  EXPECT_EQ(eb->buffer, "p");
  EXPECT_FALSE(error_reply_from_json(json{{"ok", true}}));
}

TEST(Messages, MalformedMessagesNameTheField) {
  json j = to_json(sample_run());
  j["buffers"][1].erase("fill");
  try {
    (void)run_request_from_json(j);
    FAIL() << "accepted a buffer without a fill";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("'fill'"), std::string::npos) << e.what();
  }
  j = to_json(sample_run());
  j["buffers"][0]["role"] = "weights";
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
  j = to_json(sample_run());
  j["launches"][0]["grid"] = json::array({1, 2});
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
  j = to_json(sample_run());
  j["launches"][0]["args"][1]["value"] = "xyz";
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
  j = to_json(sample_run());
  j["redzone_byte"] = 300;
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
  j = to_json(sample_run());
  j["buffers"][0]["bytes"] = -5;
  EXPECT_THROW(run_request_from_json(j), ProtocolError);
  EXPECT_THROW(load_reply_from_json(json{{"ok", true}}), ProtocolError);
  EXPECT_THROW(run_reply_from_json(json::array()), ProtocolError);
}

TEST(Messages, ClassifyReply) {
  EXPECT_EQ(classify_reply(json{{"ok", true}}).status, Reply::Status::ok);
  EXPECT_EQ(classify_reply(json{{"ready", true}}).status, Reply::Status::ok);
  const Reply e = classify_reply(json{{"error", "launch_error"}, {"message", "m"}});
  EXPECT_EQ(e.status, Reply::Status::error);
  EXPECT_EQ(e.error.error, "launch_error");
  EXPECT_EQ(e.error.message, "m");
  EXPECT_EQ(classify_reply(json{{"ok", false}}).status, Reply::Status::protocol);
  EXPECT_EQ(classify_reply(json(3)).status, Reply::Status::protocol);
  EXPECT_EQ(classify_reply(json{{"error", 3}}).status, Reply::Status::protocol);
}

TEST(Messages, RoleNames) {
  for (const BufferRole r : {BufferRole::input, BufferRole::output, BufferRole::scratch})
    EXPECT_EQ(parse_role(role_name(r)), r);
  EXPECT_THROW(parse_role("other"), ProtocolError);
}

} // namespace
