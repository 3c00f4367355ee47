// The default domain's transformer ops (opsets 23 on): Attention, RMSNormalization,
// RotaryEmbedding, Swish and SwiGLU, with ONNX Runtime's com.microsoft RotaryEmbedding and
// GroupQueryAttention, which share their pieces; built from anvil's ops so that they compile like
// the graphs exporters wrote before these ops existed. Attention follows the ONNX reference: the
// scale split as sqrt(scale) on both Q and K, softcap before the mask, an additive bias that
// sums the attention mask, the causal and sliding-window masks (aligned to the bottom right
// by the cached length) and the key padding of nonpad_kv_seqlen, and rows every key of which
// is masked giving zeros rather than NaN.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"
#include "frontend/onnx/converter_families.h"
#include "frontend/onnx/graph_converter.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

using tensor::float_input;
using tensor::known_dims;

Expr transpose(ConvertContext& ctx, const Expr& x, std::vector<int64_t> axes) {
  return ctx.op("transpose", {x}, {{"axes", std::move(axes)}});
}

Expr reshape(ConvertContext& ctx, const Expr& x, std::vector<int64_t> shape) {
  return ctx.op("reshape", {x}, {{"newshape", std::move(shape)}});
}

// (B, S, N*h) -> (B, N, S, h).
Expr split_heads(ConvertContext& ctx, const Expr& x, int64_t width, int64_t heads,
                 const char* what) {
  if (heads <= 0 || width % heads != 0)
    ctx.fail(what, ": a hidden size of ", width, " does not split into ", heads, " heads");
  return transpose(ctx, reshape(ctx, x, {0, 0, heads, width / heads}), {0, 2, 1, 3});
}

// 0 where `allowed`, -inf elsewhere, in dtype t.
Expr additive(ConvertContext& ctx, const Expr& allowed, DataType t) {
  return ctx.op("where", {allowed, scalar_constant(ctx, 0, t), scalar_constant(ctx, kMinusInf, t)});
}

// How far key j lies behind query i once the query block is placed after `offset` earlier
// keys: i + offset - j. A scalar offset gives a (S, L) constant; a per-batch one (a (B) int64
// expression) gives (B, S, L).
class RelativePosition {
 public:
  RelativePosition(ConvertContext& ctx, int64_t queries, int64_t keys)
      : ctx_(ctx), queries_(queries), keys_(keys) {}

  Expr diff(int64_t offset) const {
    Tensor d = Tensor::empty({queries_, keys_}, DataType::int64());
    int64_t* p = d.data_as<int64_t>();
    for (int64_t i = 0; i < queries_; ++i)
      for (int64_t j = 0; j < keys_; ++j) p[i * keys_ + j] = i + offset - j;
    return ctx_.constant(d);
  }

  Expr diff(const Expr& per_batch_offset) const {
    Expr offsets = reshape(ctx_, per_batch_offset, {-1, 1, 1});
    return ctx_.op("add", {diff(0), offsets});
  }

 private:
  ConvertContext& ctx_;
  int64_t queries_, keys_;
};

// The causal / sliding-window bias from i + offset - j: causal keeps j <= i + offset; a left
// window keeps keys at most `left` behind, a right window keys at most `right` ahead. Per-batch
// positions (B, S, L) come back as (B, 1, S, L), the head axis broadcast.
Expr position_bias(ConvertContext& ctx, const Expr& diff, bool causal, int64_t left, int64_t right,
                   DataType t) {
  Expr allowed;
  auto both = [&](Expr keep) { allowed = allowed ? ctx.op("logical_and", {allowed, keep}) : keep; };
  if (causal) both(ctx.op("greater_equal", {diff, tensor::int64_scalar(ctx, 0)}));
  if (left >= 0) both(ctx.op("less_equal", {diff, tensor::int64_scalar(ctx, left)}));
  if (right >= 0) both(ctx.op("greater_equal", {diff, tensor::int64_scalar(ctx, -right)}));
  Expr bias = additive(ctx, allowed, t);
  const auto* type = ir::as<ir::TensorTypeNode>(bias->checked_type);
  if (type && type->ndim() == 3) bias = ctx.op("expand_dims", {bias}, {{"axis", int64_t(1)}});
  return bias;
}

Expr sum_bias(ConvertContext& ctx, const Expr& a, const Expr& b) {
  return a ? ctx.op("add", {a, b}) : b;
}

