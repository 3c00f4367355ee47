// qnn.contrib_conv2d_NCHWc on x86: uint8 data times int8 weights, four input
// channels per dot product. The weight is packed so that the 4 x ob int8 values
// one step of the reduction needs (four input channels of ob output channels)
// are 4 * ob contiguous bytes; the schedule keeps a register tile of output
// pixels x channel blocks of int32 accumulators, and each tile step is one
// u8i8_dot4_accumulate per accumulator (vpdpbusd with AVX-512 VNNI): the four
// input bytes of a pixel, broadcast, against the packed weight vector.
#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/tir/schedule.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

using tir::PrimExpr;

constexpr const char* kOp = "qnn.contrib_conv2d_NCHWc";

// The uint8 input padded with its zero point, as its own stage (see nn_conv.cpp: a
// one-term sum, so that the group scheduler keeps it rather than testing bounds in the inner
// loop).
te::Tensor padded_with_zero_point(const te::Tensor& data, const te::Tensor& zero_point,
                                  const std::vector<int64_t>& pad) {
  if (!(pad[0] || pad[1] || pad[2] || pad[3])) return data;
  const int64_t height = static_dim(data, 2, kOp, "data"), width = static_dim(data, 3, kOp, "data");
  tir::IterVar unit = te::reduce_axis(PrimExpr(int64_t(1)), "unit");
  return te::compute(
      {data.shape()[0], data.shape()[1], height + pad[0] + pad[2], width + pad[1] + pad[3],
       data.shape()[4]},
      [&](const std::vector<tir::Var>& i) {
        PrimExpr h = PrimExpr(i[2]), w = PrimExpr(i[3]);
        PrimExpr inside = tir::logical_and(
            tir::logical_and(h >= tir::make_int(pad[0]), h < tir::make_int(height + pad[0])),
            tir::logical_and(w >= tir::make_int(pad[1]), w < tir::make_int(width + pad[1])));
        return tir::sum(tir::call_intrin(data.dtype(), "if_then_else",
                                         {inside, data(i[0], i[1], h - pad[0], w - pad[1], i[4]),
                                          zero_point.at({})}),
                        {unit});
      },
      "pad_temp", {"n", "c_chunk", "h", "w", "c_block"});
}

std::vector<te::Tensor> conv2d_int8_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const te::Tensor &data = args.inputs[0], &weight = args.inputs[1], &zero_point = args.inputs[2];
  // With groups, output block o reads the in_blocks input blocks of its group.
  const int64_t in_blocks = static_dim(weight, 1, kOp, "weight"),
                in_bn = static_dim(data, 4, kOp, "data");
  const int64_t groups = std::max<int64_t>(1, a.groups);
  const int64_t out_blocks_per_group = static_dim(weight, 0, kOp, "weight") / groups;
  const int64_t kernel_h = static_dim(weight, 2, kOp, "weight"),
                kernel_w = static_dim(weight, 3, kOp, "weight");
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);

  te::Tensor padded = padded_with_zero_point(data, zero_point, pad);

  tir::IterVar ic_outer = te::reduce_axis(PrimExpr(in_blocks), "ic_outer");
  tir::IterVar kh = te::reduce_axis(PrimExpr(kernel_h), "kh");
  tir::IterVar kw = te::reduce_axis(PrimExpr(kernel_w), "kw");
  tir::IterVar ic_quad = te::reduce_axis(PrimExpr(in_bn / 4), "ic_quad");
  tir::IterVar ic_lane = te::reduce_axis(PrimExpr(int64_t(4)), "ic_lane");
  te::Tensor out = te::compute(
      args.out_shape(),
      [&](const std::vector<tir::Var>& i) {
        PrimExpr ih = PrimExpr(i[2]) * strides[0] + PrimExpr(kh.var) * dilation[0];
        PrimExpr iw = PrimExpr(i[3]) * strides[1] + PrimExpr(kw.var) * dilation[1];
        PrimExpr block = ic_outer.var;
        if (groups > 1)
          block = tir::floordiv(PrimExpr(i[1]), tir::make_int(out_blocks_per_group)) * in_blocks +
                  block;
        PrimExpr x = tir::cast(
            DataType::int32(),
            padded(i[0], block, ih, iw, PrimExpr(ic_quad.var) * 4 + PrimExpr(ic_lane.var)));
        PrimExpr w =
            tir::cast(DataType::int32(), weight(i[1], ic_outer.var, kh.var, kw.var, ic_quad.var,
                                                PrimExpr(i[4]) * 4 + PrimExpr(ic_lane.var)));
        return tir::sum(x * w, {ic_outer, kh, kw, ic_quad, ic_lane});
      },
      "conv2d_NCHWc_int8", {"n", "oc_chunk", "oh", "ow", "oc_block"});
  return {out};
}

