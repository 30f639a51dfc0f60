// load_problem and parse_problem_text: the sample problems, a fixture that uses every field,
// every bad-input class with the file, field and line its message must name, the hash, shapes,
// and export's round trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "kjudge/spec.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(KJ_CASES_DIR) / "spec";
const fs::path kProblems = fs::path(KJ_SOURCE_DIR) / "problems";

// A small valid problem; tests replace one piece of it at a time.
const std::string kBase = R"toml(name = "t"
tier = "tolerance"

[dims]
public = [{ R = 64, C = 100 }]
hidden = [{ R = 3, C = 7 }]

[[scalar]]
name = "eps"
dtype = "f32"
value = "1e-5"

[[scalar]]
name = "n"
dtype = "i32"
value = 8

[[input]]
name = "x"
dtype = "f32"
shape = ["R", "C"]

[[output]]
name = "y"
dtype = "f32"
shape = ["R", "C"]

[reference]
source = "ref.cu"

[[reference.launch]]
kernel = "k<T>"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "y", "eps", "R", "C"]
)toml";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "fixture lacks: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Files are served from memory: any path gives a one-line source, except names with "missing".
std::optional<std::string> fake_read(const fs::path& p) {
  if (p.filename().string().find("missing") != std::string::npos) return std::nullopt;
  return "// " + p.filename().string() + "\n";
}

Problem from_text(const std::string& toml) {
  return parse_problem_text(toml, "/virtual", "mem/problem.toml", fake_read);
}

SpecError error_of(const std::string& toml) {
  try {
    from_text(toml);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "loaded without error";
  return SpecError(Location{}, "none");
}

TEST(Problem, LoadsSoftmax) {
  const Problem p = load_problem(kProblems / "softmax");
  EXPECT_EQ(p.name, "softmax");
  EXPECT_EQ(p.tier, Tier::tolerance);
  EXPECT_EQ(p.nan, NanRule::exempt);
  EXPECT_FALSE(p.floor_bytes);
  ASSERT_EQ(p.dims.public_sets.size(), 2u);
  EXPECT_EQ(p.dims.public_sets[0].values, (Env{{"R", 4096}, {"C", 4096}}));
  EXPECT_EQ(p.dims.public_sets[1].values, (Env{{"R", 128}, {"C", 1000}}));
  ASSERT_EQ(p.dims.hidden_sets.size(), 1u);
  EXPECT_EQ(p.dims.hidden_sets[0].values, (Env{{"R", 3}, {"C", 4099}}));
  ASSERT_EQ(p.dims.hidden_ranges.size(), 1u);
  EXPECT_EQ(p.dims.hidden_ranges[0].bounds,
            (std::map<std::string, std::pair<std::int64_t, std::int64_t>>{{"R", {1, 2048}},
                                                                           {"C", {1, 8192}}}));
  EXPECT_EQ(p.dims.hidden_draws, 2);
  ASSERT_EQ(p.dims.host_sets.size(), 2u);
  EXPECT_EQ(p.dims.host_sets[0].values, (Env{{"R", 32}, {"C", 1000}}));
  EXPECT_EQ(p.dims.vary, (std::vector<std::string>{"R", "C"}));
  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(p.inputs[0].dtype, DType::f32);
  EXPECT_EQ(p.inputs[0].dist.kind, Distribution::Kind::normal);
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].policy.kind, PolicySpec::Kind::relative);
  EXPECT_EQ(p.outputs[0].policy.expected, Expected::golden);
  EXPECT_EQ(p.outputs[0].slice, 0);
  ASSERT_EQ(p.reference.launches.size(), 1u);
  EXPECT_EQ(p.reference.launches[0].kernel_base_name(), "softmax_ref");
  EXPECT_NE(p.reference.text.find("kj::acc_t<T>"), std::string::npos);
  EXPECT_EQ(p.reference.path, kProblems / "softmax" / "reference.cu");
  EXPECT_EQ(p.hash.size(), 64u);
  EXPECT_EQ(p.short_hash(), p.hash.substr(0, 8));
  EXPECT_EQ(p.find_input("x"), &p.inputs[0]);
  EXPECT_EQ(p.find_output("y"), &p.outputs[0]);
  EXPECT_EQ(p.find_input("y"), nullptr);
  EXPECT_EQ(eval_shape(p.outputs[0].shape, shape_env(p, p.dims.public_sets[1].values)),
            (Shape{128, 1000}));
  // The reference obeys docs/design.md's rules for templates: no f-suffixed literals, no expf.
  EXPECT_EQ(p.reference.text.find("expf"), std::string::npos);
}

TEST(Problem, LoadsVectorAdd) {
  const Problem p = load_problem(kProblems / "vector_add" / "problem.toml");
  EXPECT_EQ(p.name, "vector_add");
  EXPECT_EQ(p.tier, Tier::exact);
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].policy.kind, PolicySpec::Kind::exact);
  EXPECT_EQ(p.outputs[0].policy.expected, Expected::reference);
  EXPECT_EQ(p.reference.launches[0].args, (std::vector<std::string>{"x", "y", "z", "N"}));
  // By folder or by file: the same problem, the same hash.
  EXPECT_EQ(load_problem(kProblems / "vector_add").hash, p.hash);
}