// Attention (opset 23 on). Q (B, Nq, S, h) or (B, S, Nq*h); K, V likewise with Nkv heads.
std::vector<Expr> convert_attention(ConvertContext& ctx) {
  // bfloat16 is computed in float32 and rounded back at the outputs.
  const DataType io = ctx.input_tensor(0).dtype;
  const DataType t = io == DataType::bfloat16() ? DataType::float32() : float_input(ctx, 0);
  auto in = [&](size_t i) {
    return ctx.input_tensor(i).dtype == DataType::bfloat16()
               ? ctx.op("cast", {ctx.input(i)}, {{"dtype", t}})
               : ctx.input(i);
  };
  const std::vector<int64_t> qd = known_dims(ctx, 0, "Q"), kd = known_dims(ctx, 1, "K"),
                             vd = known_dims(ctx, 2, "V");
  const size_t rank = qd.size();
  if (rank != 3 && rank != 4) ctx.fail("Q must be 3-D or 4-D, got rank ", rank);
  if (kd.size() != rank || vd.size() != rank) ctx.fail("Q, K and V must have the same rank");
  Expr q = in(0), k = in(1), v = in(2);
  int64_t q_heads, kv_heads, head_size, q_len, new_keys;
  if (rank == 3) {
    q_heads = ctx.required_int("q_num_heads");
    kv_heads = ctx.required_int("kv_num_heads");
    q = split_heads(ctx, q, qd[2], q_heads, "Q");
    k = split_heads(ctx, k, kd[2], kv_heads, "K");
    v = split_heads(ctx, v, vd[2], kv_heads, "V");
    head_size = qd[2] / q_heads;
    q_len = qd[1];
    new_keys = kd[1];
  } else {
    q_heads = qd[1];
    kv_heads = kd[1];
    head_size = qd[3];
    q_len = qd[2];
    new_keys = kd[2];
  }
  if (kv_heads <= 0 || q_heads % kv_heads != 0)
    ctx.fail(q_heads, " query heads do not group over ", kv_heads, " key/value heads");

  // The key/value cache: past (B, Nkv, P, h) before the new keys.
  if (ctx.has_input(4) != ctx.has_input(5))
    ctx.fail("past_key and past_value must be given together");
  const bool has_past = ctx.has_input(4), has_nonpad = ctx.has_input(6);
  if (has_past && has_nonpad) ctx.fail("nonpad_kv_seqlen cannot be combined with a past cache");
  int64_t past = 0;
  if (has_past) {
    past = known_dims(ctx, 4, "past_key")[2];
    auto appended = [&](size_t cache, const Expr& x) {
      return ctx.op("concatenate", {ctx.typed(ir::TupleNode::make({in(cache), x}))},
                    {{"axis", int64_t(2)}});
    };
    k = appended(4, k);
    v = appended(5, v);
  }
  const Expr present_key = k, present_value = v;
  const int64_t keys = past + new_keys;

  // The additive bias, null while nothing is masked.
  Expr bias;
  if (ctx.has_input(3)) {
    const ir::TensorTypeNode& mask_type = ctx.input_tensor(3);
    Expr mask = mask_type.dtype == DataType::boolean() ? additive(ctx, ctx.input(3), t) : in(3);
    // A mask shorter than the keys leaves the keys past its end masked.
    std::optional<int64_t> mask_keys = (*mask_type.shape)[mask_type.ndim() - 1].as_int();
    if (!mask_keys) ctx.fail("attn_mask must have a static last dim");
    if (*mask_keys < keys) {
      std::vector<int64_t> pads(2 * mask_type.ndim(), 0);
      pads[2 * mask_type.ndim() - 1] = keys - *mask_keys;
      mask = ctx.op("nn.pad", {mask, scalar_constant(ctx, kMinusInf, t)}, {{"pad_width", pads}});
    }
    bias = mask;
  }
  const bool causal = ctx.attr_int("is_causal", 0) != 0;
  const int64_t left = ctx.attr_int("left_window_size", -1),
                right = ctx.attr_int("right_window_size", -1);
  if (left < -1 || right < -1) ctx.fail("window sizes must be -1 or non-negative");
  RelativePosition positions(ctx, q_len, keys);
  if (causal || left >= 0 || right >= 0) {
    // The query block follows the cached keys, or, with nonpad_kv_seqlen, ends at each row's
    // last valid key.
    Expr diff = positions.diff(past);
    if (has_nonpad) {
      Expr lengths = ctx.op("cast", {ctx.input(6)}, {{"dtype", DataType::int64()}});
      diff = positions.diff(ctx.op("subtract", {lengths, tensor::int64_scalar(ctx, q_len)}));
    }
    bias = sum_bias(ctx, bias, position_bias(ctx, diff, causal, left, right, t));
  }
  if (has_nonpad) {  // keys at or past each row's length are padding: (B, 1, 1, L)
    Expr lengths = ctx.op("cast", {ctx.input(6)}, {{"dtype", DataType::int64()}});
    std::vector<int64_t> key_index(keys);
    for (int64_t j = 0; j < keys; ++j) key_index[j] = j;
    Expr valid = ctx.op("less", {reshape(ctx, ints_constant(ctx, key_index), {1, keys}),
                                 reshape(ctx, lengths, {-1, 1})});
    bias = sum_bias(ctx, bias, reshape(ctx, additive(ctx, valid, t), {-1, 1, 1, keys}));
  }

  // Grouped-query attention: each key/value head serves q_heads / kv_heads query heads in turn.
  if (q_heads != kv_heads) {
    int64_t group = q_heads / kv_heads;
    k = ctx.op("repeat", {k}, {{"repeats", group}, {"axis", int64_t(1)}});
    v = ctx.op("repeat", {v}, {{"repeats", group}, {"axis", int64_t(1)}});
  }

  double scale = ctx.attr_float("scale", 1.0 / std::sqrt(double(head_size)));
  Expr root = scalar_constant(ctx, std::sqrt(scale), t);
  Expr scores = ctx.op("matmul", {ctx.op("multiply", {q, root}),
                                  transpose(ctx, ctx.op("multiply", {k, root}), {0, 1, 3, 2})});
  double softcap = ctx.attr_float("softcap", 0);
  if (softcap > 0) {
    Expr cap = scalar_constant(ctx, softcap, t);
    scores = ctx.op("multiply", {ctx.op("tanh", {ctx.op("divide", {scores, cap})}), cap});
  }
  const int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.fail("qk_matmul_output_mode must be 0 to 3, got ", mode);
  Expr qk_output = scores;
  if (bias) scores = ctx.op("add", {scores, bias});
  if (mode == 2) qk_output = scores;
  if (ctx.has_attr("softmax_precision")) {
    DataType precision =
        onnx_dtype(int32_t(ctx.attr_int("softmax_precision", 1)), "softmax_precision");
    if (precision != t) scores = ctx.op("cast", {scores}, {{"dtype", precision}});
  }
  Expr probs = ctx.op("nn.softmax", {scores}, {{"axis", int64_t(-1)}});
  if (bias) {
    // A row whose every key is masked attends nothing: zeros, decided on the bias so that
    // the scores' own infinities cannot hide it.
    Expr row_max = ctx.op("max", {bias}, {{"axis", std::vector<int64_t>{-1}}, {"keepdims", true}});
    Expr none = ctx.op("equal", {row_max, scalar_constant(ctx, kMinusInf, t)});
    const DataType pt = ir::as<ir::TensorTypeNode>(probs->checked_type)->dtype;
    probs = ctx.op("where", {none, scalar_constant(ctx, 0, pt), probs});
  }
  if (mode == 3) qk_output = probs;
  auto as = [&](const Expr& x, DataType dt) {
    return ir::as<ir::TensorTypeNode>(x->checked_type)->dtype == dt
               ? x
               : ctx.op("cast", {x}, {{"dtype", dt}});
  };
  Expr y = ctx.op("matmul", {as(probs, t), v});
  if (rank == 3) y = reshape(ctx, transpose(ctx, y, {0, 2, 1, 3}), {0, 0, -1});
  return {as(y, io), as(present_key, io), as(present_value, io), as(qk_output, io)};
}