// A buffer of the intrinsic's description: `shape` with symbolic strides and offset, so that
// any region of the conv's buffers binds to it.
tir::Buffer intrin_buffer(const std::string& name, DataType dtype, std::vector<PrimExpr> shape) {
  std::vector<PrimExpr> strides;
  for (size_t d = 0; d < shape.size(); ++d)
    strides.push_back(tir::VarNode::make(name + "_s" + std::to_string(d)));
  return tir::BufferNode::make_full(tir::VarNode::make(name, DataType::handle()), dtype, shape,
                                    strides, tir::VarNode::make(name + "_offset"), name, "global",
                                    1);
}

tir::PrimFunc intrin_func(const std::vector<tir::Buffer>& buffers, tir::Stmt body) {
  std::vector<tir::Var> params;
  std::vector<std::pair<tir::Var, tir::Buffer>> buffer_map;
  for (const tir::Buffer& b : buffers) {
    params.push_back(tir::VarNode::make(b->name + "_handle", DataType::handle()));
    buffer_map.emplace_back(params.back(), b);
  }
  return tir::PrimFuncNode::make(params, buffer_map, body);
}

// out[.., j] += sum over k < 4 of int32(data[.., k]) * int32(weight[.., 4j + k]) for the `lanes`
// channels j of one output block: the innermost two loops of the conv (oc_block, ic_lane),
// replaced by one u8i8_dot4_accumulate.
tir::TensorIntrin dot4_intrin(int64_t lanes) {
  auto zeros = [](size_t n) { return std::vector<PrimExpr>(n, tir::make_int(0)); };
  auto buffers = [&] {
    std::vector<PrimExpr> c_shape(4, tir::make_int(1)), a_shape(4, tir::make_int(1)),
        b_shape(5, tir::make_int(1));
    c_shape.push_back(tir::make_int(lanes));
    a_shape.push_back(tir::make_int(4));
    b_shape.push_back(tir::make_int(4 * lanes));
    return std::vector<tir::Buffer>{intrin_buffer("A", DataType::uint8(), a_shape),
                                    intrin_buffer("B", DataType::int8(), b_shape),
                                    intrin_buffer("C", DataType::int32(), c_shape)};
  };
  std::vector<tir::Buffer> desc = buffers();
  const tir::Buffer &a = desc[0], &b = desc[1], &c = desc[2];
  tir::Var j = tir::VarNode::make("j"), k = tir::VarNode::make("k");
  tir::IterVar vj{tir::VarNode::make("vj"), tir::Range{tir::make_int(0), tir::make_int(lanes)},
                  tir::IterKind::Spatial};
  tir::IterVar vk{tir::VarNode::make("vk"), tir::Range{tir::make_int(0), tir::make_int(4)},
                  tir::IterKind::Reduce};
  auto at = [&](size_t leading, PrimExpr last) {
    std::vector<PrimExpr> index = zeros(leading);
    index.push_back(last);
    return index;
  };
  PrimExpr product =
      tir::cast(DataType::int32(), tir::load(a, at(4, vk.var))) *
      tir::cast(DataType::int32(), tir::load(b, at(5, PrimExpr(vj.var) * 4 + PrimExpr(vk.var))));
  tir::Stmt update = tir::store(c, tir::load(c, at(4, vj.var)) + product, at(4, vj.var));
  tir::Block block = tir::BlockNode::make(
      {vj, vk},
      {tir::BufferRegion::full(c), tir::BufferRegion::full(a), tir::BufferRegion::full(b)},
      {tir::BufferRegion::full(c)}, "dot4", update);
  tir::Stmt nest = tir::BlockRealizeNode::make({j, k}, tir::const_true(), block);
  nest = tir::for_loop(k, 0, 4, nest);
  nest = tir::for_loop(j, 0, lanes, nest);
  tir::PrimFunc description = intrin_func(desc, nest);

  std::vector<tir::Buffer> impl = buffers();
  auto ramp = [](int64_t n) {
    return tir::RampNode::make(tir::make_int(0), tir::make_int(1), int(n));
  };
  PrimExpr acc = tir::load(impl[2], at(4, ramp(lanes)));
  PrimExpr dot = tir::call_intrin(
      DataType::int32().with_lanes(uint16_t(lanes)), "u8i8_dot4_accumulate",
      {acc, tir::load(impl[0], at(4, ramp(4))), tir::load(impl[1], at(5, ramp(4 * lanes)))});
  tir::PrimFunc implementation = intrin_func(impl, tir::store(impl[2], dot, at(4, ramp(lanes))));
  return {description, implementation};
}

