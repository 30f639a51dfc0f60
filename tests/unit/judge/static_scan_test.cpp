// The static scan on PTX that NVRTC really makes (no GPU needed): each construct docs/design.md
// names is found, with its source line, even behind a macro, a helper or a one-line inline PTX
// block; so is every way a __device__ variable's address can leave the registers toward a store the
// scan would not see (a round trip through local, shared or output memory, a function argument,
// arithmetic and comparisons, another variable's initializer, a variable declared inside inline
// PTX), and a read of the special registers that tell one launch or warp slot from another. What a
// right kernel does (reads of its arguments, stores through them, shared-memory atomics, reads of
// __constant__ and __device__ tables through computed indices, assert) is not found; a problem's
// `forbid` adds identifiers, registers and PTX instructions, and `!%register` allows a special
// register. Every bundled candidate scans as its expectation says.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "judge/case_oracle.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/static_scan.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace {

namespace fs = std::filesystem;

kj::CompileOptions options() {
  kj::CompileOptions o;
  o.arch = 90;
  o.kjudge_include = KJ_SOURCE_DIR "/include";
  return o;
}

// The findings of `source`'s PTX, one kernel `k`.
std::vector<kj::ScanFinding> scan(const std::string& source,
                                  const std::vector<std::string>& forbid = {}) {
  const kj::CompiledModule m = kj::compile_module(source, "cand.cu", {"k"}, options());
  return kj::scan_ptx(m.ptx, forbid);
}

std::string listed(const std::vector<kj::ScanFinding>& found) {
  std::string s;
  for (const kj::ScanFinding& f : found)
    s += f.what + " @" + std::to_string(f.line) + "; ";
  return s;
}

bool has(const std::vector<kj::ScanFinding>& found, const std::string& what, int line) {
  for (const kj::ScanFinding& f : found)
    if (f.what == what && f.line == line) return true;
  return false;
}

TEST(StaticScan, ARightKernelHasNoFindings) {
  const auto found = scan(R"(
__device__ const float table[4] = {1, 2, 3, 4};
__device__ float twice(float v) { return 2 * v; }
__global__ void k(const float* x, float* y, int* hits, int n) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = twice(x[i]) + table[i & 3];
    atomicAdd(&count, 1);
    atomicAdd(hits, 1);
  }
}
)");
  EXPECT_TRUE(found.empty()) << listed(found);
}

TEST(StaticScan, AClockBehindAMacroIsFoundAtTheLineThatUsesIt) {
  const auto found = scan(R"(#define NOW(t) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t))
__device__ long long stamp() { return clock64(); }
__global__ void k(long long* out) {
  long long t;
  NOW(t);
  out[0] = t + stamp();
  unsigned sm;
  asm("mov.u32 %0, %%smid;" : "=r"(sm));
  out[1] = sm;
}
)");
  EXPECT_TRUE(has(found, "reads %globaltimer", 5)) << listed(found);
  EXPECT_TRUE(has(found, "reads %smid", 8)) << listed(found);
  bool clock = false;
  for (const kj::ScanFinding& f : found)
    clock = clock || f.what == "reads %clock64";
  EXPECT_TRUE(clock) << listed(found);
  for (const kj::ScanFinding& f : found) {
    EXPECT_EQ(f.file.substr(f.file.size() - 7), "cand.cu") << f.file;
    EXPECT_EQ(f.function, "_Z1kPx");
  }
}

TEST(StaticScan, PrintfAndTheDeviceHeapAreFound) {
  const auto found = scan(R"(
#include "kjudge/device.cuh"
// device printf and the heap need no declaration of their own
__global__ void k(int* out) {
  int* p = static_cast<int*>(malloc(16));
  p[0] = 1;
  out[0] = p[0];
  free(p);
  printf("%d\n", out[0]);
}
)");
  EXPECT_TRUE(has(found, "calls malloc", 5)) << listed(found);
  EXPECT_TRUE(has(found, "calls free", 8)) << listed(found);
  EXPECT_TRUE(has(found, "calls vprintf", 9)) << listed(found);
  // The format string is a .global of its own, whose address vprintf only reads.
  EXPECT_EQ(found.size(), 3u) << listed(found);
}

