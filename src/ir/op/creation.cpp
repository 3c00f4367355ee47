// The creation family: ops that make new tensors from attributes or from the
// shape of another tensor (arange, full, zeros, ones, their *_like forms,
// shape_of, ndarray_size).
#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

Type arange_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ArangeAttrs>();
  if (!std::isfinite(attrs.start) || !std::isfinite(attrs.stop) || !std::isfinite(attrs.step))
    throw_error("attributes 'start' = ", attrs.start, ", 'stop' = ", attrs.stop,
                ", 'step' = ", attrs.step, " must be finite");
  if (attrs.step == 0) throw_error("attribute 'step' must not be 0");
  double length = std::ceil((attrs.stop - attrs.start) / attrs.step);
  if (length > double(int64_t(1) << 53))
    throw_error("attributes 'start' = ", attrs.start, ", 'stop' = ", attrs.stop,
                ", 'step' = ", attrs.step, " give too many elements");
  return TensorTypeNode::make({Dim(int64_t(std::max(length, 0.0)))}, attrs.dtype);
}

// ONNX Range: the bounds are scalar tensors known only at run time.
Type range_relation(const RelationArgs& args) {
  const TensorTypeNode& start = expect_scalar(args, 0);
  expect_scalar(args, 1);
  expect_scalar(args, 2);
  expect_same_dtype(args);
  return TensorTypeNode::make({Dim::any()}, start.dtype);
}

// dyn.full: the shape is a 1-D tensor known only at run time.
Type dyn_full_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<InitOpAttrs>();
  const TensorTypeNode& fill = expect_scalar(args, 0);
  DataType dtype = attrs.dtype.value_or(fill.dtype);
  std::optional<int64_t> rank = index_vector_length(args, 1);
  if (!rank) return TensorTypeNode::make_unknown_rank(dtype);
  return TensorTypeNode::make(std::vector<Dim>(size_t(*rank), Dim::any()), dtype);
}

std::vector<Dim> init_shape(const InitOpAttrs& attrs) {
  for (int64_t d : attrs.shape)
    if (d < 0) throw_error("attribute 'shape' = ", attrs.shape, " has a negative dim");
  return to_dims(attrs.shape);
}

Type full_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<InitOpAttrs>();
  const TensorTypeNode& fill = expect_scalar(args, 0);
  return TensorTypeNode::make(init_shape(attrs), attrs.dtype.value_or(fill.dtype));
}

Type zeros_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<InitOpAttrs>();
  return TensorTypeNode::make(init_shape(attrs), attrs.dtype.value_or(DataType::float32()));
}

// The fill value is converted to data's dtype, as in TVM.
Type full_like_relation(const RelationArgs& args) {
  tensor_any_rank(args, 0);
  expect_scalar(args, 1);
  return args.inputs[0];
}

Type shape_of_relation(const RelationArgs& args) {
  const TensorTypeNode& data = tensor_any_rank(args, 0);
  DataType dtype = args.attrs_as<ShapeOfAttrs>().dtype;
  if (!dtype_in_class(dtype, DtypeClass::Integer))
    throw_error("attribute 'dtype' = ", dtype.to_string(), " must be an integer type");
  Dim rank = data.shape ? Dim(int64_t(data.shape->size())) : Dim::any();
  return TensorTypeNode::make({rank}, dtype);
}

Type ndarray_size_relation(const RelationArgs& args) {
  tensor_any_rank(args, 0);
  DataType dtype = args.attrs_as<NdarraySizeAttrs>().dtype;
  if (!dtype_in_class(dtype, DtypeClass::Integer))
    throw_error("attribute 'dtype' = ", dtype.to_string(), " must be an integer type");
  return TensorTypeNode::make_scalar(dtype);
}

}  // namespace

void register_creation_ops(OpTable& table) {
  table.add("arange")
      .describe("Evenly spaced values in [start, stop), given as attributes.")
      .inputs({})
      .attrs<ArangeAttrs>()
      .type_relation(arange_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("range")
      .describe("Evenly spaced values from scalar tensors start, limit, delta (ONNX Range).")
      .inputs({"start", "limit", "delta"})
      .type_relation(range_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("full")
      .describe("A tensor of a given shape filled with a scalar.")
      .inputs({"fill_value"})
      .attrs<InitOpAttrs>()
      .type_relation(full_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("dyn.full")
      .describe("full with the shape given as a 1-D tensor at run time (ONNX ConstantOfShape).")
      .inputs({"fill_value", "shape"})
      .attrs<InitOpAttrs>()
      .type_relation(dyn_full_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("zeros")
      .describe("A tensor of a given shape filled with 0.")
      .inputs({})
      .attrs<InitOpAttrs>()
      .type_relation(zeros_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("ones")
      .describe("A tensor of a given shape filled with 1.")
      .inputs({})
      .attrs<InitOpAttrs>()
      .type_relation(zeros_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("full_like")
      .describe("A tensor of data's type filled with a scalar.")
      .inputs({"data", "fill_value"})
      .type_relation(full_like_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("zeros_like")
      .describe("A tensor of data's type filled with 0.")
      .inputs({"data"})
      .type_relation(identity_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("ones_like")
      .describe("A tensor of data's type filled with 1.")
      .inputs({"data"})
      .type_relation(identity_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("shape_of")
      .describe("The shape of data as a 1-D tensor.")
      .inputs({"data"})
      .attrs<ShapeOfAttrs>()
      .type_relation(shape_of_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("ndarray_size")
      .describe("The element count of data as a scalar.")
      .inputs({"data"})
      .attrs<NdarraySizeAttrs>()
      .type_relation(ndarray_size_relation)
      .fusion_pattern(OpPattern::Opaque);
}

}  // namespace anvil::ir
