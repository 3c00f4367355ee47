// The fused transformer ops ONNX Runtime's transformer optimizer writes (com.microsoft domain,
// and LayerNormalization / SimplifiedLayerNormalization in the default domain at opsets before
// 17, as ONNX Runtime registers them), built from anvil's ops so that they compile like the
// unfused graph they replaced: layer norms as nn.layer_norm, attention as GEMMs, a batched
// matmul, softmax and reshapes, GELUs as nn.gelu. Semantics follow ONNX Runtime's CPU kernels.
#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

void refuse_outputs(const ConvertContext& ctx, int from, const char* what) {
  for (int i = from; i < ctx.node().output_size(); ++i)
    if (ctx.output_requested(i)) ctx.fail("output ", i, " (", what, ") is not supported");
}

using tensor::float_input;

Expr add(ConvertContext& ctx, const Expr& a, const Expr& b) { return ctx.op("add", {a, b}); }

// x normalized over its last axis: (x - mean) / sqrt(var + eps) * gamma + beta, or, simplified
// (RMS), x / sqrt(mean(x^2) + eps) * gamma.
Expr normalized(ConvertContext& ctx, const Expr& x, const Expr& gamma, const Expr& beta,
                double epsilon, bool simplified) {
  if (!simplified)
    return ctx.op("nn.layer_norm", {x, gamma, beta ? beta : gamma},
                  {{"axis", int64_t(-1)}, {"epsilon", epsilon}, {"center", bool(beta)}});
  DataType t = ctx.input_tensor(0).dtype;
  Expr mean_square = ctx.op("mean", {ctx.op("multiply", {x, x})},
                            {{"axis", std::vector<int64_t>{-1}}, {"keepdims", true}});
  Expr inv_rms = ctx.op("rsqrt", {add(ctx, mean_square, scalar_constant(ctx, epsilon, t))});
  return ctx.op("multiply", {ctx.op("multiply", {x, inv_rms}), gamma});
}

// SkipLayerNormalization / SkipSimplifiedLayerNormalization: input + skip (+ bias), normalized;
// output 3 is the sum itself.
ConverterFn skip_layer_norm(bool simplified) {
  return [simplified](ConvertContext& ctx) -> std::vector<Expr> {
    float_input(ctx, 0);
    Expr sum = add(ctx, ctx.input(0), ctx.input(1));
    size_t bias_input = simplified ? 3 : 4;
    Expr beta = !simplified && ctx.has_input(3) ? ctx.input(3) : Expr();
    if (ctx.has_input(bias_input)) sum = add(ctx, sum, ctx.input(bias_input));
    if (ctx.output_requested(1) || ctx.output_requested(2))
      ctx.fail("the mean and inverse standard deviation outputs are not supported");
    Expr y = normalized(ctx, sum, ctx.input(2), beta, ctx.attr_float("epsilon", 1e-12), simplified);
    return {y, Expr(), Expr(), sum};
  };
}

// SimplifiedLayerNormalization (RMS norm) over the last axis.
std::vector<Expr> convert_simplified_layer_norm(ConvertContext& ctx) {
  float_input(ctx, 0);
  int64_t rank = ctx.input_tensor(0).ndim();
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis != -1 && axis != rank - 1)
    ctx.fail("normalizes over axis ", axis, "; only the last axis is supported");
  refuse_outputs(ctx, 1, "inverse standard deviation");
  return {
      normalized(ctx, ctx.input(0), ctx.input(1), Expr(), ctx.attr_float("epsilon", 1e-5), true)};
}

// Gelu (erf), BiasGelu (erf of x + bias), FastGelu (tanh approximation, optional bias).
ConverterFn gelu(const char* approximate, bool bias) {
  return [approximate, bias](ConvertContext& ctx) -> std::vector<Expr> {
    float_input(ctx, 0);
    Expr x = ctx.input(0);
    if (bias || ctx.has_input(1)) x = add(ctx, x, ctx.input(1));
    return {ctx.op("nn.gelu", {x}, {{"approximate", std::string(approximate)}})};
  };
}

