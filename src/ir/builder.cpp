#include "anvil/ir/builder.h"

#include <utility>

#include "anvil/ir/op.h"
#include "anvil/support/error.h"

namespace anvil::ir {

const CallNode* op_call(const Expr& e, std::string_view op_name) {
  const auto* call = as<CallNode>(e);
  if (!call) return nullptr;
  const OpNode* op = call->op();
  return op && op->name == op_name ? call : nullptr;
}

const Tensor* constant_data(const Expr& e) {
  const auto* constant = as<ConstantNode>(e);
  return constant ? &constant->data : nullptr;
}

std::optional<std::vector<int64_t>> static_shape(const Expr& e) {
  if (const Tensor* data = constant_data(e)) return data->shape_vector();
  const auto* type = e ? as<TensorTypeNode>(e->checked_type) : nullptr;
  if (!type) return std::nullopt;
  return type->static_shape();
}

std::optional<std::vector<Dim>> shape_dims(const Expr& e) {
  if (const Tensor* data = constant_data(e)) return to_dims(data->shape_vector());
  const auto* type = e ? as<TensorTypeNode>(e->checked_type) : nullptr;
  if (!type || !type->shape) return std::nullopt;
  return *type->shape;
}

std::optional<DataType> tensor_dtype(const Expr& e) {
  if (const Tensor* data = constant_data(e)) return data->dtype();
  const auto* type = e ? as<TensorTypeNode>(e->checked_type) : nullptr;
  if (!type) return std::nullopt;
  return type->dtype;
}

bool is_float32(const Expr& e) {
  std::optional<DataType> dtype = tensor_dtype(e);
  return dtype && *dtype == DataType::float32();
}

bool is_float32(const Type& type) {
  const auto* t = as<TensorTypeNode>(type);
  return t && t->dtype == DataType::float32();
}

std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> values(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) values[size_t(i)] = t.get_as_double(i);
  return values;
}

Tensor make_tensor(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  ANVIL_ICHECK(size_t(t.numel()) == values.size(), "tensor of ", t.numel(), " elements from ",
               values.size(), " values");
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, values[size_t(i)]);
  return t;
}

Expr scalar_constant(double value, DataType dtype) {
  return ConstantNode::make(make_tensor({value}, {}, dtype));
}

std::string blocked_layout(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

Expr transform_layout(const Expr& x, const std::string& src, const std::string& dst) {
  if (src == dst) return x;
  if (const CallNode* inner = op_call(x, "layout_transform"))
    if (call_string_attr(*inner, "src_layout") == dst &&
        call_string_attr(*inner, "dst_layout") == src)
      return inner->args[0];
  return call_op("layout_transform", {x},
                 make_op_attrs("layout_transform", {{"src_layout", src}, {"dst_layout", dst}}));
}

Expr transpose(const Expr& x, std::vector<int64_t> axes) {
  return call_op("transpose", {x}, make_op_attrs("transpose", {{"axes", std::move(axes)}}));
}

Expr slice_axes(const Expr& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                std::vector<int64_t> axes) {
  std::vector<int64_t> strides(axes.size(), 1);
  return call_op("strided_slice", {x},
                 make_op_attrs("strided_slice", {{"begin", std::move(begin)},
                                                 {"end", std::move(end)},
                                                 {"strides", std::move(strides)},
                                                 {"axes", std::move(axes)}}));
}

}  // namespace anvil::ir