TEST(Problem, LoadsEveryField) {
  const Problem p = load_problem(kCases / "good" / "full");
  EXPECT_EQ(p.nan, NanRule::propagate);
  EXPECT_TRUE(p.signed_zero_strict);
  EXPECT_TRUE(p.allow_nondeterministic);
  ASSERT_TRUE(p.floor_bytes);
  EXPECT_EQ(p.floor_bytes->eval({{"R", 2}, {"C", 3}}), 48);
  EXPECT_FALSE(p.floor_flops); // "" means none
  EXPECT_EQ(p.allowed_options, (std::vector<std::string>{"-use_fast_math", "-DFAST=1"}));
  EXPECT_EQ(p.forbid, (std::vector<std::string>{"atomicAdd"}));
  EXPECT_EQ(p.dims.constraints.size(), 2u);

  ASSERT_EQ(p.scalars.size(), 3u);
  EXPECT_EQ(p.scalars[0].value, "1e-5");
  EXPECT_EQ(p.scalars[0].as_double, 1e-5);
  EXPECT_EQ(p.scalars[1].as_int, 4);
  EXPECT_EQ(p.scalars[1].value, "4");
  EXPECT_EQ(p.scalars[2].as_double, 0.5);
  // Integer scalars are visible to expressions, float ones are not.
  const Env env = shape_env(p, p.dims.public_sets[0].values);
  EXPECT_EQ(env, (Env{{"R", 64}, {"C", 100}, {"groups", 4}}));

  ASSERT_EQ(p.inputs.size(), 4u);
  EXPECT_EQ(p.inputs[1].domain, Domain::nonnegative);
  EXPECT_EQ(p.inputs[1].dist.kind, Distribution::Kind::integer);
  EXPECT_EQ(p.inputs[2].dtype, DType::bf16);
  EXPECT_EQ(p.inputs[2].dist.kind, Distribution::Kind::file);
  EXPECT_EQ(fs::path(p.inputs[2].dist.file), kCases / "good" / "full" / "table.npy");
  EXPECT_EQ(p.inputs[3].dist.kind, Distribution::Kind::bernoulli); // bool's default
  EXPECT_EQ(eval_shape(p.inputs[3].shape, env), (Shape{13, 4}));

  ASSERT_EQ(p.outputs.size(), 3u);
  const PolicySpec& y = p.outputs[0].policy;
  EXPECT_EQ(y.kind, PolicySpec::Kind::allclose);
  EXPECT_EQ(*y.rtol, 1e-5);
  EXPECT_EQ(*y.atol, 1e-8);
  EXPECT_EQ(y.expected, Expected::golden);
  EXPECT_EQ(p.outputs[1].policy.kind, PolicySpec::Kind::exact); // integer default
  EXPECT_EQ(p.outputs[1].init, InitRule::zero);
  EXPECT_EQ(p.outputs[1].ties, "lowest_index");
  EXPECT_EQ(*p.outputs[2].policy.k, 4);

  ASSERT_EQ(p.reference.launches.size(), 2u);
  const LaunchSpec& scan = p.reference.launches[1];
  EXPECT_EQ(scan.kernel_base_name(), "full_scan");
  EXPECT_EQ(scan.block.size(), 2u);
  EXPECT_EQ(scan.shared.eval({}), 256);
  EXPECT_TRUE(scan.cooperative);
  EXPECT_EQ(scan.cluster.size(), 1u);
  ASSERT_TRUE(scan.repeat);
  EXPECT_EQ(scan.repeat->eval(env), 7);
  EXPECT_EQ(scan.args, (std::vector<std::string>{"s", "R", "i", "7"}));
  ASSERT_EQ(scan.arg_exprs.size(), 4u);
  EXPECT_FALSE(scan.arg_exprs[0]); // a tensor
  EXPECT_EQ(scan.arg_exprs[1]->text(), "R");
  EXPECT_EQ(scan.arg_exprs[3]->eval({}), 7);
  const LaunchSpec& ref = p.reference.launches[0];
  EXPECT_FALSE(ref.arg_exprs[7]); // eps: a scalar, passed with its dtype
  EXPECT_FALSE(ref.arg_exprs[9]); // groups: an integer scalar is still a scalar
  EXPECT_EQ(ref.arg_exprs[12]->eval(env), 6400);
  ASSERT_TRUE(p.golden);
  EXPECT_EQ(p.golden->launches[0].kernel, "full_golden");
  EXPECT_NE(p.golden->text.find("full_golden"), std::string::npos);
}

// Every bad-input class: the message names the file, the field and the line, and it is a
// SpecError (exit code 2).
TEST(Problem, BadFixtures) {
  struct Case {
    const char* dir;
    const char* field;
    int line;
    const char* message;
  };
  const Case cases[] = {
      {"malformed_toml", "", 11, "malformed TOML"},
      {"unknown_dtype", "input[0].dtype", 11, "unknown dtype 'f33'; did you mean 'f32'?"},
      {"unknown_field", "input[0].dtyp", 11,
       "unknown field 'dtyp' in input[0]; did you mean 'dtype'?"},
      {"unknown_name", "reference.launch[0].grid[0]", 24,
       "unknown name 'Rows' at column 10 (known: C, R)"},
      {"div_by_zero", "output[0].shape[1]", 17,
       "division by zero at column 3 for dims.public[0] (C=100, R=64)"},
      {"shape_overflow", "input[0].shape", 12, "shape of 'x' overflows 64 bits"},
      {"wrong_arg_type", "reference.launch[0].args[3]", 26, "got a float"},
      {"missing_reference", "reference.source", 20, "cannot read reference source 'missing.cu'"},
      {"wrong_type", "input[0].dtype", 11, "expected a string, got an integer"},
      {"constraint_fails", "dims.constraints[1]", 8,
       "constraint 'C % 4 == 0' does not hold for dims.hidden[0] (C=7, R=3)"},
      {"duplicate_name", "output[0].name", 15, "name 'x' is already used by input[0]"},
      {"unknown_arg", "reference.launch[0].args[1]", 26,
       "'yy' is not a tensor, scalar or dim; did you mean 'y'?"},
      {"missing_dim", "dims.hidden[0]", 7, "missing dim 'C'"},
      {"block_too_big", "reference.launch[0].block[1]", 25, "block has 2048 threads"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dir);
    const fs::path dir = kCases / "bad" / c.dir;
    try {
      load_problem(dir);
      ADD_FAILURE() << "loaded";
    } catch (const SpecError& e) {
      const std::string file = (dir / "problem.toml").string();
      EXPECT_EQ(e.where().file, file);
      EXPECT_EQ(e.where().field, c.field);
      EXPECT_EQ(e.where().line, c.line);
      EXPECT_GT(e.where().column, 0);
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(file + ":" + std::to_string(c.line) + ":", 0), 0u) << what;
      EXPECT_NE(what.find(c.message), std::string::npos) << what;
      if (*c.field) {
        EXPECT_NE(what.find(c.field), std::string::npos) << what;
      }
    }
  }
}

TEST(Problem, NoProblemThere) {
  try {
    load_problem(kCases / "does_not_exist");
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("no problem at"), std::string::npos);
  }
}

TEST(Problem, InMemoryBase) {
  const Problem p = from_text(kBase);
  EXPECT_EQ(p.reference.text, "// ref.cu\n");
  EXPECT_EQ(p.reference.path, fs::path("/virtual/ref.cu"));
  EXPECT_EQ(p.outputs[0].policy.kind, PolicySpec::Kind::relative); // float default
  EXPECT_EQ(p.inputs[0].dist.text, "normal(0, 1)");                // float default
}

