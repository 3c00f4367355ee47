// FuseOps: golden groupings of small graphs, the same values before and after (reference
// interpreter), and the grouping of the ResNet workloads.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "anvil/ir/functor.h"
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// Fuses the module and expects the reference interpreter to compute the same outputs.
ir::IRModule fuse_and_check(const ir::IRModule& mod, int level = 1, int max_depth = 256) {
  ir::IRModule fused = fuse_ops(mod, level, max_depth);
  std::vector<Tensor> inputs = testing::random_inputs(mod, 7);
  testing::expect_same_outputs(mod, fused, inputs, inputs, 0);
  return fused;
}

// Each group of @main as the names of its ops in order, joined by ",".
std::vector<std::string> group_signatures(const ir::IRModule& mod) {
  std::vector<std::string> groups;
  ir::post_order_visit(mod.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call) return;
    const auto* fn = ir::as<ir::FunctionNode>(call->callee);
    if (!fn) return;
    EXPECT_TRUE(fn->is_primitive());
    std::string signature;
    ir::post_order_visit(fn->body, [&](const ir::Expr& inner) {
      if (const auto* c = ir::as<ir::CallNode>(inner); c && c->op())
        signature += (signature.empty() ? "" : ",") + c->op()->name;
    });
    groups.push_back(signature);
  });
  return groups;
}

std::map<std::string, int> count_signatures(const ir::IRModule& mod) {
  std::map<std::string, int> counts;
  for (const std::string& s : group_signatures(mod)) ++counts[s];
  return counts;
}

// ---------------------------------------------------------------- golden groupings

TEST(FuseOps, ConvBiasReluBecomesOneGroup) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) -> Tensor[(1, 4, 6, 6), float32] {
  %2 = fn (%p0: Tensor[(1, 3, 6, 6), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(4), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
    %1 = nn.bias_add(%0, %p2);
    nn.relu(%1)
  };
  %2(%x, %w, %b)
}
)");
}

// The residual input is read by the conv and the add: one parameter serves both.
TEST(FuseOps, ConvResidualAddReluBecomesOneGroup) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
  %1 = add(%0, %x);
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32]) -> Tensor[(1, 2, 4, 4), float32] {
  %2 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 3, 3), float32], Primitive=1) -> Tensor[(1, 2, 4, 4), float32] {
    %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
    %1 = add(%0, %p0);
    nn.relu(%1)
  };
  %2(%x, %w)
}
)");
}

// Scalar constants stay inside the group; a constant of rank >= 1 becomes an argument.
TEST(FuseOps, ElementwiseChainKeepsScalarsInsideAndPassesTensorConstants) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  %1 = multiply(%0, 2f);
  %2 = add(%1, const([1, 2, 3], shape=(3), dtype=float32));
  tanh(%2)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %3 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
    %0 = exp(%p0);
    %1 = multiply(%0, 2f);
    %2 = add(%1, %p1);
    tanh(%2)
  };
  %3(%x, const([1, 2, 3], shape=(3), dtype=float32))
}
)");
}

// Both branches of a diamond end in one add, which post-dominates the conv: one group.
TEST(FuseOps, DiamondAfterConvFusesUpToItsPostDominator) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, channels=2, kernel_size=[1, 1]);
  %1 = nn.relu(%0);
  %2 = sigmoid(%0);
  %3 = add(%1, %2);
  exp(%3)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32]) -> Tensor[(1, 2, 4, 4), float32] {
  %4 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32], Primitive=1) -> Tensor[(1, 2, 4, 4), float32] {
    %0 = nn.conv2d(%p0, %p1, channels=2, kernel_size=[1, 1]);
    %1 = nn.relu(%0);
    %2 = sigmoid(%0);
    %3 = add(%1, %2);
    exp(%3)
  };
  %4(%x, %w)
}
)");
}

