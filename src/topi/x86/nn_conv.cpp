// The layout strategy of nn.conv2d on x86: the convolution moves to the blocked NCHW{b}c
// layout as nn.contrib_conv2d_NCHWc, its OIHW weight re-packed at compile time into
// OIHW{ib}i{ob}o, so that one weight vector holds ob output channels of one input channel and
// the schedule (below) broadcasts an input value against it. Grouped convolutions
// keep the block of their data when their groups allow it; what cannot be blocked says why.
//
// nn.contrib_conv2d_NCHWc on x86: the TE compute of the blocked convolution and its schedule.
// The schedule keeps a register tile of up to 8 output pixels x 2 vectors of oc_bn output
// channels in accumulators while the reduction (input-channel blocks, kernel taps, the
// channels of one block) runs around it: each weight vector load feeds up to 8 FMAs and each
// input value, broadcast, feeds 2.
#include "topi/x86/nn_conv.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>
#include <variant>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/ir/op.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

// The dims of a 4-D float32 tensor type whose channels are static (the batch, height and width
// may be size variables: one package then serves every batch and image size; the weight's
// are all static); nullopt otherwise.
std::optional<std::vector<ir::Dim>> static_nchw(const ir::Type& type, bool symbolic_spatial) {
  const auto* t = ir::as<ir::TensorTypeNode>(type);
  if (!t || !t->shape || t->shape->size() != 4 || t->dtype != DataType::float32())
    return std::nullopt;
  const std::vector<ir::Dim>& dims = *t->shape;
  for (size_t i = 0; i < 4; ++i) {
    const bool may_be_symbolic = i == 0 || (symbolic_spatial && i >= 2);
    if (dims[i].is_any() || (!may_be_symbolic && !dims[i].is_static())) return std::nullopt;
  }
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
  const std::optional<std::vector<ir::Dim>> in = static_nchw(call.args[0]->checked_type, true);
  const std::optional<std::vector<ir::Dim>> out = static_nchw(out_type, true);
  const std::optional<std::vector<ir::Dim>> w = static_nchw(call.args[1]->checked_type, false);
  if (!in || !out || !w || !(*w)[0].is_static())
    return std::string(
        "data, weight and output must be float32 NCHW with static channels (and a static "
        "weight)");
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

using tir::PrimExpr;

constexpr const char* kOp = "nn.contrib_conv2d_NCHWc";

// True when layout is `primal` followed by blocks "<digits><letter>" whose letters are exactly
// `sub_axes` in order (e.g. "OIHW" + "16i16o" for sub_axes "io").
bool has_blocked_form(const std::string& layout, const std::string& primal,
                      const std::string& sub_axes) {
  if (layout.compare(0, primal.size(), primal) != 0) return false;
  size_t pos = primal.size();
  for (char sub : sub_axes) {
    size_t digits = pos;
    while (digits < layout.size() && std::isdigit(static_cast<unsigned char>(layout[digits])))
      ++digits;
    if (digits == pos || digits >= layout.size() || layout[digits] != sub) return false;
    pos = digits + 1;
  }
  return pos == layout.size();
}

std::vector<te::Tensor> conv2d_nchwc_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const std::string& out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  if (!has_blocked_form(a.data_layout, "NCHW", "c") || !has_blocked_form(out_layout, "NCHW", "c"))
    throw_error("nn.contrib_conv2d_NCHWc: data_layout \"", a.data_layout, "\" / out_layout \"",
                out_layout, "\" must have the form NCHW<x>c");
  if (!has_blocked_form(a.kernel_layout, "OIHW", "io"))
    throw_error("nn.contrib_conv2d_NCHWc: kernel_layout \"", a.kernel_layout,
                "\" must have the form OIHW<x>i<y>o");
  if (args.inputs.size() != 2 || !args.inputs[0].get() || !args.inputs[1].get())
    throw_error("nn.contrib_conv2d_NCHWc: expects data and weight");
  te::Tensor data = args.inputs[0], weight = args.inputs[1];
  DataType out_dtype = args.out_dtype();

  // Height and width may be size variables (an image size chosen at run time).
  const int64_t in_blocks = static_dim(data, 1, kOp, "data"),
                in_bn = static_dim(data, 4, kOp, "data");
  const PrimExpr height = data.shape()[2], width = data.shape()[3];
  const int64_t w_out_blocks = static_dim(weight, 0, kOp, "weight");
  const int64_t w_in_blocks = static_dim(weight, 1, kOp, "weight");
  const int64_t kernel_h = static_dim(weight, 2, kOp, "weight"),
                kernel_w = static_dim(weight, 3, kOp, "weight");
  const int64_t w_in_bn = static_dim(weight, 4, kOp, "weight"),
                w_out_bn = static_dim(weight, 5, kOp, "weight");
  std::vector<PrimExpr> out_shape = args.out_shape();
  const int64_t out_bn = *tir::as_const_int(out_shape[4]);

  const int64_t groups = a.groups;
  const int64_t in_per_group = w_in_blocks * w_in_bn;
  const int64_t out_per_group = w_out_blocks * w_out_bn / groups;
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);

  // The zero-padded input as its own stage. It is written as a one-term sum so that the group
  // scheduler keeps it (it inlines every spatial producer): inlined, the bounds test would sit
  // on every multiply-add of the innermost loops and cost more than a whole padded copy.
  te::Tensor padded = data;
  if (pad[0] || pad[1] || pad[2] || pad[3]) {
    PrimExpr zero = tir::make_const(data.dtype(), 0);
    tir::IterVar unit = te::reduce_axis(PrimExpr(int64_t(1)), "unit");
    padded = te::compute(
        {data.shape()[0], tir::make_int(in_blocks), height + (pad[0] + pad[2]),
         width + (pad[1] + pad[3]), tir::make_int(in_bn)},
        [&](const std::vector<tir::Var>& i) {
          PrimExpr h = PrimExpr(i[2]), w = PrimExpr(i[3]);
          PrimExpr inside =
              tir::logical_and(tir::logical_and(h >= tir::make_int(pad[0]), h < height + pad[0]),
                               tir::logical_and(w >= tir::make_int(pad[1]), w < width + pad[1]));
          return tir::sum(
              tir::call_intrin(data.dtype(), "if_then_else",
                               {inside, data(i[0], i[1], h - pad[0], w - pad[1], i[4]), zero}),
              {unit});
        },
        "pad_temp", {"n", "c_chunk", "h", "w", "c_block"});
  }

  tir::IterVar ic_outer = te::reduce_axis(PrimExpr(w_in_blocks), "ic_outer");
  tir::IterVar kh = te::reduce_axis(PrimExpr(kernel_h), "kh");
  tir::IterVar kw = te::reduce_axis(PrimExpr(kernel_w), "kw");
  tir::IterVar ic_inner = te::reduce_axis(PrimExpr(w_in_bn), "ic_inner");
  // The common cases index the blocked axes directly, so the innermost loops address memory
  // without divisions: equal data and kernel input blocks, with groups whose channels are
  // whole blocks (output block o then reads the input blocks of its group, a division on the
  // outer loop only), and depthwise (one input channel per output channel) with equal data
  // and output blocks, where output channel c reads input channel c.
  const bool direct_output = out_bn == w_out_bn;
  const bool direct_input =
      in_bn == w_in_bn &&
      (groups == 1 || (direct_output && in_per_group % in_bn == 0 && out_per_group % out_bn == 0));
  const bool depthwise = in_per_group == 1 && out_per_group == 1 && in_bn == out_bn;
  te::Tensor out = te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& i) {
        PrimExpr oc = PrimExpr(i[1]) * out_bn + i[4];
        PrimExpr ih = PrimExpr(i[2]) * strides[0] + PrimExpr(kh.var) * dilation[0];
        PrimExpr iw = PrimExpr(i[3]) * strides[1] + PrimExpr(kw.var) * dilation[1];
        PrimExpr in_outer = ic_outer.var, in_inner = ic_inner.var;
        if (depthwise) {
          in_outer = i[1];
          in_inner = i[4];
        } else if (direct_input && groups > 1) {
          in_outer = tir::floordiv(PrimExpr(i[1]), tir::make_int(out_per_group / out_bn)) *
                         (in_per_group / in_bn) +
                     ic_outer.var;
        } else if (!direct_input) {
          PrimExpr ic = tir::floordiv(oc, tir::make_int(out_per_group)) * in_per_group +
                        PrimExpr(ic_outer.var) * w_in_bn + ic_inner.var;
          in_outer = tir::floordiv(ic, tir::make_int(in_bn));
          in_inner = tir::floormod(ic, tir::make_int(in_bn));
        }
        PrimExpr w_outer = i[1], w_inner = i[4];
        if (!direct_output) {
          w_outer = tir::floordiv(oc, tir::make_int(w_out_bn));
          w_inner = tir::floormod(oc, tir::make_int(w_out_bn));
        }
        PrimExpr x = tir::cast(out_dtype, padded(i[0], in_outer, ih, iw, in_inner));
        PrimExpr w = tir::cast(
            out_dtype, weight(w_outer, ic_outer.var, kh.var, kw.var, ic_inner.var, w_inner));
        return tir::sum(x * w, {ic_outer, kh, kw, ic_inner});
      },
      "conv2d_NCHWc", {"n", "oc_chunk", "oh", "ow", "oc_block"});
  return {out};
}

