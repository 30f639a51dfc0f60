// The mutation operator catalogue and mutant generation (src/mutate/operators.cpp): the
// catalogue's shape (every reference operator, enough rewrites per category, controls), exact
// mutant lists on small kernels for a range of operators, the places no mutant may touch
// (comments, strings, host functions, launch brackets, pointer declarators, template brackets),
// stable ids, filtering, apply_mutant and normalize_ptx byte for byte, a sweep over every
// bundled solution, and an NVRTC compile of a sample of real mutants (no GPU needed).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/mutate.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/sha256.hpp"

namespace kj::mutate {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// One mutant as a line a test can pin: "OP line:col `original` -> `replacement`".
std::string row(const Mutant& m) {
  return m.op + " " + std::to_string(m.line) + ":" + std::to_string(m.column) + " `" + m.original +
         "` -> `" + m.replacement + "`";
}
std::vector<std::string> rows(const std::vector<Mutant>& ms) {
  std::vector<std::string> r;
  for (const auto& m : ms) r.push_back(row(m));
  return r;
}

const Operator& op_named(const std::string& id) {
  for (const auto& op : operator_catalogue())
    if (op.id == id) return op;
  throw std::logic_error("no operator " + id);
}

// ---- the catalogue ----

TEST(Catalogue, HasEveryReferenceOperator) {
  const std::vector<std::string> ids = {
      "AR-AOR",        "AR-ASSIGN",     "AR-SWAP",        "AR-UNARY",     "AR-CONST",
      "AR-SCALE-DROP", "AR-TERM-DROP",  "AR-MINMAX",      "IX-DIM",       "IX-GIR",
      "IX-OFF",        "IX-STRIDE",     "IX-TRANSPOSE",   "IX-GRIDSTRIDE", "IX-LOOP0",
      "IX-ARGSWAP",    "SE-SOFTMAX-MAX", "SE-RED-INIT",   "SE-RED-OP",    "SE-NORM",
      "SE-DCR",        "SE-CLAMP",      "SE-SDL",         "SE-PARTIAL",   "SE-NOWRITE",
      "BD-ROR",        "BD-DROP-GUARD", "BD-DROP-CONJ",   "BD-TILE-TAIL", "BD-LOOPEND",
      "BD-SMEM",       "SY-DROP",       "SY-MOVE",        "SY-WARP",      "SY-SHFL-OFF",
      "SY-ATOMIC",     "SY-ATOMIC-OP",  "SY-FENCE",       "PR-ACC",       "PR-IN",
      "PR-DOUBLE",     "PR-FASTMATH",   "PR-EPS",         "PR-KAHAN",     "CTRL"};
  std::set<std::string> have;
  for (const auto& op : operator_catalogue()) have.insert(op.id);
  for (const auto& id : ids) EXPECT_TRUE(have.count(id)) << id;
  EXPECT_EQ(have.size(), operator_catalogue().size()) << "duplicate operator ids";
  EXPECT_EQ(op_named("AR-AOR").category, Category::arithmetic);
  EXPECT_EQ(op_named("SY-SHFL-OFF").category, Category::synchronization);
  EXPECT_EQ(op_named("CTRL").category, Category::control);
}

TEST(Catalogue, CountsAndLabels) {
  std::map<Category, int> per;
  int total = 0;
  for (const auto& op : operator_catalogue()) {
    EXPECT_FALSE(op.rewrites.empty()) << op.id;
    EXPECT_FALSE(op.summary.empty()) << op.id;
    std::set<std::string> labels(op.rewrites.begin(), op.rewrites.end());
    EXPECT_EQ(labels.size(), op.rewrites.size()) << "duplicate rewrite label in " << op.id;
    per[op.category] += static_cast<int>(op.rewrites.size());
    total += static_cast<int>(op.rewrites.size());
  }
  std::cout << "catalogue: " << operator_catalogue().size() << " operators, " << total
            << " rewrites";
  for (const auto& [c, n] : per) std::cout << ", " << category_name(c) << " " << n;
  std::cout << "\n";
  EXPECT_GE(total, 60);
  for (Category c : kScoredCategories) EXPECT_GE(per[c], 5) << category_name(c);
  EXPECT_GE(per[Category::control], 3);
  // Pinned so a change to the catalogue is a deliberate one (incremental reuse keys on it).
  EXPECT_EQ(total, 116);
}

TEST(Catalogue, EquivalenceProneOperators) {
  std::set<std::string> prone;
  for (const auto& op : operator_catalogue())
    if (op.equivalence_prone) prone.insert(op.id);
  EXPECT_EQ(prone, (std::set<std::string>{"IX-GRIDSTRIDE", "SY-SHFL-OFF", "SE-SOFTMAX-MAX",
                                          "PR-FASTMATH"}));
}

TEST(Catalogue, CategoryNames) {
  EXPECT_EQ(category_name(Category::arithmetic), "arithmetic");
  EXPECT_EQ(category_name(Category::indexing), "indexing");
  EXPECT_EQ(category_name(Category::semantic), "semantic");
  EXPECT_EQ(category_name(Category::boundary), "boundary");
  EXPECT_EQ(category_name(Category::synchronization), "synchronization");
  EXPECT_EQ(category_name(Category::precision), "precision");
  EXPECT_EQ(category_name(Category::control), "control");
}

// ---- exact mutant lists ----

const char* const kAxpy =
    "__global__ void axpy(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] - 2.0f * x[i];\n"
    "}\n";

TEST(Generate, ArithmeticOperatorExactList) {
  const auto ms = generate_mutants("axpy.cu", kAxpy, {"AR-AOR"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "AR-AOR 2:22 `*` -> `/`",
                          "AR-AOR 2:35 `+` -> `-`",
                          "AR-AOR 3:26 `-` -> `+`",
                          "AR-AOR 3:33 `*` -> `/`",
                      }));
  ASSERT_EQ(ms.size(), 4u);
  EXPECT_EQ(ms[0].category, Category::arithmetic);
  EXPECT_EQ(ms[0].rewrite, "* -> /");
  EXPECT_EQ(ms[0].function, "axpy");
  EXPECT_EQ(ms[0].file, "axpy.cu");
  EXPECT_EQ(ms[0].description, "`*` -> `/` in axpy (line 2)");
  EXPECT_EQ(ms[0].offset, std::string(kAxpy).find("* blockDim"));
  EXPECT_EQ(ms[0].length, 1u);
  EXPECT_FALSE(ms[0].equivalence_prone);
  EXPECT_TRUE(ms[0].prelude.empty());
}