// A value the function returns cannot hide inside a group: exp stays visible on its own.
TEST(FuseOps, ValueReadByTheResultEndsItsGroup) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  %2 = negative(%1);
  (%0, %2)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(4), float32]) -> (Tensor[(4), float32], Tensor[(4), float32]) {
  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
    exp(%p0)
  };
  %1 = %0(%x);
  %3 = fn (%p0_1: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] {
    %2 = nn.relu(%p0_1);
    negative(%2)
  };
  %4 = %3(%1);
  (%1, %4)
}
)");
}

// Two convs meet in one add: the first takes it, the second stays alone, so that no group
// holds two anchors.
TEST(FuseOps, GroupHoldsAtMostOneAnchor) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 1, 1), float32], %v: Tensor[(2, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, channels=2, kernel_size=[1, 1]);
  %1 = nn.conv2d(%x, %v, channels=2, kernel_size=[1, 1]);
  %2 = add(%0, %1);
  nn.relu(%2)
}
)");
  EXPECT_EQ(group_signatures(fuse_and_check(mod)),
            (std::vector<std::string>{"nn.conv2d", "nn.conv2d,add,nn.relu"}));
}

// Bindings of a dataflow block are seen through: the chain still fuses.
TEST(FuseOps, DataflowBlockBindingsAreInlined) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  dataflow {
    %a = exp(%x);
    %b = nn.relu(%a);
    output(%b);
  }
  %b
}
)");
  EXPECT_EQ(group_signatures(fuse_and_check(mod)), (std::vector<std::string>{"exp,nn.relu"}));
}

// reshape is injective: it does not join the softmax after it, which takes the multiply.
TEST(FuseOps, ReshapeThenSoftmaxStaySeparate) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 2, 3), float32]) {
  %0 = reshape(%x, newshape=[4, 3]);
  %1 = nn.softmax(%0);
  multiply(%1, 3f)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2, 3), float32]) -> Tensor[(4, 3), float32] {
  %1 = fn (%p0: Tensor[(4, 3), float32], Primitive=1) -> Tensor[(4, 3), float32] {
    %0 = nn.softmax(%p0);
    multiply(%0, 3f)
  };
  %2 = fn (%p0_1: Tensor[(2, 2, 3), float32], Primitive=1) -> Tensor[(4, 3), float32] {
    reshape(%p0_1, newshape=[4, 3])
  };
  %3 = %2(%x);
  %1(%3)
}
)");
}

TEST(FuseOps, OpaqueOpStandsAloneBetweenGroups) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 5), float32]) {
  %0 = exp(%x);
  %1 = cumsum(%0, axis=1);
  %2 = nn.relu(%1);
  negative(%2)
}
)");
  EXPECT_EQ(count_signatures(fuse_and_check(mod)),
            (std::map<std::string, int>{{"exp", 1}, {"cumsum", 1}, {"nn.relu,negative", 1}}));
}

TEST(FuseOps, OptLevelZeroPutsEveryCallAlone) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod, 0)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(4), float32]) -> Tensor[(1, 4, 6, 6), float32] {
  %0 = fn (%p0: Tensor[(1, 4, 6, 6), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    nn.relu(%p0)
  };
  %1 = fn (%p0_1: Tensor[(1, 4, 6, 6), float32], %p1: Tensor[(4), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    nn.bias_add(%p0_1, %p1)
  };
  %2 = fn (%p0_2: Tensor[(1, 3, 6, 6), float32], %p1_1: Tensor[(4, 3, 3, 3), float32], Primitive=1) -> Tensor[(1, 4, 6, 6), float32] {
    nn.conv2d(%p0_2, %p1_1, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])
  };
  %3 = %2(%x, %w);
  %4 = %1(%3, %b);
  %0(%4)
}
)");
}