TEST(Problem, HashCoversEveryFile) {
  const std::string with_file =
      replaced(kBase, "shape = [\"R\", \"C\"]\n\n[[output]]",
               "shape = [\"R\", \"C\"]\ndist = 'file(\"x.npy\")'\n\n[[output]]");
  std::map<std::string, std::string> files{{"ref.cu", "a"}, {"x.npy", "b"}};
  auto load = [&](const std::string& toml) {
    return parse_problem_text(toml, "/v", "p.toml",
                              [&](const fs::path& path) {
                                return std::optional<std::string>(
                                    files.at(path.filename().string()));
                              })
        .hash;
  };
  const std::string h0 = load(with_file);
  EXPECT_EQ(load(with_file), h0); // stable
  files["ref.cu"] = "a2";
  const std::string h1 = load(with_file);
  EXPECT_NE(h1, h0);
  files["x.npy"] = "b2";
  const std::string h2 = load(with_file);
  EXPECT_NE(h2, h1);
  EXPECT_NE(load(with_file + "\n# a comment\n"), h2); // the toml's own bytes count
  // The display name does not change the hash: it is not part of the problem.
  EXPECT_EQ(parse_problem_text(kBase, "/v", "a.toml", fake_read).hash,
            parse_problem_text(kBase, "/v", "b.toml", fake_read).hash);
}

struct BadCase {
  std::string from, to;
  std::string field;
  std::string message;
};

// Each case's edit of `base` fails to load with its message, at its field, on a line of the file.
template <std::size_t N>
void expect_errors(const std::string& base, const BadCase (&cases)[N]) {
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.to);
    const SpecError e = error_of(replaced(base, c.from, c.to));
    EXPECT_EQ(e.where().file, "mem/problem.toml");
    EXPECT_EQ(e.where().field, c.field);
    EXPECT_GT(e.where().line, 0) << e.what();
    EXPECT_NE(std::string(e.bare_message()).find(c.message), std::string::npos) << e.what();
  }
}