// FlexAttention (ai.onnx.preview): Q (B, Hq, L, E), K, V (B, Hkv, S, E|Ev); the scores,
// computed in softmax_precision (float32 for 16-bit inputs), pass through the score_mod
// subgraph before the softmax and the probabilities through prob_mod after it. The subgraphs
// are inlined.
std::vector<Expr> convert_flex_attention(ConvertContext& ctx) {
  const DataType t = ctx.input_tensor(0).dtype;
  const bool narrow = t == DataType::bfloat16() || t == DataType::float16();
  if (!narrow) float_input(ctx, 0);
  const std::vector<int64_t> qd = known_dims(ctx, 0, "Q"), kd = known_dims(ctx, 1, "K");
  if (qd.size() != 4 || kd.size() != 4 || ctx.input_tensor(2).ndim() != 4)
    ctx.fail("Q, K and V must be rank 4");
  if (kd[1] <= 0 || qd[1] % kd[1] != 0)
    ctx.fail(qd[1], " query heads do not group over ", kd[1], " key/value heads");
  DataType compute = narrow ? DataType::float32() : t;
  if (ctx.has_attr("softmax_precision"))
    compute = onnx_dtype(int32_t(ctx.attr_int("softmax_precision", 1)), "softmax_precision");
  auto as = [&](const Expr& x, DataType dt) {
    return ir::as<ir::TensorTypeNode>(x->checked_type)->dtype == dt
               ? x
               : ctx.op("cast", {x}, {{"dtype", dt}});
  };
  Expr k = ctx.input(1), v = ctx.input(2);
  if (qd[1] != kd[1]) {
    int64_t group = qd[1] / kd[1];
    k = ctx.op("repeat", {k}, {{"repeats", group}, {"axis", int64_t(1)}});
    v = ctx.op("repeat", {v}, {{"repeats", group}, {"axis", int64_t(1)}});
  }
  double scale = ctx.attr_float("scale", 1.0 / std::sqrt(double(qd[3])));
  Expr root = scalar_constant(ctx, std::sqrt(float(scale)), t);
  Expr scores = ctx.op("matmul", {ctx.op("multiply", {ctx.input(0), root}),
                                  transpose(ctx, ctx.op("multiply", {k, root}), {0, 1, 3, 2})});
  scores = as(scores, compute);
  auto apply_mod = [&](const char* name, const Expr& x) {
    if (!ctx.has_attr(name)) return x;
    std::vector<Expr> out = ctx.graph().convert_subgraph(ctx.attr_graph(name), {x});
    if (out.size() != 1) ctx.fail(name, " must have one output, got ", out.size());
    return as(out[0], compute);
  };
  scores = apply_mod("score_mod", scores);
  Expr probs = apply_mod("prob_mod", ctx.op("nn.softmax", {scores}, {{"axis", int64_t(-1)}}));
  return {as(ctx.op("matmul", {probs, as(v, compute)}), ctx.input_tensor(2).dtype)};
}

