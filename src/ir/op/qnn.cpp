// The quantized dialect: its boundary ops qnn.quantize (float to integer with
// a scale and zero point) and qnn.dequantize (back), and the integer products
// qnn.conv2d and qnn.dense that FakeQuantizationToInteger rewrites float
// convolutions and dense layers between them into. Scale and zero point are
// tensor inputs, not attrs, because ONNX lets them be computed at run time
// (DynamicQuantizeLinear); a pass that wants them constant checks that they are.
#include "anvil/ir/attrs/qnn.h"

#include <cmath>
#include <utility>

#include "anvil/ir/attrs/nn.h"
#include "ir/op/dtype_check.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {

namespace {

// The element types a quantized tensor may have: 2- to 16-bit integers, int32 (a bias, only
// dequantized), and float8 / float4 (scaled values rounded to the format, zero point 0).
bool is_quantized_dtype(DataType t) {
  if (!t.is_scalar()) return false;
  if (t.is_minifloat()) return true;
  return (t.is_int() || t.is_uint()) && (t.bits <= 16 || (t.is_int() && t.bits == 32));
}

// Checks that the scale (input 1) and zero point (input 2) fit data (input 0)
// for the granularity that the attrs and the scale's shape select.
void expect_quantization_params(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<QuantizeAttrs>();
  const TensorTypeNode& scale = args.tensor(1);
  const TensorTypeNode& zero_point = args.tensor(2);
  if (!scale.dtype.is_float() && !scale.dtype.is_bfloat())
    throw_error(args.arg_name(1), " must be a floating-point tensor, got ",
                relation::describe(scale));
  if (zero_point.shape->size() != scale.shape->size())
    throw_error(args.arg_name(2), " must have the shape of the scale, got ",
                relation::describe(zero_point), " for scale ", relation::describe(scale));
  for (size_t d = 0; d < scale.shape->size(); ++d)
    relation::expect_dim_equal((*zero_point.shape)[d], (*scale.shape)[d],
                               str_cat(args.arg_name(2), " dim ", d, " (the scale's)"));
  if (attrs.block_size < 0)
    throw_error("attribute 'block_size' = ", attrs.block_size, " must be non-negative");

  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data || !data->shape) return;  // rank unknown: checked when it is known
  auto rank = int64_t(data->shape->size());
  const std::vector<Dim>& s = *scale.shape;
  if (attrs.block_size == 0) {
    if (s.empty()) return;  // per tensor
    if (s.size() != 1)
      throw_error(args.arg_name(1), " must be a scalar or a vector along axis ", attrs.axis,
                  " (or block_size set), got ", relation::describe(scale));
    // One value is per tensor, whatever the axis says (a bias's [1] scale, axis 1 by default,
    // over rank-1 data).
    if (s[0] == Dim(1)) return;
    int64_t axis = relation::normalize_axis(attrs.axis, rank);
    if (nn::provably_different(s[0], (*data->shape)[size_t(axis)]))
      throw_error(args.arg_name(1), " has ", s[0].to_string(), " elements but axis ", axis,
                  " of data ", relation::describe(*data), " has ",
                  (*data->shape)[size_t(axis)].to_string());
    return;
  }
  int64_t axis = relation::normalize_axis(attrs.axis, rank);
  if (int64_t(s.size()) != rank)
    throw_error(args.arg_name(1), " must have data's rank for blocked quantization, got ",
                relation::describe(scale), " for data ", relation::describe(*data));
  for (int64_t d = 0; d < rank; ++d) {
    const Dim& dim = (*data->shape)[size_t(d)];
    if (d != axis) {
      relation::expect_dim_equal(s[size_t(d)], dim, str_cat(args.arg_name(1), " dim ", d));
      continue;
    }
    if (!dim.is_static() || !s[size_t(d)].is_static()) continue;
    int64_t blocks = (dim.int_value() + attrs.block_size - 1) / attrs.block_size;
    if (s[size_t(d)].int_value() != blocks)
      throw_error(args.arg_name(1), " dim ", d, " must be ", blocks, " (", dim.int_value(),
                  " elements in blocks of ", attrs.block_size, "), got ",
                  relation::describe(scale));
  }
}