TEST(Problem, InMemoryErrors) {
  const BadCase cases[] = {
      {"tier = \"tolerance\"", "tierr = \"tolerance\"", "tierr",
       "unknown field 'tierr' at the top level; did you mean 'tier'?"},
      {"tier = \"tolerance\"", "tier = \"loose\"", "tier",
       "unknown value 'loose' (known: exact, tolerance, approximate)"},
      {"kernel = \"k<T>\"", "kernal = \"k<T>\"", "reference.launch[0].kernal",
       "unknown field 'kernal' in reference.launch[0]; did you mean 'kernel'?"},
      {"kernel = \"k<T>\"", "kernel = \"k<T>(\"", "reference.launch[0].kernel",
       "is not a kernel name"},
      {"kernel = \"k<T>\"", "kernel = 3", "reference.launch[0].kernel",
       "expected a string, got an integer"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [1, 1, 1, 1]", "reference.launch[0].grid",
       "expected 1 to 3 entries, got 4"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = []", "reference.launch[0].grid",
       "expected 1 to 3 entries, got 0"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = \"R\"", "reference.launch[0].grid",
       "expected an array, got a string"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [1.5]", "reference.launch[0].grid[0]",
       "expected an integer expression (a string or an integer), got a float"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [\"R - 64\"]", "reference.launch[0].grid[0]",
       "grid[0] = 'R - 64' is 0, outside [1, 2147483647], for dims.public[0] (C=100, R=64)"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [\"i\"]", "reference.launch[0].grid[0]",
       "unknown name 'i' at column 1 (known: C, R, n)"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [\"eps\"]", "reference.launch[0].grid[0]",
       "unknown name 'eps'"},
      {"grid = [\"ceil_div(R, 128)\"]", "grid = [\"R / (C - 7) + 1\"]",
       "reference.launch[0].grid[0]", "division by zero at column 3 for dims.hidden[0] (C=7, R=3)"},
      {"block = [128]", "block = [128]\nrepeat = \"2\"\nshared = \"i - 1\"",
       "reference.launch[0].shared",
       "shared = 'i - 1' is -1, negative, for dims.public[0] (C=100, R=64), i=0"},
      {"block = [128]", "block = [128]\nrepeat = \"n - 9\"", "reference.launch[0].repeat",
       "repeat = 'n - 9' is -1, outside [0, 4096]"},
      {"block = [128]", "block = [128]\ncluster = [32]", "reference.launch[0].cluster[0]",
       "outside [1, 16]"},
      {"block = [128]", "block = [128, 1, 65]", "reference.launch[0].block[2]", "outside [1, 64]"},
      {"block = [128]", "block = [128]\ncooperative = 1", "reference.launch[0].cooperative",
       "expected true or false, got an integer"},
      {"args = [\"x\", \"y\", \"eps\", \"R\", \"C\"]", "args = [\"x\", \"y\", \"R * Q\"]",
       "reference.launch[0].args[2]", "unknown name 'Q' at column 5 (known: C, R, n)"},
      {"args = [\"x\", \"y\", \"eps\", \"R\", \"C\"]", "args = [\"x\", [\"y\"]]",
       "reference.launch[0].args[1]", "got an array"},
      {"args = [\"x\", \"y\", \"eps\", \"R\", \"C\"]", "", "reference.launch[0]",
       "missing field 'args' in reference.launch[0]"},
      {"value = \"1e-5\"", "value = \"tiny\"", "scalar[0].value", "'tiny' is not a number"},
      {"value = \"1e-5\"", "value = [1]", "scalar[0].value", "expected a number for dtype f32"},
      {"value = 8", "value = 8.5", "scalar[1].value", "expected an integer for dtype i32"},
      {"value = 8", "value = \"8.5\"", "scalar[1].value", "'8.5' is not an integer"},
      {"value = 8", "value = 3000000000", "scalar[1].value",
       "3000000000 does not fit in i32 [-2147483648, 2147483647]"},
      {"dtype = \"f32\"\nvalue = \"1e-5\"", "dtype = \"f16\"\nvalue = \"1e5\"", "scalar[0].value",
       "1e5 is beyond the largest finite f16 (65504)"},
      {"name = \"eps\"", "name = \"x\"", "input[0].name", "name 'x' is already used by scalar[0]"},
      {"name = \"eps\"", "name = \"R\"", "scalar[0].name", "name 'R' is already used by dims"},
      {"name = \"eps\"", "name = \"i\"", "scalar[0].name", "'i' is reserved"},
      {"name = \"eps\"", "name = \"2x\"", "scalar[0].name", "'2x' is not a valid name"},
      {"public = [{ R = 64, C = 100 }]", "public = [{ R = 64, C = -1 }]", "dims.public[0].C",
       "dim C = -1 is negative"},
      {"public = [{ R = 64, C = 100 }]", "public = [{ R = 64, C = \"100\" }]", "dims.public[0].C",
       "expected an integer, got a string"},
      {"public = [{ R = 64, C = 100 }]", "public = []", "dims.public",
       "at least one public shape set is needed"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7, K = 2 }]", "dims.hidden[0]",
       "dim 'K' is not in dims.public[0]"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7 }]\nhost = [{ R = 3 }]",
       "dims.host[0]", "missing dim 'C'"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7 }]\nhost = [{ R = 3, C = -1 }]",
       "dims.host[0].C", "dim C = -1 is negative"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [1, 8] }]", "dims.hidden_ranges[0]",
       "missing dim 'C' (a range gives every dim: a value or [lo, hi])"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [1, 8], C = 4, K = 1 }]",
       "dims.hidden_ranges[0].K", "dim 'K' is not in dims.public[0] (dims: C, R)"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [8, 1], C = 4 }]",
       "dims.hidden_ranges[0].R", "[8, 1] is not a range of dims (0 <= lo <= hi)"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [1, 2, 3], C = 4 }]",
       "dims.hidden_ranges[0].R", "a range is [lo, hi]: two integers"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [1, \"8\"], C = 4 }]",
       "dims.hidden_ranges[0].R", "expected an integer, got a string"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_ranges = [{ R = [1, 8], C = -4 }]",
       "dims.hidden_ranges[0].C", "[-4, -4] is not a range of dims"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_draws = 17", "dims.hidden_draws",
       "17 draws per range: between 1 and 16"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden_draws = 0", "dims.hidden_draws",
       "0 draws per range: between 1 and 16"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7 }]\nvary = [\"R\", \"Q\"]",
       "dims.vary[1]", "'Q' is not a dim (dims: C, R)"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7 }]\nvary = [\"R\", \"R\"]",
       "dims.vary[1]", "'R' is listed twice"},
      {"hidden = [{ R = 3, C = 7 }]", "hidden = [{ R = 3, C = 7 }]\nconstraints = [\"C > (\"]",
       "dims.constraints[0]", "expected a number, a name or '(' at column 6"},
      {"[dims]", "[dimz]", "dimz", "unknown field 'dimz' at the top level; did you mean 'dims'?"},
      {"name = \"y\"\ndtype = \"f32\"\nshape = [\"R\", \"C\"]",
       "name = \"y\"\ndtype = \"f32\"\nshape = [\"R\", \"C\"]\nslice = 2", "output[0].slice",
       "slice axis 2 is not an axis of a rank-2 output"},
      {"name = \"y\"\ndtype = \"f32\"", "name = \"y\"\ndtype = \"f32\"\nties = \"low\"",
       "output[0].ties", "ties applies to integer outputs"},
      {"name = \"y\"\ndtype = \"f32\"", "name = \"y\"\ndtype = \"f32\"\npolicy = \"relative(0)\"",
       "output[0].policy", "k must be a positive number"},
      {"name = \"y\"\ndtype = \"f32\"", "name = \"y\"\ndtype = \"f32\"\npolicy = 3",
       "output[0].policy", "expected a policy string or an inline table, got an integer"},
      {"name = \"y\"\ndtype = \"f32\"",
       "name = \"y\"\ndtype = \"f32\"\npolicy = { kind = \"relative\", rtol = 1.0 }",
       "output[0].policy.rtol", "policy 'relative' takes no 'rtol' (it takes: kind, expected, k)"},
      {"name = \"y\"\ndtype = \"f32\"",
       "name = \"y\"\ndtype = \"f32\"\npolicy = { kind = \"ulp\" }", "output[0].policy",
       "missing field 'n' in output[0].policy"},
      {"name = \"y\"\ndtype = \"f32\"",
       "name = \"y\"\ndtype = \"f32\"\npolicy = { kind = \"allclose\", expected = \"gold\" }",
       "output[0].policy.expected", "unknown value 'gold' (known: golden, reference)"},
      {"name = \"y\"\ndtype = \"f32\"",
       "name = \"y\"\ndtype = \"f32\"\npolicy = { kind = \"nearly\" }", "output[0].policy.kind",
       "unknown policy kind 'nearly'"},
      {"name = \"y\"\ndtype = \"f32\"", "name = \"y\"\ndtype = \"f32\"\npolicy = \"cosine(0.99)\"",
       "output[0].policy", "metric policy 'cosine(0.99)' belongs to tier 'approximate'"},
      {"tier = \"tolerance\"",
       "tier = \"exact\"\n[[output]]\nname = \"z\"\ndtype = \"f32\"\n"
       "shape = [1]\npolicy = \"relative\"",
       "output[0].policy", "tier 'exact' judges bit-identity; policy 'relative' contradicts it"},
      {"tier = \"tolerance\"", "tier = \"approximate\"", "output[0]",
       "output 'y' needs a policy: tier 'approximate' judges by a metric"},
      {"shape = [\"R\", \"C\"]\n\n[[output]]",
       "shape = [\"R\", \"C\"]\ndist = \"normal(0, 0)\"\n\n[[output]]", "input[0].dist",
       "the standard deviation must be positive"},
      {"shape = [\"R\", \"C\"]\n\n[[output]]",
       "shape = [\"R\", \"C\"]\ndist = 'file(\"missing.npy\")'\n\n[[output]]", "input[0].dist",
       "cannot read data file 'missing.npy'"},
      {"shape = [\"R\", \"C\"]\n\n[[output]]",
       "shape = [\"R\", \"C\"]\ndomain = \"real\"\n\n[[output]]", "input[0].domain",
       "unknown value 'real' (known: any, positive, nonnegative, unit)"},
      {"shape = [\"R\", \"C\"]\n\n[[output]]",
       "shape = [\"R\", \"C\"]\nspecials = [\"nan\", \"huge\"]\n\n[[output]]", "input[0].specials",
       "unknown special value 'huge' (known: nan, pos_inf, neg_inf, neg_zero, subnormal, "
       "dtype_max)"},
      {"shape = [\"R\", \"C\"]\n\n[[output]]", "shape = [\"R\", \"C - 50\"]\n\n[[output]]",
       "input[0].shape[1]",
       "shape of 'x' has a negative dim: shape[1] = 'C - 50' is -43 for dims.hidden[0]"},
      {"source = \"ref.cu\"", "source = \"ref.cu\"\nsourc = 1", "reference.sourc",
       "unknown field 'sourc' in reference; did you mean 'source'?"},
      {"source = \"ref.cu\"", "source = \"\"", "reference.source", "the source file name is empty"},
      {"[[reference.launch]]",
       "[golden]\nsource = \"missing_golden.cu\"\n[[golden.launch]]\n"
       "kernel = \"g\"\ngrid = [1]\nblock = [1]\nargs = []\n\n[[reference.launch]]",
       "golden.source", "cannot read golden source 'missing_golden.cu'"},
      {"name = \"t\"", "name = \"\"", "name", "the name must not be empty"},
      {"name = \"t\"\n", "", "", "missing field 'name' in the problem"},
      {"[[output]]\nname = \"y\"\ndtype = \"f32\"\nshape = [\"R\", \"C\"]\n", "", "",
       "missing field 'output' in the problem"},
      {"name = \"t\"", "name = \"t\"\nsigned_zero = \"loose\"", "signed_zero",
       "unknown value 'loose' (known: strict, equal)"},
      {"name = \"t\"", "name = \"t\"\nfloor_bytes = \"R * Z\"", "floor_bytes",
       "unknown name 'Z' at column 5 (known: C, R, n)"},
      {"name = \"t\"", "name = \"t\"\nmemory_limit = \"x * 4\"", "memory_limit",
       "unknown name 'x' at column 1 (known: C, R, n)"},
      {"name = \"t\"", "name = \"t\"\nallowed_options = \"-O3\"", "allowed_options",
       "expected an array, got a string"},
      {"name = \"t\"", "name = \"t\"\nnondeterministic = \"yes\"", "nondeterministic",
       "expected true or false, got a string"},
  };
  expect_errors(kBase, cases);
}

