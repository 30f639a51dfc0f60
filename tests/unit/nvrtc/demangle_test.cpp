// demangled_param_types on the shapes the demangler produces: templates with commas, function
// pointers, anonymous namespaces, parenthesised template arguments, arrays and empty lists.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/nvrtc.hpp"

namespace {

using Types = std::vector<std::string>;

TEST(DemangledParamTypes, Plain) {
  EXPECT_EQ(kj::demangled_param_types("void k<4>(float const*, float*, int, int)"),
            (Types{"float const*", "float*", "int", "int"}));
  EXPECT_EQ(kj::demangled_param_types("k(float*)"), (Types{"float*"}));
}

TEST(DemangledParamTypes, EmptyAndVoid) {
  EXPECT_EQ(kj::demangled_param_types("void k()"), Types{});
  EXPECT_EQ(kj::demangled_param_types("void k(void)"), Types{});
  EXPECT_EQ(kj::demangled_param_types("add"), Types{});
  EXPECT_EQ(kj::demangled_param_types(""), Types{});
}

TEST(DemangledParamTypes, TemplateArgumentsWithCommas) {
  EXPECT_EQ(kj::demangled_param_types(
                "void k<Tensor<float, 2>, 3>(Tensor<float, 2>, Map<int, Pair<int, long> >*, int)"),
            (Types{"Tensor<float, 2>", "Map<int, Pair<int, long> >*", "int"}));
}

TEST(DemangledParamTypes, FunctionPointers) {
  EXPECT_EQ(kj::demangled_param_types("void k(void (*)(int, float), int (*)(), char)"),
            (Types{"void (*)(int, float)", "int (*)()", "char"}));
}

TEST(DemangledParamTypes, AnonymousNamespace) {
  EXPECT_EQ(kj::demangled_param_types(
                "void (anonymous namespace)::k<(anonymous namespace)::S>((anonymous namespace)::S "
                "const*, int)"),
            (Types{"(anonymous namespace)::S const*", "int"}));
}

TEST(DemangledParamTypes, ParenthesisedTemplateExpressions) {
  // The demangler puts `>` inside parentheses in template arguments.
  EXPECT_EQ(kj::demangled_param_types("void k<((3)>(2))>(A<((3)>(2))>, B<(1)<(2)>*)"),
            (Types{"A<((3)>(2))>", "B<(1)<(2)>*"}));
}

TEST(DemangledParamTypes, ArraysAndReferences) {
  EXPECT_EQ(kj::demangled_param_types("void k(float (*) [4], int (&) [2, 3])"),
            (Types{"float (*) [4]", "int (&) [2, 3]"}));
}

} // namespace