Type quantize_relation(const RelationArgs& args) {
  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data) throw_error(args.arg_name(0), " must be a tensor");
  bool accepted = relation::dtype_in_class(data->dtype, relation::DtypeClass::Float) ||
                  data->dtype == DataType::int32();
  if (!accepted)
    throw_error(args.arg_name(0), " must be a floating-point or int32 tensor, got ",
                type_to_string(args.inputs[0]));
  expect_quantization_params(args);
  DataType out = args.tensor(2).dtype;
  if (!is_quantized_dtype(out) || out.bits == 32)
    throw_error(args.arg_name(2),
                " must be an integer of 2 to 16 bits or a float8/float4 type (the quantized "
                "type), got ",
                relation::describe(args.tensor(2)));
  return data->shape ? Type(TensorTypeNode::make(*data->shape, out))
                     : Type(TensorTypeNode::make_unknown_rank(out));
}

Type dequantize_relation(const RelationArgs& args) {
  const auto* data = as<TensorTypeNode>(args.inputs[0]);
  if (!data) throw_error(args.arg_name(0), " must be a tensor");
  if (!is_quantized_dtype(data->dtype))
    throw_error(args.arg_name(0),
                " must be an integer tensor of 2 to 16 bits, int32, or float8/float4, got ",
                type_to_string(args.inputs[0]));
  expect_quantization_params(args);
  const TensorTypeNode& zero_point = args.tensor(2);
  if (zero_point.dtype != data->dtype)
    throw_error(args.arg_name(2), " must have data's dtype ", data->dtype.to_string(), ", got ",
                relation::describe(zero_point));
  DataType out = args.tensor(1).dtype;
  return data->shape ? Type(TensorTypeNode::make(*data->shape, out))
                     : Type(TensorTypeNode::make_unknown_rank(out));
}

// A tensor type with its dtype replaced.
Type with_dtype(const Type& t, DataType dtype) {
  const auto* tensor = as<TensorTypeNode>(t);
  if (!tensor) return t;
  return tensor->shape ? Type(TensorTypeNode::make(*tensor->shape, dtype))
                       : Type(TensorTypeNode::make_unknown_rank(dtype));
}

// qnn.conv2d / qnn.dense: data and weight of 8-bit integers, a scalar zero point
// of data's type, a scalar or per-output-channel zero point of weight's type;
// the shape is the float op's (its relation runs on the same attrs), the dtype int32.
TypeRelation integer_product_relation(const char* float_op) {
  return [float_op](const RelationArgs& args) -> Type {
    const TensorTypeNode& data = args.tensor(0);
    const TensorTypeNode& weight = args.tensor(1);
    for (size_t i : {size_t(0), size_t(1)}) {
      DataType t = args.tensor(i).dtype;
      if (t != DataType::uint8() && t != DataType::int8())
        throw_error(args.arg_name(i), " must be uint8 or int8, got ",
                    relation::describe(args.tensor(i)));
    }
    const TensorTypeNode& data_zp = args.tensor(2);
    const TensorTypeNode& weight_zp = args.tensor(3);
    if (data_zp.dtype != data.dtype || !data_zp.shape->empty())
      throw_error(args.arg_name(2), " must be a scalar of data's dtype ", data.dtype.to_string(),
                  ", got ", relation::describe(data_zp));
    if (weight_zp.dtype != weight.dtype || weight_zp.shape->size() > 1)
      throw_error(args.arg_name(3), " must be a scalar or a vector of weight's dtype ",
                  weight.dtype.to_string(), ", got ", relation::describe(weight_zp));
    if (weight_zp.shape->size() == 1 && args.op.name == "qnn.conv2d" &&
        args.attrs_as<Conv2DAttrs>().kernel_layout != "OIHW")
      throw_error(args.arg_name(3), " per output channel needs kernel_layout OIHW, got ",
                  args.attrs_as<Conv2DAttrs>().kernel_layout);
    if (weight_zp.shape->size() == 1)
      relation::expect_dim_equal((*weight_zp.shape)[0], (*weight.shape)[0],
                                 str_cat(args.arg_name(3), " length (the output channels)"));
    const OpDef* op = OpTable::global().find(float_op);
    Type widened[2] = {with_dtype(args.inputs[0], DataType::int32()),
                       with_dtype(args.inputs[1], DataType::int32())};
    RelationArgs inner{*op, widened, args.attrs, args.type_args};
    return with_dtype(op->relation(inner), DataType::int32());
  };
}

