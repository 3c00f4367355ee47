// The default domain's ops for linear-recurrent sequence mixers (opset 27): LinearAttention
// (linear, gated, delta and gated-delta state updates, as in RetNet, GLA and Gated DeltaNet)
// and CausalConvWithState (the short depthwise convolution in front of them, with its rolling
// state). LinearAttention's recurrence is unrolled over the steps, like RNN/GRU/LSTM (the
// graph IR has no loop): per step a few (d_k x d_v) state updates, GEMM-shaped where the
// reference contracts, so the sequence length must be static.
#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

using tensor::float_input;
using tensor::known_dims;

class Builder {
 public:
  explicit Builder(ConvertContext& ctx) : ctx_(ctx) {}

  Expr cast(const Expr& x, DataType from, DataType to) {
    return from == to ? x : ctx_.op("cast", {x}, {{"dtype", to}});
  }
  Expr transpose(const Expr& x, std::vector<int64_t> axes) {
    return ctx_.op("transpose", {x}, {{"axes", std::move(axes)}});
  }
  Expr reshape(const Expr& x, std::vector<int64_t> shape) {
    return ctx_.op("reshape", {x}, {{"newshape", std::move(shape)}});
  }
  // (B, T, H*D) -> (B, H, T, D).
  Expr heads_first(const Expr& x, int64_t heads, int64_t width) {
    return transpose(reshape(x, {0, 0, heads, width / heads}), {0, 2, 1, 3});
  }
  // x[:, :, t:t+1, ...] along axis 2.
  Expr step(const Expr& x, int64_t t) {
    return ctx_.op("strided_slice", {x},
                   {{"begin", std::vector<int64_t>{t}},
                    {"end", std::vector<int64_t>{t + 1}},
                    {"axes", std::vector<int64_t>{2}}});
  }
  Expr op(std::string_view name, std::vector<Expr> args) { return ctx_.op(name, std::move(args)); }
  Expr concat(std::vector<Expr> parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    return ctx_.op("concatenate", {ctx_.typed(ir::TupleNode::make(std::move(parts)))},
                   {{"axis", axis}});
  }

 private:
  ConvertContext& ctx_;
};

// LinearAttention: query (B, T, Hq*dk), key (B, T, Hkv*dk), value (B, T, Hkv*dv); state
// (B, Hkv, dk, dv) in float32. Per step t: state *= exp(decay_t) (gated), v_t = beta_t *
// (v_t - k_t state) (delta), state += k_t^T v_t, o_t = scale * q_t state (each key/value head
// read by Hq / Hkv query heads in turn).
std::vector<Expr> convert_linear_attention(ConvertContext& ctx) {
  const DataType t = float_input(ctx, 0);
  const DataType f32 = DataType::float32();
  Builder b(ctx);
  const std::string rule = ctx.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    ctx.fail("update_rule '", rule, "' is not linear, gated, delta or gated_delta");
  const bool gating = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (gating != ctx.has_input(4))
    ctx.fail("update_rule '", rule, gating ? "' needs" : "' forbids", " the decay input");
  if (delta != ctx.has_input(5))
    ctx.fail("update_rule '", rule, delta ? "' needs" : "' forbids", " the beta input");
  const int64_t q_heads = ctx.required_int("q_num_heads"),
                kv_heads = ctx.required_int("kv_num_heads");
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0)
    ctx.fail("q_num_heads ", q_heads, " must be a positive multiple of kv_num_heads ", kv_heads);
  const std::vector<int64_t> qd = known_dims(ctx, 0, "query"), vd = known_dims(ctx, 2, "value");
  if (qd.size() != 3 || vd.size() != 3 || ctx.input_tensor(1).ndim() != 3)
    ctx.fail("query, key and value must be rank 3 (B, T, H*D)");
  if (qd[2] % q_heads != 0 || vd[2] % kv_heads != 0)
    ctx.fail("the hidden sizes do not split into the heads");
  const int64_t steps = qd[1], dk = qd[2] / q_heads, dv = vd[2] / kv_heads;
  const int64_t group = q_heads / kv_heads;

  auto in = [&](size_t i) { return b.cast(ctx.input(i), ctx.input_tensor(i).dtype, f32); };
  Expr q = b.heads_first(in(0), q_heads, qd[2]);
  Expr k = b.heads_first(in(1), kv_heads, kv_heads * dk);
  Expr v = b.heads_first(in(2), kv_heads, vd[2]);
  Expr decay, beta;  // (B, Hkv, T, dk or 1), (B, Hkv or 1, T, 1)
  if (gating) {
    const std::vector<int64_t> dd = known_dims(ctx, 4, "decay");
    if (dd.size() != 3 || (dd[2] != kv_heads && dd[2] != kv_heads * dk))
      ctx.fail("decay must be (B, T, kv_num_heads) or (B, T, kv_num_heads * d_k)");
    decay = b.heads_first(in(4), kv_heads, dd[2]);
  }
  if (delta) {
    const std::vector<int64_t> bd = known_dims(ctx, 5, "beta");
    if (bd.size() != 3 || (bd[2] != kv_heads && bd[2] != 1))
      ctx.fail("beta must be (B, T, kv_num_heads) or (B, T, 1)");
    beta = b.heads_first(in(5), bd[2], bd[2]);
  }
  Expr state;
  DataType state_dtype = t;
  if (ctx.has_input(3)) {
    state_dtype = ctx.input_tensor(3).dtype;
    state = in(3);
  } else {
    Expr zero = scalar_constant(ctx, 0, f32);
    state =
        ctx.op("broadcast_to", {zero}, {{"shape", std::vector<int64_t>{qd[0], kv_heads, dk, dv}}});
  }
  double scale = ctx.attr_float("scale", 0);
  if (scale == 0) scale = 1.0 / std::sqrt(double(dk));
  Expr scale_value = scalar_constant(ctx, scale, f32);

  std::vector<Expr> outputs;
  for (int64_t i = 0; i < steps; ++i) {
    Expr k_t = b.step(k, i), v_t = b.step(v, i);  // (B, Hkv, 1, dk|dv)
    if (gating)  // (B, Hkv, 1, dk|1) -> (B, Hkv, dk|1, 1), broadcast over dv
      state = b.op("multiply", {state, b.op("exp", {b.transpose(b.step(decay, i), {0, 1, 3, 2})})});
    if (delta) {
      Expr retrieved = b.op("matmul", {k_t, state});  // (B, Hkv, 1, dv)
      v_t = b.op("multiply", {b.step(beta, i), b.op("subtract", {v_t, retrieved})});
    }
    state = b.op("add", {state, b.op("matmul", {b.transpose(k_t, {0, 1, 3, 2}), v_t})});
    Expr read =
        group == 1 ? state : ctx.op("repeat", {state}, {{"repeats", group}, {"axis", int64_t(1)}});
    outputs.push_back(b.op("multiply", {b.op("matmul", {b.step(q, i), read}), scale_value}));
  }
  Expr y = b.concat(outputs, 2);  // (B, Hq, T, dv)
  y = b.reshape(b.transpose(y, {0, 2, 1, 3}), {0, 0, q_heads * dv});
  return {b.cast(y, f32, t), b.cast(state, f32, state_dtype)};
}