TEST(StaticScan, WritesToDeviceVariablesAreFoundAndReadsAreNot) {
  const auto found = scan(R"(
__device__ float g_cache[1024];
__device__ const float* g_seen;
__device__ unsigned g_count;
namespace state { __device__ int last; }
__global__ void k(const float* x, float* y) {
  const int i = threadIdx.x;
  if (g_seen == x) { y[i] = g_cache[i + 1]; return; }
  g_cache[i + 1] = x[i];
  if (i == 0) g_seen = x;
  atomicAdd(&g_count, 1u);
  state::last = i;
  y[i] = x[i];
}
)");
  EXPECT_TRUE(has(found, "stores to the __device__ variable g_cache", 9)) << listed(found);
  EXPECT_TRUE(has(found, "stores to the __device__ variable g_seen", 10)) << listed(found);
  EXPECT_TRUE(has(found, "makes an atomic on the __device__ variable g_count", 11))
      << listed(found);
  EXPECT_TRUE(has(found, "stores to the __device__ variable state::last", 12)) << listed(found);
  EXPECT_EQ(found.size(), 4u) << listed(found);
}

TEST(StaticScan, AProblemsForbidListAddsNames) {
  const std::string source = R"(
#define ADD atomicAdd
__global__ void k(int* out) {
  ADD(out, 1);  // atomicAdd in a comment is not a use
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[1] = lane;
}
)";
  const std::vector<std::string> forbid = {"atomicAdd", "%laneid", "ptx:red", "ptx:atom"};
  const std::vector<kj::ScanFinding> in_source = kj::scan_source(source, "cand.cu", forbid);
  ASSERT_EQ(in_source.size(), 1u);
  EXPECT_EQ(in_source[0].what, "uses atomicAdd");
  EXPECT_EQ(in_source[0].line, 2);
  const auto in_ptx = scan(source, forbid);
  EXPECT_TRUE(has(in_ptx, "reads %laneid", 6)) << listed(in_ptx);
  bool atomic = false; // NVRTC makes an unused atomicAdd a red, else an atom
  for (const kj::ScanFinding& f : in_ptx)
    atomic = atomic || ((f.what.rfind("uses the PTX instruction red.", 0) == 0 ||
                         f.what.rfind("uses the PTX instruction atom.", 0) == 0) &&
                        f.line == 4);
  EXPECT_TRUE(atomic) << listed(in_ptx);
  EXPECT_TRUE(scan(source).empty());
}

TEST(StaticScan, TheMessageNamesLinesAndKernels) {
  const std::string source = R"(__device__ int g_n;
__global__ void k(int* out) {
  g_n = out[0];
  out[1] = clock();
}
)";
  const kj::CompiledModule m = kj::compile_module(source, "cand.cu", {"k"}, options());
  const auto message = kj::forbidden_constructs(source, "cand.cu", m.ptx, {});
  ASSERT_TRUE(message.has_value());
  EXPECT_NE(message->find("stores to the __device__ variable g_n"), std::string::npos) << *message;
  EXPECT_NE(message->find("at line 3 in k(int*)"), std::string::npos) << *message;
  EXPECT_NE(message->find("reads %clock"), std::string::npos) << *message;
  EXPECT_FALSE(
      kj::forbidden_constructs("__global__ void k(int* o) { o[0] = 1; }\n", "cand.cu",
                               kj::compile_module("__global__ void k(int* o) { o[0] = 1; }\n",
                                                  "cand.cu", {"k"}, options())
                                   .ptx,
                               {})
          .has_value());
}

