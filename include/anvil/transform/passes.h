// The graph passes (src/transform/, one per file). Each takes a typed module (ir::infer_type)
// and returns a typed module; a pass that changes nothing returns the same functions. Every
// pass rewrites each graph Function of the module (PrimFuncs are left alone) unless it says
// otherwise. The order they run in is written once, in src/driver/pipeline.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::transform {

// Replaces the named parameters of @main by constants holding the given tensors (TVM's
// bind_params_by_name); parameters not named stay parameters. Throws Error naming a
// parameter whose shape or dtype differs from the tensor.
ir::IRModule bind_params(const ir::IRModule& mod,
                         const std::vector<std::pair<std::string, Tensor>>& params);

// Replaces every let and binding block of each graph function by its value, so the body is a
// plain expression DAG whose calls take their producers directly; functions called from a
// body keep their own bindings.
ir::IRModule inline_bindings(const ir::IRModule& mod);

// The same for one expression: body with its lets and binding blocks inlined.
ir::Expr inline_bindings(const ir::Expr& body);

// Rewrites each dyn.* call whose shape operands (shape, axes, pads, sizes, k...) fold to
// constants into the static op with equivalent attrs (TVM's DynamicToStatic).
ir::IRModule dynamic_to_static(const ir::IRModule& mod);

// Quantized models in the QDQ format: quantize(act(conv(dequantize(x), dequantize(W)) + b))
// with constant 8-bit parameters becomes qnn.conv2d (nn.dense and nn.matmul: qnn.dense) of
// the integers, accumulated in int32, then requantized by float multiply, qnn.quantize and a
// clip that takes the activation's place (docs/quantization.md). What does not match stays
// in float between its dequantize and quantize.
ir::IRModule fake_quantization_to_integer(const ir::IRModule& mod);

// Inference-time simplification: nn.batch_norm(x, g, b, m, v).0 becomes
// x * (g / sqrt(v + eps)) + (b - m * g / sqrt(v + eps)) along the batch-norm axis (shift and
// scale as broadcasting multiply/add); nn.dropout(x).0 becomes x; layer_norm, instance_norm,
// group_norm and l2_normalize stay as they are.
ir::IRModule simplify_inference(const ir::IRModule& mod);

// Evaluates every call whose arguments are all constants with the reference kernels and
// replaces it by a constant (also through tuples and TupleGetItem). Calls of ops with side
// effects or random output, and calls whose result would exceed `max_bytes`, are kept.
ir::IRModule fold_constant(const ir::IRModule& mod, int64_t max_bytes = int64_t(1) << 30);

// Merges calls of the same op with the same attrs and structurally equal arguments (and
// equal constants), keeping the first.
ir::IRModule eliminate_common_subexpr(const ir::IRModule& mod);

// Folds a constant per-output-channel scale into the constant weights of the nn.conv2d /
// nn.dense that produces its input: conv(x, w) * s becomes conv(x, w * s) when s broadcasts
// along the output-channel axis only (also across an nn.relu when every scale is positive).
ir::IRModule fold_scale_axis(const ir::IRModule& mod);

// Algebraic clean-ups: x + 0, x * 1, x - 0, x / 1 removed when shapes allow; reshape of
// reshape merged; reshape/squeeze/expand_dims to the same shape removed; transpose of
// transpose merged (identity removed); cast to the same dtype removed; consecutive
// layout_transforms that cancel removed.
ir::IRModule simplify_expr(const ir::IRModule& mod);

// ConvertLayout (tvmc --desired-layout): 2-D convolutions move to desired_layout ("NCHW" or
// "NHWC", kernels OIHW or HWIO); elementwise, broadcasting, bias_add and pooling ops follow, and
// layout_transforms sit only where a consumer needs the original layout.
ir::IRModule convert_layout(const ir::IRModule& mod, const std::string& desired_layout);