TEST(Problem, ScalarsAndRepeat) {
  // An integer scalar is usable in shapes; a repeated launch sees `i`.
  std::string t = replaced(kBase, "shape = [\"R\", \"C\"]\n\n[[output]]",
                           "shape = [\"R\", \"n * 2\"]\n\n[[output]]");
  t = replaced(t, "block = [128]", "block = [\"max(1, 64 >> 0)\"]");
  EXPECT_THROW(from_text(t), SpecError); // no shifts in the language
  t = replaced(t, "block = [\"max(1, 64 >> 0)\"]",
               "block = [\"next_pow2(i + 1)\"]\nrepeat = \"ceil_log2(C)\"");
  const Problem p = from_text(t);
  EXPECT_EQ(eval_shape(p.inputs[0].shape, shape_env(p, p.dims.public_sets[0].values)),
            (Shape{64, 16}));
  // bool scalars: true/false as booleans or strings.
  const std::string b =
      replaced(kBase, "dtype = \"i32\"\nvalue = 8", "dtype = \"bool\"\nvalue = true");
  EXPECT_EQ(from_text(b).scalars[1].as_int, 1);
  const std::string b2 =
      replaced(kBase, "dtype = \"i32\"\nvalue = 8", "dtype = \"u8\"\nvalue = \"255\"");
  EXPECT_EQ(from_text(b2).scalars[1].as_int, 255);
}

TEST(Problem, EvalShapeOverflow) {
  const Location where{"p.toml", "input[0].shape", 3, 1};
  const std::vector<Expr> shape = {Expr::parse("R", where), Expr::parse("R", where),
                                   Expr::parse("R", where)};
  EXPECT_EQ(eval_shape(shape, {{"R", 1000}}), (Shape{1000, 1000, 1000}));
  try {
    eval_shape(shape, {{"R", 10000000}}, "x", where);
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "p.toml:3:1: input[0].shape: shape of 'x' overflows 64 bits: [10000000, "
                           "10000000, 10000000]");
  }
  EXPECT_THROW(eval_shape(shape, {{"R", -1}}), SpecError);
  EXPECT_EQ(eval_shape({}, {}), Shape{});
}

// The fields export must keep; Locations and the text of defaulted policies may differ.
void expect_same_problem(const Problem& a, const Problem& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.summary, b.summary);
  EXPECT_EQ(a.tier, b.tier);
  EXPECT_EQ(a.nan, b.nan);
  EXPECT_EQ(a.signed_zero_strict, b.signed_zero_strict);
  EXPECT_EQ(a.allow_nondeterministic, b.allow_nondeterministic);
  auto opt_text = [](const std::optional<Expr>& e) { return e ? e->text() : std::string("-"); };
  EXPECT_EQ(opt_text(a.floor_bytes), opt_text(b.floor_bytes));
  EXPECT_EQ(opt_text(a.floor_flops), opt_text(b.floor_flops));
  EXPECT_EQ(opt_text(a.memory_limit), opt_text(b.memory_limit));
  EXPECT_EQ(a.allowed_options, b.allowed_options);
  EXPECT_EQ(a.forbid, b.forbid);
  ASSERT_EQ(a.baselines.size(), b.baselines.size());
  for (std::size_t i = 0; i < a.baselines.size(); ++i) {
    EXPECT_EQ(a.baselines[i].name, b.baselines[i].name);
    EXPECT_EQ(a.baselines[i].gpu, b.baselines[i].gpu);
    EXPECT_EQ(a.baselines[i].dims, b.baselines[i].dims);
    EXPECT_EQ(a.baselines[i].ms, b.baselines[i].ms);
  }
  auto texts = [](const std::vector<Expr>& v) {
    std::vector<std::string> out;
    for (const Expr& e : v)
      out.push_back(e.text());
    return out;
  };
  ASSERT_EQ(a.timed_baseline.has_value(), b.timed_baseline.has_value());
  if (a.timed_baseline) {
    const TimedBaseline &x = *a.timed_baseline, &y = *b.timed_baseline;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.builtin, y.builtin);
    EXPECT_EQ(x.tensors, y.tensors);
    ASSERT_EQ(x.sizes.size(), y.sizes.size());
    for (const auto& [role, e] : x.sizes)
      EXPECT_EQ(e.text(), y.sizes.at(role).text());
    ASSERT_EQ(x.plan.has_value(), y.plan.has_value());
    if (x.plan) {
      EXPECT_EQ(x.plan->path, y.plan->path);
      ASSERT_EQ(x.plan->launches.size(), y.plan->launches.size());
      for (std::size_t i = 0; i < x.plan->launches.size(); ++i)
        EXPECT_EQ(x.plan->launches[i].kernel, y.plan->launches[i].kernel);
    }
  }
  ASSERT_EQ(a.dims.public_sets.size(), b.dims.public_sets.size());
  for (std::size_t i = 0; i < a.dims.public_sets.size(); ++i)
    EXPECT_EQ(a.dims.public_sets[i].values, b.dims.public_sets[i].values);
  EXPECT_TRUE(b.dims.hidden_sets.empty());
  EXPECT_EQ(a.dims.vary, b.dims.vary);
  EXPECT_EQ(texts(a.dims.constraints), texts(b.dims.constraints));
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    const InputSpec &x = a.inputs[i], &y = b.inputs[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(texts(x.shape), texts(y.shape));
    EXPECT_EQ(x.dist.kind, y.dist.kind);
    EXPECT_EQ(x.dist.a, y.dist.a);
    EXPECT_EQ(x.dist.b, y.dist.b);
    EXPECT_EQ(x.dist.file, y.dist.file);
    EXPECT_EQ(x.domain, y.domain);
  }
  ASSERT_EQ(a.scalars.size(), b.scalars.size());
  for (std::size_t i = 0; i < a.scalars.size(); ++i) {
    EXPECT_EQ(a.scalars[i].name, b.scalars[i].name);
    EXPECT_EQ(a.scalars[i].dtype, b.scalars[i].dtype);
    EXPECT_EQ(a.scalars[i].value, b.scalars[i].value);
    EXPECT_EQ(a.scalars[i].as_double, b.scalars[i].as_double);
    EXPECT_EQ(a.scalars[i].as_int, b.scalars[i].as_int);
  }
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    const OutputSpec &x = a.outputs[i], &y = b.outputs[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(texts(x.shape), texts(y.shape));
    EXPECT_EQ(x.slice, y.slice);
    EXPECT_EQ(x.init, y.init);
    EXPECT_EQ(x.ties, y.ties);
    const PolicySpec &p = x.policy, &q = y.policy;
    EXPECT_EQ(p.kind, q.kind);
    EXPECT_EQ(p.expected, q.expected);
    EXPECT_EQ(p.k, q.k);
    EXPECT_EQ(p.rtol, q.rtol);
    EXPECT_EQ(p.atol, q.atol);
    EXPECT_EQ(p.ulps, q.ulps);
    EXPECT_EQ(p.threshold, q.threshold);
    EXPECT_EQ(p.max_fraction, q.max_fraction);
    EXPECT_EQ(p.metric, q.metric);
    EXPECT_EQ(p.metric_threshold, q.metric_threshold);
    EXPECT_EQ(p.topk, q.topk);
  }
  auto same_source = [&](const KernelSource& x, const KernelSource& y) {
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.text, y.text);
    ASSERT_EQ(x.launches.size(), y.launches.size());
    for (std::size_t i = 0; i < x.launches.size(); ++i) {
      const LaunchSpec &l = x.launches[i], &m = y.launches[i];
      EXPECT_EQ(l.kernel, m.kernel);
      EXPECT_EQ(texts(l.grid), texts(m.grid));
      EXPECT_EQ(texts(l.block), texts(m.block));
      EXPECT_EQ(l.shared.text(), m.shared.text());
      EXPECT_EQ(texts(l.cluster), texts(m.cluster));
      EXPECT_EQ(l.cooperative, m.cooperative);
      EXPECT_EQ(l.args, m.args);
      ASSERT_EQ(l.arg_exprs.size(), m.arg_exprs.size());
      for (std::size_t k = 0; k < l.arg_exprs.size(); ++k)
        EXPECT_EQ(opt_text(l.arg_exprs[k]), opt_text(m.arg_exprs[k]));
      EXPECT_EQ(opt_text(l.repeat), opt_text(m.repeat));
    }
  };
  same_source(a.reference, b.reference);
  ASSERT_EQ(a.golden.has_value(), b.golden.has_value());
  if (a.golden) same_source(*a.golden, *b.golden);
}