// A launch counter whose address goes out to a local array and comes back as a value: the store
// of the address is the finding (the store through the reloaded pointer is out of the scan's
// sight, which is why the address may not leave).
TEST(StaticScan, AnAddressRoundTripThroughLocalMemoryIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_count;
__global__ void k(unsigned* out, int j) {
  unsigned* slots[4];
  for (int s = 0; s < 4; ++s) slots[s] = out + s;
  slots[j & 3] = &g_count;
  unsigned* volatile back = slots[out[1] & 3];
  *back += 1;
}
)");
  EXPECT_EQ(listed(found), "takes the address of the __device__ variable g_count @6; ");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].why, "only a load may use its address: stored, passed or computed on, it "
                          "can come back to a store the scan does not see");
  EXPECT_EQ(found[0].function, "_Z1kPji");
}

// vector_add/traps/lazy_after_warmup's laundering: through volatile shared memory. The read of
// the counter is allowed; taking its address is not.
TEST(StaticScan, AnAddressRoundTripThroughSharedMemoryIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_launches;
__global__ void k(unsigned* out) {
  __shared__ unsigned* volatile counter;
  counter = &g_launches;
  unsigned* const c = counter;
  *c += 1;
  out[0] = g_launches;
}
)");
  EXPECT_EQ(listed(found), "takes the address of the __device__ variable g_launches @5; ");
}

// The address written into a buffer of the kernel's own (an output or scratch) and read back
// before the atomicAdd.
TEST(StaticScan, AnAddressReloadedFromABufferBeforeAnAtomicIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_calls;
__global__ void k(unsigned long long* scratch) {
  scratch[0] = reinterpret_cast<unsigned long long>(&g_calls);
  __threadfence();
  const unsigned long long back = static_cast<volatile unsigned long long*>(scratch)[0];
  atomicAdd(reinterpret_cast<unsigned*>(back), 1u);
}
)");
  EXPECT_EQ(listed(found), "takes the address of the __device__ variable g_calls @4; ");
}

// assert passes the addresses of its strings (.global variables, like every string literal)
// to the toolkit's __assertfail, which only reads them; a string literal's address stored to
// memory is found like any other.
TEST(StaticScan, AssertIsNotFoundAndAStringLiteralsAddressIs) {
  EXPECT_TRUE(scan(R"(
__global__ void k(const float* x, float* y) {
  assert(x[0] > 0);
  y[0] = x[0];
}
)")
                  .empty());
  const auto found = scan(R"(
__global__ void k(const char** out) {
  out[0] = "a counter";
}
)");
  EXPECT_EQ(listed(found), "takes the address of the string literal $str @3; ");
}

// What a kernel may do to stop itself: assert through <cassert>, a direct call of the toolkit's
// __assertfail (its strings and its function name's, __unnamed_1, are .global too), __trap()
// and the trap instruction itself. The scan has never refused any of them; the verdict is a
// crash (docs/design.md).
TEST(StaticScan, AssertTrapAndTheToolkitsAssertfailAreNotFound) {
  const auto found = scan(R"(
#include <cassert>
__global__ void k(const float* x, float* y, int n) {
  assert(x[0] > 0 && "a message");
  if (n == 1) __assertfail("direct", "f.cu", 7, __PRETTY_FUNCTION__, sizeof(char));
  if (n == 2) __trap();
  if (n == 3) asm volatile("trap;");
  y[0] = x[0];
}
)");
  EXPECT_TRUE(found.empty()) << listed(found);
}

// A function that is not inlined gets the address as a parameter, where the scan of the callee
// cannot tell it from any other pointer (bump is called with `out` too, so NVRTC keeps the
// parameter).
TEST(StaticScan, AnAddressPassedToAFunctionIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_calls;
__device__ __noinline__ void bump(unsigned* p) { atomicAdd(p, 1u); }
__global__ void k(unsigned* out) {
  bump(&g_calls);
  bump(out);
}
)");
  EXPECT_EQ(listed(found), "takes the address of the __device__ variable g_calls @5; ");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].function, "_Z1kPj");
}

