// nn.contrib_conv2d_NCHWc on x86: the TE compute of the blocked convolution and its schedule.
// The schedule keeps a register tile of up to 8 output pixels x 2 vectors of oc_bn output
// channels in accumulators while the reduction (input-channel blocks, kernel taps, the
// channels of one block) runs around it: each weight vector load feeds up to 8 FMAs and each
// input value, broadcast, feeds 2.
#include "topi/x86/conv2d_nchwc.h"

#include <algorithm>
#include <cctype>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

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

  const int64_t in_blocks = static_dim(data, 1, kOp, "data"),
                height = static_dim(data, 2, kOp, "data"), width = static_dim(data, 3, kOp, "data"),
                in_bn = static_dim(data, 4, kOp, "data");
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
        {data.shape()[0], in_blocks, height + pad[0] + pad[2], width + pad[1] + pad[3], in_bn},
        [&](const std::vector<tir::Var>& i) {
          PrimExpr h = PrimExpr(i[2]), w = PrimExpr(i[3]);
          PrimExpr inside = tir::logical_and(
              tir::logical_and(h >= tir::make_int(pad[0]), h < tir::make_int(height + pad[0])),
              tir::logical_and(w >= tir::make_int(pad[1]), w < tir::make_int(width + pad[1])));
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
  place_epilogue(sch, args.epilogue_blocks, ow[0], oc_bn);
}

}  // namespace

void register_conv2d_nchwc_compute() {
  register_compute("nn.contrib_conv2d_NCHWc", conv2d_nchwc_compute);
}

Conv2dNCHWcKnobs default_conv2d_nchwc_knobs(const Conv2dNCHWcShape& shape, int vector_bits) {
  const int64_t lanes = vector_bits / 32;
  if (shape.oc_chunks <= 0 || shape.out_width <= 0 || shape.oc_bn <= 0 || shape.oc_bn > lanes)
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
  // tile of one or two pixels.
  if (knobs.ow_block < 4 && shape.out_width > max_pixels) knobs.ow_block = max_pixels;
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
    if (w <= shape.out_width) widths.push_back(w);
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

}  // namespace anvil::topi::x86