// memory_limit, and [[baseline]]: a time recorded per GPU model and public shape set, found by
// both; refused for a shape set that is not public (it would name a hidden one), a time that is
// not positive, a missing or unknown field and a second entry for the same GPU and dims; both
// exported as read.
TEST(Problem, RecordedBaselines) {
  const std::string entry = R"toml(
[[baseline]]
name = "vendor kernel 1.2"
gpu = "NVIDIA H200"
dims = { R = 64, C = 100 }
ms = 0.25
)toml";
  const Problem p = from_text(replaced(kBase + entry, "name = \"t\"",
                                      "name = \"t\"\nmemory_limit = \"R * C * 12\""));
  ASSERT_TRUE(p.memory_limit);
  EXPECT_EQ(p.memory_limit->eval(Env{{"C", 100}, {"R", 64}}), 76800);
  ASSERT_EQ(p.baselines.size(), 1u);
  const RecordedBaseline* b = p.find_baseline("NVIDIA H200", Env{{"C", 100}, {"R", 64}});
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name, "vendor kernel 1.2");
  EXPECT_EQ(b->ms, 0.25);
  EXPECT_EQ(p.find_baseline("NVIDIA H100 80GB HBM3", Env{{"C", 100}, {"R", 64}}), nullptr);
  EXPECT_EQ(p.find_baseline("NVIDIA H200", Env{{"C", 7}, {"R", 3}}), nullptr);
  const Problem exported = from_text(export_problem_toml(p));
  expect_same_problem(p, exported);

  const BadCase cases[] = {
      {"dims = { R = 64, C = 100 }", "dims = { R = 3, C = 7 }", "baseline[0].dims",
       "not one of the public shape sets"},
      {"dims = { R = 64, C = 100 }", "dims = { R = 64 }", "baseline[0].dims",
       "not one of the public shape sets"},
      {"ms = 0.25", "ms = 0", "baseline[0].ms", "a time must be a positive number"},
      {"ms = 0.25", "ms = \"fast\"", "baseline[0].ms", "expected a number, got a string"},
      {"gpu = \"NVIDIA H200\"\n", "", "baseline[0]", "missing field 'gpu' in baseline[0]"},
      {"gpu = \"NVIDIA H200\"", "gpu = \"\"", "baseline[0].gpu", "must not be empty"},
      {"ms = 0.25", "ms = 0.25\nshape = \"public0\"", "baseline[0].shape",
       "unknown field 'shape' in baseline[0]"},
      {"ms = 0.25\n", "ms = 0.25\n" + entry, "baseline[1]",
       "a second baseline for 'NVIDIA H200' on these dims"},
  };
  expect_errors(kBase + entry, cases);
}

