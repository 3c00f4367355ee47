// nn.contrib_conv2d_winograd_NCHWc on x86: Winograd F(4x4, 3x3) in the blocked layout as four
// stages of one kernel (docs/winograd.md):
//   pad_temp      the zero-padded input, extended so that whole 4x4 output tiles fit
//   winograd_V    V = B^T d B per 6x6 input patch, vectorized over the channel block
//   winograd_M    M[e][p][oc] = sum_ic V[e][p][ic] * U[e][ic][oc] for the 36 points e: a batched
//                 GEMM with a register tile of tile rows p x up to 4 vectors of oc
//   output        Y = A^T M A written to NCHW{ob}c, the fused epilogue after each 4x4 tile
// Every stage is a reduction (the transforms are one-term sums) so that the group scheduler,
// which inlines spatial producers, keeps them as stages. The transforms' coefficients are
// chosen by select on the tile point; the schedule unrolls those loops, the selects fold, and
// each unrolled copy is a short sum of the nonzero terms.
#include "topi/x86/nn_conv_winograd.h"

#include <array>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/ir/winograd.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

using tir::PrimExpr;

using winograd::kInputTransform;
using winograd::kOutputTransform;

constexpr const char* kOp = "nn.contrib_conv2d_winograd_NCHWc";

// sum_k coefficient(k) * term(k) over the nonzero coefficients, without multiplying by +-1.
template <typename Coefficient, typename Term>
PrimExpr linear_combination(int count, Coefficient coefficient, Term term, DataType dtype) {
  PrimExpr sum;
  for (int k = 0; k < count; ++k) {
    int c = coefficient(k);
    if (c == 0) continue;
    PrimExpr t = term(k);
    if (c != 1 && c != -1) t = tir::make_const(dtype, double(c)) * t;
    if (!sum.get())
      sum = c == -1 ? -t : t;
    else
      sum = c == -1 ? sum - t : sum + t;
  }
  return sum.get() ? sum : tir::make_const(dtype, 0);
}

// select(index == 0, leaf(0), select(index == 1, leaf(1), ...)) over [0, count).
template <typename Leaf>
PrimExpr select_by(const PrimExpr& index, int count, Leaf leaf) {
  PrimExpr result = leaf(count - 1);
  for (int k = count - 2; k >= 0; --k)
    result = tir::select(tir::eq(index, tir::make_int(k)), leaf(k), result);
  return result;
}

// A one-term sum, so that the group scheduler keeps the stage instead of inlining it.
PrimExpr as_stage(const PrimExpr& value, const std::string& name) {
  tir::IterVar unit = te::reduce_axis(PrimExpr(int64_t(1)), name + "_unit");
  return tir::sum(value, {unit});
}