// The conv nest tiled with ow_block pixels (a split that leaves a guard when it does not
// divide the width) x oc_tile channel blocks, the padding copy and the epilogue placed.
void tile_conv(tir::Schedule& sch, const ScheduleArgs& args, const Conv2dNCHWcKnobs& knobs) {
  tir::BlockRV conv = sch.get_block(args.anchor_block);
  std::vector<tir::LoopRV> loops = sch.get_loops(conv);
  // n, oc_chunk, oh, ow, oc_block | ic_outer, kh, kw, ic_inner
  const int64_t oc_bn = sch.loop_extent(loops[4]).value_or(0);
  // A convolution that writes the group's output itself accumulates in it, and LLVM keeps such
  // accumulators in registers only where it proves the output apart from the operands: over a
  // symbolic height or width it did not, and every multiply-add loaded and stored its
  // accumulator (a 1x1 960 -> 320 convolution at 7x9 ran 3.6x slower than with static sizes).
  // A tile-sized local accumulator, copied out after the reduction, is registers whatever
  // the sizes.
  std::vector<std::string> epilogue = args.epilogue_blocks;
  const bool symbolic = !sch.loop_extent(loops[2]) || !sch.loop_extent(loops[3]);
  if (epilogue.empty() && symbolic) epilogue.push_back(sch.cache_write(conv, 0, "local").name);
  std::vector<tir::LoopRV> oc = sch.split(loops[1], {nullptr, tir::make_int(knobs.oc_tile)});
  std::vector<tir::LoopRV> ow = sch.split(loops[3], {nullptr, tir::make_int(knobs.ow_block)});
  tir::LoopRV oc_block = loops[4], ic_outer = loops[5], kh = loops[6], kw = loops[7],
              ic_inner = loops[8];
  sch.reorder(
      {loops[0], oc[0], loops[2], ow[0], ic_outer, kh, kw, ic_inner, ow[1], oc[1], oc_block});
  tir::BlockRV init = sch.decompose_reduction(conv, ic_outer);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  for (size_t i = init_loops.size() - 3; i + 1 < init_loops.size(); ++i) sch.unroll(init_loops[i]);
  sch.vectorize(oc_block);
  sch.unroll(ow[1]);
  sch.unroll(oc[1]);
  if (knobs.ic_unroll > 1) {
    const int64_t ic_bn = sch.loop_extent(ic_inner).value_or(0);
    if (knobs.ic_unroll >= ic_bn) {
      sch.unroll(ic_inner);
    } else {
      std::vector<tir::LoopRV> ic = sch.split(ic_inner, {nullptr, tir::make_int(knobs.ic_unroll)});
      sch.unroll(ic[1]);
    }
  }
  tir::LoopRV parallel = sch.fuse({loops[0], oc[0], loops[2]});
  sch.parallel(parallel);
  schedule_padding(sch, args.vector_bits / 32);
  place_epilogue(sch, epilogue, ow[0], oc_bn);
}

}  // namespace

