// WinogradConv2D: rewrites each eligible blocked 3x3 stride-1 convolution (dilated or not)
// (nn.contrib_conv2d_NCHWc, as AlterOpLayout leaves it) into nn.contrib_conv2d_winograd_NCHWc,
// transforming the constant weight at compile time: U = G g G^T for every (output, input) channel
// pair, laid out (6, 6, O / ob, I, ob) so that the x86 kernel's batched GEMM reads one contiguous
// row of ob output channels per input channel. docs/winograd.md has the algorithm and the
// measurements behind the eligibility rule.
#include <string>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/winograd.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::constant_data;
using ir::static_shape;

// Where Winograd pays off (docs/winograd.md): maps of at least 14 x 14 outputs (7 x 7 maps
// have too few tiles per GEMM to gain) and at least 64 channels each way (with fewer input
// channels the transforms cost more than the products save: SqueezeNet's 16 -> 64 and
// 32 -> 128 expand convs ran slower on two threads).
// A dilated convolution is d_h x d_w undilated ones over maps of ceil(out / d) (one per class
// of outputs, oh % d_h, ow % d_w); their tiles must not overshoot the class maps by more than
// 8 / 7 (a 7-row class map takes 2 tiles of 4, a 5-row one would compute 8 rows for 5).
bool pays_off(int64_t in_channels, int64_t out_channels, int64_t out_h, int64_t out_w, int64_t dh,
              int64_t dw) {
  if (in_channels < 64 || out_channels < 64 || out_h < 14 || out_w < 14) return false;
  for (auto [out, d] : {std::pair{out_h, dh}, std::pair{out_w, dw}}) {
    if (d == 1) continue;
    const int64_t class_map = (out + d - 1) / d, covered = (class_map + 3) / 4 * 4;
    if (covered * 7 > class_map * 8) return false;
  }
  return true;
}

std::optional<ir::Expr> to_winograd(const ir::CallNode& call, const ir::Expr& self) {
  const auto& a = detail::attrs_or_default<ir::Conv2DAttrs>(call);
  const std::vector<int64_t> dilation =
      a.dilation.empty() ? std::vector<int64_t>{1, 1} : a.dilation;
  if (a.groups != 1 || a.strides != std::vector<int64_t>{1, 1} || dilation.size() != 2 ||
      dilation[0] < 1 || dilation[1] < 1)
    return std::nullopt;
  if (a.out_dtype && *a.out_dtype != DataType::float32()) return std::nullopt;
  const Tensor* weight = constant_data(call.args[1]);
  std::optional<std::vector<int64_t>> data = static_shape(call.args[0]);
  std::optional<std::vector<int64_t>> out = static_shape(self);
  std::optional<DataType> dtype = ir::tensor_dtype(call.args[0]);
  if (!weight || weight->dtype() != DataType::float32() || weight->ndim() != 6 || !data ||
      data->size() != 5 || !out || out->size() != 5 || dtype != DataType::float32())
    return std::nullopt;
  // The weight is (O/ob, I/ib, 3, 3, ib, ob), and its layout must say so: OIHW{ib}i{ob}o.
  std::vector<int64_t> ws = weight->shape_vector();
  const int64_t ib = ws[4], ob = ws[5];
  if (a.kernel_layout != "OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o" ||
      ws[2] != 3 || ws[3] != 3 || (*data)[4] != ib || (*out)[4] != ob)
    return std::nullopt;
  if (!pays_off(ws[1] * ws[4], ws[0] * ws[5], (*out)[2], (*out)[3], dilation[0], dilation[1]))
    return std::nullopt;

  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  attrs->padding = a.padding;
  if (dilation != std::vector<int64_t>{1, 1}) attrs->dilation = dilation;
  attrs->channels = a.channels;
  attrs->kernel_size = {3, 3};
  attrs->data_layout = a.data_layout;
  attrs->kernel_layout = "HWOI" + std::to_string(ob) + "o";
  attrs->out_layout = a.out_layout;
  attrs->out_dtype = a.out_dtype;
  ir::Expr u = ir::ConstantNode::make(winograd::transform_weight(*weight));
  return ir::call_op("nn.contrib_conv2d_winograd_NCHWc", {call.args[0], u}, ir::Attrs(attrs));
}

}  // namespace

ir::IRModule winograd_conv2d(const ir::IRModule& mod) {
  return detail::rewrite_op_calls(mod, "nn.contrib_conv2d_NCHWc", to_winograd);
}

}  // namespace anvil::transform
