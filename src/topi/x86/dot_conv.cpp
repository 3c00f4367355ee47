// The blocked dot-product convolutions on x86: compute, tensor intrinsics, schedule (see
// dot_conv.h).
#include "topi/x86/dot_conv.h"

#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {

using tir::PrimExpr;

std::string DotProduct::tensor_intrin(int64_t lanes) const {
  return "x86." + intrinsic.substr(0, intrinsic.find("_accumulate")) + "_x" + std::to_string(lanes);
}

const DotProduct& u8i8_dot4() {
  static const DotProduct dot{DataType::uint8(),      DataType::int8(), DataType::int32(), 4,
                              "u8i8_dot4_accumulate", "x86.conv2d_int8"};
  return dot;
}

const DotProduct& bf16_dot2() {
  static const DotProduct dot{DataType::bfloat16(),   DataType::bfloat16(), DataType::float32(), 2,
                              "bf16_dot2_accumulate", "x86.conv2d_bf16"};
  return dot;
}

te::Tensor padded_input(const te::Tensor& data, const PrimExpr& fill,
                        const std::vector<int64_t>& pad, const char* op) {
  if (!(pad[0] || pad[1] || pad[2] || pad[3])) return data;
  const int64_t height = static_dim(data, 2, op, "data"), width = static_dim(data, 3, op, "data");
  tir::IterVar unit = te::reduce_axis(PrimExpr(int64_t(1)), "unit");
  return te::compute(
      {data.shape()[0], data.shape()[1], height + pad[0] + pad[2], width + pad[1] + pad[3],
       data.shape()[4]},
      [&](const std::vector<tir::Var>& i) {
        PrimExpr h = PrimExpr(i[2]), w = PrimExpr(i[3]);
        PrimExpr inside = tir::logical_and(
            tir::logical_and(h >= tir::make_int(pad[0]), h < tir::make_int(height + pad[0])),
            tir::logical_and(w >= tir::make_int(pad[1]), w < tir::make_int(width + pad[1])));
        return tir::sum(
            tir::call_intrin(data.dtype(), "if_then_else",
                             {inside, data(i[0], i[1], h - pad[0], w - pad[1], i[4]), fill}),
            {unit});
      },
      "pad_temp", {"n", "c_chunk", "h", "w", "c_block"});
}

te::Tensor dot_conv_compute(const ComputeArgs& args, const te::Tensor& padded,
                            const DotProduct& dot, const char* op, const std::string& name) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const te::Tensor& weight = args.inputs[1];
  // With groups, output block o reads the in_blocks input blocks of its group.
  const int64_t in_blocks = static_dim(weight, 1, op, "weight"),
                in_bn = static_dim(padded, 4, op, "data");
  const int64_t groups = std::max<int64_t>(1, a.groups);
  const int64_t out_blocks_per_group = static_dim(weight, 0, op, "weight") / groups;
  const int64_t kernel_h = static_dim(weight, 2, op, "weight"),
                kernel_w = static_dim(weight, 3, op, "weight");
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  const int64_t depth = dot.depth;

  tir::IterVar ic_outer = te::reduce_axis(PrimExpr(in_blocks), "ic_outer");
  tir::IterVar kh = te::reduce_axis(PrimExpr(kernel_h), "kh");
  tir::IterVar kw = te::reduce_axis(PrimExpr(kernel_w), "kw");
  tir::IterVar ic_step = te::reduce_axis(PrimExpr(in_bn / depth), "ic_step");
  tir::IterVar ic_lane = te::reduce_axis(PrimExpr(depth), "ic_lane");
  return te::compute(
      args.out_shape(),
      [&](const std::vector<tir::Var>& i) {
        PrimExpr ih = PrimExpr(i[2]) * strides[0] + PrimExpr(kh.var) * dilation[0];
        PrimExpr iw = PrimExpr(i[3]) * strides[1] + PrimExpr(kw.var) * dilation[1];
        PrimExpr block = ic_outer.var;
        if (groups > 1)
          block = tir::floordiv(PrimExpr(i[1]), tir::make_int(out_blocks_per_group)) * in_blocks +
                  block;
        PrimExpr x = tir::cast(
            dot.accumulator,
            padded(i[0], block, ih, iw, PrimExpr(ic_step.var) * depth + PrimExpr(ic_lane.var)));
        PrimExpr w =
            tir::cast(dot.accumulator, weight(i[1], ic_outer.var, kh.var, kw.var, ic_step.var,
                                              PrimExpr(i[4]) * depth + PrimExpr(ic_lane.var)));
        return tir::sum(x * w, {ic_outer, kh, kw, ic_step, ic_lane});
      },
      name, {"n", "oc_chunk", "oh", "ow", "oc_block"});
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