// RMSNormalization: X / sqrt(mean(X^2 over axis..last) + epsilon) * scale, computed in
// float32 (stash_type 1) and cast back.
std::vector<Expr> convert_rms_normalization(ConvertContext& ctx) {
  const DataType t = float_input(ctx, 0);
  const int64_t rank = ctx.input_tensor(0).ndim();
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) ctx.fail("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  if (ctx.attr_int("stash_type", 1) != 1) ctx.fail("only stash_type 1 (float32) is supported");
  const DataType f32 = DataType::float32();
  auto to = [&](const Expr& x, DataType from, DataType dt) {
    return from == dt ? x : ctx.op("cast", {x}, {{"dtype", dt}});
  };
  Expr x = to(ctx.input(0), t, f32);
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  Expr mean_square =
      ctx.op("mean", {ctx.op("multiply", {x, x})}, {{"axis", axes}, {"keepdims", true}});
  Expr rms = ctx.op(
      "sqrt",
      {ctx.op("add", {mean_square, scalar_constant(ctx, ctx.attr_float("epsilon", 1e-5), f32)})});
  Expr normalized = ctx.op("multiply", {x, ctx.op("divide", {scalar_constant(ctx, 1, f32), rms})});
  const DataType st = ctx.input_tensor(1).dtype;
  Expr y = ctx.op("multiply", {normalized, to(ctx.input(1), st, f32)});
  return {to(y, f32, t)};
}

// The rotary input as (B, S, N, h): from (B, N, S, h), or from (B, S, N*h) split into heads.
struct RotaryLayout {
  std::vector<int64_t> dims;
  int64_t head = 0;

  Expr to_heads(ConvertContext& ctx, const Expr& x, int64_t heads) const {
    if (dims.size() == 4) return transpose(ctx, x, {0, 2, 1, 3});
    return reshape(ctx, x, {0, 0, heads, head});
  }
  Expr back(ConvertContext& ctx, const Expr& y) const {
    if (dims.size() == 4) return transpose(ctx, y, {0, 2, 1, 3});
    return reshape(ctx, y, {0, 0, -1});
  }
};