TEST(Generate, BoundaryAndSwapExactList) {
  const auto ms = generate_mutants("axpy.cu", kAxpy, {"BD-ROR", "BD-DROP-GUARD", "AR-SWAP",
                                                     "AR-CONST", "IX-GIR"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "IX-GIR 2:11 `blockIdx` -> `threadIdx`",
                          "IX-GIR 2:37 `threadIdx` -> `blockIdx`",
                          "BD-DROP-GUARD 3:3 `if (i < n)` -> ``",
                          "BD-ROR 3:9 `<` -> `<=`",
                          "AR-CONST 3:28 `2.0f` -> `2.002f`",
                          "AR-CONST 3:28 `2.0f` -> `1.998f`",
                          "AR-CONST 3:28 `2.0f` -> `0.0f`",
                      }));
  // `x[i] - 2.0f * x[i]`: the right operand of `-` is a product, so no swap of `-`.
  for (const auto& m : ms) EXPECT_NE(m.op, "AR-SWAP");
  EXPECT_EQ(ms[2].description, "`if (i < n)` -> (deleted) in axpy (line 3)");
}

const char* const kReduce =
    "__global__ void reduce(const float* x, float* y, int n) {\n"
    "  __shared__ float red[256];\n"
    "  float s = 0.0f;\n"
    "  for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(x[i]);\n"
    "  red[threadIdx.x] = s;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) y[blockIdx.x] = red[0];\n"
    "}\n";