TEST(Problem, TimedBaselines) {
  // y[R, C] = x[R, C] w[C, C]: cuBLAS's GEMM on the problem's own tensors.
  const std::string with_w = replaced(kBase, "[[output]]", R"toml([[input]]
name = "w"
dtype = "f32"
shape = ["C", "C"]

[[output]])toml");
  const std::string gemm = R"toml(
[[baseline]]
name = "cuBLAS SGEMM"
builtin = "cublas:gemm"
args = { a = "x", b = "w", c = "y", m = "R", n = "C", k = "C" }
)toml";
  const Problem p = from_text(with_w + gemm);
  ASSERT_TRUE(p.timed_baseline);
  EXPECT_EQ(p.timed_baseline->name, "cuBLAS SGEMM");
  EXPECT_EQ(p.timed_baseline->builtin, "cublas:gemm");
  EXPECT_FALSE(p.timed_baseline->plan);
  EXPECT_EQ(p.timed_baseline->tensors.at("b"), "w");
  EXPECT_EQ(p.timed_baseline->sizes.at("k").text(), "C");
  EXPECT_TRUE(p.baselines.empty()); // no recorded one
  expect_same_problem(p, from_text(export_problem_toml(p)));
  EXPECT_EQ(p.timed_baseline->output_tensor(), "y");
  const GemmCall call = p.timed_baseline->gemm_call(Env{{"C", 100}, {"R", 64}});
  EXPECT_EQ(call.tensors, (std::array<std::string, 3>{"x", "w", "y"}));
  EXPECT_EQ(call.roles, (std::array<std::string, 3>{"a", "b", "c"}));
  EXPECT_EQ((std::array<std::int64_t, 3>{call.m, call.n, call.k}),
            (std::array<std::int64_t, 3>{64, 100, 100}));

  // gemv, u[R] = x[R, C] v[C]: cuBLAS's GEMM with v as a C x 1 matrix.
  const std::string with_v = replaced(kBase, "[[output]]", R"toml([[input]]
name = "v"
dtype = "f32"
shape = ["C"]

[[output]]
name = "u"
dtype = "f32"
shape = ["R"]

[[output]])toml");
  const std::string gemv_entry = R"toml(
[[baseline]]
name = "cuBLAS SGEMV"
builtin = "cublas:gemv"
args = { a = "x", x = "v", y = "u", m = "R", n = "C" }
)toml";
  const Problem g = from_text(with_v + gemv_entry);
  ASSERT_TRUE(g.timed_baseline);
  EXPECT_EQ(g.timed_baseline->output_tensor(), "u");
  const GemmCall gemv = g.timed_baseline->gemm_call(Env{{"C", 100}, {"R", 64}});
  EXPECT_EQ(gemv.roles, (std::array<std::string, 3>{"a", "x", "y"}));
  EXPECT_EQ(gemv.tensors, (std::array<std::string, 3>{"x", "v", "u"}));
  EXPECT_EQ((std::array<std::int64_t, 3>{gemv.m, gemv.n, gemv.k}),
            (std::array<std::int64_t, 3>{64, 1, 100}));
  expect_same_problem(g, from_text(export_problem_toml(g)));
  // x is the vector of length n: a y of the wrong length is named by its gemv role.
  const SpecError short_y = error_of(replaced(with_v, "name = \"u\"\ndtype = \"f32\"\nshape = [\"R\"]",
                                              "name = \"u\"\ndtype = \"f32\"\nshape = [\"C\"]") +
                                     gemv_entry);
  EXPECT_NE(std::string(short_y.what()).find("y 'u' holds 100 elements where cublas:gemv needs 64"),
            std::string::npos)
      << short_y.what();

  // A launch plan of its own, beside a recorded time.
  const std::string plan = R"toml(
[[baseline]]
name = "vendor kernel"
source = "vendor.cu"

[[baseline.launch]]
kernel = "k<T>"
grid = ["ceil_div(R, 256)"]
block = [256]
args = ["x", "y", "eps", "R", "C"]

[[baseline]]
name = "recorded"
gpu = "NVIDIA H200"
dims = { R = 64, C = 100 }
ms = 0.25
)toml";
  const Problem q = from_text(kBase + plan);
  ASSERT_TRUE(q.timed_baseline && q.timed_baseline->plan);
  EXPECT_EQ(q.timed_baseline->plan->launches.size(), 1u);
  EXPECT_EQ(q.timed_baseline->plan->path.filename(), "vendor.cu");
  EXPECT_EQ(q.baselines.size(), 1u);
  const std::string exported = export_problem_toml(q);
  expect_same_problem(q, from_text(exported));
  EXPECT_NE(exported.find("[[baseline.launch]]"), std::string::npos);

  const BadCase cases[] = {
      {"cublas:gemm", "cublas:trsm", "baseline[0].builtin", "unknown built-in 'cublas:trsm'"},
      {"a = \"x\"", "a = \"nope\"", "baseline[0].args.a", "'nope' is not one of the problem's inputs"},
      {"c = \"y\"", "c = \"x\"", "baseline[0].args.c", "'x' is not one of the problem's outputs"},
      {"k = \"C\"", "k = \"R\"", "baseline[0]", "holds 6400 elements where cublas:gemm needs 4096"},
      {"k = \"C\"", "k = \"C\", z = 1", "baseline[0].args.z", "unknown field 'z'"},
      {"k = \"C\"", "k = \"Q\"", "baseline[0].args.k", "'Q'"},
      {"m = \"R\"", "m = \"R - 64\"", "baseline[0].args.m", "a size must be at least 1"},
      {"name = \"cuBLAS SGEMM\"\n", "", "baseline[0]", "missing field 'name'"},
      {"builtin = \"cublas:gemm\"", "builtin = \"cublas:gemm\"\nsource = \"v.cu\"", "baseline[0]",
       "either 'source' (a launch plan) or 'builtin', not both"},
      {"args = { a", "ms = 1\nargs = { a", "baseline[0].ms", "unknown field 'ms'"},
  };
  expect_errors(with_w + gemm, cases);
  // The operands' dtypes: f32 throughout here, so an f16 w does not fit.
  const SpecError mixed = error_of(replaced(with_w + gemm, "name = \"w\"\ndtype = \"f32\"",
                                            "name = \"w\"\ndtype = \"f16\""));
  EXPECT_NE(std::string(mixed.what()).find("takes f32 or f64 throughout"), std::string::npos)
      << mixed.what();
  const SpecError second = error_of(with_w + gemm + gemm);
  EXPECT_EQ(second.where().field, "baseline[1]");
  EXPECT_NE(std::string(second.what()).find("a second timed baseline"), std::string::npos);
}