// x (B, S, N, h) with its first `dim` features rotated pairwise (the halves, or even/odd
// features when interleaved) by cos, sin (B, S, dim/2): (x1 cos - x2 sin, x1 sin + x2 cos).
Expr rotate(ConvertContext& ctx, const Expr& x, Expr cos, Expr sin, int64_t dim, int64_t head,
            bool interleaved) {
  cos = ctx.op("expand_dims", {cos}, {{"axis", int64_t(2)}});  // (B, S, 1, d/2)
  sin = ctx.op("expand_dims", {sin}, {{"axis", int64_t(2)}});
  auto slice = [&](const Expr& e, int64_t begin, int64_t end, int64_t stride) {
    return ctx.op("strided_slice", {e},
                  {{"begin", std::vector<int64_t>{begin}},
                   {"end", std::vector<int64_t>{end}},
                   {"strides", std::vector<int64_t>{stride}},
                   {"axes", std::vector<int64_t>{3}}});
  };
  Expr x1 = interleaved ? slice(x, 0, dim, 2) : slice(x, 0, dim / 2, 1);
  Expr x2 = interleaved ? slice(x, 1, dim, 2) : slice(x, dim / 2, dim, 1);
  Expr real = ctx.op("subtract", {ctx.op("multiply", {cos, x1}), ctx.op("multiply", {sin, x2})});
  Expr imag = ctx.op("add", {ctx.op("multiply", {sin, x1}), ctx.op("multiply", {cos, x2})});
  auto concat = [&](std::vector<Expr> parts, int64_t axis) {
    return ctx.op("concatenate", {ctx.typed(ir::TupleNode::make(std::move(parts)))},
                  {{"axis", axis}});
  };
  Expr rotated;
  if (interleaved) {
    Expr pairs = concat({ctx.op("expand_dims", {real}, {{"axis", int64_t(4)}}),
                         ctx.op("expand_dims", {imag}, {{"axis", int64_t(4)}})},
                        4);  // (B, S, N, d/2, 2)
    rotated = reshape(ctx, pairs, {0, 0, 0, dim});
  } else {
    rotated = concat({real, imag}, 3);
  }
  return dim < head ? concat({rotated, slice(x, dim, head, 1)}, 3) : rotated;
}

// The rotary dim (0: the head size), checked against the head and the caches (input
// `cache`, last dim dim/2).
int64_t rotary_dim(const ConvertContext& ctx, int64_t head, size_t cache) {
  int64_t dim = ctx.attr_int("rotary_embedding_dim", 0);
  if (dim == 0) dim = head;
  if (dim <= 0 || dim > head || dim % 2 != 0)
    ctx.fail("rotary_embedding_dim ", dim, " must be even and at most the head size ", head);
  const ir::TensorTypeNode& type = ctx.input_tensor(cache);
  std::optional<int64_t> half = (*type.shape)[type.ndim() - 1].as_int();
  if (!half || *half != dim / 2)
    ctx.fail("the caches' last dim must be rotary_embedding_dim / 2 = ", dim / 2);
  return dim;
}

// RotaryEmbedding (opset 23): X (B, N, S, h) or (B, S, N*h) with num_heads; the caches
// (B, S, d/2), or (max position, d/2) indexed by position_ids.
std::vector<Expr> convert_rotary_embedding(ConvertContext& ctx) {
  float_input(ctx, 0);
  RotaryLayout layout{known_dims(ctx, 0, "X")};
  int64_t heads = 0;
  if (layout.dims.size() == 4) {
    layout.head = layout.dims[3];
  } else if (layout.dims.size() == 3) {
    heads = ctx.required_int("num_heads");
    if (heads <= 0 || layout.dims[2] % heads != 0)
      ctx.fail("a hidden size of ", layout.dims[2], " does not split into ", heads, " heads");
    layout.head = layout.dims[2] / heads;
  } else {
    ctx.fail("X must be 3-D or 4-D, got rank ", layout.dims.size());
  }
  const int64_t dim = rotary_dim(ctx, layout.head, 1);
  Expr cos = ctx.input(1), sin = ctx.input(2);
  if (ctx.has_input(3)) {
    Expr ids = tensor::as_int64(ctx, ctx.input(3));
    cos = ctx.op("take", {cos, ids}, {{"axis", int64_t(0)}});
    sin = ctx.op("take", {sin, ids}, {{"axis", int64_t(0)}});
  }
  Expr x = layout.to_heads(ctx, ctx.input(0), heads);
  bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  return {layout.back(ctx, rotate(ctx, x, cos, sin, dim, layout.head, interleaved))};
}