// Asks the strategy records of the target (topi::find_strategies under strategy_keys; empty:
// the CPU's, "x86") of every op: an anchor is rewritten to the layout it wants (on x86,
// nn.conv2d in NCHW becomes layout_transform(NCHW -> NCHW{c}c) -> nn.contrib_conv2d_NCHWc with
// weights re-packed as OIHW{i}i{o}o constants -> layout_transform back, and dense layers take
// packed column panels); followers between blocked values move into the blocked layout (their
// constant operands re-laid-out) so that the transforms meet and cancel. vector_lanes is the
// number of float32 lanes of the target (16 for AVX-512). Each strategy that declines a call
// adds "op(shapes): strategy declined: reason" to remarks, when given. amx_bf16: the target
// has AMX tiles with tdpbf16ps (the bf16 products then take the tiles' channel blocks). Only
// @main is rewritten.
ir::IRModule alter_op_layout(const ir::IRModule& mod, int vector_lanes,
                             std::vector<std::string>* remarks = nullptr,
                             const std::vector<std::string>& strategy_keys = {},
                             bool amx_bf16 = false);

// The products that carry a network's multiply-adds (nn.conv2d, nn.dense, nn.matmul) with a
// constant weight take bfloat16 operands and a float32 result: the weight rounded here, the
// data through a cast. Only products the bf16 kernels take are changed (see
// src/transform/to_mixed_precision.cpp); every other op stays float32.
ir::IRModule to_mixed_precision(const ir::IRModule& mod);

// Each nn.conv1d (NCW, OIW, groups 1, at least 8 input and output channels, constant weight)
// becomes squeeze(nn.conv2d(expand_dims(x, 2), w viewed as OI1W)) over a single row, for the
// target's blocked conv2d strategy.
ir::IRModule conv1d_as_conv2d(const ir::IRModule& mod);

// Each nn.conv3d (NCDHW, OIDHW, groups 1, at least 8 input and output channels, static shapes,
// constant weight) becomes a sum over its depth taps of nn.conv2d over the depth slices each tap
// reads, batched (transpose, strided_slice, reshape around them).
ir::IRModule conv3d_as_conv2d(const ir::IRModule& mod);

// Transposes move below the elementwise ops (constant operands laid out anew) and pads that
// read them, and pairs that meet cancel. A function keeps the rewrite only when it then
// transposes fewer elements.
ir::IRModule sink_transposes(const ir::IRModule& mod);

// Each NCHW nn.conv2d with dilation whose taps fall wholly in the padding for whole bands of
// output rows or columns (static shapes), where that saves at least a third of its
// multiply-adds, becomes one convolution per region (row band x column band) with only the
// taps valid there, over the crop of the input it reads and without padding, joined by
// concatenate along W, then H.
ir::IRModule split_dilated_conv(const ir::IRModule& mod);

// For x86 after AlterOpLayout: each float32 nn.contrib_conv2d_NCHWc with a constant 3x3
// weight, stride 1, dilation 1 and groups 1 on a map where it pays off (docs/winograd.md)
// becomes nn.contrib_conv2d_winograd_NCHWc, its weight transformed at compile time to
// (6, 6, O/ob, I, ob). Disabled like any pass: --disabled-pass WinogradConv2D.
ir::IRModule winograd_conv2d(const ir::IRModule& mod);

// Groups @main's calls into fused primitive functions by op pattern and post-dominator
// analysis, as TVM's FuseOps does: each call in @main's body becomes a call of a
// FunctionNode with attr "Primitive" = 1 whose params are the group's inputs. The arguments
// of the group calls are @main's parameters, other group calls (or TupleGetItem of them),
// and constants of rank >= 1 (kept outside the groups so they become runtime params); rank-0
// constants stay inside the group that uses them. fuse_opt_level 0 puts every call in a
// group of its own. Ops are never grouped across an opaque op; each group has one
// anchor (at most one op of pattern >= OutEWiseFusable), and the groups are at most
// `max_depth` calls deep. Calls of call_tir / call_dps_packed are left as they are.
ir::IRModule fuse_ops(const ir::IRModule& mod, int fuse_opt_level, int max_depth = 256);

}  // namespace anvil::transform
