// Elementwise unary math (exp, sqrt, floor, ...) and the family's entry point.
// Every op keeps its input's shape; the dtype class each op accepts is
// checked so a wrong dtype is reported here rather than deep in lowering.
#include "ir/op/dtype_check.h"
#include "ir/op/families.h"

namespace anvil::ir {

// Defined in elemwise_binary.cpp: the broadcasting binary ops, where and clip.
void register_elemwise_binary_ops(OpTable& table);

namespace {

using relation::DtypeClass;

struct UnaryOpSpec {
  const char* name;
  const char* description;
  DtypeClass input;   // dtypes the op accepts
  bool returns_bool;  // the predicates isnan/isinf/isfinite
};

constexpr UnaryOpSpec kUnaryOps[] = {
    {"exp", "e raised to each element", DtypeClass::Float, false},
    {"log", "natural logarithm", DtypeClass::Float, false},
    {"sqrt", "square root", DtypeClass::Float, false},
    {"rsqrt", "reciprocal of the square root", DtypeClass::Float, false},
    {"sigmoid", "logistic function 1 / (1 + exp(-x))", DtypeClass::Float, false},
    {"tanh", "hyperbolic tangent", DtypeClass::Float, false},
    {"erf", "Gauss error function", DtypeClass::Float, false},
    {"abs", "absolute value", DtypeClass::Numeric, false},
    {"negative", "-x", DtypeClass::Numeric, false},
    {"floor", "largest integer not above x", DtypeClass::Float, false},
    {"ceil", "smallest integer not below x", DtypeClass::Float, false},
    {"round", "nearest integer, halves to even (as ONNX Round)", DtypeClass::Float, false},
    {"sign", "-1, 0 or 1 by the sign of x", DtypeClass::Numeric, false},
    {"trunc", "integer part, rounding toward zero", DtypeClass::Float, false},
    {"sin", "sine", DtypeClass::Float, false},
    {"cos", "cosine", DtypeClass::Float, false},
    {"tan", "tangent", DtypeClass::Float, false},
    {"asin", "arcsine", DtypeClass::Float, false},
    {"acos", "arccosine", DtypeClass::Float, false},
    {"atan", "arctangent", DtypeClass::Float, false},
    {"sinh", "hyperbolic sine", DtypeClass::Float, false},
    {"cosh", "hyperbolic cosine", DtypeClass::Float, false},
    {"asinh", "inverse hyperbolic sine", DtypeClass::Float, false},
    {"acosh", "inverse hyperbolic cosine", DtypeClass::Float, false},
    {"atanh", "inverse hyperbolic tangent", DtypeClass::Float, false},
    {"reciprocal", "1 / x", DtypeClass::Float, false},
    {"logical_not", "boolean negation", DtypeClass::Bool, false},
    {"bitwise_not", "bitwise complement (negation for bool)", DtypeClass::IntegerOrBool, false},
    {"copy", "a copy of the input", DtypeClass::Any, false},
    {"isnan", "true where x is NaN", DtypeClass::Float, true},
    {"isinf", "true where x is +inf or -inf", DtypeClass::Float, true},
    {"isfinite", "true where x is neither NaN nor infinite", DtypeClass::Float, true},
};

TypeRelation unary_relation(DtypeClass input, bool returns_bool) {
  return [input, returns_bool](const RelationArgs& args) -> Type {
    relation::expect_dtype_class(args, 0, input);
    if (!returns_bool) return args.inputs[0];
    return relation::with_dtype(relation::tensor_any_rank(args, 0), DataType::boolean());
  };
}

}  // namespace

void register_elemwise_ops(OpTable& table) {
  for (const UnaryOpSpec& spec : kUnaryOps) {
    table.add(spec.name)
        .describe(spec.description)
        .inputs({"data"})
        .type_relation(unary_relation(spec.input, spec.returns_bool))
        .fusion_pattern(OpPattern::ElemWise);
  }
  register_elemwise_binary_ops(table);
}

}  // namespace anvil::ir
