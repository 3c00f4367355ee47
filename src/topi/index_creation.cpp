// Computes of the creation ops: arange (static attributes), full, zeros, ones, their *_like
// forms, and shape_of / ndarray_size, whose values follow from the input's type.
#include <optional>

#include "anvil/ir/attrs/transform.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

te::Tensor filled(const ComputeArgs& args, PrimExpr value) {
  return map_output(args, 0, [value](const std::vector<PrimExpr>&) { return value; });
}

// start + i * step in double, converted as the reference converts its double values.
std::vector<te::Tensor> arange(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ArangeAttrs>();
  DataType dtype = args.out_dtype();
  DataType f64 = DataType::float64();
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    PrimExpr value = tir::make_const(f64, attrs.start) +
                     tir::cast(f64, out[0]) * tir::make_const(f64, attrs.step);
    return convert_like_reference(value, dtype);
  })};
}

std::vector<te::Tensor> full(const ComputeArgs& args) {
  return {filled(args, convert_like_reference(scalar_value(args.inputs[0]), args.out_dtype()))};
}

std::vector<te::Tensor> full_like(const ComputeArgs& args) {
  return {filled(args, convert_like_reference(scalar_value(args.inputs[1]), args.out_dtype()))};
}

std::vector<te::Tensor> zeros(const ComputeArgs& args) {
  return {filled(args, tir::make_const(args.out_dtype(), 0))};
}

std::vector<te::Tensor> ones(const ComputeArgs& args) {
  return {filled(args, tir::make_const(args.out_dtype(), 1))};
}

// The input's shape, known from its type or, for a size variable, bound from the input at
// the kernel's entry: a chain of selects over the output position.
std::vector<te::Tensor> shape_of(const ComputeArgs& args) {
  std::vector<PrimExpr> shape = args.inputs[0].shape();
  DataType dtype = args.out_dtype();
  auto as_dtype = [dtype](const PrimExpr& dim) {
    if (auto value = tir::as_const_int(dim)) return tir::make_int(*value, dtype);
    return tir::cast(dtype, dim);
  };
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    PrimExpr value = shape.empty() ? tir::make_int(0, dtype) : as_dtype(shape.back());
    for (size_t i = shape.empty() ? 0 : shape.size() - 1; i-- > 0;)
      value = tir::select(tir::eq(out[0], tir::make_int(int64_t(i))), as_dtype(shape[i]), value);
    return value;
  })};
}

std::vector<te::Tensor> ndarray_size(const ComputeArgs& args) {
  PrimExpr count = shape_product(args.inputs[0].shape());
  DataType dtype = args.out_dtype();
  std::optional<int64_t> known = tir::as_const_int(count);
  return {filled(args, known ? tir::make_int(*known, dtype) : tir::cast(dtype, count))};
}

}  // namespace

void register_index_creation_computes() {
  register_compute("arange", arange);
  register_compute("full", full);
  register_compute("full_like", full_like);
  register_compute("zeros", zeros);
  register_compute("zeros_like", zeros);
  register_compute("ones", ones);
  register_compute("ones_like", ones);
  register_compute("shape_of", shape_of);
  register_compute("ndarray_size", ndarray_size);
}

}  // namespace anvil::topi::transform