TEST(Generate, SynchronizationAndSemanticExactList) {
  const auto ms = generate_mutants("reduce.cu", kReduce,
                                   {"synchronization", "BD-SMEM", "SE-RED-INIT", "SE-NOWRITE",
                                    "BD-TILE-TAIL", "SE-PARTIAL"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "BD-SMEM 2:24 `256` -> `255`",
                          "SE-RED-INIT 3:13 `0.0f` -> `1.0f`",
                          "BD-TILE-TAIL 4:29 `i < n` -> `i + blockDim.x <= n`",
                          "SE-PARTIAL 4:33 `n` -> `n / 2`",
                          "SY-MOVE 5:3 `red[threadIdx.x] = s;\n  __syncthreads();` -> "
                          "`__syncthreads();\n  red[threadIdx.x] = s;`",
                          "SY-DROP 6:3 `__syncthreads();` -> `;`",
                          "SE-NOWRITE 7:25 `y[blockIdx.x] = red[0];` -> `;`",
                      }));
}

TEST(Generate, PrecisionRewritesCarryTheirHeader) {
  const auto ms = generate_mutants("reduce.cu", kReduce, {"PR-ACC", "PR-FASTMATH"});
  EXPECT_EQ(rows(ms),
            (std::vector<std::string>{
                "PR-ACC 4:53 `s += expf(x[i])` -> `s = __half2float(__float2half(s + expf(x[i])))`",
                "PR-ACC 4:53 `s += expf(x[i])` -> `s = __bfloat162float(__float2bfloat16(s + "
                "expf(x[i])))`",
                "PR-ACC 4:53 `s += expf(x[i])` -> `s = __int_as_float(__float_as_int(s + "
                "expf(x[i])) & 0xffffe000)`",
                "PR-FASTMATH 4:58 `expf` -> `__expf`",
            }));
  ASSERT_EQ(ms.size(), 4u);
  EXPECT_EQ(ms[0].prelude, "#include <cuda_fp16.h>\n");
  EXPECT_EQ(ms[1].prelude, "#include <cuda_bf16.h>\n");
  EXPECT_EQ(ms[2].prelude, "");
  EXPECT_TRUE(ms[3].equivalence_prone);
  // A source that includes the header already gets no prelude.
  const std::string with = std::string("#include <cuda_fp16.h>\n") + kReduce;
  const auto again = generate_mutants("reduce.cu", with, {"PR-ACC"});
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].prelude, "");
  EXPECT_EQ(again[0].line, 5);
}

TEST(Generate, WarpShuffleOperators) {
  const char* src =
      "__device__ float warp_sum(float v) {\n"
      "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
      "  return v;\n"
      "}\n";
  const auto ms = generate_mutants("w.cu", src, {"SY-SHFL-OFF", "SY-WARP"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "SY-SHFL-OFF 2:16 `16` -> `8`",
                          "SY-SHFL-OFF 2:33 `1` -> `2`",
                          "SY-SHFL-OFF 2:41 `__shfl_down_sync` -> `__shfl_xor_sync`",
                          "SY-WARP 2:58 `0xffffffffu` -> `0x0000ffffu`",
                      }));
  ASSERT_EQ(ms.size(), 4u);
  // Only down -> xor is presumed equivalent (when only lane 0 reads the sum).
  EXPECT_FALSE(ms[0].equivalence_prone);
  EXPECT_FALSE(ms[1].equivalence_prone);
  EXPECT_TRUE(ms[2].equivalence_prone);
  EXPECT_EQ(ms[1].rewrite, "offset step doubled");
  // AR-CONST's `1 -> 2` on the same token yields to SY-SHFL-OFF's step rewrite.
  const auto all = generate_mutants("w.cu", src, {"AR-CONST", "SY-SHFL-OFF"});
  int step_edits = 0;
  for (const auto& m : all)
    if (m.line == 2 && m.column == 33 && m.replacement == "2") {
      ++step_edits;
      EXPECT_EQ(m.op, "SY-SHFL-OFF");
    }
  EXPECT_EQ(step_edits, 1);
}

