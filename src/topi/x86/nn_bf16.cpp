// bfloat16 convolutions and dense layers on x86 (the precision of `--precision bf16`, see
// docs/precision.md). ToMixedPrecision leaves nn.conv2d, nn.dense and nn.matmul with bfloat16
// operands and float32 results; the layout strategies here turn them into
// nn.contrib_conv2d_NCHWc_bf16, its weight packed at compile time two input channels deep
// (OIHW{ib/2}i{ob}o2i) so that one vdpbf16ps step (dot_conv.h) reads a channel pair of 16
// output channels as one vector. A dense layer runs as a 1x1 convolution over its rows, as the
// int8 one does (qnn.cpp).
#include <algorithm>
#include <optional>
#include <string>
#include <variant>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/ir/op.h"
#include "topi/x86/amx_conv.h"
#include "topi/x86/dot_conv.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

constexpr const char* kOp = "nn.contrib_conv2d_NCHWc_bf16";

// The blocks of one bf16 product: input channels ib a block (even, so that the pairs of a
// dot-product step stay in one block), output channels ob (4, 8 or 16), computed for
// stored_out >= out channels (the extra ones from zero weights).
struct Bf16Plan {
  int64_t in_channels = 0, out_channels = 0;
  int64_t in_block = 0, out_block = 0, stored_out = 0;
};

std::variant<Bf16Plan, std::string> plan_blocks(int64_t in_channels, int64_t out_channels,
                                                int64_t lanes) {
  Bf16Plan plan{in_channels, out_channels};
  plan.in_block = channel_block(in_channels, lanes);
  if (plan.in_block < 2)
    return "an odd number of input channels (" + std::to_string(in_channels) + ") takes no pairs";
  plan.out_block = channel_block(out_channels, lanes);
  plan.stored_out = out_channels;
  if (plan.out_block < 4) {
    plan.out_block = lanes;
    plan.stored_out = (out_channels + lanes - 1) / lanes * lanes;
  }
  return plan;
}

// The blocks of AMX tiles (amx_conv.h): 32 input channels a block where they divide (16
// otherwise), output blocks of 32 (or 16); nullopt where the channels take neither.
std::optional<Bf16Plan> plan_amx_blocks(int64_t in_channels, int64_t out_channels) {
  if (in_channels % 16 != 0 || out_channels % 16 != 0) return std::nullopt;
  Bf16Plan plan{in_channels, out_channels};
  plan.in_block = in_channels % 32 == 0 ? 32 : 16;
  plan.out_block = out_channels % 32 == 0 ? 32 : 16;
  plan.stored_out = out_channels;
  return plan;
}

bool is_bf16(const ir::Expr& e) {
  const auto* t = ir::as<ir::TensorTypeNode>(e->checked_type);
  return t && t->dtype == DataType::bfloat16();
}

// The OIHW bfloat16 weight packed (O/ob, I/ib, KH, KW, ib/2, ob*2): input channel 2q + r of a
// block and output channel j at [q, 2j + r]; zeros for the output channels from O up to
// stored_out.
Tensor pack_pairs(const Tensor& weight, const Bf16Plan& plan) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], taps = s[2] * s[3], ib = plan.in_block, ob = plan.out_block;
  Tensor packed =
      Tensor::zeros({plan.stored_out / ob, in / ib, s[2], s[3], ib / 2, ob * 2}, weight.dtype());
  const auto* src = static_cast<const uint16_t*>(weight.data());
  auto* dst = static_cast<uint16_t*>(packed.data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t c = i % ib;
        dst[((((o / ob) * (in / ib) + i / ib) * taps + t) * (ib / 2) + c / 2) * ob * 2 +
            o % ob * 2 + c % 2] = src[(o * in + i) * taps + t];
      }
  return packed;
}

ir::Expr blocked_bf16_conv(const ir::Expr& data, const Tensor& weight, const Bf16Plan& plan,
                           const ir::Conv2DAttrs* conv) {
  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  if (conv) {
    attrs->strides = conv->strides;
    attrs->padding = conv->padding;
    attrs->dilation = conv->dilation;
  }
  attrs->groups = 1;
  attrs->channels = plan.stored_out;
  attrs->kernel_size = {weight.shape()[2], weight.shape()[3]};
  attrs->data_layout = ir::blocked_layout(plan.in_block);
  attrs->kernel_layout =
      "OIHW" + std::to_string(plan.in_block / 2) + "i" + std::to_string(plan.out_block) + "o2i";
  attrs->out_layout = ir::blocked_layout(plan.out_block);
  attrs->out_dtype = DataType::float32();
  return ir::call_op(kOp, {data, ir::ConstantNode::make(pack_pairs(weight, plan))},
                     ir::Attrs(attrs));
}