std::vector<te::Tensor> conv2d_winograd_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  if (args.inputs.size() != 2 || !args.inputs[0].get() || !args.inputs[1].get())
    throw_error("nn.contrib_conv2d_winograd_NCHWc: expects data and weight");
  te::Tensor data = args.inputs[0], weight = args.inputs[1];
  if (data.shape().size() != 5 || weight.shape().size() != 5)
    throw_error("nn.contrib_conv2d_winograd_NCHWc: data and weight must be 5-D");
  const DataType dtype = args.out_dtype();
  const int64_t batch = static_dim(data, 0, kOp, "data"),
                in_chunks = static_dim(data, 1, kOp, "data"),
                height = static_dim(data, 2, kOp, "data"), width = static_dim(data, 3, kOp, "data"),
                in_bn = static_dim(data, 4, kOp, "data");
  const int64_t out_chunks = static_dim(weight, 2, kOp, "weight"),
                in_channels = static_dim(weight, 3, kOp, "weight"),
                out_bn = static_dim(weight, 4, kOp, "weight");
  if (in_channels != in_chunks * in_bn)
    throw_error("nn.contrib_conv2d_winograd_NCHWc: weight has ", in_channels,
                " input channels, data ", in_chunks * in_bn);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);
  const std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  const int64_t dh = dilation[0], dw = dilation[1];
  const int64_t out_h = height + pad[0] + pad[2] - 2 * dh, out_w = width + pad[1] + pad[3] - 2 * dw;
  // A dilated convolution is one undilated convolution per class (oh % dh, ow % dw) of
  // outputs, over the inputs of its class: the tiles of every class make one batched GEMM.
  const int64_t class_h = (out_h + dh - 1) / dh, class_w = (out_w + dw - 1) / dw;
  const int64_t tiles_h = (class_h + 3) / 4, tiles_w = (class_w + 3) / 4;
  const int64_t class_tiles = tiles_h * tiles_w;
  const int64_t tiles = batch * dh * dw * class_tiles;
  const int64_t padded_h = (tiles_h * 4 + 2) * dh, padded_w = (tiles_w * 4 + 2) * dw;

  // The input, zero-padded on every side the tiles reach past it.
  te::Tensor padded = data;
  if (pad[0] || pad[1] || padded_h != height || padded_w != width) {
    PrimExpr zero = tir::make_const(data.dtype(), 0);
    padded = te::compute(
        {tir::make_int(batch), tir::make_int(in_chunks), tir::make_int(padded_h),
         tir::make_int(padded_w), tir::make_int(in_bn)},
        [&](const std::vector<tir::Var>& i) {
          PrimExpr h = PrimExpr(i[2]) - pad[0], w = PrimExpr(i[3]) - pad[1];
          PrimExpr inside =
              tir::logical_and(tir::logical_and(h >= tir::make_int(0), h < tir::make_int(height)),
                               tir::logical_and(w >= tir::make_int(0), w < tir::make_int(width)));
          return as_stage(tir::call_intrin(data.dtype(), "if_then_else",
                                           {inside, data(i[0], i[1], h, w, i[4]), zero}),
                          "pad");
        },
        "pad_temp", {"n", "c_chunk", "h", "w", "c_block"});
  }

  // V[xi][nu][p][c_chunk][c_block] = (B^T d B)[xi][nu] of tile p's 6x6 patch d.
  te::Tensor transformed_input = te::compute(
      {tir::make_int(6), tir::make_int(6), tir::make_int(tiles), tir::make_int(in_chunks),
       tir::make_int(in_bn)},
      [&](const std::vector<tir::Var>& i) {
        // p = (((n * dh + ch) * dw + cw) * tiles_h + th) * tiles_w + tw
        PrimExpr p = i[2];
        PrimExpr n = tir::floordiv(p, tir::make_int(dh * dw * class_tiles));
        PrimExpr th =
            tir::floormod(tir::floordiv(p, tir::make_int(tiles_w)), tir::make_int(tiles_h));
        PrimExpr tw = tir::floormod(p, tir::make_int(tiles_w));
        PrimExpr row = th * 4, col = tw * 4;
        if (dh > 1 || dw > 1) {
          PrimExpr cls = tir::floordiv(p, tir::make_int(class_tiles));
          row = row * dh + tir::floormod(tir::floordiv(cls, tir::make_int(dw)), tir::make_int(dh));
          col = col * dw + tir::floormod(cls, tir::make_int(dw));
        }
        auto patch = [&](int r, int s) {
          return tir::cast(dtype, padded(n, i[3], row + r * dh, col + s * dw, i[4]));
        };
        PrimExpr value = select_by(PrimExpr(i[0]), 6, [&](int xi) {
          return select_by(PrimExpr(i[1]), 6, [&](int nu) {
            return linear_combination(
                6, [&](int r) { return kInputTransform[xi][r]; },
                [&](int r) {
                  return linear_combination(
                      6, [&](int s) { return kInputTransform[nu][s]; },
                      [&](int s) { return patch(r, s); }, dtype);
                },
                dtype);
          });
        });
        return as_stage(value, "V");
      },
      "winograd_V", {"xi", "nu", "p", "c_chunk", "c_block"});

  // M[xi][nu][p][oc_chunk][oc_block] = sum over input channels of V * U.
  tir::IterVar ic_chunk = te::reduce_axis(PrimExpr(in_chunks), "ic_chunk");
  tir::IterVar ic_block = te::reduce_axis(PrimExpr(in_bn), "ic_block");
  te::Tensor product = te::compute(
      {tir::make_int(6), tir::make_int(6), tir::make_int(tiles), tir::make_int(out_chunks),
       tir::make_int(out_bn)},
      [&](const std::vector<tir::Var>& i) {
        PrimExpr v = transformed_input(i[0], i[1], i[2], ic_chunk.var, ic_block.var);
        PrimExpr u = tir::cast(
            dtype, weight(i[0], i[1], i[3], PrimExpr(ic_chunk.var) * in_bn + ic_block.var, i[4]));
        return tir::sum(v * u, {ic_chunk, ic_block});
      },
      "winograd_M", {"xi", "nu", "p", "oc_chunk", "oc_block"});

  // Y = A^T M A.
  te::Tensor out =
      te::compute(args.out_shape(),
                  [&](const std::vector<tir::Var>& i) {
                    // Output (h, w) of class (h % dh, w % dw) at (y, x) = (h / dh, w / dw) in
                    // its class: row y % 4, column x % 4 of the class's tile (y / 4, x / 4).
                    PrimExpr y = i[2], x = i[3], cls = tir::make_int(0);
                    if (dh > 1 || dw > 1) {
                      y = tir::floordiv(y, tir::make_int(dh));
                      x = tir::floordiv(x, tir::make_int(dw));
                      cls = tir::floormod(PrimExpr(i[2]), tir::make_int(dh)) * dw +
                            tir::floormod(PrimExpr(i[3]), tir::make_int(dw));
                    }
                    PrimExpr th = tir::floordiv(y, tir::make_int(4));
                    PrimExpr tw = tir::floordiv(x, tir::make_int(4));
                    PrimExpr p = ((PrimExpr(i[0]) * (dh * dw) + cls) * tiles_h + th) * tiles_w + tw;
                    PrimExpr row = tir::floormod(y, tir::make_int(4));
                    PrimExpr col = tir::floormod(x, tir::make_int(4));
                    PrimExpr value = select_by(row, 4, [&](int y) {
                      return select_by(col, 4, [&](int x) {
                        return linear_combination(
                            6, [&](int xi) { return kOutputTransform[y][xi]; },
                            [&](int xi) {
                              return linear_combination(
                                  6, [&](int nu) { return kOutputTransform[x][nu]; },
                                  [&](int nu) { return product(xi, nu, p, i[1], i[4]); }, dtype);
                            },
                            dtype);
                      });
                    });
                    return as_stage(value, "Y");
                  },
                  "conv2d_winograd", {"n", "oc_chunk", "oh", "ow", "oc_block"});
  return {out};
}