// BiasAdd: X + bias + skip.
std::vector<Expr> convert_bias_add(ConvertContext& ctx) {
  float_input(ctx, 0);
  return {add(ctx, add(ctx, ctx.input(0), ctx.input(1)), ctx.input(2))};
}

// Multi-head attention on projected q (B, S, N*h), k and v (B, L, N*h / N*hv): the scores
// q k^T * scale (+ additive mask of shape broadcasting to (B, N, S, L)), softmax, times v,
// heads merged back into (B, S, N*hv).
class AttentionBuilder {
 public:
  AttentionBuilder(ConvertContext& ctx, int64_t heads) : ctx_(ctx), heads_(heads) {
    if (heads_ <= 0) ctx_.fail("num_heads must be positive, got ", heads_);
  }

  // (B, S, N*h) -> (B, N, S, h).
  Expr split_heads(const Expr& x, int64_t width) {
    if (width % heads_ != 0)
      ctx_.fail("a hidden size of ", width, " does not split into ", heads_, " heads");
    Expr r =
        ctx_.op("reshape", {x}, {{"newshape", std::vector<int64_t>{0, 0, heads_, width / heads_}}});
    return ctx_.op("transpose", {r}, {{"axes", std::vector<int64_t>{0, 2, 1, 3}}});
  }

  Expr attend(const Expr& q, const Expr& k, const Expr& v, int64_t qk_width, int64_t v_width,
              double scale, const Expr& additive_mask) {
    DataType t = ctx_.input_tensor(0).dtype;
    Expr qh = split_heads(q, qk_width), kh = split_heads(k, qk_width), vh = split_heads(v, v_width);
    Expr kt = ctx_.op("transpose", {kh}, {{"axes", std::vector<int64_t>{0, 1, 3, 2}}});
    Expr scores =
        ctx_.op("multiply", {ctx_.op("matmul", {qh, kt}), scalar_constant(ctx_, scale, t)});
    if (additive_mask) scores = add(ctx_, scores, additive_mask);
    Expr probs = ctx_.op("nn.softmax", {scores}, {{"axis", int64_t(-1)}});
    Expr context = ctx_.op("matmul", {probs, vh});  // (B, N, S, hv)
    Expr merged = ctx_.op("transpose", {context}, {{"axes", std::vector<int64_t>{0, 2, 1, 3}}});
    return ctx_.op("reshape", {merged}, {{"newshape", std::vector<int64_t>{0, 0, -1}}});
  }