TEST(Generate, SoftmaxGridStrideAndControls) {
  const char* src =
      "__global__ void k(const float* x, float* y, float m, int n) {\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
      "    y[i] = fmaf(x[i], m, y[i]) + expf(x[i] - m);\n"
      "}\n";
  const auto ms = generate_mutants("k.cu", src, {"SE-SOFTMAX-MAX", "IX-GRIDSTRIDE", "control"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "IX-GRIDSTRIDE 2:62 `i += gridDim.x * blockDim.x` -> `i = n`",
                          "IX-GRIDSTRIDE 2:67 `gridDim.x * blockDim.x` -> "
                          "`(gridDim.x * blockDim.x) / gridDim.x`",
                          "CTRL 3:12 `fmaf(x[i], m, y[i])` -> `x[i] * m + y[i]`",
                          "SE-SOFTMAX-MAX 3:39 `x[i] - m` -> `x[i]`",
                      }));
  for (const auto& m : ms) EXPECT_EQ(m.equivalence_prone, m.op != "CTRL") << row(m);

  const char* sums =
      "__global__ void k(const float* x, float* y) {\n"
      "  const float a = x[0], b = x[1], c = x[2];\n"
      "  y[0] = a * b + c;\n"
      "  y[1] = (a + b) + c;\n"
      "  y[2] = a + b + c;\n"
      "  y[3] = c + a * b;\n"
      "}\n";
  EXPECT_EQ(rows(generate_mutants("s.cu", sums, {"CTRL"})),
            (std::vector<std::string>{
                "CTRL 3:10 `a * b + c` -> `fmaf(a, b, c)`",
                "CTRL 4:10 `(a + b) + c` -> `a + (b + c)`",
                "CTRL 5:10 `a + b + c` -> `a + (b + c)`",
                "CTRL 6:10 `c + a * b` -> `fmaf(a, b, c)`",
            }));
  // Integers are not contracted: no fmaf on index arithmetic.
  const char* ints = "__global__ void k(int* y, int a, int b, int c) { y[0] = a * b + c; }\n";
  EXPECT_TRUE(generate_mutants("i.cu", ints, {"CTRL"}).empty());
}

// ---- where no mutant may go ----

TEST(Generate, NothingInCommentsStringsHostCodeLaunchesDeclaratorsOrTemplates) {
  const std::string src =
      "#define SCALE(a) ((a) * 2 + 1)\n"
      "int host_only(int a, int b) { return a + b * 2 < 3; }\n"
      "template <int N> __device__ int twice(int v) { return v; }\n"
      "__global__ void child(float* p) {}\n"
      "__global__ void k(const float* x, float* y, int n) {\n"
      "  // a + b < c * d in a comment\n"
      "  /* x - y > 1 */\n"
      "  const char* s = \"a + b < c\";\n"
      "  const float* p = x;\n"
      "  float4* q = reinterpret_cast<float4*>(y);\n"
      "  int t = static_cast<int>(n);\n"
      "  int u = twice<4>(t);\n"
      "  child<<<1, 1>>>(y);\n"
      "}\n";
  const auto ms = generate_mutants("neg.cu", src, {"arithmetic", "boundary", "AR-CONST"});
  EXPECT_EQ(rows(ms), std::vector<std::string>{});

  // And no operator at all touches those places.
  const std::size_t body = src.find("__global__ void k");
  const std::vector<std::string> forbidden = {"// a + b", "/* x - y", "\"a + b < c\"",
                                              "<<<1, 1>>>"};
  for (const auto& m : generate_mutants("neg.cu", src)) {
    EXPECT_GE(m.offset, body) << row(m);
    for (const auto& f : forbidden) {
      const std::size_t at = src.find(f);
      EXPECT_TRUE(m.offset + m.length <= at || m.offset >= at + f.size()) << row(m);
    }
    EXPECT_NE(m.original, "*") << row(m);
    EXPECT_NE(m.original, "<") << row(m);
    EXPECT_NE(m.original, ">") << row(m);
  }
}

