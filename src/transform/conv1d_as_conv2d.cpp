// Conv1dAsConv2d: a 1-D convolution is a 2-D one over a single row. Written as one, it takes
// the blocked NCHW{b}c convolution strategy of the target (AlterOpLayout runs next), which
// keeps a register tile of output channels x output pixels with packed weights; the
// auto-scheduler's NCW tile broadcasts a weight per multiply-add and runs at about half that
// speed on channel-heavy layers (a 512 -> 512 kernel-3 stride-2 layer of an audio encoder:
// 2.2x behind ONNX Runtime on an AVX-512 host).
//
// Taken where the blocked strategy has channels to block: groups 1 and at least 8 input and 8
// output channels, NCW / OIW layouts, a constant weight (given its new axis in place). Grouped and
// single-channel convolutions (a raw waveform in, a grouped positional embedding) stay 1-D:
// the auto-scheduler is as fast or faster on them.
#include <vector>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

constexpr int64_t kMinChannels = 8;

ir::Expr expand_dims(const ir::Expr& x, int64_t axis) {
  return ir::call_op("expand_dims", {x}, ir::make_op_attrs("expand_dims", {{"axis", axis}}));
}

std::optional<ir::Expr> lift(const ir::CallNode& call) {
  const auto& a = detail::attrs_or_default<ir::Conv1DAttrs>(call);
  if (a.data_layout != "NCW" || a.kernel_layout != "OIW" ||
      !(a.out_layout.empty() || a.out_layout == "NCW") || a.groups != 1)
    return std::nullopt;
  const Tensor* weight = ir::constant_data(call.args[1]);
  if (!weight || weight->ndim() != 3) return std::nullopt;
  const std::vector<int64_t> w = weight->shape_vector();
  if (w[0] < kMinChannels || w[1] < kMinChannels) return std::nullopt;
  const std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 1);
  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  attrs->strides = {1, ir::nn::spatial_attr(a.strides, 1, "strides", 1)[0]};
  attrs->padding = {0, pad[0], 0, pad[1]};
  attrs->dilation = {1, ir::nn::spatial_attr(a.dilation, 1, "dilation", 1)[0]};
  attrs->groups = 1;
  attrs->channels = a.channels;
  if (!a.kernel_size.empty()) attrs->kernel_size = {1, a.kernel_size[0]};
  attrs->out_dtype = a.out_dtype;
  // The weight's new axis is a view of the same elements (OIW and OI1W lie alike in memory).
  const Tensor compact = weight->is_contiguous() ? *weight : weight->copy();
  ir::Expr conv = ir::call_op(
      "nn.conv2d",
      {expand_dims(call.args[0], 2), ir::ConstantNode::make(compact.view({w[0], w[1], 1, w[2]}))},
      ir::Attrs(attrs));
  return ir::call_op("squeeze", {conv},
                     ir::make_op_attrs("squeeze", {{"axis", std::vector<int64_t>{2}}}));
}

}  // namespace

ir::IRModule conv1d_as_conv2d(const ir::IRModule& mod) {
  return detail::rewrite_op_calls(
      mod, "nn.conv1d", [](const ir::CallNode& call, const ir::Expr&) { return lift(call); });
}

}  // namespace anvil::transform