  // The additive mask of a key padding mask: (B) valid lengths, (2B) ends then starts,
  // (B, L) 1 to keep / 0 to mask, (B, S, L); -> broadcastable to (B, N, S, L). `keys` is L.
  Expr padding_mask(const Expr& mask, const ir::TensorTypeNode& type, const Expr& key_like,
                    double filter) {
    DataType t = ctx_.input_tensor(0).dtype;
    // Positions 0..L-1 along the keys, as int32 (B=1, L).
    Expr positions = ctx_.op("cumsum", {ctx_.op("ones_like", {key_position_source(key_like)})},
                             {{"axis", int64_t(1)}, {"exclusive", true}});  // (B, L) int32
    Expr keep;
    if (type.ndim() == 1) {
      Expr as_int = ctx_.op("cast", {mask}, {{"dtype", DataType::int32()}});
      std::optional<int64_t> n = (*type.shape)[0].as_int();
      std::optional<int64_t> batch = (*ctx_.input_tensor(0).shape)[0].as_int();
      if (n && batch && *n == 2 * *batch) {
        Expr ends =
            ctx_.op("strided_slice", {as_int},
                    {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{*batch}}});
        Expr starts = ctx_.op(
            "strided_slice", {as_int},
            {{"begin", std::vector<int64_t>{*batch}}, {"end", std::vector<int64_t>{2 * *batch}}});
        Expr e = ctx_.op("expand_dims", {ends}, {{"axis", int64_t(1)}});
        Expr s = ctx_.op("expand_dims", {starts}, {{"axis", int64_t(1)}});
        keep = ctx_.op("logical_and",
                       {ctx_.op("less", {positions, e}), ctx_.op("greater_equal", {positions, s})});
      } else {
        keep =
            ctx_.op("less", {positions, ctx_.op("expand_dims", {as_int}, {{"axis", int64_t(1)}})});
      }
      keep = ctx_.op("expand_dims", {keep}, {{"axis", int64_t(1)}, {"num_newaxis", int64_t(2)}});
    } else if (type.ndim() == 2 || type.ndim() == 3) {
      Expr m = ctx_.op("not_equal", {mask, scalar_constant(ctx_, 0, type.dtype)});
      keep = ctx_.op("expand_dims", {m},
                     {{"axis", int64_t(1)}, {"num_newaxis", int64_t(type.ndim() == 2 ? 2 : 1)}});
    } else {
      ctx_.fail("a mask of rank ", type.ndim(), " is not supported (1, 2 or 3)");
    }
    return ctx_.op("where", {keep, scalar_constant(ctx_, 0, t), scalar_constant(ctx_, filter, t)});
  }

  // filter where key j > query i + offset (offset = L - S: the last query sees every key).
  Expr causal_mask(const Expr& q, const Expr& k, int64_t offset, double filter) {
    DataType t = ctx_.input_tensor(0).dtype;
    auto positions = [&](const Expr& x) {  // (B, len) int32 positions along axis 1
      Expr ones = ctx_.op("ones_like", {key_position_source(x)});
      return ctx_.op("cumsum", {ones}, {{"axis", int64_t(1)}, {"exclusive", true}});
    };
    Expr qi = ctx_.op("expand_dims", {positions(q)}, {{"axis", int64_t(2)}});  // (B, S, 1)
    Expr kj = ctx_.op("expand_dims", {positions(k)}, {{"axis", int64_t(1)}});  // (B, 1, L)
    Expr shifted = add(ctx_, qi, scalar_constant(ctx_, double(offset), DataType::int32()));
    Expr hidden = ctx_.op("greater", {kj, shifted});
    Expr m =
        ctx_.op("where", {hidden, scalar_constant(ctx_, filter, t), scalar_constant(ctx_, 0, t)});
    return ctx_.op("expand_dims", {m}, {{"axis", int64_t(1)}});  // (B, 1, S, L)
  }

 private:
  // A (B, L) int32 tensor from a (B, L, ...) value: its first feature column.
  Expr key_position_source(const Expr& x) {
    Expr column = ctx_.op("strided_slice", {x},
                          {{"begin", std::vector<int64_t>{0}},
                           {"end", std::vector<int64_t>{1}},
                           {"axes", std::vector<int64_t>{2}}});
    Expr squeezed = ctx_.op("squeeze", {column}, {{"axis", std::vector<int64_t>{2}}});
    return ctx_.op("cast", {squeezed}, {{"dtype", DataType::int32()}});
  }

  ConvertContext& ctx_;
  int64_t heads_;
};

int64_t static_last_dim(const ConvertContext& ctx, size_t i, const char* what) {
  const ir::TensorTypeNode& t = ctx.input_tensor(i);
  std::optional<int64_t> d = (*t.shape)[t.ndim() - 1].as_int();
  if (!d) ctx.fail(what, " must have a static last dim");
  return *d;
}