TEST(Generate, UnaryOperatorsAreNotBinary) {
  const char* src =
      "__global__ void k(const float* x, float* y, int n) {\n"
      "  float v = -x[0];\n"
      "  float* p = &y[1];\n"
      "  *p = v * -x[2];\n"
      "  unsigned u = n;\n"
      "  y[2] = (float)-v;\n"
      "}\n";
  const auto ms = generate_mutants("u.cu", src, {"AR-AOR", "AR-UNARY"});
  EXPECT_EQ(rows(ms), (std::vector<std::string>{
                          "AR-UNARY 2:13 `-` -> ``",
                          "AR-AOR 4:10 `*` -> `/`",
                          "AR-UNARY 4:12 `-` -> ``",
                          "AR-UNARY 6:17 `-` -> ``",
                      }));
}

// ---- ids, filters, application ----

TEST(Generate, StableIds) {
  const auto a = generate_mutants("axpy.cu", kAxpy);
  const auto b = generate_mutants("axpy.cu", kAxpy);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  std::set<std::string> ids;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].id.size(), 16u);
    ids.insert(a[i].id);
  }
  EXPECT_EQ(ids.size(), a.size()) << "ids collide";
  const Mutant& m = a[0];
  std::string key = "axpy.cu";
  key += '\0' + m.op + '\0' + std::to_string(m.offset) + '\0' + std::to_string(m.length) + '\0' +
         m.replacement;
  EXPECT_EQ(m.id, kj::sha256_hex(key).substr(0, 16));
  const auto other = generate_mutants("other.cu", kAxpy);
  ASSERT_EQ(other.size(), a.size());
  EXPECT_NE(other[0].id, a[0].id);
  EXPECT_EQ(other[0].offset, a[0].offset);
}

TEST(Generate, SourceOrderThenCatalogueOrderWithoutDuplicates) {
  const auto ms = generate_mutants("reduce.cu", kReduce);
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < operator_catalogue().size(); ++i) rank[operator_catalogue()[i].id] = i;
  std::set<std::tuple<std::size_t, std::size_t, std::string>> edits;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    EXPECT_TRUE(edits.insert({ms[i].offset, ms[i].length, ms[i].replacement}).second) << row(ms[i]);
    if (i == 0) continue;
    EXPECT_TRUE(ms[i - 1].offset < ms[i].offset ||
                (ms[i - 1].offset == ms[i].offset && rank[ms[i - 1].op] <= rank[ms[i].op]))
        << row(ms[i - 1]) << " before " << row(ms[i]);
  }
  for (const auto& m : ms) {
    const auto& op = op_named(m.op);
    EXPECT_EQ(m.category, op.category);
    EXPECT_NE(std::find(op.rewrites.begin(), op.rewrites.end(), m.rewrite), op.rewrites.end())
        << row(m);
  }
}

TEST(Generate, FiltersByOperatorAndCategory) {
  const auto all = generate_mutants("reduce.cu", kReduce);
  const auto sync = generate_mutants("reduce.cu", kReduce, {"synchronization"});
  const auto drop = generate_mutants("reduce.cu", kReduce, {"SY-DROP"});
  ASSERT_FALSE(sync.empty());
  for (const auto& m : sync) EXPECT_EQ(m.category, Category::synchronization);
  ASSERT_EQ(drop.size(), 1u);
  EXPECT_EQ(drop[0].op, "SY-DROP");
  std::size_t expected = 0;
  for (const auto& m : all) expected += m.category == Category::synchronization ? 1 : 0;
  EXPECT_EQ(sync.size(), expected);
  // Several names are a union.
  const auto both = generate_mutants("reduce.cu", kReduce, {"SY-DROP", "precision"});
  for (const auto& m : both) EXPECT_TRUE(m.op == "SY-DROP" || m.category == Category::precision);
  EXPECT_GT(both.size(), drop.size());
}