// A store through a pointer that is a variable or an argument (selp, or a loop's pointer) is a
// write to the variable: reading through such a pointer is allowed, writing is not.
TEST(StaticScan, AStoreThroughAPointerThatMayBeAVariableIsFound) {
  const auto found = scan(R"(
__device__ float g_lut[256];
__global__ void k(float* y, int pick, int n) {
  float* t = pick ? g_lut : y;
  t[threadIdx.x & 255] = 1.0f;
  for (float* p = g_lut; p != g_lut + (n & 255); ++p) *p += 1.0f;
}
)");
  EXPECT_EQ(listed(found), "stores to the __device__ variable g_lut @5; "
                           "stores to the __device__ variable g_lut @6; ");
}

// Arithmetic other than an offset, and comparisons, would let a kernel rebuild the address as
// a plain number (bit by bit through branches, or shifted and stored) and store through that.
TEST(StaticScan, AnAddressComputedOnOrComparedIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_n;
__global__ void k(unsigned long long* out, unsigned long long guess) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(&g_n);
  if (a > guess) out[0] = 1;
  out[1] = a >> 12;
}
)");
  EXPECT_EQ(listed(found), "takes the address of the __device__ variable g_n @5; "
                           "takes the address of the __device__ variable g_n @6; ");
}

// An address in another variable's initializer is in memory from the start: a plain load hands
// it to a store. Both state spaces (__device__ and __constant__) are found, at the declaration.
TEST(StaticScan, AnAddressInAVariablesInitializerIsFound) {
  const auto found = scan(R"(
__device__ unsigned g_n;
__device__ unsigned* g_alias = &g_n;
__constant__ unsigned* c_alias = &g_n;
__global__ void k(unsigned* out) {
  atomicAdd(g_alias, 1u);
  *c_alias += 1;
  out[0] = 0;
}
)");
  EXPECT_EQ(listed(found), "initializes g_alias with the address of the __device__ variable g_n "
                           "@0; initializes c_alias with the address of the __device__ variable "
                           "g_n @0; ");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].why, "an address kept in memory, which a load hands to a store the scan "
                          "does not see");
  EXPECT_EQ(found[0].function, "");
}

// Inline PTX may declare a .global variable inside a function (ptxas takes it) and reach it
// through a register of its own, named without a `%`.
TEST(StaticScan, AVariableDeclaredInInlinePtxIsFound) {
  const auto found = scan(R"(
__global__ void k(unsigned* out) {
  unsigned r;
  asm volatile("{\n\t.global .u32 hidden;\n\t.reg .u64 t;\n\tmov.u64 t, hidden;\n\t"
               "atom.global.add.u32 %0, [t], 1;\n}" : "=r"(r));
  out[0] = r;
}
)");
  EXPECT_EQ(listed(found), "makes an atomic on the __device__ variable hidden @4; ");
}

// Inline PTX may put a whole block on one line, braces, a declaration and several statements
// included: each statement is scanned.
TEST(StaticScan, EveryStatementOfAOneLineInlinePtxBlockIsScanned) {
  const auto found = scan(R"(
__device__ unsigned g_calls;
__global__ void k(unsigned* out) {
  unsigned r;
  asm volatile("{ atom.global.add.u32 %0, [g_calls], 1; }" : "=r"(r));
  asm volatile("{ .global .u32 kept; .reg .u64 t; mov.u64 t, kept; st.global.u32 [t], 1; }");
  out[0] = r;
}
)");
  EXPECT_EQ(listed(found), "makes an atomic on the __device__ variable g_calls @5; "
                           "stores to the __device__ variable kept @6; ");
}

