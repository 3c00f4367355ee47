// The blocked int8 convolutions on x86: qnn.contrib_conv2d_NCHWc, uint8 data times int8
// weights four input channels per vpdpbusd (the dot-product convolution of dot_conv.h), and
// qnn.contrib_depthwise_conv2d_NCHWc, vectorized over the channel block.
#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/tir/schedule.h"
#include "topi/x86/dot_conv.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

using tir::PrimExpr;

constexpr const char* kOp = "qnn.contrib_conv2d_NCHWc";
constexpr const char* kDepthwiseOp = "qnn.contrib_depthwise_conv2d_NCHWc";

std::vector<te::Tensor> conv2d_int8_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  te::Tensor padded = padded_input(args.inputs[0], args.inputs[2].at({}),
                                   ir::nn::expand_padding(a.padding, 2), kOp);
  return {dot_conv_compute(args, padded, u8i8_dot4(), kOp, "conv2d_NCHWc_int8")};
}

void schedule_conv2d_int8(tir::Schedule& sch, const ScheduleArgs& args) {
  schedule_dot_conv(sch, args, u8i8_dot4());
}

// qnn.contrib_depthwise_conv2d_NCHWc: out[n, cb, oh, ow, c] = sum over the taps of
// int32(padded[n, cb, ih, iw, c]) * int32(w[cb, 0, kh, kw, 0, c]), vectorized over c.
std::vector<te::Tensor> depthwise_int8_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const te::Tensor &data = args.inputs[0], &weight = args.inputs[1], &zero_point = args.inputs[2];
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  te::Tensor padded =
      padded_input(data, zero_point.at({}), ir::nn::expand_padding(a.padding, 2), kDepthwiseOp);
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
  register_compute(kDepthwiseOp, depthwise_int8_compute);
  register_strategy(kDepthwiseOp, "x86",
                    {.name = "x86.depthwise_int8",
                     .precisions = uint8,
                     .schedule = schedule_depthwise_int8,
                     .space = depthwise_int8_knob_space});
  register_compute(kOp, conv2d_int8_compute);
  register_dot_intrins(u8i8_dot4());
  register_strategy(kOp, "x86",
                    {.name = "x86.conv2d_int8",
                     .precisions = uint8,
                     .schedule = schedule_conv2d_int8,
                     .space = dot_conv_knob_space});
}

}  // namespace anvil::topi::x86