std::string intrin_name(int64_t lanes) { return "x86.u8i8_dot4_x" + std::to_string(lanes); }

struct Conv2dInt8Knobs {
  int64_t oc_tile = 1;
  int64_t ow_block = 1;
};

Conv2dInt8Knobs default_knobs(int64_t oc_chunks, int64_t out_width, int vector_bits) {
  // As the float schedule: up to 2 channel blocks x 8 pixels of accumulators (16 of AVX-512's
  // 32 registers), 6 pixels on 16 registers.
  Conv2dInt8Knobs knobs;
  const int64_t max_pixels = vector_bits >= 512 ? 8 : 6;
  knobs.oc_tile = largest_divisor_at_most(oc_chunks, 2);
  // A divisor of the width: the tensorized tile must not be cut by a guard.
  knobs.ow_block = largest_divisor_at_most(out_width, max_pixels);
  // A width with no divisor near that (13 or 17: SqueezeNet's last maps) and an odd number of
  // channel blocks (125) would leave one or two accumulators, each step of the reduction
  // waiting for the previous one's result: take the tile of most accumulators that still fits
  // the registers instead (13 pixels x 1 block).
  if (knobs.ow_block * knobs.oc_tile < 8) {
    const int64_t budget = vector_bits >= 512 ? 24 : 12;
    int64_t best = knobs.ow_block * knobs.oc_tile;
    for (int64_t ow : divisors_up_to(out_width, budget))
      for (int64_t oc : divisors_up_to(oc_chunks, 6))
        if (ow * oc <= budget && ow * oc > best) {
          best = ow * oc;
          knobs.ow_block = ow;
          knobs.oc_tile = oc;
        }
  }
  return knobs;
}

std::vector<KnobSpace> int8_space(int64_t oc_chunks, int64_t out_width) {
  // Divisors of the width only: the tensorized tile must not be cut by a guard.
  return {{"oc_tile", divisors_up_to(oc_chunks, 6)}, {"ow_block", divisors_up_to(out_width, 28)}};
}

struct Int8Loops {
  std::vector<tir::LoopRV> loops;  // n, oc_chunk, oh, ow, oc_block | ic_outer, kh, kw, quad, lane
  int64_t oc_chunks, out_width, oc_bn;
  // A 1x1 output over a static batch (qnn.dense's rows, see qnn.cpp): the batch
  // is the dimension the register tile spans, in place of the width.
  bool rows = false;
  int64_t tile_extent = 0;  // the extent of the tiled loop: the width, or the batch
};

Int8Loops int8_loops(const tir::Schedule& sch, const ScheduleArgs& args) {
  Int8Loops l;
  l.loops = sch.get_loops(sch.get_block(args.anchor_block));
  if (l.loops.size() != 10)
    throw_error("int8 conv2d_NCHWc schedule: expected 10 loops, found ", l.loops.size());
  l.oc_chunks = sch.loop_extent(l.loops[1]).value_or(0);
  l.out_width = sch.loop_extent(l.loops[3]).value_or(0);
  l.oc_bn = sch.loop_extent(l.loops[4]).value_or(0);
  const int64_t batch = sch.loop_extent(l.loops[0]).value_or(0);
  l.rows = l.out_width == 1 && sch.loop_extent(l.loops[2]) == 1 && batch > 1;
  l.tile_extent = l.rows ? batch : l.out_width;
  if (l.oc_bn != 16 && l.oc_bn != 8 && l.oc_bn != 4)
    throw_error("int8 conv2d_NCHWc schedule: output block ", l.oc_bn, " is not 4, 8 or 16");
  return l;
}

