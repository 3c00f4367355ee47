// ToMixedPrecision: which products take bfloat16 operands (constant float32 weight, an even
// number of input channels, a plain NCHW convolution with static channels and image size, a
// dense layer, a matmul without transposes), that each value is cast once, that a value both a
// product and an elementwise op read is stored once in bfloat16, and that the rewritten module
// computes what the float32 one does within bf16's rounding (the reference interpreter runs
// both).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/builder.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

// The module written in text with the named parameters bound to seeded random weights, typed.
ir::IRModule with_weights(
    const std::string& text,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& weights) {
  std::vector<std::pair<std::string, Tensor>> params;
  uint64_t seed = 11;
  for (const auto& [name, shape] : weights)
    params.emplace_back(name, testing::random_tensor(shape, seed++));
  return ir::infer_type(bind_params(parse(text), params));
}

// The products whose weight is a bfloat16 constant.
int bf16_weights(const ir::IRModule& mod) {
  int n = 0;
  ir::post_order_visit(mod.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    const Tensor* weight =
        call && call->args.size() == 2 ? ir::constant_data(call->args[1]) : nullptr;
    n += weight && weight->dtype() == DataType::bfloat16();
  });
  return n;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ToMixedPrecision, ConvDenseAndMatmulTakeBf16OperandsAndKeepFloat32Results) {
  ir::IRModule mod = with_weights(R"(
def @main(%x: Tensor[(1, 4, 5, 5), float32], %y: Tensor[(3, 6), float32], %z: Tensor[(2, 4), float32],
          %w: Tensor[(2, 4, 3, 3), float32], %v: Tensor[(5, 6), float32], %u: Tensor[(4, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]);
  %1 = nn.dense(%y, %v);
  %2 = nn.matmul(%z, %u);
  (%0, %1, %2)
}
)",
                                  {{"w", {2, 4, 3, 3}}, {"v", {5, 6}}, {"u", {4, 3}}});
  ir::IRModule after = to_mixed_precision(mod);
  const std::string text = print(after);
  EXPECT_EQ(count(text, "cast("), 3) << text;
  EXPECT_EQ(count(text, "dtype=\"bfloat16\")"), 3) << text;  // the casts
  EXPECT_EQ(bf16_weights(after), 3) << text;
  EXPECT_EQ(count(text, "out_dtype=\"float32\""), 3) << text;
  // The weights and the casts round to bf16 (8 significant bits): within 2^-8 of each product's
  // magnitude.
  std::vector<Tensor> inputs = testing::random_inputs(mod, 7);
  testing::expect_same_outputs(mod, after, inputs, inputs, 2e-2);
  // And they do round: the outputs are not float32's.
  std::vector<Tensor> exact = reference::Interpreter(mod).run(inputs);
  std::vector<Tensor> rounded = reference::Interpreter(after).run(inputs);
  double largest_gap = 0;
  for (int64_t i = 0; i < exact[0].numel(); ++i)
    largest_gap =
        std::max(largest_gap, std::fabs(exact[0].get_as_double(i) - rounded[0].get_as_double(i)));
  EXPECT_GT(largest_gap, 0);
}

TEST(ToMixedPrecision, LeavesWhatTheBf16KernelsDoNotTakeInFloat32) {
  const std::string text = R"(
def @main(%x: Tensor[(1, 3, 5, 5), float32], %d: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(2, 4, 1, 1), float32], %z: Tensor[(2, 4), float32], %s: Tensor[(1, 4, h, 5), float32],
          %stem: Tensor[(2, 3, 1, 1), float32], %depthwise: Tensor[(4, 1, 3, 3), float32], %t: Tensor[(3, 4), float32], %k: Tensor[(2, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %stem, channels=2, kernel_size=[1, 1]);
  %1 = nn.conv2d(%d, %depthwise, padding=[1, 1, 1, 1], groups=4, channels=4, kernel_size=[3, 3]);
  %2 = nn.conv2d(%d, %w, channels=2, kernel_size=[1, 1]);
  %3 = nn.matmul(%z, %t, transpose_b=True);
  %4 = nn.conv2d(%s, %k, channels=2, kernel_size=[1, 1]);
  (%0, %1, %2, %3, %4)
}
)";
  // Three input channels, a depthwise convolution, a weight that is no constant, a transposed
  // matmul and a symbolic image size.
  ir::IRModule mod = with_weights(
      text,
      {{"stem", {2, 3, 1, 1}}, {"depthwise", {4, 1, 3, 3}}, {"t", {3, 4}}, {"k", {2, 4, 1, 1}}});
  EXPECT_EQ(print(to_mixed_precision(mod)), print(mod));
}

TEST(ToMixedPrecision, CastsEachValueOnceAndStoresResidualsOnceInBf16) {
  // %0 feeds two convolutions (one cast) and, with %1, a residual addition: the addition reads
  // %0 widened back from its bfloat16 copy, so that no float32 copy of %0 needs rounding twice.
  ir::IRModule mod = with_weights(R"(
def @main(%x: Tensor[(1, 4, 4, 4), float32], %w: Tensor[(4, 4, 1, 1), float32], %v: Tensor[(4, 4, 1, 1), float32]) {
  %0 = nn.relu(%x);
  %1 = nn.conv2d(%0, %w, channels=4, kernel_size=[1, 1]);
  %2 = nn.conv2d(%0, %v, channels=4, kernel_size=[1, 1]);
  %3 = add(%0, %1);
  add(%3, %2)
}
)",
                                  {{"w", {4, 4, 1, 1}}, {"v", {4, 4, 1, 1}}});
  ir::IRModule after = to_mixed_precision(mod);
  const std::string text = print(after);
  EXPECT_EQ(count(text, "cast(%0, dtype=\"bfloat16\")"), 1) << text;
  EXPECT_EQ(count(text, "cast("), 2) << text;  // and the widening for the addition
  EXPECT_EQ(count(text, "add(%0,"), 0) << text;
  std::vector<Tensor> inputs = testing::random_inputs(mod, 3);
  testing::expect_same_outputs(mod, after, inputs, inputs, 2e-2);
}

}  // namespace
}  // namespace anvil::transform