// V: parallel over (tile, channel chunk); the 36 points unrolled around the channel vector.
void schedule_input_transform(tir::Schedule& sch) {
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block("winograd_V"));
  // xi, nu, p, c_chunk, c_block, unit
  sch.reorder({loops[2], loops[3], loops[0], loops[1], loops[5], loops[4]});
  sch.unroll(loops[0]);
  sch.unroll(loops[1]);
  sch.vectorize(loops[4]);
  sch.parallel(sch.fuse({loops[2], loops[3]}));
}

// M: for each of the 36 points a GEMM of (tiles x IC) by (IC x OC). Register tile:
// knobs.rows tiles x knobs.oc_tile vectors of accumulators, the input channels in panels of
// knobs.ic_panel blocks, parallel over (point, output-channel tile).
void schedule_batched_gemm(tir::Schedule& sch, const WinogradKnobs& knobs) {
  tir::BlockRV gemm = sch.get_block("winograd_M");
  std::vector<tir::LoopRV> loops = sch.get_loops(gemm);
  // xi, nu, p, oc_chunk, oc_block | ic_chunk, ic_block
  const int64_t ic_bn = sch.loop_extent(loops[6]).value_or(1);
  std::vector<tir::LoopRV> p = sch.split(loops[2], {nullptr, tir::make_int(knobs.rows)});
  std::vector<tir::LoopRV> oc = sch.split(loops[3], {nullptr, tir::make_int(knobs.oc_tile)});
  std::vector<tir::LoopRV> ic = sch.split(loops[5], {nullptr, tir::make_int(knobs.ic_panel)});
  sch.reorder({loops[0], loops[1], oc[0], ic[0], p[0], ic[1], loops[6], p[1], oc[1], loops[4]});
  tir::BlockRV init = sch.decompose_reduction(gemm, ic[0]);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  sch.vectorize(loops[4]);
  sch.unroll(oc[1]);
  sch.unroll(p[1]);
  if (ic_bn <= 16) sch.unroll(loops[6]);
  sch.parallel(sch.fuse({loops[0], loops[1], oc[0]}));
}

// Y: parallel over (batch, output-channel chunk, tile row); each 4x4 tile unrolled around the
// channel vector, the epilogue right after it.
void schedule_output_transform(tir::Schedule& sch, const ScheduleArgs& args, int64_t lanes) {
  std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block(args.anchor_block));
  // n, oc_chunk, oh, ow, oc_block, unit
  const auto& a = args.anchor.attrs_as<ir::Conv2DAttrs>();
  const std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  const int64_t dh = dilation[0], dw = dilation[1];
  if (dh == 1 && dw == 1) {
    std::vector<tir::LoopRV> h = sch.split(loops[2], {nullptr, tir::make_int(4)});
    std::vector<tir::LoopRV> w = sch.split(loops[3], {nullptr, tir::make_int(4)});
    sch.reorder({loops[0], loops[1], h[0], w[0], loops[5], h[1], w[1], loops[4]});
    sch.unroll(h[1]);
    sch.unroll(w[1]);
    sch.vectorize(loops[4]);
    sch.parallel(sch.fuse({loops[0], loops[1], h[0]}));
    place_epilogue(sch, args.epilogue_blocks, w[0], lanes);
    return;
  }
  // Dilated: oh = (th * 4 + r) * dh + class row; the 4x4 tile of one class is unrolled (its
  // selects fold), the classes run one after the other below the tile row.
  std::vector<tir::LoopRV> h = sch.split(loops[2], {nullptr, tir::make_int(4), tir::make_int(dh)});
  std::vector<tir::LoopRV> w = sch.split(loops[3], {nullptr, tir::make_int(4), tir::make_int(dw)});
  sch.reorder({loops[0], loops[1], h[0], h[2], w[0], w[2], loops[5], h[1], w[1], loops[4]});
  sch.unroll(h[1]);
  sch.unroll(w[1]);
  sch.vectorize(loops[4]);
  sch.parallel(sch.fuse({loops[0], loops[1], h[0]}));
  place_epilogue(sch, args.epilogue_blocks, w[2], lanes);
}

}  // namespace