// The static 5-D data and 6-D weight shapes of a blocked int8 convolution, after checking
// the operands' types: uint8 data, int8 weight, a uint8 scalar zero point.
std::pair<std::vector<int64_t>, std::vector<int64_t>> blocked_int8_operands(
    const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& weight = args.tensor(1);
  const TensorTypeNode& zero_point = args.tensor(2);
  if (data.dtype != DataType::uint8() || weight.dtype != DataType::int8() ||
      zero_point.dtype != DataType::uint8() || !zero_point.shape->empty())
    throw_error("expects uint8 data, int8 weight and a uint8 scalar zero point, got ",
                nn::inputs_text(args));
  auto d = data.static_shape();
  auto w = weight.static_shape();
  if (!d || !w || d->size() != 5 || w->size() != 6)
    throw_error("expects static 5-D data and 6-D weight, got ", nn::inputs_text(args));
  return {*d, *w};
}

// (N, blocks, OH, OW, block) int32 for data d and kernel size (w[2], w[3]) under the attrs.
Type blocked_int8_output(const RelationArgs& args, const std::vector<int64_t>& d,
                         const std::vector<int64_t>& w, int64_t blocks, int64_t block) {
  const auto& a = args.attrs_as<Conv2DAttrs>();
  std::vector<int64_t> strides = nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = nn::spatial_attr(a.dilation, 2, "dilation", 1);
  std::vector<int64_t> pad = nn::expand_padding(a.padding, 2);
  std::vector<Dim> out = {(*args.tensor(0).shape)[0], blocks};
  for (size_t i = 0; i < 2; ++i) {
    int64_t extent = d[2 + i] + pad[i] + pad[2 + i] - dilation[i] * (w[2 + i] - 1) - 1;
    if (extent < 0)
      throw_error("the kernel is larger than the padded input: ", nn::inputs_text(args));
    out.push_back(extent / strides[i] + 1);
  }
  out.push_back(block);
  return TensorTypeNode::make(std::move(out), DataType::int32());
}

// qnn.contrib_conv2d_NCHWc: uint8 data (N, C/ib, H, W, ib), int8 weight
// (O/ob, C/ib/groups, KH, KW, ib/4, ob*4) and the data's zero point (a uint8 scalar,
// the padding value) -> int32 (N, O/ob, OH, OW, ob). With groups, output block o reads the
// input blocks of its group, o / (O/ob/groups). Static shapes only: it is made by the x86
// layout strategy of qnn.conv2d, which knows them.
Type qnn_conv2d_nchwc_relation(const RelationArgs& args) {
  auto [d, w] = blocked_int8_operands(args);
  const int64_t groups = std::max<int64_t>(1, args.attrs_as<Conv2DAttrs>().groups);
  if (d[1] != w[1] * groups || d[4] != w[4] * 4 || w[5] % 4 != 0 || w[0] % groups != 0)
    throw_error("data blocks (", d[1], " x ", d[4], ") do not match the weight's (", w[1], " x ",
                w[4], " x 4) in ", groups, " group(s) of ", w[0], " output blocks");
  return blocked_int8_output(args, d, w, w[0], w[5] / 4);
}

// qnn.contrib_depthwise_conv2d_NCHWc: uint8 data (N, C/b, H, W, b), int8 weight
// (C/b, 1, KH, KW, 1, b) and the data's zero point -> int32 (N, C/b, OH, OW, b).
Type qnn_depthwise_nchwc_relation(const RelationArgs& args) {
  auto [d, w] = blocked_int8_operands(args);
  if (w[1] != 1 || w[4] != 1 || d[1] != w[0] || d[4] != w[5])
    throw_error("expects data (N, C/b, H, W, b) and weight (C/b, 1, KH, KW, 1, b), got ",
                nn::inputs_text(args));
  return blocked_int8_output(args, d, w, d[1], d[4]);
}