// CausalConvWithState: a depthwise 1-D convolution over input (B, C, L) left-padded by the
// past state (B, C, k-1) (zeros when absent), with bias and an optional SiLU; the new state
// is the last k-1 positions of the padded input.
std::vector<Expr> convert_causal_conv_with_state(ConvertContext& ctx) {
  const DataType t = float_input(ctx, 0);
  Builder b(ctx);
  const std::vector<int64_t> xd = known_dims(ctx, 0, "input"), wd = known_dims(ctx, 1, "weight");
  if (xd.size() != 3 || wd.size() != 3 || wd[1] != 1 || wd[0] != xd[1])
    ctx.fail("input must be (B, C, L) and weight (C, 1, k)");
  const std::string activation = ctx.attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    ctx.fail("activation '", activation, "' is not none, silu or swish");
  const int64_t channels = xd[1], width = wd[2];
  Expr past = ctx.has_input(3)
                  ? ctx.input(3)
                  : ctx.op("broadcast_to", {scalar_constant(ctx, 0, t)},
                           {{"shape", std::vector<int64_t>{xd[0], channels, width - 1}}});
  Expr padded = b.concat({past, ctx.input(0)}, 2);
  // 16-bit inputs accumulate in float32 and round once, as the reference does.
  const DataType acc = t.bits < 32 ? DataType::float32() : t;
  Expr y = ctx.op(
      "nn.conv1d", {b.cast(padded, t, acc), b.cast(ctx.input(1), t, acc)},
      {{"groups", channels}, {"channels", channels}, {"kernel_size", std::vector<int64_t>{width}}});
  if (ctx.has_input(2))
    y = ctx.op("nn.bias_add", {y, b.cast(ctx.input(2), ctx.input_tensor(2).dtype, acc)},
               {{"axis", int64_t(1)}});
  y = b.cast(y, acc, t);
  if (activation != "none") {  // in float32, as the reference computes it for every dtype
    const DataType f32 = DataType::float32();
    Expr wide = b.cast(y, t, f32);
    y = b.cast(b.op("multiply", {wide, b.op("sigmoid", {wide})}), f32, t);
  }
  const int64_t total = xd[2] + width - 1;
  Expr present = ctx.op("strided_slice", {padded},
                        {{"begin", std::vector<int64_t>{total - (width - 1)}},
                         {"end", std::vector<int64_t>{total}},
                         {"axes", std::vector<int64_t>{2}}});
  return {y, present};
}

}  // namespace

void register_linear_recurrence_converters(ConverterTable& table) {
  table.add("LinearAttention", 27, convert_linear_attention);
  table.add("CausalConvWithState", 27, convert_causal_conv_with_state);
}

}  // namespace anvil::frontend::onnx_import