namespace {

// out[.., j] += sum over k < depth of acc(data[.., k]) * acc(weight[.., depth * j + k]) for the
// `lanes` channels j of one output block: the innermost two loops of the conv (oc_block,
// ic_lane), replaced by one dot-product intrinsic.
tir::TensorIntrin dot_intrin(const DotProduct& dot, int64_t lanes) {
  const int64_t depth = dot.depth;
  auto zeros = [](size_t n) { return std::vector<PrimExpr>(n, tir::make_int(0)); };
  auto buffers = [&] {
    std::vector<PrimExpr> c_shape(4, tir::make_int(1)), a_shape(4, tir::make_int(1)),
        b_shape(5, tir::make_int(1));
    c_shape.push_back(tir::make_int(lanes));
    a_shape.push_back(tir::make_int(depth));
    b_shape.push_back(tir::make_int(depth * lanes));
    return std::vector<tir::Buffer>{intrin_buffer("A", dot.data, a_shape),
                                    intrin_buffer("B", dot.weight, b_shape),
                                    intrin_buffer("C", dot.accumulator, c_shape)};
  };
  std::vector<tir::Buffer> desc = buffers();
  const tir::Buffer &a = desc[0], &b = desc[1], &c = desc[2];
  tir::Var j = tir::VarNode::make("j"), k = tir::VarNode::make("k");
  tir::IterVar vj{tir::VarNode::make("vj"), tir::Range{tir::make_int(0), tir::make_int(lanes)},
                  tir::IterKind::Spatial};
  tir::IterVar vk{tir::VarNode::make("vk"), tir::Range{tir::make_int(0), tir::make_int(depth)},
                  tir::IterKind::Reduce};
  auto at = [&](size_t leading, PrimExpr last) {
    std::vector<PrimExpr> index = zeros(leading);
    index.push_back(last);
    return index;
  };
  PrimExpr product =
      tir::cast(dot.accumulator, tir::load(a, at(4, vk.var))) *
      tir::cast(dot.accumulator, tir::load(b, at(5, PrimExpr(vj.var) * depth + PrimExpr(vk.var))));
  tir::Stmt update = tir::store(c, tir::load(c, at(4, vj.var)) + product, at(4, vj.var));
  tir::Block block = tir::BlockNode::make(
      {vj, vk},
      {tir::BufferRegion::full(c), tir::BufferRegion::full(a), tir::BufferRegion::full(b)},
      {tir::BufferRegion::full(c)}, "dot", update);
  tir::Stmt nest = tir::BlockRealizeNode::make({j, k}, tir::const_true(), block);
  nest = tir::for_loop(k, 0, depth, nest);
  nest = tir::for_loop(j, 0, lanes, nest);
  tir::PrimFunc description = intrin_func(desc, nest);

  std::vector<tir::Buffer> impl = buffers();
  auto ramp = [](int64_t n) {
    return tir::RampNode::make(tir::make_int(0), tir::make_int(1), int(n));
  };
  PrimExpr acc = tir::load(impl[2], at(4, ramp(lanes)));
  PrimExpr step = tir::call_intrin(dot.accumulator.with_lanes(uint16_t(lanes)), dot.intrinsic,
                                   {acc, tir::load(impl[0], at(4, ramp(depth))),
                                    tir::load(impl[1], at(5, ramp(depth * lanes)))});
  tir::PrimFunc implementation = intrin_func(impl, tir::store(impl[2], step, at(4, ramp(lanes))));
  return {description, implementation};
}

struct DotConvKnobs {
  int64_t oc_tile = 1;
  int64_t ow_block = 1;
};

DotConvKnobs default_knobs(int64_t oc_chunks, int64_t out_width, int vector_bits) {
  // As the float schedule: up to 2 channel blocks x 8 pixels of accumulators (16 of AVX-512's
  // 32 registers), 6 pixels on 16 registers.
  DotConvKnobs knobs;
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

std::vector<KnobSpace> dot_space(int64_t oc_chunks, int64_t out_width) {
  // Divisors of the width only: the tensorized tile must not be cut by a guard.
  return {{"oc_tile", divisors_up_to(oc_chunks, 6)}, {"ow_block", divisors_up_to(out_width, 28)}};
}

struct DotConvLoops {
  std::vector<tir::LoopRV> loops;  // n, oc_chunk, oh, ow, oc_block | ic_outer, kh, kw, step, lane
  int64_t oc_chunks, out_width, oc_bn;
  // A 1x1 output over a static batch (the rows of a dense layer, see qnn.cpp and
  // nn_dense_bf16.cpp): the batch is the dimension the register tile spans, in place of the
  // width.
  bool rows = false;
  int64_t tile_extent = 0;  // the extent of the tiled loop: the width, or the batch
};

DotConvLoops dot_conv_loops(const tir::Schedule& sch, const ScheduleArgs& args) {
  DotConvLoops l;
  l.loops = sch.get_loops(sch.get_block(args.anchor_block));
  if (l.loops.size() != 10)
    throw_error("blocked dot-product conv2d schedule: expected 10 loops, found ", l.loops.size());
  l.oc_chunks = sch.loop_extent(l.loops[1]).value_or(0);
  l.out_width = sch.loop_extent(l.loops[3]).value_or(0);
  l.oc_bn = sch.loop_extent(l.loops[4]).value_or(0);
  const int64_t batch = sch.loop_extent(l.loops[0]).value_or(0);
  l.rows = l.out_width == 1 && sch.loop_extent(l.loops[2]) == 1 && batch > 1;
  l.tile_extent = l.rows ? batch : l.out_width;
  if (l.out_width == 0 || !sch.loop_extent(l.loops[2]))
    throw_error("blocked dot-product conv2d schedule: the output size is not static");
  if (l.oc_bn != 16 && l.oc_bn != 8 && l.oc_bn != 4)
    throw_error("blocked dot-product conv2d schedule: output block ", l.oc_bn,
                " is not 4, 8 or 16");
  return l;
}

}  // namespace

void register_dot_intrins(const DotProduct& dot) {
  for (int64_t lanes : {4, 8, 16})
    tir::register_tensor_intrin(dot.tensor_intrin(lanes), dot_intrin(dot, lanes));
}

void schedule_dot_conv(tir::Schedule& sch, const ScheduleArgs& args, const DotProduct& dot) {
  DotConvLoops l = dot_conv_loops(sch, args);
  // ow_block is the tile's extent along the width, or along the batch for rows.
  DotConvKnobs knobs = default_knobs(l.oc_chunks, l.tile_extent, args.vector_bits);
  apply_config(args, [&] { return dot_space(l.oc_chunks, l.tile_extent); }, dot.strategy,
               {{"oc_tile", &knobs.oc_tile}, {"ow_block", &knobs.ow_block}});
  tir::BlockRV conv = sch.get_block(args.anchor_block);
  const std::vector<tir::LoopRV>& loops = l.loops;
  std::vector<tir::LoopRV> oc = sch.split(loops[1], {nullptr, tir::make_int(knobs.oc_tile)});
  std::vector<tir::LoopRV> tile =
      sch.split(loops[l.rows ? 0 : 3], {nullptr, tir::make_int(knobs.ow_block)});
  tir::LoopRV oc_block = loops[4], ic_outer = loops[5], kh = loops[6], kw = loops[7],
              step = loops[8], lane = loops[9];
  // Rows: the batch's tile loops take the batch's place and the width's (of extent 1) stays
  // where the pixel tile's outer loop would be; the epilogue goes under that loop.
  tir::LoopRV outermost = l.rows ? tile[0] : loops[0], tile_outer = l.rows ? loops[3] : tile[0];
  sch.reorder({outermost, oc[0], loops[2], tile_outer, ic_outer, kh, kw, step, tile[1], oc[1],
               oc_block, lane});
  tir::BlockRV init = sch.decompose_reduction(conv, ic_outer);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  sch.unroll(tile[1]);
  sch.unroll(oc[1]);
  sch.parallel(sch.fuse({outermost, oc[0], loops[2]}));
  schedule_padding(sch, args.vector_bits / int(dot.data.bits));
  // The epilogue goes under the pixel tile before the tile is tensorized: the tensorized
  // block's regions no longer say which outputs one tile writes.
  place_epilogue(sch, args.epilogue_blocks, tile_outer, l.oc_bn);
  sch.tensorize(oc_block, dot.tensor_intrin(l.oc_bn));
}

std::vector<KnobSpace> dot_conv_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  DotConvLoops l = dot_conv_loops(sch, args);
  return dot_space(l.oc_chunks, l.tile_extent);
}

std::optional<std::vector<int64_t>> dense_output_shape(const ir::TensorTypeNode& data, int64_t n) {
  if (!data.shape || data.shape->size() < 2 || !data.shape->back().is_static()) return std::nullopt;
  std::vector<int64_t> shape;
  int symbolic = 0;
  for (size_t d = 0; d + 1 < data.shape->size(); ++d) {
    const ir::Dim& dim = (*data.shape)[d];
    if (dim.is_any()) return std::nullopt;
    symbolic += !dim.is_static();
    shape.push_back(dim.is_static() ? dim.int_value() : -1);
  }
  if (symbolic > 1) return std::nullopt;
  shape.push_back(n);
  return shape;
}

}  // namespace anvil::topi::x86
