// Binary elementwise ops with numpy broadcasting, plus where and clip. Both
// operands must share one dtype: implicit promotion would hide a missing cast
// in the model, and ONNX requires the same of these ops.
#include <optional>
#include <vector>

#include "anvil/ir/attrs/elemwise.h"
#include "ir/op/dtype_check.h"
#include "ir/op/families.h"

namespace anvil::ir {

namespace {

using relation::DtypeClass;

struct BinaryOpSpec {
  const char* name;
  const char* description;
  DtypeClass operands;  // dtypes both operands accept
  bool returns_bool;    // comparisons
};

constexpr BinaryOpSpec kBinaryOps[] = {
    {"add", "lhs + rhs", DtypeClass::Numeric, false},
    {"subtract", "lhs - rhs", DtypeClass::Numeric, false},
    {"multiply", "lhs * rhs", DtypeClass::Numeric, false},
    {"divide", "lhs / rhs; integers round toward zero", DtypeClass::Numeric, false},
    {"power", "lhs raised to rhs", DtypeClass::Numeric, false},
    {"maximum", "the larger of lhs and rhs", DtypeClass::Numeric, false},
    {"minimum", "the smaller of lhs and rhs", DtypeClass::Numeric, false},
    {"mod", "remainder of truncating division (C fmod; sign of lhs)", DtypeClass::Numeric, false},
    {"floor_mod", "remainder of flooring division (sign of rhs)", DtypeClass::Numeric, false},
    {"floor_divide", "floor(lhs / rhs)", DtypeClass::Numeric, false},
    {"equal", "lhs == rhs", DtypeClass::Any, true},
    {"not_equal", "lhs != rhs", DtypeClass::Any, true},
    {"less", "lhs < rhs", DtypeClass::Any, true},
    {"less_equal", "lhs <= rhs", DtypeClass::Any, true},
    {"greater", "lhs > rhs", DtypeClass::Any, true},
    {"greater_equal", "lhs >= rhs", DtypeClass::Any, true},
    {"logical_and", "lhs and rhs", DtypeClass::Bool, false},
    {"logical_or", "lhs or rhs", DtypeClass::Bool, false},
    {"logical_xor", "lhs xor rhs", DtypeClass::Bool, false},
    {"bitwise_and", "lhs & rhs", DtypeClass::IntegerOrBool, false},
    {"bitwise_or", "lhs | rhs", DtypeClass::IntegerOrBool, false},
    {"bitwise_xor", "lhs ^ rhs", DtypeClass::IntegerOrBool, false},
    {"left_shift", "lhs << rhs", DtypeClass::Integer, false},
    {"right_shift", "lhs >> rhs (arithmetic for signed types)", DtypeClass::Integer, false},
};

// Throws Error naming both arguments and their types unless inputs i and j share a dtype.
void expect_same_dtype(const RelationArgs& args, size_t i, size_t j) {
  const TensorTypeNode& a = relation::tensor_any_rank(args, i);
  const TensorTypeNode& b = relation::tensor_any_rank(args, j);
  if (a.dtype != b.dtype)
    throw_error(args.arg_name(i), " and ", args.arg_name(j), " must have the same dtype, got ",
                relation::describe(a), " and ", relation::describe(b));
}

// Numpy broadcast of the given inputs' shapes; nullopt when a rank is unknown.
std::optional<std::vector<Dim>> broadcast_inputs(const RelationArgs& args,
                                                 std::initializer_list<size_t> indices) {
  std::optional<std::vector<Dim>> shape;
  for (size_t i : indices) {
    const TensorTypeNode& t = relation::tensor_any_rank(args, i);
    if (!t.shape) return std::nullopt;
    shape = shape ? relation::broadcast_shapes(*shape, *t.shape) : *t.shape;
  }
  return shape;
}

Type make_tensor(std::optional<std::vector<Dim>> shape, DataType dtype) {
  if (!shape) return TensorTypeNode::make_unknown_rank(dtype);
  return TensorTypeNode::make(std::move(*shape), dtype);
}

TypeRelation binary_relation(DtypeClass operands, bool returns_bool) {
  return [operands, returns_bool](const RelationArgs& args) -> Type {
    relation::expect_dtype_class(args, 0, operands);
    relation::expect_dtype_class(args, 1, operands);
    expect_same_dtype(args, 0, 1);
    DataType dtype = returns_bool ? DataType::boolean() : relation::tensor_any_rank(args, 0).dtype;
    return make_tensor(broadcast_inputs(args, {0, 1}), dtype);
  };
}

Type where_relation(const RelationArgs& args) {
  relation::expect_dtype_class(args, 0, DtypeClass::Bool);
  expect_same_dtype(args, 1, 2);
  DataType dtype = relation::tensor_any_rank(args, 1).dtype;
  return make_tensor(broadcast_inputs(args, {0, 1, 2}), dtype);
}

Type clip_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ClipAttrs>();
  relation::expect_dtype_class(args, 0, DtypeClass::Numeric);
  // Written so that a NaN bound fails too.
  if (!(attrs.a_min <= attrs.a_max))
    throw_error("attribute 'a_min' = ", attrs.a_min,
                " must not exceed attribute 'a_max' = ", attrs.a_max);
  return args.inputs[0];
}

}  // namespace

void register_elemwise_binary_ops(OpTable& table) {
  for (const BinaryOpSpec& spec : kBinaryOps) {
    table.add(spec.name)
        .describe(spec.description)
        .inputs({"lhs", "rhs"})
        .type_relation(binary_relation(spec.operands, spec.returns_bool))
        .fusion_pattern(OpPattern::Broadcast);
  }
  table.add("where")
      .describe("x where condition holds, else y; all three broadcast together")
      .inputs({"condition", "x", "y"})
      .type_relation(where_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("clip")
      .describe("x limited to [a_min, a_max]")
      .inputs({"data"})
      .attrs<ClipAttrs>()
      .type_relation(clip_relation)
      .fusion_pattern(OpPattern::ElemWise);
}

}  // namespace anvil::ir