// The registers that tell one launch from another (%gridid: stateless launch counting), or a
// warp's slot, the SMs, the graph or a counter of the hardware: each with its reason and line.
TEST(StaticScan, LaunchIdentityAndSchedulingRegistersAreFound) {
  const auto found = scan(R"(
__global__ void k(unsigned long long* out) {
  unsigned long long launch, graph;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(launch));
  unsigned sms, slot, hi, pm;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(sms));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(slot));
  asm volatile("mov.u32 %0, %%clock_hi;" : "=r"(hi));
  asm volatile("mov.u64 %0, %%current_graph_exec;" : "=l"(graph));
  asm volatile("mov.u32 %0, %%pm0;" : "=r"(pm));
  out[0] = launch + sms + slot + hi + graph + pm;
}
)");
  EXPECT_EQ(listed(found), "reads %gridid @4; reads %nsmid @6; reads %warpid @7; "
                           "reads %clock_hi @8; reads %current_graph_exec @9; reads %pm0 @10; ");
  std::map<std::string, std::string> why;
  for (const kj::ScanFinding& f : found)
    why[f.what] = f.why;
  EXPECT_EQ(why["reads %gridid"], "the launch's id");
  EXPECT_EQ(why["reads %nsmid"], "the number of SMs");
  EXPECT_EQ(why["reads %warpid"], "the warp slot it runs in");
  EXPECT_EQ(why["reads %clock_hi"], "a clock");
  EXPECT_EQ(why["reads %current_graph_exec"], "the CUDA graph it runs in");
  EXPECT_EQ(why["reads %pm0"], "a performance counter");
}

// A problem that needs a special register allows it with `!%register` in its `forbid` list;
// the others stay forbidden, and `!` allows nothing else.
TEST(StaticScan, AProblemCanAllowASpecialRegister) {
  const std::string source = R"(
__device__ unsigned g_n;
__global__ void k(unsigned* out) {
  unsigned slot;
  unsigned long long launch;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(slot));
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(launch));
  out[0] = slot + launch;
  g_n = 1;
}
)";
  const auto found = scan(source, {"!%warpid", "!g_n"});
  EXPECT_EQ(listed(found), "reads %gridid @7; stores to the __device__ variable g_n @9; ");
  const auto both = scan(source, {"!%warpid", "!%gridid"});
  EXPECT_EQ(listed(both), "stores to the __device__ variable g_n @9; ");
  const std::vector<std::string> forbid = {"!%warpid"};
  EXPECT_TRUE(kj::scan_source(source, "cand.cu", forbid).empty());
}

