// The layout strategy of nn.conv2d on x86: the convolution moves to the blocked NCHW{b}c
// layout as nn.contrib_conv2d_NCHWc, its OIHW weight re-packed at compile time into
// OIHW{ib}i{ob}o, so that one weight vector holds ob output channels of one input channel and
// the schedule (conv2d_nchwc.cpp) broadcasts an input value against it. Grouped convolutions
// keep the block of their data when their groups allow it; what cannot be blocked says why.
#include <numeric>
#include <string>
#include <variant>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

// The largest power of two up to lanes that divides channels.
int64_t channel_block(int64_t channels, int lanes) {
  for (int64_t b = lanes; b > 1; b /= 2)
    if (channels % b == 0) return b;
  return 1;
}

// The dims of a 4-D float32 tensor type whose channels and spatial dims are static (the batch
// may be a size variable: one package then serves every batch); nullopt otherwise.
std::optional<std::vector<ir::Dim>> static_nchw(const ir::Type& type) {
  const auto* t = ir::as<ir::TensorTypeNode>(type);
  if (!t || !t->shape || t->shape->size() != 4 || t->dtype != DataType::float32())
    return std::nullopt;
  const std::vector<ir::Dim>& dims = *t->shape;
  for (size_t i = 1; i < 4; ++i)
    if (!dims[i].is_static()) return std::nullopt;
  if (dims[0].is_any()) return std::nullopt;
  return dims;
}

// The blocks of a grouped convolution (not depthwise) with in_per_group / out_per_group
// channels per group, whose data would be blocked by `data_block` on its own. Each channel
// block then lies inside one group, so the blocked compute indexes a group's input blocks
// directly. Groups narrower than the block are merged, `merged` at a time, into one group of
// a whole block whose weight is block diagonal: the zeros cost merged-fold multiply-adds, but
// the data keeps the block of the convolutions around it (no re-blocking copies) and each
// multiply-add fills a whole vector.
struct GroupedBlocks {
  int64_t block = 0;      // data and kernel input block
  int64_t out_block = 0;  // output block
  int64_t merged = 1;     // groups merged into one
};

std::optional<GroupedBlocks> grouped_blocks(int64_t in_per_group, int64_t out_per_group,
                                            int64_t groups, int64_t data_block, int lanes) {
  if (in_per_group % data_block == 0 && out_per_group % data_block == 0)
    return GroupedBlocks{data_block, data_block, 1};
  if (data_block % in_per_group == 0) {
    const int64_t merged = data_block / in_per_group;
    const int64_t out_block = channel_block(merged * out_per_group, lanes);
    if (groups % merged == 0 && out_block >= 4) return GroupedBlocks{data_block, out_block, merged};
  }
  // Wide groups whose width is no multiple of the data block (24 channels against 16) take
  // the largest block that divides both sides of a group.
  const int64_t block = channel_block(std::gcd(in_per_group, out_per_group), lanes);
  if (block >= 4) return GroupedBlocks{block, block, 1};
  return std::nullopt;
}

// The output channels a convolution computes for `channels` in blocks of `block`: rounded
// up to a whole vector when the block is less than one and the extra channels cost at most a
// sixteenth more work (each FMA then fills a whole vector instead of half or a quarter).
int64_t stored_output_channels(int64_t channels, int64_t block, int lanes) {
  if (block >= lanes) return channels;
  const int64_t rounded = (channels + lanes - 1) / lanes * lanes;
  return (rounded - channels) * 16 <= channels ? rounded : channels;
}

// Everything the rewrite needs, decided from types and attrs alone.
struct ConvBlocks {
  int64_t data_block = 0;    // NCHW{data_block}c of the data
  int64_t kernel_block = 0;  // input channels per weight block (1: depthwise)
  int64_t out_block = 0;
  int64_t stored_channels = 0;  // output channels computed (zero-padded up from C)
  int64_t groups = 1;           // groups of the blocked convolution
  int64_t merged = 1;           // groups of the call merged into one (block-diagonal weight)
};

