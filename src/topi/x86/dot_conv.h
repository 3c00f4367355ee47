// The blocked x86 convolutions whose innermost step is a short dot product over input channels:
// uint8 x int8 four channels deep into int32 (vpdpbusd with AVX-512 VNNI), bfloat16 x bfloat16
// two deep into float32 (vdpbf16ps with AVX-512 BF16). One compute, one tensor intrinsic per
// output block and one schedule serve both; only the element types and the depth differ.
//
// The weight is packed so that the depth x ob values one step of the reduction needs (depth
// input channels of ob output channels) are contiguous; the schedule keeps a register tile of
// output pixels x channel blocks of accumulators, and each tile step is one dot-product
// intrinsic per accumulator: the depth input values of a pixel, broadcast, against the packed
// weight vector.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/te/te.h"
#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::topi::x86 {

struct DotProduct {
  DataType data, weight, accumulator;
  int64_t depth = 0;      // input channels summed by one step
  std::string intrinsic;  // the TIR intrinsic of one step ("u8i8_dot4_accumulate")
  std::string strategy;   // the schedule's strategy and knob-config name ("x86.conv2d_int8")

  // The tensor intrinsic of one step over an output block of `lanes` channels.
  std::string tensor_intrin(int64_t lanes) const;
};

// uint8 data, int8 weights, int32 sums, four channels a step.
const DotProduct& u8i8_dot4();
// bfloat16 data and weights, float32 sums, two channels a step.
const DotProduct& bf16_dot2();

// The input (N, CB, H, W, ib) padded with `fill` as its own stage "pad_temp" (a one-term sum,
// so that the group scheduler keeps it rather than testing bounds in the inner loop); the
// input itself when pad is all zeros. H and W must be static.
te::Tensor padded_input(const te::Tensor& data, const tir::PrimExpr& fill,
                        const std::vector<int64_t>& pad, const char* op);

// The blocked convolution of padded data (N, CB, H', W', ib) by a weight packed
// (OB, CB/groups, KH, KW, ib/depth, ob*depth) into (N, OB, OH, OW, ob) of the accumulator type.
// Its loops: n, oc_chunk, oh, ow, oc_block | ic_outer, kh, kw, step, lane.
te::Tensor dot_conv_compute(const ComputeArgs& args, const te::Tensor& padded,
                            const DotProduct& dot, const char* op, const std::string& name);

// A parameter buffer of a tensor intrinsic: `shape` with symbolic strides and offset, so that
// any region of a kernel's buffers binds to it.
tir::Buffer intrin_buffer(const std::string& name, DataType dtype,
                          std::vector<tir::PrimExpr> shape);
// A tensor intrinsic's description or implementation over these parameter buffers.
tir::PrimFunc intrin_func(const std::vector<tir::Buffer>& buffers, tir::Stmt body);

// Registers the tensor intrinsics of dot for output blocks of 4, 8 and 16 channels.
void register_dot_intrins(const DotProduct& dot);

// The register-tiled schedule of dot_conv_compute's block, tensorized on the output block; a
// 1x1 output over a static batch (a dense layer's rows) tiles the batch in place of the width.
void schedule_dot_conv(tir::Schedule& sch, const ScheduleArgs& args, const DotProduct& dot);
std::vector<KnobSpace> dot_conv_knob_space(const tir::Schedule& sch, const ScheduleArgs& args);

// Rows of a dense layer that schedule_dot_conv tiles at a time, as the batch of a 1x1
// convolution with one pixel.
inline constexpr int64_t kRowTile = 8;

// The leading dims of a dense layer's data (..., K) as a reshape target with N last: static
// dims as they are, at most one symbolic dim as -1; nullopt when the data's shape does not
// allow it.
std::optional<std::vector<int64_t>> dense_output_shape(const ir::TensorTypeNode& data, int64_t n);

}  // namespace anvil::topi::x86