Conv2dNCHWcKnobs default_conv2d_nchwc_knobs(const Conv2dNCHWcShape& shape, int vector_bits) {
  const int64_t lanes = vector_bits / 32;
  if (shape.oc_chunks <= 0 || shape.out_width < 0 || shape.oc_bn <= 0 || shape.oc_bn > lanes)
    throw_error("conv2d_NCHWc schedule: oc block ", shape.oc_bn, " does not fit one vector");
  Conv2dNCHWcKnobs knobs;
  // Register tile: two oc blocks x up to 8 output pixels = 16 accumulators. Each input value
  // (a broadcast) then feeds two FMAs and each weight vector up to eight; wider tiles run out
  // of the 32 vector registers and spill (measured: 28 accumulators lose ~40%). AVX2 has 16
  // registers, so there the tile keeps at most 12 accumulators.
  int64_t max_pixels = vector_bits >= 512 ? 8 : 6;
  knobs.oc_tile = largest_divisor_at_most(shape.oc_chunks, 2);
  const bool grouped = shape.groups > 1 && shape.in_per_group > 1;
  if (grouped) {
    // The blocks of one tile share their input only inside one group: the tile takes the
    // blocks of a group (at most two), and a group of one block takes more pixels instead,
    // each FMA reading its broadcast input from memory.
    const int64_t group_blocks = std::max<int64_t>(1, shape.oc_chunks / shape.groups);
    knobs.oc_tile = largest_divisor_at_most(group_blocks, 2);
    if (knobs.oc_tile == 1) max_pixels = vector_bits >= 512 ? 14 : 8;
  } else if (shape.oc_bn * 2 <= lanes && shape.groups == 1) {
    // A block narrower than the vector (8 channels of 1000 = 8 x 125, the classifier of
    // SqueezeNet) holds half as much per register: more blocks per tile (up to 6, fewer pixels
    // so that the tile stays within 25 accumulators: 5 blocks x 5 pixels, plus 5 weight
    // vectors and a broadcast, fills the 32 registers; 12 of AVX2's 16) keep the FMA units as
    // busy. (Depthwise convolutions, with no input-channel reduction, keep the plain tile.)
    knobs.oc_tile = largest_divisor_at_most(shape.oc_chunks, 6);
    const int64_t accumulators = vector_bits >= 512 ? 25 : 12;
    max_pixels = std::max<int64_t>(2, std::min<int64_t>(max_pixels, accumulators / knobs.oc_tile));
  }
  knobs.ow_block = largest_divisor_at_most(shape.out_width, max_pixels);
  // Widths without a divisor of 4 or more (17, 73, ...) take a guarded tile rather than a
  // tile of one or two pixels; so does a width known only at run time (out_width 0).
  if (knobs.ow_block < 4 && (shape.out_width > max_pixels || shape.out_width == 0))
    knobs.ow_block = max_pixels;
  // The channels of an input block are unrolled a few at a time, not all 16: LLVM hoists the
  // broadcasts of a fully unrolled block ahead of their FMAs and spills them (91 stack accesses
  // in the loop of a 1x1 256 -> 256 convolution at 16, none at 4), which cost ResNeXt-50's
  // 1x1 convolutions a third of their speed. Tiles of more than 16 accumulators take 2.
  const int64_t accumulators = knobs.oc_tile * knobs.ow_block;
  const int64_t unroll = accumulators <= 16 ? 4 : 2;
  knobs.ic_unroll = shape.ic_bn % unroll == 0 ? unroll : 1;
  return knobs;
}

