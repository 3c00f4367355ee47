// ConvertLayout: golden texts on small graphs and ResNet-18 with bound parameters, which must
// compute the same in either layout (the reference executor is the oracle).
#include "anvil/ir/functor.h"
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::count_calls;
using testing::parse;
using testing::print;

// A conv chain with bias_add, relu, a residual add, a channel constant and a pool moves to
// NHWC; the weights get one transform each (folded later by FoldConstant), the data one at the
// start, and the softmax, which keeps the original layout, one at the end.
TEST(ConvertLayout, ConvChainMovesToNhwc) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w1: Tensor[(2, 2, 3, 3), float32], %w2: Tensor[(2, 2, 1, 1), float32], %b: Tensor[(2), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2);
  %4 = add(%3, %2);
  %5 = multiply(%4, const([2, 3], shape=(2, 1, 1), dtype=float32));
  %6 = nn.max_pool2d(%5, pool_size=[2, 2], strides=[2, 2]);
  nn.softmax(%6, axis=1)
}
)");
  ir::IRModule after = convert_layout(mod, "NHWC");
  EXPECT_EQ(print(after), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w1: Tensor[(2, 2, 3, 3), float32], %w2: Tensor[(2, 2, 1, 1), float32], %b: Tensor[(2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="HWIO");
  %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO");
  %3 = nn.bias_add(%2, %b, axis=3);
  %4 = nn.relu(%3);
  %5 = layout_transform(%w2, src_layout="OIHW", dst_layout="HWIO");
  %6 = nn.conv2d(%4, %5, data_layout="NHWC", kernel_layout="HWIO");
  %7 = add(%6, %4);
  %8 = reshape(const([2, 3], shape=(2, 1, 1), dtype=float32), newshape=[1, 2, 1, 1]);
  %9 = layout_transform(%8, src_layout="NCHW", dst_layout="NHWC");
  %10 = multiply(%7, %9);
  %11 = nn.max_pool2d(%10, pool_size=[2, 2], strides=[2, 2], layout="NHWC");
  %12 = layout_transform(%11, src_layout="NHWC", dst_layout="NCHW");
  nn.softmax(%12, axis=1)
}
)");
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs);
  // And back: converting the NHWC graph to NCHW computes the same again.
  ir::IRModule back = convert_layout(after, "NCHW");
  testing::expect_same_outputs(mod, back, inputs, inputs);
}

// Nothing to convert: a graph already in the desired layout comes back unchanged.
TEST(ConvertLayout, DesiredLayoutAlreadyThereChangesNothing) {
  const char* text = R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  nn.relu(%0)
}
)";
  ir::IRModule mod = parse(text);
  EXPECT_EQ(print(convert_layout(mod, "NCHW")), print(mod));
}

TEST(ConvertLayout, UnknownLayoutIsAnError) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2), float32]) {
  nn.relu(%x)
}
)");
  try {
    convert_layout(mod, "NWHC");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NWHC"), std::string::npos) << e.what();
  }
}

// ResNet-18 with its weights bound and batch norm simplified (as the pipeline runs it): every
// convolution moves, and once the transforms of constants (weights, per-channel scales) are
// folded, two remain: after the input's scale and before the classifier. Outputs are equal.
TEST(ConvertLayout, Resnet18ComputesTheSameInNhwc) {
  anvil::testing::Workload w = anvil::testing::resnet(18, 1, {3, 32, 32}, 10);
  ir::IRModule bound = simplify_inference(bind_params(w.mod, w.params));
  ir::IRModule after = convert_layout(bound, "NHWC");
  int convs = count_calls(bound, "nn.conv2d");
  EXPECT_EQ(count_calls(after, "nn.conv2d"), convs);
  EXPECT_EQ(count_calls(fold_constant(after), "layout_transform"), 2) << print(after);
  std::vector<Tensor> inputs = testing::random_inputs(bound, 4);
  testing::expect_same_outputs(bound, after, inputs, inputs);
}

}  // namespace
}  // namespace anvil::transform