void schedule_conv2d_int8(tir::Schedule& sch, const ScheduleArgs& args) {
  Int8Loops l = int8_loops(sch, args);
  // ow_block is the tile's extent along the width, or along the batch for rows.
  Conv2dInt8Knobs knobs = default_knobs(l.oc_chunks, l.tile_extent, args.vector_bits);
  apply_config(args, [&] { return int8_space(l.oc_chunks, l.tile_extent); }, "x86.conv2d_int8",
               {{"oc_tile", &knobs.oc_tile}, {"ow_block", &knobs.ow_block}});
  tir::BlockRV conv = sch.get_block(args.anchor_block);
  const std::vector<tir::LoopRV>& loops = l.loops;
  std::vector<tir::LoopRV> oc = sch.split(loops[1], {nullptr, tir::make_int(knobs.oc_tile)});
  std::vector<tir::LoopRV> tile =
      sch.split(loops[l.rows ? 0 : 3], {nullptr, tir::make_int(knobs.ow_block)});
  tir::LoopRV oc_block = loops[4], ic_outer = loops[5], kh = loops[6], kw = loops[7],
              quad = loops[8], lane = loops[9];
  // Rows: the batch's tile loops take the batch's place and the width's (of extent 1) stays
  // where the pixel tile's outer loop would be; the epilogue goes under that loop.
  tir::LoopRV outermost = l.rows ? tile[0] : loops[0], tile_outer = l.rows ? loops[3] : tile[0];
  sch.reorder({outermost, oc[0], loops[2], tile_outer, ic_outer, kh, kw, quad, tile[1], oc[1],
               oc_block, lane});
  tir::BlockRV init = sch.decompose_reduction(conv, ic_outer);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  sch.unroll(tile[1]);
  sch.unroll(oc[1]);
  sch.parallel(sch.fuse({outermost, oc[0], loops[2]}));
  schedule_padding(sch, args.vector_bits / 8);
  // The epilogue (requantization) goes under the pixel tile before the tile is tensorized: the
  // tensorized block's regions no longer say which outputs one tile writes.
  place_epilogue(sch, args.epilogue_blocks, tile_outer, l.oc_bn);
  sch.tensorize(oc_block, intrin_name(l.oc_bn));
}

std::vector<KnobSpace> conv2d_int8_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  Int8Loops l = int8_loops(sch, args);
  return int8_space(l.oc_chunks, l.tile_extent);
}

// qnn.contrib_depthwise_conv2d_NCHWc: out[n, cb, oh, ow, c] = sum over the taps of
// int32(padded[n, cb, ih, iw, c]) * int32(w[cb, 0, kh, kw, 0, c]), vectorized over c.
std::vector<te::Tensor> depthwise_int8_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const te::Tensor &data = args.inputs[0], &weight = args.inputs[1], &zero_point = args.inputs[2];
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  te::Tensor padded =
      padded_with_zero_point(data, zero_point, ir::nn::expand_padding(a.padding, 2));
  tir::IterVar kh = te::reduce_axis(weight.shape()[2], "kh");
  tir::IterVar kw = te::reduce_axis(weight.shape()[3], "kw");
  return {te::compute(args.out_shape(),
                      [&](const std::vector<tir::Var>& i) {
                        PrimExpr ih = PrimExpr(i[2]) * strides[0] + PrimExpr(kh.var) * dilation[0];
                        PrimExpr iw = PrimExpr(i[3]) * strides[1] + PrimExpr(kw.var) * dilation[1];
                        PrimExpr x = tir::cast(DataType::int32(), padded(i[0], i[1], ih, iw, i[4]));
                        PrimExpr w =
                            tir::cast(DataType::int32(), weight(i[1], 0, kh.var, kw.var, 0, i[4]));
                        return tir::sum(x * w, {kh, kw});
                      },
                      "depthwise_conv2d_NCHWc_int8", {"n", "c_chunk", "oh", "ow", "c_block"})};
}

std::vector<KnobSpace> depthwise_space(int64_t out_width) {
  std::vector<int64_t> widths;
  for (int64_t w : {1, 2, 4, 7, 8, 14, 16, 28})
    if (w <= out_width) widths.push_back(w);
  return {{"ow_block", widths}};
}