TEST(Generate, UnknownOperatorThrows) {
  try {
    generate_mutants("a.cu", kAxpy, {"AR-AOR", "AR-NOPE"});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown mutation operator or category 'AR-NOPE'");
  }
  EXPECT_THROW(generate_mutants("a.cu", kAxpy, {"Arithmetic"}), std::invalid_argument);
}

TEST(Apply, ReplacesTheSpanAndPrependsThePrelude) {
  const auto ms = generate_mutants("reduce.cu", kReduce, {"PR-ACC"});
  ASSERT_EQ(ms.size(), 3u);
  const std::string out = apply_mutant(kReduce, ms[0]);
  std::string expected = std::string("#include <cuda_fp16.h>\n") + kReduce;
  const std::string from = "s += expf(x[i])";
  expected.replace(expected.find(from), from.size(),
                   "s = __half2float(__float2half(s + expf(x[i])))");
  EXPECT_EQ(out, expected);
  const auto aor = generate_mutants("axpy.cu", kAxpy, {"AR-AOR"});
  EXPECT_EQ(apply_mutant(kAxpy, aor[2]),
            "__global__ void axpy(const float* x, float* y, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = x[i] + 2.0f * x[i];\n"
            "}\n");
  // A mutant of another source is refused rather than applied at a wrong place.
  EXPECT_THROW(apply_mutant("__global__ void k() {}\n", aor[2]), std::invalid_argument);
}

TEST(NormalizePtx, DropsWhatDoesNotChangeTheCode) {
  const std::string ptx =
      "//\n"
      "// Generated by NVIDIA NVVM Compiler\n"
      "//\n"
      "\n"
      ".version 8.5\n"
      ".target sm_90\n"
      ".address_size 64\n"
      "\t.file\t1 \"/tmp/a.cu\"\n"
      ".visible .entry k(\n"
      "\t.param .u64 k_param_0   \n"
      ")\n"
      "{\n"
      "\t.loc\t1 3 5\n"
      "\tld.param.u64 \t%rd1, [k_param_0];  // load\n"
      "\n"
      "\tret;\n"
      "}\n";
  EXPECT_EQ(normalize_ptx(ptx),
            ".visible .entry k(\n"
            "\t.param .u64 k_param_0\n"
            ")\n"
            "{\n"
            "\tld.param.u64 \t%rd1, [k_param_0];\n"
            "\tret;\n"
            "}\n");
  // The same code at other lines normalises to the same text.
  std::string moved = ptx;
  moved.replace(moved.find("1 3 5"), 5, "1 9 2");
  EXPECT_EQ(normalize_ptx(moved), normalize_ptx(ptx));
  EXPECT_EQ(normalize_ptx(""), "");
}

// ---- the bundled solutions ----

struct Solution {
  std::string label, source;
};
std::vector<Solution> bundled_solutions() {
  std::vector<Solution> out;
  const fs::path root = fs::path(KJ_SOURCE_DIR) / "problems";
  std::vector<fs::path> files;
  for (const auto& problem : fs::directory_iterator(root)) {
    const fs::path dir = problem.path() / "solutions";
    if (!fs::is_directory(dir)) continue;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".cu") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    out.push_back({fs::relative(f, root).generic_string(), read_file(f)});
  return out;
}