// What right kernels do with tables and memory: reads of a __constant__ table, of a
// __device__ const table and of a __device__ table no kernel writes, through computed indices,
// a pointer loop over one, a pointer that is a table or an argument; shared memory; pointer
// arithmetic on arguments; the constants libcu++ keeps in __device__ variables.
TEST(StaticScan, ReadsOfTablesAndMemoryOfTheKernelsOwnAreNotFound) {
  const auto found = scan(R"(
#include <cuda/std/limits>
__constant__ float c_weights[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__device__ const float g_table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ float g_lut[256];
__global__ void k(const float* x, const int* idx, float* y, int n, int pick) {
  __shared__ float tile[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i >= n) return;
  float s = c_weights[idx[i] & 15] + g_table[idx[i] & 7] + g_lut[idx[i] & 255];
  for (const float* p = g_table; p != g_table + (n & 7); ++p) s += *p;
  const float* t = pick ? g_lut : x;
  s += t[i & 255] + tile[(threadIdx.x + 1) & 255] + g_lut[3];
  y[i] = s * cuda::std::numeric_limits<float>::epsilon();
}
)");
  EXPECT_TRUE(found.empty()) << listed(found);
}

// Every bundled candidate scans as its expectation says: solutions, references and traps that
// fail for another reason are clean (a finding would turn their verdict into
// forbidden_construct), and a trap expected to be a forbidden construct has a finding.
TEST(StaticScan, TheBundledCandidatesScanAsTheirExpectationsSay) {
  const fs::path problems = fs::path(KJ_SOURCE_DIR) / "problems";
  kj::CompileOptions o = options();
  o.cache_dir = fs::temp_directory_path() / "kjudge_scan_test_cache";
  std::map<std::string, std::string> unfenced; // "problem/file" -> its unfenced_handoff
  std::string dir_name;
  // The findings of one kernel source under the problem's forbid list; nullopt when it does
  // not compile.
  auto findings = [&](const kj::KernelSource& k, const std::vector<kj::LaunchSpec>& launches,
                      const std::vector<std::string>& candidate_options,
                      const kj::Problem& p) -> std::optional<std::string> {
    std::vector<std::string> names;
    for (const kj::LaunchSpec& l : launches)
      if (std::find(names.begin(), names.end(), l.kernel) == names.end()) names.push_back(l.kernel);
    kj::CompileOptions with = o;
    with.options = candidate_options;
    const std::string file = k.path.filename().string();
    try {
      const kj::CompiledModule m = kj::compile_module(k.text, file, names, with);
      if (auto race = kj::unfenced_handoff(m.ptx, file)) unfenced[dir_name + "/" + file] = *race;
      return kj::forbidden_constructs(k.text, file, m.ptx, p.forbid).value_or("");
    } catch (const kj::CompileError&) {
      return std::nullopt;
    }
  };
  int scanned = 0, flagged = 0;
  const toml::table manifest = toml::parse_file((problems / "manifest.toml").string());
  for (const toml::node& entry : *manifest["problem"].as_array()) {
    const fs::path dir = problems / entry.as_table()->get("path")->value<std::string>().value();
    SCOPED_TRACE(dir.filename().string());
    dir_name = dir.filename().string();
    const kj::Problem p = kj::load_problem(dir);
    // The oracle's plans: the reference's template for the problem's float type and for
    // double (the golden, from its own source where it has one).
    const std::string float_type(kj::dtype_cxx_name(kj::judge::problem_float_dtype(p)));
    EXPECT_EQ(findings(p.reference, kj::judge::instantiate_plan(p.reference, float_type), {}, p),
              "")
        << "the reference";
    const kj::KernelSource& golden = p.golden ? *p.golden : p.reference;
    EXPECT_EQ(findings(golden, kj::judge::instantiate_plan(golden, "double"), {}, p), "")
        << "the golden";
    const toml::table expect = toml::parse_file((dir / "expect.toml").string());
    for (const toml::node& c : *expect["candidate"].as_array()) {
      const std::string file = c.as_table()->get("file")->value<std::string>().value();
      const std::string verdict = c.as_table()->get("expect")->value<std::string>().value();
      SCOPED_TRACE(file);
      // A plan that does not load is its trap's launch_error, before any scan.
      if (verdict == "fail:launch_error") {
        try {
          (void)kj::load_candidate(dir / file, p);
        } catch (const kj::SpecError&) {
          continue;
        }
      }
      const kj::Candidate cand = kj::load_candidate(dir / file, p);
      const std::optional<std::string> message =
          findings(cand.source, cand.source.launches, cand.options, p);
      if (!message) {
        EXPECT_TRUE(verdict.find("compile_error") != std::string::npos ||
                    verdict.find("launch_error") != std::string::npos)
            << "does not compile, expected " << verdict;
        continue;
      }
      ++scanned;
      if (verdict == "fail:forbidden_construct") {
        EXPECT_NE(*message, "") << "expected a finding";
        ++flagged;
      } else if (verdict.find("forbidden_construct") == std::string::npos) {
        EXPECT_EQ(*message, "") << "expected " << verdict;
      }
    }
  }
  EXPECT_GT(scanned, 80);
  EXPECT_GE(flagged, 5);
  // The unfenced "last block done" hand-off: exactly the two traps that drop the fence, never a
  // solution, a reference or another trap.
  std::vector<std::string> racy;
  for (const auto& [file, message] : unfenced)
    racy.push_back(file);
  EXPECT_EQ(racy, (std::vector<std::string>{"layernorm_backward/missing_fence.cu",
                                            "reduce_all/missing_fence.cu"}));
  EXPECT_EQ(unfenced["reduce_all/missing_fence.cu"],
            "data race: a store to global memory at missing_fence.cu:35 reaches an atomic at "
            "missing_fence.cu:36 with no __threadfence() between them, and a load at "
            "missing_fence.cu:42 follows the atomic in reduce_last_block(float const*, float*, "
            "int*, float*, int): a block that reads after seeing the atomic's result may read "
            "the store's old value (the \"last block done\" pattern needs the fence)");
}

} // namespace