// The padded input rows that one task's output rows read, computed under the task's loop
// `rows` (vectorized over the channel block): no parallel pass of its own over the whole input,
// and the rows are still in L1 when the taps read them.
bool pad_rows_at(tir::Schedule& sch, const tir::LoopRV& row, int64_t lanes) {
  bool found = false;
  for (const tir::BlockRV& b : sch.get_child_blocks(sch.get_block("root")))
    found |= b.name == "pad_temp";
  if (!found) return false;
  return sch.try_apply("compute pad_temp under the row task", [&](tir::Schedule& s) {
    tir::BlockRV pad = s.get_block("pad_temp");
    s.compute_at(pad, row);
    // row, h, w, c_block (the one-term reduction's loop of extent 1 is not rebuilt)
    std::vector<tir::LoopRV> loops = s.get_loops(pad);
    if (s.loop_extent(loops.back()).value_or(0) <= lanes) s.vectorize(loops.back());
  });
}

// loops: n, c_chunk, oh, ow, c_block | kh, kw
std::vector<tir::LoopRV> depthwise_loops(const tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block(args.anchor_block));
  if (loops.size() != 7)
    throw_error("int8 depthwise schedule: expected 7 loops, found ", loops.size());
  return loops;
}

void schedule_depthwise_int8(tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> loops = depthwise_loops(sch, args);
  const int64_t out_width = sch.loop_extent(loops[3]).value_or(1);
  const int64_t lanes = sch.loop_extent(loops[4]).value_or(0);
  // Each accumulator is one vector; 8 pixels keep 8 of them, the taps' loads in between.
  int64_t ow_block = largest_divisor_at_most(out_width, 8);
  if (ow_block < 4 && out_width > 8) ow_block = 8;
  apply_config(args, [&] { return depthwise_space(out_width); }, "x86.depthwise_int8",
               {{"ow_block", &ow_block}});
  // Rows of 4 outputs a task: the padded input rows they read (4 + kernel - 1 at stride 1) are
  // built once for the 4, under the task.
  const int64_t oh_block = largest_divisor_at_most(sch.loop_extent(loops[2]).value_or(1), 4);
  tir::BlockRV conv = sch.get_block(args.anchor_block);
  std::vector<tir::LoopRV> ow = sch.split(loops[3], {nullptr, tir::make_int(ow_block)});
  std::vector<tir::LoopRV> oh = sch.split(loops[2], {nullptr, tir::make_int(oh_block)});
  sch.reorder({loops[0], loops[1], oh[0], oh[1], ow[0], loops[5], loops[6], ow[1], loops[4]});
  tir::BlockRV init = sch.decompose_reduction(conv, loops[5]);
  sch.vectorize(sch.get_loops(init).back());
  sch.vectorize(loops[4]);
  sch.unroll(ow[1]);
  tir::LoopRV rows = sch.fuse({loops[0], loops[1], oh[0]});
  sch.parallel(rows);
  if (!pad_rows_at(sch, rows, args.vector_bits / 8)) schedule_padding(sch, args.vector_bits / 8);
  place_epilogue(sch, args.epilogue_blocks, ow[0], lanes);
}

std::vector<KnobSpace> depthwise_int8_knob_space(const tir::Schedule& sch,
                                                 const ScheduleArgs& args) {
  return depthwise_space(sch.loop_extent(depthwise_loops(sch, args)[3]).value_or(1));
}

}  // namespace

void register_qnn_conv_strategies() {
  // The blocked int8 convolutions exist for these strategies: their computes are the ops' own.
  const std::vector<DataType> uint8 = {DataType::uint8()};
  register_compute("qnn.contrib_depthwise_conv2d_NCHWc", depthwise_int8_compute);
  register_strategy("qnn.contrib_depthwise_conv2d_NCHWc", "x86",
                    {.name = "x86.depthwise_int8",
                     .precisions = uint8,
                     .schedule = schedule_depthwise_int8,
                     .space = depthwise_int8_knob_space});
  register_compute(kOp, conv2d_int8_compute);
  for (int64_t lanes : {4, 8, 16})
    tir::register_tensor_intrin(intrin_name(lanes), dot4_intrin(lanes));
  register_strategy(kOp, "x86",
                    {.name = "x86.conv2d_int8",
                     .precisions = uint8,
                     .schedule = schedule_conv2d_int8,
                     .space = conv2d_int8_knob_space});
}

}  // namespace anvil::topi::x86