// com.microsoft RotaryEmbedding (ONNX Runtime's CPU kernel): input (B, S, N*h) or
// (B, N, S, h); position_ids (B, S), or one value: the position of the first token, the
// others following it; caches (max position, d/2). Without num_heads a 3-D input's head is
// the rotary dim.
std::vector<Expr> convert_contrib_rotary_embedding(ConvertContext& ctx) {
  float_input(ctx, 0);
  if (ctx.attr_int("is_packed_batching", 0)) ctx.fail("is_packed_batching is not supported");
  if (ctx.attr_float("scale", 1.0) != 1.0) ctx.fail("a scale other than 1 is not supported");
  RotaryLayout layout{known_dims(ctx, 0, "input")};
  int64_t heads = ctx.attr_int("num_heads", 0);
  if (layout.dims.size() == 4) {
    layout.head = layout.dims[3];
  } else if (layout.dims.size() == 3) {
    if (heads == 0) {
      if (ctx.attr_int("rotary_embedding_dim", 0) != 0)
        ctx.fail("rotary_embedding_dim needs num_heads");
      const ir::TensorTypeNode& cache = ctx.input_tensor(2);
      std::optional<int64_t> half = (*cache.shape)[cache.ndim() - 1].as_int();
      layout.head = 2 * half.value_or(0);
      if (layout.head <= 0 || layout.dims[2] % layout.head != 0)
        ctx.fail("a hidden size of ", layout.dims[2], " does not split into heads of ",
                 layout.head);
      heads = layout.dims[2] / layout.head;
    } else {
      if (heads < 0 || layout.dims[2] % heads != 0)
        ctx.fail("a hidden size of ", layout.dims[2], " does not split into ", heads, " heads");
      layout.head = layout.dims[2] / heads;
    }
  } else {
    ctx.fail("input must be 3-D or 4-D, got rank ", layout.dims.size());
  }
  const int64_t dim = rotary_dim(ctx, layout.head, 2);
  const int64_t batch = layout.dims[0],
                steps = layout.dims.size() == 4 ? layout.dims[2] : layout.dims[1];
  Expr ids = tensor::as_int64(ctx, ctx.input(1));
  const ir::TensorTypeNode& id_type = ctx.input_tensor(1);
  std::optional<int64_t> id_count =
      id_type.ndim() == 1 ? (*id_type.shape)[0].as_int() : std::optional<int64_t>();
  if (id_type.ndim() == 1 && id_count == 1) {  // an offset: positions offset .. offset+S-1
    std::vector<int64_t> steps_from_zero(steps);
    for (int64_t s = 0; s < steps; ++s) steps_from_zero[s] = s;
    ids = ctx.op("add", {reshape(ctx, ints_constant(ctx, steps_from_zero), {1, steps}), ids});
    ids = ctx.op("broadcast_to", {ids}, {{"shape", std::vector<int64_t>{batch, steps}}});
  } else if (id_type.ndim() != 2) {
    ctx.fail("position_ids must be (batch, sequence) or one offset");
  }
  Expr cos = ctx.op("take", {ctx.input(2), ids}, {{"axis", int64_t(0)}});
  Expr sin = ctx.op("take", {ctx.input(3), ids}, {{"axis", int64_t(0)}});
  Expr x = layout.to_heads(ctx, ctx.input(0), heads);
  bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  return {layout.back(ctx, rotate(ctx, x, cos, sin, dim, layout.head, interleaved))};
}