// nn.conv2d of bfloat16 NCHW data by a bfloat16 OIHW weight into float32, in one group, its
// channels and image size static (the batch may be a size variable).
std::variant<Bf16Plan, std::string> plan_conv(const ir::CallNode& call, const ir::Type& out_type,
                                              int lanes, bool amx = false) {
  const auto* a = dynamic_cast<const ir::Conv2DAttrs*>(call.attrs.get());
  if (!a || call.args.size() != 2) return std::string("not a two-operand conv2d");
  if (!is_bf16(call.args[0]) || !is_bf16(call.args[1]) || !ir::is_float32(out_type))
    return std::string("needs bfloat16 data and weight summed into float32");
  if (a->data_layout != "NCHW" || a->kernel_layout != "OIHW" ||
      !(a->out_layout.empty() || a->out_layout == "NCHW"))
    return "layouts " + a->data_layout + "/" + a->kernel_layout + ": blocked from NCHW/OIHW";
  if (a->groups != 1) return "groups " + std::to_string(a->groups) + ": one group only";
  const auto* data = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
  std::optional<std::vector<int64_t>> w = ir::static_shape(call.args[1]);
  if (!data->shape || data->shape->size() != 4 || !w || w->size() != 4)
    return std::string("needs 4-D data and a static 4-D weight");
  for (size_t i = 1; i < 4; ++i)
    if (!(*data->shape)[i].is_static())
      return std::string("the channels and image size must be static");
  // On AMX, the tiles' blocks where the output rows fill tiles well enough; elsewhere the
  // data's blocks are those of the float32 convolutions around it (16 lanes of AVX-512).
  const auto* out = ir::as<ir::TensorTypeNode>(out_type);
  if (amx && out && out->shape && out->shape->size() == 4 && (*out->shape)[3].is_static() &&
      amx_tile_rows((*out->shape)[3].int_value()) >= kMinAmxTileRows)
    if (std::optional<Bf16Plan> tiles = plan_amx_blocks((*w)[1], (*w)[0])) return *tiles;
  return plan_blocks((*w)[1], (*w)[0], lanes);
}

std::string check_conv(const ir::CallNode& call, const ir::Type& out_type, int lanes) {
  auto plan = plan_conv(call, out_type, lanes);
  return std::holds_alternative<std::string>(plan) ? std::get<std::string>(plan) : std::string();
}

LayoutRewrite rewrite_conv(const LayoutArgs& args) {
  auto planned = plan_conv(args.call, args.out_type, args.vector_lanes, args.amx_bf16);
  if (const std::string* why = std::get_if<std::string>(&planned)) throw_error(*why);
  const Bf16Plan& plan = std::get<Bf16Plan>(planned);
  const Tensor& weight = constant_weight(args);
  ir::Expr conv = blocked_bf16_conv(args.data_blocked(plan.in_block), weight, plan,
                                    &args.call.attrs_as<ir::Conv2DAttrs>());
  return LayoutRewrite{conv, plan.out_block, plan.stored_out};
}

// nn.dense (..., K) x (N, K), or nn.matmul (..., K) x (K, N) without transposes, of bfloat16
// operands into float32.
std::string check_dense(const ir::CallNode& call, const ir::Type& out_type, int lanes) {
  if (call.args.size() != 2) return "not a two-operand product";
  if (!is_bf16(call.args[0]) || !is_bf16(call.args[1]) || !ir::is_float32(out_type))
    return "needs bfloat16 data and weight summed into float32";
  const auto* data = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
  std::optional<std::vector<int64_t>> w = ir::static_shape(call.args[1]);
  if (!w || w->size() != 2 || !dense_output_shape(*data, 1))
    return "needs (..., K) data with a static K, at most one symbolic leading dim, and a static "
           "2-D weight";
  if (call.op()->name == "nn.matmul") {
    const auto* a = dynamic_cast<const ir::MatmulAttrs*>(call.attrs.get());
    if (a && (a->transpose_a || a->transpose_b)) return "transposed operands are not packed";
  }
  const bool is_dense = call.op()->name == "nn.dense";
  auto plan = plan_blocks((*w)[is_dense ? 1 : 0], (*w)[is_dense ? 0 : 1], lanes);
  return std::holds_alternative<std::string>(plan) ? std::get<std::string>(plan) : std::string();
}

// The (K, N) weight of a matmul as the (N, K) weight of a dense layer.
Tensor transposed(const Tensor& weight) {
  std::vector<int64_t> s = weight.shape_vector();
  Tensor out = Tensor::empty({s[1], s[0]}, weight.dtype());
  const auto* src = static_cast<const uint16_t*>(weight.data());
  auto* dst = static_cast<uint16_t*>(out.data());
  for (int64_t k = 0; k < s[0]; ++k)
    for (int64_t n = 0; n < s[1]; ++n) dst[n * s[0] + k] = src[k * s[1] + n];
  return out;
}

