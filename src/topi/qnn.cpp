// Computes of qnn.quantize and qnn.dequantize, mirroring their reference
// kernels (src/reference/qnn_kernels.cpp): float32 arithmetic (float64 when an
// input is float64), division by the scale as ONNX writes it, round half to
// even, saturation into the zero point's type. Both are broadcast ops, so they
// fuse into the producer or consumer beside them.
#include "anvil/ir/attrs/qnn.h"

#include "anvil/topi/topi.h"
#include "topi/families.h"
#include "topi/topi_util.h"

namespace anvil::topi {

namespace {

// The index into scale and zero point of data element `i`.
std::vector<PrimExpr> param_index(const te::Tensor& data, const te::Tensor& scale,
                                  const ir::QuantizeAttrs& attrs, const std::vector<Var>& i,
                                  const std::string& op) {
  if (scale.ndim() == 0) return {};
  if (attrs.block_size == 0 && tir::is_const_int(scale.shape()[0], 1))
    return {int_const(DataType::int64(), 0)};
  int64_t axis = normalize_axis(attrs.axis, data.ndim(), op);
  if (attrs.block_size == 0) return {i[size_t(axis)]};
  std::vector<PrimExpr> at(i.begin(), i.end());
  at[size_t(axis)] =
      tir::floordiv(at[size_t(axis)], int_const(at[size_t(axis)].dtype(), attrs.block_size));
  return at;
}

// float32 unless data or scale is float64.
DataType arithmetic_type(const te::Tensor& data, const te::Tensor& scale) {
  bool wide = data.dtype() == DataType::float64() || scale.dtype() == DataType::float64();
  return wide ? DataType::float64() : DataType::float32();
}

// Quantization into an integer type (at most 16 bits, the relation's rule), the requantizing
// epilogue of every int8 kernel, in the fewest vector instructions that keep the reference's
// result bit for bit: v clamped to [lo - zp, hi - zp] in float (bounds exact there), rounded and
// converted in one (round_to_int32: a single instruction for float32 on AVX-512), and the zero
// point added in int32. The reference rounds, adds the zero point and then clamps; the results
// agree, since the bounds are integers (clamping before or after rounding is the same) and
// round(v) is one too (past 2^24, where adding zp could round, it is far outside the range
// either way). The clamp's lower select keeps its bound for NaN (a > b is false), which with
// zp added is 0 for unsigned types as the reference wants; signed types test NaN once more. Both
// selects are single min/max instructions on x86, and no conversion guard is left, since the
// clamped value is always representable.
te::Tensor quantize_integer(const ComputeArgs& args, DataType f) {
  const auto& attrs = args.attrs_as<ir::QuantizeAttrs>();
  const te::Tensor &x = args.inputs[0], &scale = args.inputs[1], &zero_point = args.inputs[2];
  const DataType out = args.out_dtype(), i32 = DataType::int32();
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> p = param_index(x, scale, attrs, i, args.op_name());
        PrimExpr v = tir::cast(f, x.at(std::vector<PrimExpr>(i.begin(), i.end()))) /
                     tir::cast(f, scale.at(p));
        PrimExpr zp = tir::cast(i32, zero_point.at(p));
        PrimExpr lo = tir::cast(f, int_const(i32, lowest_value(out)) - zp);
        PrimExpr hi = tir::cast(f, int_const(i32, highest_value(out)) - zp);
        PrimExpr above = tir::select(v > lo, v, lo);
        PrimExpr clamped = tir::select(above < hi, above, hi);
        PrimExpr q = tir::cast(out, tir::call_intrin(i32, "round_to_int32", {clamped}) + zp);
        if (out.is_int()) q = tir::select(is_nan(v), int_const(out, 0), q);
        return q;
      },
      tensor_name(args.op_name()));
}

std::vector<te::Tensor> quantize_compute(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::QuantizeAttrs>();
  const te::Tensor &x = args.inputs[0], &scale = args.inputs[1], &zero_point = args.inputs[2];
  DataType f = arithmetic_type(x, scale), out = args.out_dtype();
  if (out.is_minifloat()) {
    // x / scale rounded once, by the saturating conversion (the zero point is 0 by ONNX's rule,
    // added in case it is not).
    return {te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> p = param_index(x, scale, attrs, i, args.op_name());
          PrimExpr v = tir::cast(f, x.at(std::vector<PrimExpr>(i.begin(), i.end()))) /
                           tir::cast(f, scale.at(p)) +
                       tir::cast(f, zero_point.at(p));
          return tir::cast(out, v);
        },
        tensor_name(args.op_name()))};
  }
  // The relation admits integers of at most 16 bits besides the minifloats.
  ANVIL_ICHECK(out.bits <= 16, "qnn.quantize into ", out.to_string());
  return {quantize_integer(args, f)};
}

