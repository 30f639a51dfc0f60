// Problems built directly in C++ for the validate and cases tests, so each test states exactly
// the dims, constraints, tensors and reference it exercises without going through problem.toml.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kjudge/spec.hpp"

namespace kj::test {

inline Location toml_at(std::string field) { return Location{"problem.toml", std::move(field), 0, 0}; }

inline Expr expr(std::string_view text, std::string field = "test") {
  return Expr::parse(text, toml_at(std::move(field)));
}

inline std::vector<Expr> exprs(std::initializer_list<std::string_view> texts) {
  std::vector<Expr> out;
  for (auto t : texts) out.push_back(expr(t));
  return out;
}

class ProblemBuilder {
public:
  ProblemBuilder() {
    p_.name = "test";
    p_.dir = "problems/test";
    p_.hash = "ab12cd34" + std::string(56, '0');
    p_.reference.path = "reference.cu";
  }

  ProblemBuilder& public_set(Env dims) {
    p_.dims.public_sets.push_back(
        DimSet{std::move(dims), toml_at(fmt::format("dims.public[{}]", p_.dims.public_sets.size()))});
    return *this;
  }
  ProblemBuilder& hidden_set(Env dims) {
    p_.dims.hidden_sets.push_back(
        DimSet{std::move(dims), toml_at(fmt::format("dims.hidden[{}]", p_.dims.hidden_sets.size()))});
    return *this;
  }
  ProblemBuilder& hidden_range(std::map<std::string, std::pair<std::int64_t, std::int64_t>> b,
                               int draws = 2) {
    p_.dims.hidden_ranges.push_back(DimRange{
        std::move(b), toml_at(fmt::format("dims.hidden_ranges[{}]", p_.dims.hidden_ranges.size()))});
    p_.dims.hidden_draws = draws;
    return *this;
  }
  ProblemBuilder& vary(std::vector<std::string> dims) {
    p_.dims.vary = std::move(dims);
    return *this;
  }
  ProblemBuilder& constraint(std::string_view text) {
    p_.dims.constraints.push_back(
        expr(text, fmt::format("dims.constraints[{}]", p_.dims.constraints.size())));
    return *this;
  }
  ProblemBuilder& input(std::string name, DType dtype, std::initializer_list<std::string_view> shape,
                        Domain domain = Domain::any) {
    InputSpec in;
    in.name = std::move(name);
    in.dtype = dtype;
    in.shape = exprs(shape);
    in.dist.text = "normal(0, 1)";
    in.domain = domain;
    in.where = toml_at(fmt::format("input[{}]", p_.inputs.size()));
    p_.inputs.push_back(std::move(in));
    return *this;
  }
  ProblemBuilder& output(std::string name, DType dtype,
                         std::initializer_list<std::string_view> shape) {
    OutputSpec out;
    out.name = std::move(name);
    out.dtype = dtype;
    out.shape = exprs(shape);
    out.where = toml_at(fmt::format("output[{}]", p_.outputs.size()));
    p_.outputs.push_back(std::move(out));
    return *this;
  }
  ProblemBuilder& scalar(std::string name, DType dtype, std::string value) {
    ScalarSpec s;
    s.name = std::move(name);
    s.dtype = dtype;
    s.value = std::move(value);
    s.as_double = std::stod(s.value);
    s.as_int = static_cast<std::int64_t>(s.as_double);
    s.where = toml_at(fmt::format("scalar[{}]", p_.scalars.size()));
    p_.scalars.push_back(std::move(s));
    return *this;
  }
  ProblemBuilder& reference(std::string source) {
    p_.reference.text = std::move(source);
    return *this;
  }
  ProblemBuilder& launch(std::string kernel, std::vector<std::string> args,
                         std::initializer_list<std::string_view> grid = {"1"},
                         std::initializer_list<std::string_view> block = {"256"}) {
    p_.reference.launches.push_back(make_launch(std::move(kernel), std::move(args), grid, block,
                                                p_.reference.launches.size()));
    return *this;
  }

  static LaunchSpec make_launch(std::string kernel, std::vector<std::string> args,
                                std::initializer_list<std::string_view> grid,
                                std::initializer_list<std::string_view> block, std::size_t index) {
    LaunchSpec l;
    l.kernel = std::move(kernel);
    l.args = std::move(args);
    l.grid = exprs(grid);
    l.block = exprs(block);
    l.where = toml_at(fmt::format("reference.launch[{}]", index));
    return l;
  }

  Problem build() const { return p_; }
  Problem& get() { return p_; }

private:
  Problem p_;
};

// softmax of docs/design.md, with a clean templated reference.
inline const char* clean_softmax_reference() {
  return R"(#include "kjudge/device.cuh"
// A row-wise softmax, sequential in kj::acc_t<T>: 1.0f in a comment is fine.
template <typename T>
__device__ T row_max(const T* row, int C) {
  kj::acc_t<T> m = row[0];
  for (int c = 1; c < C; ++c) m = kj::max(m, kj::acc_t<T>(row[c]));
  return T(m);
}

template <typename T>
__global__ void softmax_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  const int r = blockIdx.x;
  if (r >= R || threadIdx.x != 0) return;
  const char* note = "expf(1.0f) in a string";
  (void)note;
  const T* row = x + static_cast<long long>(r) * C;
  kj::acc_t<T> m = row_max(row, C), sum = kj::c<T>(0.0);
  for (int c = 0; c < C; ++c) sum += kj::exp(kj::acc_t<T>(row[c]) - m);
  for (int c = 0; c < C; ++c) y[r * C + c] = T(kj::exp(kj::acc_t<T>(row[c]) - m) / sum);
  double buf = 1.0;  // buf has an f, 1.0 is a double
  (void)buf;
}
)";
}

inline ProblemBuilder softmax_problem() {
  ProblemBuilder b;
  b.public_set({{"R", 4096}, {"C", 4096}})
      .public_set({{"R", 128}, {"C", 1000}})
      .hidden_set({{"R", 3}, {"C", 4099}})
      .vary({"R", "C"})
      .constraint("C >= 1")
      .input("x", DType::f32, {"R", "C"})
      .output("y", DType::f32, {"R", "C"})
      .reference(clean_softmax_reference())
      .launch("softmax_ref<T>", {"x", "y", "R", "C"}, {"R"}, {"256"});
  return b;
}

}  // namespace kj::test