LayoutRewrite rewrite_dense(const LayoutArgs& args) {
  std::string why = check_dense(args.call, args.out_type, args.vector_lanes);
  if (!why.empty()) throw_error(why);
  const bool is_dense = args.call.op()->name == "nn.dense";
  const Tensor weight = is_dense ? constant_weight(args) : transposed(constant_weight(args));
  const int64_t n = weight.shape()[0], k = weight.shape()[1];
  const auto* data_type = ir::as<ir::TensorTypeNode>(args.call.args[0]->checked_type);
  const std::vector<int64_t> out_shape = *dense_output_shape(*data_type, n);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out_shape.size(); ++d)
    rows = out_shape[d] < 0 ? -1 : rows * out_shape[d];
  // AMX tiles for a static row count that fills them: rows padded to 16, the tiles' height.
  std::optional<Bf16Plan> tiles;
  if (args.amx_bf16 && rows >= kMinAmxTileRows) tiles = plan_amx_blocks(k, n);
  const Bf16Plan plan = tiles ? *tiles : std::get<Bf16Plan>(plan_blocks(k, n, args.vector_lanes));
  const int64_t row_tile = tiles ? 16 : kRowTile;
  auto reshape = [](const ir::Expr& e, std::vector<int64_t> shape) {
    return ir::call_op("reshape", {e}, ir::make_op_attrs("reshape", {{"newshape", shape}}));
  };
  // The rows are the convolution's batch, which its schedule tiles row_tile at a time: a
  // static row count that is no multiple is padded with zero rows, sliced off again (197
  // tokens of a ViT: 200, or 208 for AMX tiles).
  const int64_t padded_rows =
      rows > row_tile && rows % row_tile != 0 ? (rows + row_tile - 1) / row_tile * row_tile : rows;
  ir::Expr rows_in = reshape(args.arg(0), {-1, k});
  if (padded_rows != rows)
    rows_in = ir::call_op(
        "nn.pad", {rows_in, ir::ConstantNode::make(Tensor::zeros({}, DataType::bfloat16()))},
        ir::make_op_attrs("nn.pad",
                          {{"pad_width", std::vector<int64_t>{0, padded_rows - rows, 0, 0}}}));
  // With one pixel, NCHW{b}c holds (rows, channels) row-major: the layout changes are reshapes.
  ir::Expr data = reshape(rows_in, {-1, k / plan.in_block, 1, 1, plan.in_block});
  ir::Expr out = blocked_bf16_conv(data, weight.view({n, k, 1, 1}), plan, nullptr);
  out = reshape(out, {-1, plan.stored_out});
  auto slice = [](const ir::Expr& e, int64_t axis, int64_t end) {
    return ir::call_op("strided_slice", {e},
                       ir::make_op_attrs("strided_slice", {{"begin", std::vector<int64_t>{0}},
                                                           {"end", std::vector<int64_t>{end}},
                                                           {"axes", std::vector<int64_t>{axis}}}));
  };
  if (plan.stored_out != n) out = slice(out, 1, n);
  if (padded_rows != rows) out = slice(out, 0, rows);
  return LayoutRewrite{reshape(out, out_shape)};
}

std::vector<te::Tensor> conv2d_bf16_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  te::Tensor padded = padded_input(args.inputs[0], tir::make_const(DataType::bfloat16(), 0),
                                   ir::nn::expand_padding(a.padding, 2), kOp);
  return {dot_conv_compute(args, padded, bf16_dot2(), kOp, "conv2d_NCHWc_bf16")};
}

void schedule_conv2d_bf16(tir::Schedule& sch, const ScheduleArgs& args) {
  schedule_dot_conv(sch, args, bf16_dot2());
}

}  // namespace

void register_nn_bf16_strategies() {
  const std::vector<DataType> bf16 = {DataType::bfloat16()};
  register_strategy("nn.conv2d", "x86",
                    {.name = "x86.conv2d_bf16",
                     .precisions = bf16,
                     .layout_role = LayoutRole::Anchor,
                     .layout = {check_conv, rewrite_conv}});
  for (const char* op : {"nn.dense", "nn.matmul"})
    register_strategy(op, "x86",
                      {.name = "x86.dense_bf16",
                       .precisions = bf16,
                       .layout_role = LayoutRole::Anchor,
                       .layout = {check_dense, rewrite_dense}});
  register_compute(kOp, conv2d_bf16_compute);
  register_dot_intrins(bf16_dot2());
  register_strategy(kOp, "x86",
                    {.name = "x86.conv2d_amx_bf16",
                     .priority = 1,
                     .precisions = bf16,
                     .schedule = [](tir::Schedule& sch, const ScheduleArgs& args) {
                       schedule_amx_conv(sch, args, bf16_dot2());
                     }});
  register_strategy(kOp, "x86",
                    {.name = "x86.conv2d_bf16",
                     .precisions = bf16,
                     .schedule = schedule_conv2d_bf16,
                     .space = dot_conv_knob_space});
}

}  // namespace anvil::topi::x86
