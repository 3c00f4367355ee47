// EliminateCommonSubexpr: equal calls on the same arguments merged into the first.
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// The two relus are equal, which makes the two adds equal too once their arguments merge.
TEST(EliminateCommonSubexpr, MergesEqualSubgraphs) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 4), float32]) {
  %0 = nn.relu(%x);
  %1 = nn.relu(%x);
  %2 = add(%0, 1f);
  %3 = add(%1, 1f);
  multiply(%2, %3)
}
)");
  ir::IRModule after = eliminate_common_subexpr(mod);
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.relu(%x);
  %1 = add(%0, 1f);
  multiply(%1, %1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

// Different attrs, different constants or different ops keep calls apart.
TEST(EliminateCommonSubexpr, KeepsCallsThatDiffer) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 4, 4), float32]) -> (Tensor[(1, 4, 2, 2), float32], Tensor[(1, 4, 3, 3), float32], Tensor[(1, 4, 4, 4), float32], Tensor[(1, 4, 4, 4), float32], Tensor[(1, 4, 4, 4), float32]) {
  %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
  %1 = nn.max_pool2d(%x, pool_size=[2, 2]);
  %2 = add(%x, 1f);
  %3 = add(%x, 2f);
  %4 = subtract(%x, 1f);
  (%0, %1, %2, %3, %4)
}
)";
  EXPECT_EQ(print(eliminate_common_subexpr(parse(text))), text);
}

// Attrs compare by value, whether spelled out or left at their defaults; small constants
// compare by content; tuple fields of the same tuple merge.
TEST(EliminateCommonSubexpr, ComparesAttrsAndSmallConstantsByValue) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 4), float32]) {
  %0 = nn.softmax(%x);
  %1 = nn.softmax(%x, axis=-1);
  %2 = add(%x, const([1, 2, 3, 4], shape=(4), dtype=float32));
  %3 = add(%x, const([1, 2, 3, 4], shape=(4), dtype=float32));
  %4 = split(%x, sections=2, axis=1);
  %5 = %4.0;
  %6 = %4.0;
  (%0, %1, %2, %3, %5, %6)
}
)");
  EXPECT_EQ(print(eliminate_common_subexpr(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32]) -> (Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32]) {
  %0 = nn.softmax(%x);
  %1 = add(%x, const([1, 2, 3, 4], shape=(4), dtype=float32));
  %2 = split(%x, sections=2, axis=1);
  %3 = %2.0;
  (%0, %0, %1, %1, %3, %3)
}
)");
}

// Large constants (weights) compare by content too: two copies of one weight, as a layout
// rewrite makes per use, become one; a copy differing in its last element (or in a byte past
// the last full eight) does not.
TEST(EliminateCommonSubexpr, MergesLargeConstantsByContent) {
  auto weight = [](int64_t n, float last) {
    Tensor w = Tensor::empty({n}, DataType::float32());
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(w.data())[i] = float(i % 97) * 0.5f;
    static_cast<float*>(w.data())[n - 1] = last;
    return ir::ConstantNode::make(w);
  };
  for (int64_t n : {int64_t(4096), int64_t(4097)}) {
    ir::Var x = ir::VarNode::make("x", ir::TensorTypeNode::make({n}, DataType::float32()));
    ir::Expr a = ir::call_op("add", {x, weight(n, 1.0f)});
    ir::Expr b = ir::call_op("add", {x, weight(n, 1.0f)});
    ir::Expr c = ir::call_op("add", {x, weight(n, 2.0f)});
    ir::IRModule mod;
    mod.add("main", ir::FunctionNode::make({x}, ir::TupleNode::make({a, b, c})));
    mod = ir::infer_type(mod);
    ir::IRModule after = eliminate_common_subexpr(mod);
    EXPECT_EQ(testing::count_calls(after, "add"), 2) << print(after);
    std::vector<Tensor> inputs = testing::random_inputs(mod, 5);
    testing::expect_same_outputs(mod, after, inputs, inputs);
  }
}

// Calls into compiled code and stochastic ops are never merged.
TEST(EliminateCommonSubexpr, KeepsOpaqueAndStochasticCalls) {
  const char* text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32], (Tensor[(4), float32], Tensor[(4), float32]), (Tensor[(4), float32], Tensor[(4), float32])) {
  %0 = call_dps_packed("env.random", (%x), out=Tensor[(4), float32]);
  %1 = call_dps_packed("env.random", (%x), out=Tensor[(4), float32]);
  %2 = nn.dropout(%x);
  %3 = nn.dropout(%x);
  (%0, %1, %2, %3)
}
)";
  EXPECT_EQ(print(eliminate_common_subexpr(parse(text))), text);
}

// Two residual branches of the MLP built twice over the same input merge into one, and the
// outputs do not change.
TEST(EliminateCommonSubexpr, DuplicatedBranchesMergeNumerically) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3, 8), float32], %w: Tensor[(5, 8), float32], %b: Tensor[(5), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b, axis=-1);
  %2 = nn.dense(%x, %w);
  %3 = nn.bias_add(%2, %b, axis=-1);
  %4 = nn.relu(%1);
  %5 = sigmoid(%3);
  add(%4, %5)
}
)");
  ir::IRModule after = eliminate_common_subexpr(mod);
  std::string text = print(after);
  EXPECT_EQ(text.find("nn.dense"), text.rfind("nn.dense")) << text;
  std::vector<Tensor> inputs = testing::random_inputs(mod, 21);
  testing::expect_same_outputs(mod, after, inputs, inputs);
}

}  // namespace
}  // namespace anvil::transform