// com.microsoft GroupQueryAttention as ONNX Runtime's CPU kernel computes it. query (B, S, N*h)
// (or q, k, v packed along the last axis when key is absent), key/value (B, S, Nkv*h), the
// cache past_key/value (B, Nkv, P, h), seqlens_k (B) the index of each row's last valid token,
// total_sequence_length. A prompt (S > 1) ignores the cache: its keys fill rows 0..S-1 of
// present; a token step (S = 1) appends at row seqlens_k[b]. present is (B, Nkv, max(P, total),
// h), zeros past each row's keys. Query i of row b sees keys from past_b + i + 1 - window - 1
// (local_window_size) up to past_b + i and below seqlens_k[b] + 1; queries of a prompt's
// padding (i > seqlens_k[b]) are left unspecified by ONNX Runtime, here they attend the row's
// valid keys.
std::vector<Expr> convert_group_query_attention(ConvertContext& ctx) {
  const DataType t = float_input(ctx, 0);
  const int64_t heads = ctx.required_int("num_heads"), kv_heads = ctx.required_int("kv_num_heads");
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    ctx.fail("num_heads ", heads, " must be a positive multiple of kv_num_heads ", kv_heads);
  if (ctx.attr_int("smooth_softmax", 0) != 0) ctx.fail("smooth_softmax is not supported");
  if (ctx.attr_float("softcap", 0) != 0) ctx.fail("softcap is not supported");
  for (size_t i : {9, 10})
    if (ctx.has_input(i)) ctx.fail("input ", i, " (position_ids, attention_bias) is not supported");
  const std::vector<int64_t> qd = known_dims(ctx, 0, "query");
  if (qd.size() != 3) ctx.fail("query must be (batch, sequence, hidden)");
  const int64_t batch = qd[0], steps = qd[1];
  Expr q = ctx.input(0), k, v;
  int64_t head;
  auto last_slice = [&](const Expr& x, int64_t begin, int64_t end) {
    return ctx.op("strided_slice", {x},
                  {{"begin", std::vector<int64_t>{begin}},
                   {"end", std::vector<int64_t>{end}},
                   {"axes", std::vector<int64_t>{2}}});
  };
  if (!ctx.has_input(1)) {  // packed q, k, v
    head = qd[2] / (heads + 2 * kv_heads);
    if (head * (heads + 2 * kv_heads) != qd[2])
      ctx.fail("a packed width of ", qd[2], " does not split into ", heads, " + 2 x ", kv_heads,
               " heads");
    k = last_slice(q, heads * head, (heads + kv_heads) * head);
    v = last_slice(q, (heads + kv_heads) * head, qd[2]);
    q = last_slice(q, 0, heads * head);
  } else {
    if (qd[2] % heads != 0) ctx.fail("a hidden size of ", qd[2], " does not split into heads");
    head = qd[2] / heads;
    k = ctx.input(1);
    v = ctx.input(2);
  }
  if (!ctx.has_input(3) || !ctx.has_input(4) || !ctx.has_input(5) || !ctx.has_input(6))
    ctx.fail("past_key, past_value, seqlens_k and total_sequence_length are required");
  const int64_t past = known_dims(ctx, 3, "past_key")[2];
  // present's length depends on total_sequence_length's value: a constant or an initializer.
  std::optional<Tensor> total_value = ctx.known_value(6);
  if (!total_value)
    ctx.fail(
        "total_sequence_length must be a constant or an initializer (present's length "
        "depends on it)");
  const int64_t keys = std::max(past, int64_t(total_value->get_as_double(0)));
  const bool prompt = steps > 1;

  // Rows as (B, S, N, h); rotary embedding at positions i (prompt) or seqlens_k[b] (token).
  Expr seqlens = tensor::as_int64(ctx, ctx.input(5));
  Expr qs = reshape(ctx, q, {0, 0, heads, head}), ks = reshape(ctx, k, {0, 0, kv_heads, head});
  std::vector<int64_t> step_index(steps);
  for (int64_t i = 0; i < steps; ++i) step_index[i] = i;
  Expr steps_row = reshape(ctx, ints_constant(ctx, step_index), {1, steps});
  if (ctx.attr_int("do_rotary", 0)) {
    if (!ctx.has_input(7) || !ctx.has_input(8)) ctx.fail("do_rotary needs cos_cache and sin_cache");
    Expr positions = prompt ? steps_row : reshape(ctx, seqlens, {-1, 1});
    positions =
        ctx.op("broadcast_to", {positions}, {{"shape", std::vector<int64_t>{batch, steps}}});
    Expr cos = ctx.op("take", {ctx.input(7), positions}, {{"axis", int64_t(0)}});
    Expr sin = ctx.op("take", {ctx.input(8), positions}, {{"axis", int64_t(0)}});
    const ir::TensorTypeNode& cache = ctx.input_tensor(7);
    std::optional<int64_t> half = (*cache.shape)[cache.ndim() - 1].as_int();
    if (!half || 2 * *half > head) ctx.fail("the rotary caches' last dim must be at most head / 2");
    bool interleaved = ctx.attr_int("rotary_interleaved", 0) != 0;
    qs = rotate(ctx, qs, cos, sin, 2 * *half, head, interleaved);
    ks = rotate(ctx, ks, cos, sin, 2 * *half, head, interleaved);
  }
  Expr qh = transpose(ctx, qs, {0, 2, 1, 3});  // (B, N, S, h)
  Expr kh = transpose(ctx, ks, {0, 2, 1, 3});  // (B, Nkv, S, h)
  Expr vh = transpose(ctx, reshape(ctx, v, {0, 0, kv_heads, head}), {0, 2, 1, 3});

  // present: row j of batch b is past[j] below past_b, new[j - past_b] up to past_b + S, else 0.
  std::vector<int64_t> key_index(keys);
  for (int64_t j = 0; j < keys; ++j) key_index[j] = j;
  Expr key_col = reshape(ctx, ints_constant(ctx, key_index), {1, 1, keys, 1});
  Expr first_new = prompt ? tensor::int64_scalar(ctx, 0) : reshape(ctx, seqlens, {-1, 1, 1, 1});
  Expr offset = ctx.op("subtract", {key_col, first_new});  // (B|1, 1, L, 1)
  Expr is_new =
      ctx.op("logical_and", {ctx.op("greater_equal", {offset, tensor::int64_scalar(ctx, 0)}),
                             ctx.op("less", {offset, tensor::int64_scalar(ctx, steps)})});
  Expr from_new = ctx.op("clip", {offset}, {{"a_min", 0.0}, {"a_max", double(steps - 1)}});
  from_new = ctx.op("broadcast_to", {from_new},
                    {{"shape", std::vector<int64_t>{batch, kv_heads, keys, head}}});
  Expr zero = scalar_constant(ctx, 0, t);
  auto present_of = [&](size_t cache, const Expr& fresh) {
    Expr old = ctx.input(cache);
    if (past < keys) {
      std::vector<int64_t> pads{0, 0, 0, 0, 0, keys - past, 0, 0};
      old = ctx.op("nn.pad", {old, zero}, {{"pad_width", pads}});
    }
    Expr kept = prompt ? ctx.op("zeros_like", {old})
                       : ctx.op("where", {ctx.op("less", {key_col, first_new}), old, zero});
    Expr placed = ctx.op("gather", {fresh, from_new}, {{"axis", int64_t(2)}});
    return ctx.op("where", {is_new, placed, kept});
  };
  Expr present_key = present_of(3, kh), present_value = present_of(4, vh);

  // Keys query i of row b sees: [hi - window - 1, hi) with hi = min(first_new + i + 1, len_b).
  Expr valid = ctx.op("add", {reshape(ctx, seqlens, {-1, 1, 1, 1}), tensor::int64_scalar(ctx, 1)});
  Expr query_row = reshape(ctx, ints_constant(ctx, step_index), {1, 1, steps, 1});
  Expr hi =
      ctx.op("minimum",
             {ctx.op("add", {ctx.op("add", {first_new, query_row}), tensor::int64_scalar(ctx, 1)}),
              valid});  // (B, 1, S, 1)
  Expr key_row = reshape(ctx, ints_constant(ctx, key_index), {1, 1, 1, keys});
  Expr allowed = ctx.op("less", {key_row, hi});
  const int64_t window = ctx.attr_int("local_window_size", -1);
  if (window >= 0) {
    Expr lo = ctx.op("subtract", {hi, tensor::int64_scalar(ctx, window + 1)});
    allowed = ctx.op("logical_and", {allowed, ctx.op("greater_equal", {key_row, lo})});
  }
  const int64_t group = heads / kv_heads;
  auto widen = [&](const Expr& x) {
    return group == 1 ? x : ctx.op("repeat", {x}, {{"repeats", group}, {"axis", int64_t(1)}});
  };
  double scale = ctx.attr_float("scale", 0);
  if (scale == 0) scale = 1.0 / std::sqrt(double(head));
  Expr scores =
      ctx.op("multiply", {ctx.op("matmul", {qh, transpose(ctx, widen(present_key), {0, 1, 3, 2})}),
                          scalar_constant(ctx, scale, t)});
  scores = ctx.op("add", {scores, additive(ctx, allowed, t)});
  Expr probs = ctx.op("nn.softmax", {scores}, {{"axis", int64_t(-1)}});
  Expr y = ctx.op("matmul", {probs, widen(present_value)});  // (B, N, S, h)
  y = reshape(ctx, transpose(ctx, y, {0, 2, 1, 3}), {0, 0, heads * head});
  return {y, present_key, present_value};
}

