// Conv3dAsConv2d: a 3-D convolution is a sum of 2-D ones, one per depth tap. Depth moves next
// to the batch (transpose), each tap reads the depth slices it needs (strided_slice) as a batch
// of images, a 2-D convolution with that tap's weights runs over them, the taps' outputs add,
// and the result moves back:
//
//   xt = transpose(pad_D(x), [0, 2, 1, 3, 4])                      N, Dp, C, H, W
//   y  = sum over t of conv2d(reshape(xt[:, t*dd : ... : sd], [N * Do, C, H, W]), w[:, :, t])
//   out = transpose(reshape(y, [N, Do, O, Ho, Wo]), [0, 2, 1, 3, 4])
//
// The 2-D convolutions take the target's blocked strategy (AlterOpLayout runs next), with
// packed weights and a register tile of channel blocks; the auto-scheduler's NCDHW tile
// broadcasts a weight per multiply-add and ran 2.2-3.7x behind the faster peer on the Conv3d
// layers of video ResNets. The data movement is one injective kernel per tap (transpose, slice,
// reshape and the layout transform fuse) and the adds fuse into the convolutions.
//
// Taken where the blocked strategy has channels to block: groups 1, at least 8 input and 8
// output channels, NCDHW / OIDHW layouts, static shapes and a constant weight. A stem reading
// three colour channels stays 3-D.
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

ir::Expr reshape(const ir::Expr& x, std::vector<int64_t> shape) {
  return ir::call_op("reshape", {x}, ir::make_op_attrs("reshape", {{"newshape", shape}}));
}

// w[:, :, tap] of a constant OIDHW weight, as an OIHW one.
Tensor depth_tap(const Tensor& w, int64_t tap) {
  const std::vector<int64_t> s = w.shape_vector();
  Tensor out = Tensor::empty({s[0], s[1], s[3], s[4]}, w.dtype());
  const size_t plane = size_t(s[3] * s[4]) * size_t(w.dtype().bytes());
  const char* src = static_cast<const char*>(w.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t oi = 0; oi < s[0] * s[1]; ++oi)
    std::copy_n(src + size_t(oi * s[2] + tap) * plane, plane, dst + size_t(oi) * plane);
  return out;
}

std::optional<ir::Expr> split_taps(const ir::CallNode& call, const ir::Expr& self) {
  const auto& a = detail::attrs_or_default<ir::Conv3DAttrs>(call);
  if (a.data_layout != "NCDHW" || a.kernel_layout != "OIDHW" ||
      !(a.out_layout.empty() || a.out_layout == "NCDHW") || a.groups != 1 ||
      (a.out_dtype && a.out_dtype != ir::tensor_dtype(call.args[0])))
    return std::nullopt;
  const Tensor* weight = ir::constant_data(call.args[1]);
  std::optional<std::vector<int64_t>> in = ir::static_shape(call.args[0]);
  std::optional<std::vector<int64_t>> out = ir::static_shape(self);
  if (!weight || !in || !out || in->size() != 5 || out->size() != 5) return std::nullopt;
  const std::vector<int64_t> w = weight->shape_vector();
  if (w.size() != 5 || w[0] < kMinChannels || w[1] < kMinChannels) return std::nullopt;
  const std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 3, "strides", 1);
  const std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 3, "dilation", 1);
  const std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 3);
  const int64_t n = (*in)[0], channels = (*in)[1], height = (*in)[3], width = (*in)[4];
  const int64_t out_depth = (*out)[2];

  ir::Expr x = call.args[0];
  if (pad[0] > 0 || pad[3] > 0) {
    auto pad_attrs = ir::make_op_attrs(
        "nn.pad", {{"pad_width", std::vector<int64_t>{0, 0, 0, 0, pad[0], pad[3], 0, 0, 0, 0}}});
    x = ir::call_op("nn.pad", {x, ir::scalar_constant(0, weight->dtype())}, pad_attrs);
  }
  x = ir::transpose(x, {0, 2, 1, 3, 4});
  ir::Expr sum;
  for (int64_t tap = 0; tap < w[2]; ++tap) {
    const int64_t begin = tap * dilation[0];
    const int64_t end = begin + (out_depth - 1) * strides[0] + 1;
    auto slice_attrs =
        ir::make_op_attrs("strided_slice", {{"begin", std::vector<int64_t>{begin}},
                                            {"end", std::vector<int64_t>{end}},
                                            {"strides", std::vector<int64_t>{strides[0]}},
                                            {"axes", std::vector<int64_t>{1}}});
    ir::Expr slices = reshape(ir::call_op("strided_slice", {x}, slice_attrs),
                              {n * out_depth, channels, height, width});
    auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
    attrs->strides = {strides[1], strides[2]};
    attrs->padding = {pad[1], pad[2], pad[4], pad[5]};
    attrs->dilation = {dilation[1], dilation[2]};
    attrs->channels = w[0];
    attrs->kernel_size = {w[3], w[4]};
    ir::Expr conv = ir::call_op(
        "nn.conv2d", {slices, ir::ConstantNode::make(depth_tap(*weight, tap))}, ir::Attrs(attrs));
    sum = sum ? ir::Expr(ir::call_op("add", {sum, conv})) : conv;
  }
  return ir::transpose(reshape(sum, {n, out_depth, w[0], (*out)[3], (*out)[4]}), {0, 2, 1, 3, 4});
}

}  // namespace

ir::IRModule conv3d_as_conv2d(const ir::IRModule& mod) {
  return detail::rewrite_op_calls(mod, "nn.conv3d", split_taps);
}

}  // namespace anvil::transform