Conv2dNCHWcShape conv2d_nchwc_shape(const tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block(args.anchor_block));
  if (loops.size() != 9)
    throw_error("conv2d_NCHWc schedule: expected 9 loops, found ", loops.size());
  Conv2dNCHWcShape shape;
  shape.oc_chunks = sch.loop_extent(loops[1]).value_or(0);
  shape.out_width = sch.loop_extent(loops[3]).value_or(0);
  shape.oc_bn = sch.loop_extent(loops[4]).value_or(0);
  shape.ic_bn = sch.loop_extent(loops[8]).value_or(0);
  shape.groups = args.anchor.attrs_as<ir::Conv2DAttrs>().groups;
  // The weight (O/ob, I/ib, kh, kw, ib, ob) holds one group's input channels.
  if (args.anchor.args.size() == 2)
    if (const auto* w = ir::as<ir::TensorTypeNode>(args.anchor.args[1]->checked_type))
      if (std::optional<std::vector<int64_t>> dims = w->static_shape(); dims && dims->size() == 6)
        shape.in_per_group = (*dims)[1] * (*dims)[4];
  return shape;
}

std::vector<KnobSpace> conv2d_nchwc_space(const Conv2dNCHWcShape& shape, int vector_bits) {
  const Conv2dNCHWcKnobs defaults = default_conv2d_nchwc_knobs(shape, vector_bits);
  const bool grouped = shape.groups > 1 && shape.in_per_group > 1;
  const int64_t blocks =
      grouped ? std::max<int64_t>(1, shape.oc_chunks / shape.groups) : shape.oc_chunks;
  std::vector<int64_t> widths;
  for (int64_t w : {1, 2, 3, 4, 5, 6, 7, 8, 12, 14, 16, 28})
    if (w <= shape.out_width || shape.out_width == 0) widths.push_back(w);
  if (std::find(widths.begin(), widths.end(), defaults.ow_block) == widths.end()) {
    widths.push_back(defaults.ow_block);
    std::sort(widths.begin(), widths.end());
  }
  return {{"oc_tile", divisors_up_to(blocks, 6)},
          {"ow_block", widths},
          {"ic_unroll", divisors_up_to(std::max<int64_t>(1, shape.ic_bn), 16)}};
}