// An output whose init is a distribution is an in-out tensor; may_require lists what
// candidates may declare.
TEST(Problem, InOutTensorsAndMayRequire) {
  std::string toml = replaced(kBase, "shape = [\"R\", \"C\"]\n\n[reference]",
                              "shape = [\"R\", \"C\"]\ninit = \"uniform(-1, 1)\"\n\n[reference]");
  toml = replaced(toml, "tier = \"tolerance\"",
                  "tier = \"tolerance\"\nmay_require = [\"C % 4 == 0\", \"aligned(x, 16)\"]");
  const Problem p = from_text(toml);
  EXPECT_EQ(p.outputs[0].init, InitRule::drawn);
  EXPECT_EQ(p.outputs[0].initial.kind, Distribution::Kind::uniform);
  EXPECT_EQ(p.outputs[0].initial.a, -1);
  ASSERT_EQ(p.may_require.size(), 2u);
  EXPECT_EQ(p.may_require[0].normalized(), "C%4==0");
  EXPECT_TRUE(p.may_require[0].holds({{"C", 100}}));
  EXPECT_FALSE(p.may_require[0].holds({{"C", 101}}));
  EXPECT_EQ(p.may_require[1].tensor, "x");
  EXPECT_EQ(p.may_require[1].alignment, 16);
  EXPECT_TRUE(p.may_require[1].holds({}));
  const std::string exported = export_problem_toml(p);
  EXPECT_NE(exported.find("init = \"uniform(-1, 1)\""), std::string::npos);
  EXPECT_NE(exported.find("may_require = [\"C % 4 == 0\", \"aligned(x, 16)\"]"), std::string::npos);

  const BadCase bad[] = {
      {"shape = [\"R\", \"C\"]\n\n[reference]",
       "shape = [\"R\", \"C\"]\ninit = \"ones\"\n\n[reference]", "output[0].init",
       "unknown value 'ones' (known: poison, zero, or a distribution such as \"normal(0, 1)\" "
       "for an in-out tensor)"},
      {"shape = [\"R\", \"C\"]\n\n[reference]",
       "shape = [\"R\", \"C\"]\ninit = \"file(\\\"w.npy\\\")\"\n\n[reference]", "output[0].init",
       "an in-out tensor's initial values are drawn, not read: file() is for inputs"},
      {"tier = \"tolerance\"", "tier = \"tolerance\"\nmay_require = [\"K % 4 == 0\"]",
       "may_require[0]", "unknown name 'K'"},
      {"tier = \"tolerance\"", "tier = \"tolerance\"\nmay_require = [\"aligned(z, 16)\"]",
       "may_require[0]", "'z' is not a tensor"},
      {"tier = \"tolerance\"", "tier = \"tolerance\"\nmay_require = [\"aligned(x, 512)\"]",
       "may_require[0]", "kjudge's buffers are 256-byte aligned; 512 is more than it guarantees"},
      {"tier = \"tolerance\"", "tier = \"tolerance\"\nmay_require = [\"aligned(x, 12)\"]",
       "may_require[0]", "N must be a power of two"},
  };
  for (const BadCase& c : bad) {
    SCOPED_TRACE(c.to);
    const SpecError e = error_of(replaced(kBase, c.from, c.to));
    EXPECT_EQ(e.where().field, c.field);
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
  }
}

// [[case]]: adopted cases (kjudge mutate --emit-cases writes them), exported as they were
// read, refused where they name no float input or leave its domain.
TEST(Problem, AdoptedCases) {
  const std::string toml = kBase + "\n[[case]]\nseed = 3\n\n[[case]]\ninput = \"x\"\n"
                                   "scale = 1.0\noffset = -8.5\n";
  const Problem p = from_text(toml);
  ASSERT_EQ(p.adopted_cases.size(), 2u);
  EXPECT_EQ(p.adopted_cases[0].seed, 3u);
  EXPECT_TRUE(p.adopted_cases[0].input.empty());
  EXPECT_EQ(p.adopted_cases[1].input, "x");
  EXPECT_EQ(p.adopted_cases[1].scale, 1.0);
  EXPECT_EQ(p.adopted_cases[1].offset, -8.5);
  EXPECT_NE(p.hash, from_text(kBase).hash); // an adopted case changes every case id
  const std::string exported = export_problem_toml(p);
  EXPECT_NE(exported.find("\n[[case]]\nseed = 3\n\n[[case]]\nseed = 0\ninput = \"x\"\n"
                          "scale = 1.0\noffset = -8.5\n"),
            std::string::npos)
      << exported;
  const Problem q = parse_problem_text(exported, p.dir, "exported.toml", fake_read);
  ASSERT_EQ(q.adopted_cases.size(), 2u);
  EXPECT_EQ(q.adopted_cases[1].offset, -8.5);

  const std::string positive = replaced(kBase, "shape = [\"R\", \"C\"]\n\n[[output]]",
                                        "shape = [\"R\", \"C\"]\ndomain = \"positive\"\n\n[[output]]");
  const struct {
    std::string base, table, field, message;
  } bad[] = {
      {kBase, "sed = 1", "case[0].sed", "unknown field 'sed' in case[0]; did you mean 'seed'?"},
      {kBase, "seed = -1", "case[0].seed", "a seed is in [0, 65535]"},
      {kBase, "seed = 1.5", "case[0].seed", "expected an integer, got a float"},
      {kBase, "offset = 2.0", "case[0]", "a scale or an offset needs the input it applies to"},
      {kBase, "input = \"z\"", "case[0].input", "no input named 'z'"},
      {kBase, "input = \"x\"\nscale = inf", "case[0].scale", "must be finite"},
      {positive, "input = \"x\"\noffset = -1.0", "case[0]",
       "x*1-1 leaves input 'x''s domain positive"},
      {positive, "input = \"x\"\nscale = -1.0", "case[0]", "leaves input 'x''s domain positive"},
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(c.table);
    const SpecError e = error_of(c.base + "\n[[case]]\n" + c.table + "\n");
    EXPECT_EQ(e.where().field, c.field);
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
  }
}

TEST(Export, RoundTrips) {
  for (const fs::path& dir :
       {kProblems / "softmax", kProblems / "vector_add", kCases / "good" / "full"}) {
    SCOPED_TRACE(dir.string());
    const Problem p = load_problem(dir);
    const std::string toml = export_problem_toml(p);
    EXPECT_EQ(toml.find("hidden ="), std::string::npos);
    const Problem q = parse_problem_text(toml, p.dir, "exported.toml");
    expect_same_problem(p, q);
    EXPECT_EQ(export_problem_toml(q), toml); // a fixed point
  }
}

TEST(Export, EscapesAndMetrics) {
  std::string t = replaced(kBase, "tier = \"tolerance\"",
                           "tier = \"approximate\"\nsummary = \"a \\\"quoted\\\" \\\\ tab\\t\"");
  t = replaced(
      t, "name = \"y\"\ndtype = \"f32\"",
      "name = \"y\"\ndtype = \"f32\"\npolicy = { kind = \"topk\", k = 5, threshold = 0.9 }");
  const Problem p = from_text(t);
  EXPECT_EQ(p.summary, "a \"quoted\" \\ tab\t");
  const Problem q = from_text(export_problem_toml(p));
  expect_same_problem(p, q);
  EXPECT_EQ(q.outputs[0].policy.topk, 5);
}

} // namespace
} // namespace kj
