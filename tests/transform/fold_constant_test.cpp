// FoldConstant: calls on constants evaluated with the reference kernels.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

TEST(FoldConstant, FoldsChainsOfConstantCalls) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2), float32]) {
  %0 = add(1f, 2f);
  %1 = multiply(%0, const([1, 2], shape=(2), dtype=float32));
  %2 = negative(%1);
  add(%x, %2)
}
)");
  EXPECT_EQ(print(fold_constant(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  add(%x, const([-3, -6], shape=(2), dtype=float32))
}
)");
}

TEST(FoldConstant, FoldsThroughTuplesAndTupleFields) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2), int64]) {
  %0 = split(const([1, 2, 3, 4], shape=(4), dtype=int64), sections=2);
  %1 = %0.1;
  %2 = %0.0;
  %3 = (%1, %2);
  %4 = concatenate(%3);
  %5 = (%x, %4);
  %6 = %5.1;
  subtract(%6, 1i64)
}
)");
  EXPECT_EQ(print(fold_constant(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2), int64]) -> Tensor[(4), int64] {
  const([2, 3, 0, 1], shape=(4), dtype=int64)
}
)");
}

TEST(FoldConstant, InlinesLetBoundConstants) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  let %c = add(1.5f, 1.5f);
  multiply(%x, %c)
}
)");
  EXPECT_EQ(print(fold_constant(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  multiply(%x, 3f)
}
)");
}

// In binding blocks a binding that folds disappears and its uses see the constant.
TEST(FoldConstant, FoldsBindingsOfDataflowBlocks) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2), float32]) {
  dataflow {
    %c = add(1f, 2f);
    %d = multiply(%c, 2f);
    %y = multiply(%x, %d);
    output(%y);
  }
  %y
}
)");
  EXPECT_EQ(print(fold_constant(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  dataflow {
    %y = multiply(%x, 6f);
    output(%y);
  }
  %y
}
)");
}

// Compiled code, training-time randomness, results above the size limit and fused groups
// stay as they are.
TEST(FoldConstant, KeepsWhatMustNotBeFolded) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32], Tensor[(4), float32], Tensor[(4), float32]) {
  %0 = call_dps_packed("env.double", (const([1, 2, 3, 4], shape=(4), dtype=float32)), out=Tensor[(4), float32]);
  %1 = nn.dropout(const([1, 2, 3, 4], shape=(4), dtype=float32));
  %2 = %1.0;
  %3 = fn (%p0: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
    add(%p0, 1f)
  };
  %4 = %3(const([1, 2, 3, 4], shape=(4), dtype=float32));
  %5 = add(%x, 1f);
  (%0, %2, %4, %5)
}
)";
  ir::IRModule mod = parse(text);
  EXPECT_EQ(print(fold_constant(mod)), text);

  // 4 float32 are 16 bytes: with a limit of 15 the add stays, with 16 it folds.
  ir::IRModule sized = parse(R"(
def @main() {
  add(const([1, 2, 3, 4], shape=(4), dtype=float32), 1f)
}
)");
  EXPECT_NE(print(fold_constant(sized, 15)).find("add("), std::string::npos);
  EXPECT_EQ(print(fold_constant(sized, 16)), R"(#[version = "0.0.5"]
def @main() -> Tensor[(4), float32] {
  const([2, 3, 4, 5], shape=(4), dtype=float32)
}
)");
}

// A module with nothing to fold comes back with the same body.
TEST(FoldConstant, LeavesUnfoldableModulesAlone) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  add(%0, 1f)
}
)");
  EXPECT_EQ(fold_constant(mod).get_function("main")->body, mod.get_function("main")->body);
}

// Batch norm with parameter statistics: after binding, SimplifyInference's arithmetic folds
// into two constants and the outputs stay those of the reference batch_norm.
TEST(FoldConstant, FoldsBatchNormArithmeticAfterBinding) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4, 4), float32], %g: Tensor[(3), float32], %b: Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  %0.0
}
)");
  std::vector<std::pair<std::string, Tensor>> params = {
      {"g", testing::random_tensor({3}, 1)},
      {"b", testing::random_tensor({3}, 2)},
      {"m", testing::random_tensor({3}, 3)},
      {"v", testing::random_tensor({3}, 4, 0.5, 2.0)}};
  ir::IRModule folded = fold_constant(simplify_inference(bind_params(mod, params)));
  std::string text = print(folded);
  EXPECT_EQ(text.find("rsqrt"), std::string::npos) << text;
  EXPECT_EQ(text.find("expand_dims"), std::string::npos) << text;
  EXPECT_NE(text.find("%0 = multiply(%x, const(["), std::string::npos) << text;

  Tensor x = testing::random_tensor({2, 3, 4, 4}, 5);
  std::vector<Tensor> before_inputs = {x};
  for (const auto& [name, t] : params) before_inputs.push_back(t);
  testing::expect_same_outputs(mod, folded, before_inputs, {x});
}

}  // namespace
}  // namespace anvil::transform