// Attention: input (B, S, D) projected by weights (D, Dq + Dk + Dv) and bias into q, k, v
// (qkv_hidden_sizes, equal thirds by default); mask_index as a key padding mask; unidirectional
// a causal mask; scale default 1 / sqrt(head size).
std::vector<Expr> convert_attention(ConvertContext& ctx) {
  float_input(ctx, 0);
  if (ctx.has_input(4)) ctx.fail("past state (input 4) is not supported");
  if (ctx.has_input(5)) ctx.fail("attention_bias (input 5) is not supported");
  refuse_outputs(ctx, 1, "present state");
  if (ctx.attr_int("do_rotary", 0)) ctx.fail("do_rotary is not supported");
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const int64_t total = static_last_dim(ctx, 1, "weights");
  std::vector<int64_t> sizes = ctx.attr_ints("qkv_hidden_sizes");
  if (sizes.empty()) sizes = {total / 3, total / 3, total / 3};
  if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != total)
    ctx.fail("qkv_hidden_sizes must be 3 sizes, q's equal to k's, summing to the weights' ", total);
  Expr qkv = ctx.op("matmul", {ctx.input(0), ctx.input(1)});
  if (ctx.has_input(2)) qkv = add(ctx, qkv, ctx.input(2));
  auto part = [&](int64_t begin, int64_t end) {
    return ctx.op("strided_slice", {qkv},
                  {{"begin", std::vector<int64_t>{begin}},
                   {"end", std::vector<int64_t>{end}},
                   {"axes", std::vector<int64_t>{2}}});
  };
  Expr q = part(0, sizes[0]), k = part(sizes[0], 2 * sizes[0]), v = part(2 * sizes[0], total);
  AttentionBuilder b(ctx, heads);
  double filter = ctx.attr_float("mask_filter_value", -10000.0);
  Expr mask;
  if (ctx.has_input(3)) mask = b.padding_mask(ctx.input(3), ctx.input_tensor(3), k, filter);
  if (ctx.attr_int("unidirectional", 0)) {
    Expr causal = b.causal_mask(q, k, 0, filter);  // self-attention: S == L
    mask = mask ? add(ctx, mask, causal) : causal;
  }
  double scale = ctx.attr_float("scale", 0);
  if (scale == 0) scale = 1.0 / std::sqrt(double(sizes[0] / heads));
  return {b.attend(q, k, v, sizes[0], sizes[2], scale, mask)};
}

// MultiHeadAttention with separate query, key and value (B, S|L, D), optional bias (Dq + Dk +
// Dv) and attention_bias (B or 1, N or 1, S, L).
std::vector<Expr> convert_multi_head_attention(ConvertContext& ctx) {
  float_input(ctx, 0);
  if (!ctx.has_input(1) || !ctx.has_input(2) || ctx.input_tensor(1).ndim() != 3 ||
      ctx.input_tensor(0).ndim() != 3)
    ctx.fail("packed query/key/value and 4-D key and value are not supported");
  if (ctx.has_input(6) || ctx.has_input(7)) ctx.fail("past state is not supported");
  // ONNX Runtime's CPU kernel applies key_padding_mask in a way its schema does not describe;
  // refused rather than guessed.
  if (ctx.has_input(4)) ctx.fail("key_padding_mask (input 4) is not supported");
  refuse_outputs(ctx, 1, "present state");
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const int64_t dq = static_last_dim(ctx, 0, "query"), dv = static_last_dim(ctx, 2, "value");
  Expr q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (ctx.has_input(3)) {
    auto slice = [&](int64_t begin, int64_t end) {
      return ctx.op("strided_slice", {ctx.input(3)},
                    {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}}});
    };
    q = add(ctx, q, slice(0, dq));
    k = add(ctx, k, slice(dq, 2 * dq));
    v = add(ctx, v, slice(2 * dq, 2 * dq + dv));
  }
  AttentionBuilder b(ctx, heads);
  double filter = ctx.attr_float("mask_filter_value", -10000.0);
  Expr mask;
  if (ctx.has_input(5)) mask = ctx.input(5);
  if (ctx.attr_int("unidirectional", 0)) {
    std::optional<int64_t> s = (*ctx.input_tensor(0).shape)[1].as_int();
    std::optional<int64_t> l = (*ctx.input_tensor(1).shape)[1].as_int();
    if (!s || !l) ctx.fail("unidirectional attention needs static query and key lengths");
    Expr causal = b.causal_mask(q, k, *l - *s, filter);
    mask = mask ? add(ctx, mask, causal) : causal;
  }
  double scale = ctx.attr_float("scale", 0);
  if (scale == 0) scale = 1.0 / std::sqrt(double(dq / std::max<int64_t>(heads, 1)));
  return {b.attend(q, k, v, dq, dv, scale, mask)};
}