// The group of a multi-output op returns the whole tuple; TupleGetItem stays outside.
TEST(FuseOps, MultiOutputBatchNormReturnsItsTuple) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  %1 = %0.0;
  nn.relu(%1)
}
)");
  std::string expected = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 3, 3), float32], %g: Tensor[(2), float32], %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  %0 = fn (%p0: Tensor[(1, 2, 3, 3), float32], Primitive=1) -> Tensor[(1, 2, 3, 3), float32] {
    nn.relu(%p0)
  };
  %1 = fn (%p0_1: Tensor[(1, 2, 3, 3), float32], %p1: Tensor[(2), float32], %p2: Tensor[(2), float32], %p3: Tensor[(2), float32], %p4: Tensor[(2), float32], Primitive=1) -> (Tensor[(1, 2, 3, 3), float32], Tensor[(2), float32], Tensor[(2), float32]) {
    nn.batch_norm(%p0_1, %p1, %p2, %p3, %p4)
  };
  %2 = %1(%x, %g, %b, %m, %v);
  %3 = %2.0;
  %0(%3)
}
)";
  for (int level : {0, 1}) {
    ir::IRModule fused = fuse_ops(mod, level);
    EXPECT_EQ(print(fused), expected);
    std::vector<Tensor> inputs = testing::random_inputs(mod, 5);
    inputs[4] = testing::random_tensor({2}, 9, 0.5, 2.0);  // a variance must be positive
    testing::expect_same_outputs(mod, fused, inputs, inputs, 0);
  }
}

// Injective ops fuse with each other, and into a reduction that follows; the reduction
// takes nothing after it.
TEST(FuseOps, InjectiveChainFusesIntoAReduction) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) {
  %0 = transpose(%x, axes=[2, 0, 1]);
  %1 = reshape(%0, newshape=[4, 6]);
  %2 = sum(%1, axis=[1]);
  exp(%2)
}
)");
  EXPECT_EQ(count_signatures(fuse_and_check(mod)),
            (std::map<std::string, int>{{"transpose,reshape,sum", 1}, {"exp", 1}}));
}

// The tuple built for concatenate moves into the group together with its producers.
TEST(FuseOps, ConcatenateTakesItsTupleAndProducers) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(1, 3), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%y);
  %2 = (%0, %1);
  concatenate(%2)
}
)");
  EXPECT_EQ(print(fuse_and_check(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(1, 3), float32]) -> Tensor[(3, 3), float32] {
  %3 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(1, 3), float32], Primitive=1) -> Tensor[(3, 3), float32] {
    %0 = exp(%p0);
    %1 = nn.relu(%p1);
    %2 = (%0, %1);
    concatenate(%2)
  };
  %3(%x, %y)
}
)");
}

TEST(FuseOps, MaxDepthSplitsLongChains) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  %2 = negative(%1);
  %3 = tanh(%2);
  sigmoid(%3)
}
)");
  EXPECT_EQ(group_signatures(fuse_and_check(mod, 1, 2)),
            (std::vector<std::string>{"exp,nn.relu", "negative,tanh", "sigmoid"}));
}

TEST(FuseOps, CallsOfRuntimeFunctionsStayAsTheyAre) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  %1 = call_dps_packed("env.identity", (%0), out=Tensor[(3), float32]);
  nn.relu(%1)
}
)");
  EXPECT_EQ(print(fuse_ops(mod, 1)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  %0 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
    nn.relu(%p0)
  };
  %1 = fn (%p0_1: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
    exp(%p0_1)
  };
  %2 = %1(%x);
  %3 = call_dps_packed("env.identity", (%2), out=Tensor[(3), float32]);
  %0(%3)
}
)");
}

TEST(FuseOps, ModuleWithoutOpCallsIsReturnedUnchanged) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  (%x, %x)
}
)");
  ir::IRModule fused = fuse_ops(mod, 1);
  EXPECT_EQ(fused.get_function("main").get(), mod.get_function("main").get());
}