WinogradKnobs default_winograd_knobs(const WinogradShape& shape, int vector_bits) {
  if (shape.tiles <= 0 || shape.oc_chunks <= 0 || shape.oc_bn <= 0 ||
      shape.oc_bn > vector_bits / 32)
    throw_error("conv2d_winograd schedule: oc block ", shape.oc_bn, " does not fit one vector");
  WinogradKnobs knobs;
  // Up to 4 vectors of output channels per tile; with 32 registers (AVX-512) 6 rows of them
  // (24 accumulators, 4 weight vectors, a broadcast), with 16 (AVX2) 3 rows.
  knobs.oc_tile = largest_divisor_at_most(shape.oc_chunks, 4);
  const int64_t accumulators = vector_bits >= 512 ? 24 : 12;
  knobs.rows = std::min<int64_t>(shape.tiles, std::min<int64_t>(8, accumulators / knobs.oc_tile));
  // Panels of up to 128 input channels: the panel of U (128 x 64 floats) stays in L1 while
  // every row tile passes.
  knobs.ic_panel =
      largest_divisor_at_most(shape.ic_chunks, std::max<int64_t>(1, 128 / shape.ic_bn));
  return knobs;
}

std::vector<KnobSpace> winograd_space(const WinogradShape& shape, int vector_bits) {
  default_winograd_knobs(shape, vector_bits);  // declines where the schedule does
  std::vector<int64_t> rows;
  for (int64_t r = 1; r <= std::min<int64_t>(8, shape.tiles); ++r) rows.push_back(r);
  return {{"rows", rows},
          {"oc_tile", divisors_up_to(shape.oc_chunks, 4)},
          {"ic_panel", divisors_up_to(shape.ic_chunks, 16)}};
}

namespace {

WinogradShape winograd_shape(const tir::Schedule& sch, const ScheduleArgs& args) {
  std::vector<tir::LoopRV> out_loops = sch.get_loops(sch.get_block(args.anchor_block));
  std::vector<tir::LoopRV> gemm_loops = sch.get_loops(sch.get_block("winograd_M"));
  if (out_loops.size() != 6 || gemm_loops.size() != 7)
    throw_error("conv2d_winograd schedule: unexpected loop nests");
  WinogradShape shape;
  shape.tiles = sch.loop_extent(gemm_loops[2]).value_or(0);
  shape.oc_chunks = sch.loop_extent(gemm_loops[3]).value_or(0);
  shape.oc_bn = sch.loop_extent(gemm_loops[4]).value_or(0);
  shape.ic_chunks = sch.loop_extent(gemm_loops[5]).value_or(1);
  shape.ic_bn = sch.loop_extent(gemm_loops[6]).value_or(1);
  return shape;
}

}  // namespace

std::vector<KnobSpace> winograd_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  return winograd_space(winograd_shape(sch, args), args.vector_bits);
}

void schedule_conv2d_winograd(tir::Schedule& sch, const ScheduleArgs& args) {
  const int64_t lanes = args.vector_bits / 32;
  const WinogradShape shape = winograd_shape(sch, args);
  WinogradKnobs knobs = default_winograd_knobs(shape, args.vector_bits);
  apply_config(args, [&] { return winograd_space(shape, args.vector_bits); }, "x86.conv2d_winograd",
               {{"rows", &knobs.rows}, {"oc_tile", &knobs.oc_tile}, {"ic_panel", &knobs.ic_panel}});
  schedule_padding(sch, lanes);
  schedule_input_transform(sch);
  schedule_batched_gemm(sch, knobs);
  schedule_output_transform(sch, args, shape.oc_bn);
}

void register_nn_conv_winograd_strategies() {
  // The Winograd convolution exists for this strategy: its compute is the op's own.
  register_compute("nn.contrib_conv2d_winograd_NCHWc", conv2d_winograd_compute);
  register_strategy("nn.contrib_conv2d_winograd_NCHWc", "x86",
                    {.name = "x86.conv2d_winograd",
                     .precisions = {DataType::float32()},
                     .schedule = schedule_conv2d_winograd,
                     .space = winograd_knob_space});
}
}  // namespace anvil::topi::x86