// EmbedLayerNormalization: word[ids] + position[position_ids or 0..S-1] (+ segment[segment
// ids]), layer-normalized; output 1 the mask index (the number of ones of each mask row, as
// int32; zeros without a mask), output 2 the embedding sum.
std::vector<Expr> convert_embed_layer_norm(ConvertContext& ctx) {
  const ir::TensorTypeNode& ids = ctx.input_tensor(0);
  if (ids.ndim() != 2) ctx.fail("input_ids must be (batch, sequence), got rank ", ids.ndim());
  auto gather = [&](size_t table, const Expr& indices) {
    return ctx.op("take", {ctx.input(table), indices},
                  {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
  };
  Expr sum = gather(2, ctx.input(0));
  Expr positions;
  if (ctx.has_input(8)) {
    positions = ctx.input(8);
  } else {
    Expr ones =
        ctx.op("ones_like", {ctx.op("cast", {ctx.input(0)}, {{"dtype", DataType::int32()}})});
    positions = ctx.op("cumsum", {ones}, {{"axis", int64_t(1)}, {"exclusive", true}});
  }
  sum = add(ctx, sum, gather(3, positions));
  if (ctx.has_input(1) && ctx.has_input(4)) sum = add(ctx, sum, gather(4, ctx.input(1)));
  Expr y = normalized(ctx, sum, ctx.input(5), ctx.has_input(6) ? ctx.input(6) : Expr(),
                      ctx.attr_float("epsilon", 1e-12), false);
  Expr mask_index;
  if (ctx.has_input(7)) {
    Expr m = ctx.op("cast", {ctx.input(7)}, {{"dtype", DataType::int32()}});
    mask_index = ctx.op("sum", {m}, {{"axis", std::vector<int64_t>{1}}});
  } else {
    Expr first = ctx.op("strided_slice", {ctx.input(0)},
                        {{"begin", std::vector<int64_t>{0}},
                         {"end", std::vector<int64_t>{1}},
                         {"axes", std::vector<int64_t>{1}}});
    mask_index =
        ctx.op("zeros_like",
               {ctx.op("cast", {ctx.op("squeeze", {first}, {{"axis", std::vector<int64_t>{1}}})},
                       {{"dtype", DataType::int32()}})});
  }
  return {y, mask_index, sum};
}

}  // namespace

void register_contrib_transformer_converters(ConverterTable& table) {
  const std::string ms = "com.microsoft";
  table.add("SkipLayerNormalization", 1, skip_layer_norm(false), ms);
  table.add("SkipSimplifiedLayerNormalization", 1, skip_layer_norm(true), ms);
  table.add("SimplifiedLayerNormalization", 1, convert_simplified_layer_norm);
  table.add("Gelu", 1, gelu("none", false), ms);
  table.add("BiasGelu", 1, gelu("none", true), ms);
  table.add("FastGelu", 1, gelu("tanh", false), ms);
  table.add("BiasAdd", 1, convert_bias_add, ms);
  table.add("Attention", 1, convert_attention, ms);
  table.add("MultiHeadAttention", 1, convert_multi_head_attention, ms);
  table.add("EmbedLayerNormalization", 1, convert_embed_layer_norm, ms);
}

}  // namespace anvil::frontend::onnx_import