// The blocks of the x86 blocked convolution for call, or why it does not apply.
std::variant<ConvBlocks, std::string> plan_conv(const ir::CallNode& call, const ir::Type& out_type,
                                                int lanes) {
  const ir::AttrsNode* raw = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  const auto* a = dynamic_cast<const ir::Conv2DAttrs*>(raw);
  if (!a || call.args.size() != 2) return std::string("not a two-operand conv2d");
  if (a->data_layout != "NCHW" || a->kernel_layout != "OIHW" ||
      !(a->out_layout.empty() || a->out_layout == "NCHW"))
    return "layouts " + a->data_layout + "/" + a->kernel_layout +
           ": the blocked form is made from NCHW/OIHW";
  if (a->out_dtype && *a->out_dtype != DataType::float32())
    return "out_dtype " + a->out_dtype->to_string() + ": only float32 is blocked";
  const std::optional<std::vector<ir::Dim>> in = static_nchw(call.args[0]->checked_type);
  const std::optional<std::vector<ir::Dim>> out = static_nchw(out_type);
  const std::optional<std::vector<ir::Dim>> w = static_nchw(call.args[1]->checked_type);
  if (!in || !out || !w || !(*w)[0].is_static())
    return std::string(
        "data, weight and output must be float32 NCHW with static channels and spatial dims");
  if (a->groups < 1) return "groups " + std::to_string(a->groups);
  const int64_t in_channels = (*in)[1].int_value(), out_channels = (*out)[1].int_value();
  const int64_t weight_out = (*w)[0].int_value();

  ConvBlocks plan;
  plan.data_block = plan.kernel_block = channel_block(in_channels, lanes);
  plan.stored_channels = out_channels;
  plan.groups = a->groups;
  if (a->groups > 1 && a->groups == in_channels && weight_out == a->groups) {
    // Depthwise (one input channel per group, one output channel per input channel) keeps
    // one block for data and output.
    plan.out_block = plan.data_block;
    plan.kernel_block = 1;
  } else if (a->groups > 1) {
    const int64_t in_per_group = in_channels / a->groups, out_per_group = out_channels / a->groups;
    std::optional<GroupedBlocks> grouped =
        grouped_blocks(in_per_group, out_per_group, a->groups, plan.data_block, lanes);
    if (!grouped)
      return "groups of " + std::to_string(in_per_group) + " input / " +
             std::to_string(out_per_group) +
             " output channels fit no channel block of 4 or more, whole or merged";
    plan.data_block = plan.kernel_block = grouped->block;
    plan.out_block = grouped->out_block;
    plan.merged = grouped->merged;
    plan.groups = a->groups / grouped->merged;
  } else {
    plan.out_block = channel_block(out_channels, lanes);
    plan.stored_channels = stored_output_channels(out_channels, plan.out_block, lanes);
    if (plan.stored_channels != out_channels) plan.out_block = lanes;
  }
  return plan;
}

// OIHW -> OIHW{ib}i{ob}o: w'[oo, io, h, w, ii, oi] = w[oo * ob + oi, io * ib + ii, h, w], with
// zero weights for the output channels from O up to stored_out (a multiple of ob, >= O).
Tensor pack_conv_weight(const Tensor& weight, int64_t ib, int64_t ob, int64_t stored_out) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], taps = s[2] * s[3];
  Tensor packed = Tensor::zeros({stored_out / ob, in / ib, s[2], s[3], ib, ob}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(packed.data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t t = 0; t < taps; ++t) {
        int64_t to = ((((o / ob) * (in / ib) + i / ib) * taps + t) * ib + i % ib) * ob + o % ob;
        dst[to] = src[(o * in + i) * taps + t];
      }
  return packed;
}

// The OIHW weight of a convolution in `groups` groups as that of groups / merged groups:
// output channel o of group g reads, in its merged group of merged * I channels, its own
// I channels at offset (g % merged) * I and zeros elsewhere.
Tensor block_diagonal_weight(const Tensor& weight, int64_t merged, int64_t groups) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], taps = s[2] * s[3], out_per_group = out / groups;
  Tensor wide = Tensor::zeros({out, in * merged, s[2], s[3]}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(wide.data());
  for (int64_t o = 0; o < out; ++o) {
    const int64_t offset = (o / out_per_group) % merged * in;
    for (int64_t i = 0; i < in; ++i)
      for (int64_t t = 0; t < taps; ++t)
        dst[(o * in * merged + offset + i) * taps + t] = src[(o * in + i) * taps + t];
  }
  return wide;
}

std::string check_conv(const ir::CallNode& call, const ir::Type& out_type, int lanes) {
  auto plan = plan_conv(call, out_type, lanes);
  return std::holds_alternative<std::string>(plan) ? std::get<std::string>(plan) : std::string();
}

LayoutRewrite rewrite_conv(const LayoutArgs& args) {
  auto planned = plan_conv(args.call, args.out_type, args.vector_lanes);
  if (const std::string* why = std::get_if<std::string>(&planned)) throw_error(*why);
  const ConvBlocks& plan = std::get<ConvBlocks>(planned);
  const auto* constant = ir::as<ir::ConstantNode>(args.arg(1));
  if (!constant) throw_error("the weight is not a constant (bind the params to pack it)");
  const Tensor& weight = constant->data;
  const auto& a = args.call.attrs_as<ir::Conv2DAttrs>();

  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  attrs->strides = a.strides;
  attrs->padding = a.padding;
  attrs->dilation = a.dilation;
  attrs->groups = plan.groups;
  attrs->channels = plan.stored_channels;
  attrs->kernel_size = {weight.shape()[2], weight.shape()[3]};
  attrs->data_layout = ir::blocked_layout(plan.data_block);
  attrs->kernel_layout =
      "OIHW" + std::to_string(plan.kernel_block) + "i" + std::to_string(plan.out_block) + "o";
  attrs->out_layout = ir::blocked_layout(plan.out_block);
  attrs->out_dtype = a.out_dtype;
  const Tensor kernel =
      plan.merged > 1 ? block_diagonal_weight(weight, plan.merged, a.groups) : weight;
  ir::Expr packed = ir::ConstantNode::make(
      pack_conv_weight(kernel, plan.kernel_block, plan.out_block, plan.stored_channels));
  ir::Expr conv = ir::call_op("nn.contrib_conv2d_NCHWc",
                              {args.data_blocked(plan.data_block), packed}, ir::Attrs(attrs));
  return LayoutRewrite{conv, plan.out_block, plan.stored_channels};
}

}  // namespace

void register_conv2d_layout() {
  register_layout("nn.conv2d", LayoutStrategy{"x86.conv2d_nchwc", check_conv, rewrite_conv});
}

}  // namespace anvil::topi::x86