TEST(Bundled, EveryScoredCategoryGetsMutants) {
  const auto solutions = bundled_solutions();
  ASSERT_GE(solutions.size(), 40u);
  std::map<Category, int> per;
  std::map<std::string, int> per_op;
  int total = 0;
  for (const auto& s : solutions) {
    for (const auto& m : generate_mutants(s.label, s.source)) {
      ++per[m.category];
      ++per_op[m.op];
      ++total;
      EXPECT_EQ(apply_mutant(s.source, m).size(),
                m.prelude.size() + s.source.size() - m.length + m.replacement.size());
    }
  }
  std::cout << total << " mutants over " << solutions.size() << " solutions:";
  for (const auto& [c, n] : per) std::cout << " " << category_name(c) << " " << n;
  std::cout << "\n";
  for (const auto& [op, n] : per_op) std::cout << "  " << op << " " << n << "\n";
  for (Category c : kScoredCategories) EXPECT_GE(per[c], 1) << category_name(c);
  EXPECT_GE(per[Category::control], 1);
  EXPECT_GE(total, 2000);
  EXPECT_LE(total, 12000);
}

// Real mutants compile: an evenly spread sample of the softmax solution's mutants through
// kjudge's NVRTC wrapper (NVRTC needs no GPU). A compile error is allowed (the campaign records
// CompileError) but must stay rare.
TEST(Bundled, SampledMutantsCompileWithNvrtc) {
  const fs::path file = fs::path(KJ_SOURCE_DIR) / "problems/softmax/solutions/basic.cu";
  const std::string source = read_file(file);
  const auto ms = generate_mutants("softmax/solutions/basic.cu", source);
  ASSERT_GE(ms.size(), 30u);
  CompileOptions options;
  options.arch = 90;
  options.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  if (toolkit_include_dirs().empty()) GTEST_SKIP() << "no CUDA toolkit headers";
  ASSERT_NO_THROW(compile_module(source, "basic.cu", {"softmax_rows"}, options));
  const std::size_t sample = 30;
  int compiled = 0;
  std::vector<std::string> failed;
  for (std::size_t k = 0; k < sample; ++k) {
    const Mutant& m = ms[k * ms.size() / sample];
    try {
      compile_module(apply_mutant(source, m), "basic.cu", {"softmax_rows"}, options);
      ++compiled;
    } catch (const CompileError& e) {
      failed.push_back(row(m));
    }
  }
  std::cout << compiled << " of " << sample << " sampled mutants compile\n";
  for (const auto& f : failed) std::cout << "  compile error: " << f << "\n";
  EXPECT_GE(compiled * 10, static_cast<int>(sample) * 8);
}

// Opt-in (KJ_MUTATE_COMPILE_ALL=N: every Nth mutant, 1 for all, which takes many minutes): the
// bundled solutions' mutants through NVRTC, for the compile rate per operator; the kernels are
// the solutions' `kernel = "..."` names.
TEST(Bundled, CompileRateOfEveryMutant) {
  const char* every = std::getenv("KJ_MUTATE_COMPILE_ALL");
  if (every == nullptr) GTEST_SKIP() << "set KJ_MUTATE_COMPILE_ALL=N";
  const int stride = std::max(1, std::atoi(every));
  int index = 0;
  CompileOptions options;
  options.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  std::map<std::string, std::pair<int, int>> per_op; // compiled, total
  int compiled = 0, total = 0;
  for (const auto& s : bundled_solutions()) {
    std::vector<std::string> kernels;
    for (std::size_t at = s.source.find("kernel = \""); at != std::string::npos;
         at = s.source.find("kernel = \"", at + 1)) {
      const std::size_t b = at + 10, e = s.source.find('"', b);
      kernels.push_back(s.source.substr(b, e - b));
    }
    for (const auto& m : generate_mutants(s.label, s.source)) {
      if (index++ % stride != 0) continue;
      ++total;
      ++per_op[m.op].second;
      try {
        compile_module(apply_mutant(s.source, m), "m.cu", kernels, options);
        ++compiled;
        ++per_op[m.op].first;
      } catch (const CompileError&) {
        std::cout << "compile error: " << s.label << " " << row(m) << std::endl;
      }
    }
  }
  std::cout << compiled << " of " << total << " mutants compile\n";
  for (const auto& [op, n] : per_op) std::cout << "  " << op << " " << n.first << "/" << n.second << "\n";
  EXPECT_GE(compiled * 10, total * 9);
}

} // namespace
} // namespace kj::mutate