// Swish: x * sigmoid(alpha * x); SwiGLU: Swish(A) * B.
Expr swish(ConvertContext& ctx, const Expr& x, DataType t) {
  double alpha = ctx.attr_float("alpha", 1.0);
  Expr scaled = alpha == 1.0 ? x : ctx.op("multiply", {x, scalar_constant(ctx, alpha, t)});
  return ctx.op("multiply", {x, ctx.op("sigmoid", {scaled})});
}

std::vector<Expr> convert_swish(ConvertContext& ctx) {
  return {swish(ctx, ctx.input(0), float_input(ctx, 0))};
}

std::vector<Expr> convert_swiglu(ConvertContext& ctx) {
  return {ctx.op("multiply", {swish(ctx, ctx.input(0), float_input(ctx, 0)), ctx.input(1)})};
}

}  // namespace

void register_attention_converters(ConverterTable& table) {
  table.add("Attention", 23, convert_attention);
  table.add("RMSNormalization", 23, convert_rms_normalization);
  table.add("FlexAttention", 1, convert_flex_attention, "ai.onnx.preview");
  table.add("RotaryEmbedding", 23, convert_rotary_embedding);
  table.add("RotaryEmbedding", 1, convert_contrib_rotary_embedding, "com.microsoft");
  table.add("GroupQueryAttention", 1, convert_group_query_attention, "com.microsoft");
  table.add("Swish", 24, convert_swish);
  table.add("SwiGLU", 28, convert_swiglu);
}

}  // namespace anvil::frontend::onnx_import