std::vector<te::Tensor> dequantize_compute(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::QuantizeAttrs>();
  const te::Tensor &x = args.inputs[0], &scale = args.inputs[1], &zero_point = args.inputs[2];
  DataType f = arithmetic_type(x, scale), out = args.out_dtype();
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> p = param_index(x, scale, attrs, i, args.op_name());
        PrimExpr value = x.at(std::vector<PrimExpr>(i.begin(), i.end()));
        // float8 / float4 data is shifted in float32, where it is exact.
        PrimExpr shifted = x.dtype().is_minifloat()
                               ? tir::cast(f, value) - tir::cast(f, zero_point.at(p))
                               : tir::cast(f, tir::cast(DataType::int32(), value) -
                                                  tir::cast(DataType::int32(), zero_point.at(p)));
        PrimExpr v = shifted * tir::cast(f, scale.at(p));
        return out == f ? v : tir::cast(out, v);
      },
      tensor_name(args.op_name()))};
}

// x minus its zero point (a scalar, or one value per slice of axis 0) in int32;
// an injective stage the schedule inlines into the product.
te::Tensor shifted(const te::Tensor& x, const te::Tensor& zero_point, const std::string& name) {
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr zp = zero_point.ndim() == 0 ? zero_point.at({}) : zero_point.at({i[0]});
        return tir::cast(DataType::int32(), x.at(std::vector<PrimExpr>(i.begin(), i.end()))) -
               tir::cast(DataType::int32(), zp);
      },
      name);
}

// qnn.conv2d and qnn.dense: the float op's compute on the shifted operands.
ComputeFn integer_product(const char* float_op) {
  return [float_op](const ComputeArgs& args) {
    std::vector<te::Tensor> operands = {shifted(args.inputs[0], args.inputs[2], "data_shifted"),
                                        shifted(args.inputs[1], args.inputs[3], "weight_shifted")};
    const ComputeFn* compute = find_compute(float_op);
    return (*compute)(ComputeArgs{args.call, operands, args.out_type, args.dim_vars, args.extras});
  };
}

// qnn.add and qnn.mul: `combine` maps the two inputs' int32 values to the float value to round.
template <typename Combine>
te::Tensor qnn_binary(const ComputeArgs& args, Combine combine) {
  const te::Tensor &lhs = args.inputs[0], &rhs = args.inputs[1];
  const std::vector<PrimExpr> shape = args.out_shape();
  const DataType i32 = DataType::int32(), f = DataType::float32(), out = args.out_dtype();
  PrimExpr lo = tir::make_const(f, double(lowest_value(out)));
  PrimExpr hi = tir::make_const(f, double(highest_value(out)));
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = tir::call_intrin(f, "round",
                                      {combine(tir::cast(i32, broadcast_load(lhs, i, shape)),
                                               tir::cast(i32, broadcast_load(rhs, i, shape)))});
        return tir::cast(out, tir::select(v < lo, lo, tir::select(v > hi, hi, v)));
      },
      tensor_name(args.op_name()));
}

std::vector<te::Tensor> qnn_add_compute(const ComputeArgs& args) {
  const ir::QnnAddTerms t = ir::qnn_add_terms(args.attrs_as<ir::QnnBinaryAttrs>());
  const DataType f = DataType::float32();
  return {qnn_binary(args, [&](PrimExpr a, PrimExpr b) {
    PrimExpr inner = tir::call_intrin(f, "fma",
                                      {tir::cast(f, std::move(b)), tir::make_const(f, t.rhs_ratio),
                                       tir::make_const(f, t.offset)});
    return tir::call_intrin(f, "fma",
                            {tir::cast(f, std::move(a)), tir::make_const(f, t.lhs_ratio), inner});
  })};
}

std::vector<te::Tensor> qnn_mul_compute(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::QnnBinaryAttrs>();
  const ir::QnnMulTerms t = ir::qnn_mul_terms(attrs);
  const DataType i32 = DataType::int32(), f = DataType::float32();
  return {qnn_binary(args, [&](PrimExpr a, PrimExpr b) {
    PrimExpr product = (a - tir::make_const(i32, double(attrs.lhs_zero_point))) *
                       (b - tir::make_const(i32, double(attrs.rhs_zero_point)));
    return tir::call_intrin(f, "mul_unfused",
                            {tir::cast(f, product), tir::make_const(f, t.ratio)}) +
           tir::make_const(f, t.offset);
  })};
}

}  // namespace

void register_qnn_computes() {
  register_compute("qnn.add", qnn_add_compute);
  register_compute("qnn.mul", qnn_mul_compute);
  register_compute("qnn.conv2d", integer_product("nn.conv2d"));
  register_compute("qnn.dense", integer_product("nn.dense"));
  register_compute("qnn.quantize", quantize_compute);
  register_compute("qnn.dequantize", dequantize_compute);
}

}  // namespace anvil::topi