// qnn.add and qnn.mul: two 8-bit tensors of one type, broadcast.
Type qnn_binary_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<QnnBinaryAttrs>();
  DataType lhs = relation::tensor_any_rank(args, 0).dtype;
  if (lhs != DataType::uint8() && lhs != DataType::int8())
    throw_error(args.arg_name(0), " must be uint8 or int8, got ", type_to_string(args.inputs[0]));
  if (relation::tensor_any_rank(args, 1).dtype != lhs)
    throw_error(args.arg_name(1), " must be ", lhs.to_string(), " as ", args.arg_name(0), ", got ",
                type_to_string(args.inputs[1]));
  for (double scale : {a.lhs_scale, a.rhs_scale, a.out_scale})
    if (!(scale > 0) || std::isinf(scale))
      throw_error("scales must be positive and finite, got ", scale);
  auto [lo, hi] =
      lhs.is_int() ? std::pair<int64_t, int64_t>{-128, 127} : std::pair<int64_t, int64_t>{0, 255};
  for (int64_t zp : {a.lhs_zero_point, a.rhs_zero_point, a.out_zero_point})
    if (zp < lo || zp > hi)
      throw_error("zero point ", zp, " is outside ", lhs.to_string(), "'s range");
  return relation::broadcast_relation(args);
}

}  // namespace

void register_qnn_ops(OpTable& table) {
  table.add("qnn.contrib_depthwise_conv2d_NCHWc")
      .describe(
          "blocked depthwise 2-D convolution of uint8 data (NCHW{b}c, padded with "
          "data_zero_point) by int8 weights (OIHW1i{b}o), summed in int32 without subtracting "
          "the zero point (the x86 form of a depthwise qnn.conv2d)")
      .inputs({"data", "weight", "data_zero_point"})
      .attrs<Conv2DAttrs>()
      .type_relation(qnn_depthwise_nchwc_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("qnn.add")
      .describe(
          "lhs + rhs of per-tensor quantized 8-bit tensors, rescaled to the output's "
          "scale and zero point (QnnBinaryAttrs)")
      .inputs({"lhs", "rhs"})
      .attrs<QnnBinaryAttrs>()
      .type_relation(qnn_binary_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("qnn.mul")
      .describe(
          "lhs * rhs of per-tensor quantized 8-bit tensors, the integer product rescaled to the "
          "output's scale and zero point (QnnBinaryAttrs)")
      .inputs({"lhs", "rhs"})
      .attrs<QnnBinaryAttrs>()
      .type_relation(qnn_binary_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("qnn.contrib_conv2d_NCHWc")
      .describe(
          "blocked 2-D convolution of uint8 data (NCHW{ib}c, padded with data_zero_point) by "
          "int8 weights packed four input channels deep (OIHW{ib/4}i{ob}o4i), summed in int32 "
          "without subtracting the zero point (the x86 form of qnn.conv2d)")
      .inputs({"data", "weight", "data_zero_point"})
      .attrs<Conv2DAttrs>()
      .type_relation(qnn_conv2d_nchwc_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("qnn.conv2d")
      .describe(
          "2-D convolution of 8-bit integers accumulated exactly in int32: sum of (data - "
          "data_zero_point) * (weight - weight_zero_point), padding counted as the zero point")
      .inputs({"data", "weight", "data_zero_point", "weight_zero_point"})
      .attrs<Conv2DAttrs>()
      .type_relation(integer_product_relation("nn.conv2d"))
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("qnn.dense")
      .describe(
          "data (..., K) times the transpose of weight (N, K) in 8-bit integers, accumulated "
          "exactly in int32 after subtracting the zero points")
      .inputs({"data", "weight", "data_zero_point", "weight_zero_point"})
      .attrs<DenseAttrs>()
      .type_relation(integer_product_relation("nn.dense"))
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("qnn.quantize")
      .describe(
          "saturate(round_half_even(data / scale) + zero_point) in the zero point's integer type")
      .inputs({"data", "scale", "zero_point"})
      .attrs<QuantizeAttrs>()
      .type_relation(quantize_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("qnn.dequantize")
      .describe("(data - zero_point) * scale in the scale's float type")
      .inputs({"data", "scale", "zero_point"})
      .attrs<QuantizeAttrs>()
      .type_relation(dequantize_relation)
      .fusion_pattern(OpPattern::Broadcast);
}

}  // namespace anvil::ir