Conv2dNCHWcKnobs conv2d_nchwc_knobs(const Conv2dNCHWcShape& shape, const ScheduleArgs& args) {
  Conv2dNCHWcKnobs knobs = default_conv2d_nchwc_knobs(shape, args.vector_bits);
  apply_config(args, [&] { return conv2d_nchwc_space(shape, args.vector_bits); },
               "x86.conv2d_nchwc",
               {{"oc_tile", &knobs.oc_tile},
                {"ow_block", &knobs.ow_block},
                {"ic_unroll", &knobs.ic_unroll}});
  return knobs;
}

void schedule_conv2d_nchwc(tir::Schedule& sch, const ScheduleArgs& args) {
  const Conv2dNCHWcShape shape = conv2d_nchwc_shape(sch, args);
  tile_conv(sch, args, conv2d_nchwc_knobs(shape, args));
}

std::vector<KnobSpace> conv2d_nchwc_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  return conv2d_nchwc_space(conv2d_nchwc_shape(sch, args), args.vector_bits);
}

void register_nn_conv_strategies() {
  // The blocked convolution exists for this strategy: its compute is the op's own.
  register_compute(kOp, conv2d_nchwc_compute);
  const std::vector<DataType> f32 = {DataType::float32()};
  register_strategy("nn.conv2d", "x86",
                    {.name = "x86.conv2d_nchwc",
                     .precisions = f32,
                     .layout_role = LayoutRole::Anchor,
                     .layout = {check_conv, rewrite_conv}});
  register_strategy(kOp, "x86",
                    {.name = "x86.conv2d_nchwc",
                     .precisions = f32,
                     .schedule = schedule_conv2d_nchwc,
                     .space = conv2d_nchwc_knob_space});
}

}  // namespace anvil::topi::x86