TEST(FuseOps, ControlFlowIsAnErrorNamingIt) {
  ir::IRModule mod = parse(R"(
def @main(%c: bool, %x: Tensor[(3), float32]) {
  if (%c) { exp(%x) } else { %x }
}
)");
  try {
    fuse_ops(mod, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fuse_ops: @main must be a dataflow graph; found If");
  }
}

// ---------------------------------------------------------------- workloads

// ResNet-18 as the pipeline sees it before fusion: params bound, batch norms written out
// as scale and shift, constants folded.
ir::IRModule prepared_resnet(int layers, std::vector<int64_t> image_shape) {
  anvil::testing::Workload w = anvil::testing::resnet(layers, 1, std::move(image_shape));
  return fold_constant(simplify_inference(bind_params(w.mod, w.params)));
}

// Expected from the network's structure (src/workloads/resnet.cpp): every conv takes its
// batch-norm scale/shift and relu, or the residual add; the add of a unit whose output
// feeds only the next unit's batch norm also takes that batch norm and relu. The projection
// shortcut convs come second to their unit's add, which already has an anchor.
TEST(FuseOpsWorkloads, ResNet18ConvGroupsHoldTheirEpilogues) {
  ir::IRModule fused = fuse_ops(prepared_resnet(18, {3, 224, 224}), 1);
  std::map<std::string, int> expected = {
      {"multiply,add", 1},                        // bn_data
      {"nn.conv2d,multiply,add,nn.relu", 9},      // conv0 and each unit's conv1
      {"nn.max_pool2d,multiply,add,nn.relu", 1},  // pool, then stage1_unit1's bn1
      {"nn.conv2d,add", 4},                       // conv2 + add of each stage's first unit
      {"nn.conv2d,add,multiply,add,nn.relu", 4},  // ... of each stage's second unit
      {"nn.conv2d", 4},                           // projection shortcuts
      {"multiply,add,nn.relu", 4},                // bn1 of each stage's second unit
      {"nn.global_avg_pool2d", 1},
      {"nn.batch_flatten", 1},
      {"nn.dense,nn.bias_add", 1},
      {"nn.softmax", 1},
  };
  EXPECT_EQ(count_signatures(fused), expected);
}

// The same network on a small image, run by the reference interpreter before and after.
TEST(FuseOpsWorkloads, ResNet18ComputesTheSameValues) {
  ir::IRModule mod = prepared_resnet(18, {3, 40, 40});
  ir::IRModule fused = fuse_ops(mod, 1);
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, fused, inputs, inputs, 0);
}

TEST(FuseOpsWorkloads, ResNet50FusesQuickly) {
  ir::IRModule mod = prepared_resnet(50, {3, 224, 224});
  auto start = std::chrono::steady_clock::now();
  ir::IRModule fused = fuse_ops(mod, 1);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuse_ops on resnet50: %.1f ms, %zu groups\n", ms, group_signatures(fused).size());
  EXPECT_LT(ms, 1000.0);
  // 53 convs, each the anchor of its own group; nothing is left outside a group.
  int convs = 0;
  for (const auto& [signature, count] : count_signatures(fused))
    if (signature.rfind("nn.conv2d", 0) == 0) convs += count;
  EXPECT_EQ(convs, 53);
}

// A chain deeper than a recursive walk could follow on a default stack. The types are set
// by hand, as infer_type would recurse as deep as the chain.
TEST(FuseOpsWorkloads, LongChainsDoNotExhaustTheStack) {
  ir::TensorType type = ir::TensorTypeNode::make({4}, DataType::float32());
  ir::Var x = ir::VarNode::make("x", type);
  x->checked_type = type;
  ir::Expr body = x;
  for (int i = 0; i < 20000; ++i) {
    body = ir::call_op(i % 2 ? "exp" : "negative", {body});
    body->checked_type = type;
  }
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({x}, body, type));
  ir::IRModule fused = fuse_ops(mod, 1);
  EXPECT_EQ(group_signatures(fused).size(), size_t(20000 / 256 + 1));
}

}  // namespace
}  // namespace anvil::transform
