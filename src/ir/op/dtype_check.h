// Element-type classes that op relations require of their inputs, and the
// checks that report a wrong one. Shared by the elementwise, activation,
// normalization and reduction families.
#pragma once

#include <cstddef>

#include "ir/op/relation_util.h"

namespace anvil::ir::relation {

// Which element types an input accepts.
enum class DtypeClass {
  Any,            // every dtype
  Numeric,        // int, uint, float, bfloat; not bool
  Float,          // float or bfloat
  Integer,        // int or uint; not bool
  IntegerOrBool,  // int, uint or bool
  Bool,           // bool only
};

// True when dtype belongs to the class.
inline bool dtype_in_class(DataType dtype, DtypeClass cls) {
  switch (cls) {
    case DtypeClass::Any:
      return true;
    case DtypeClass::Numeric:
      return !dtype.is_bool();
    case DtypeClass::Float:
      return dtype.is_float() || dtype.is_bfloat();
    case DtypeClass::Integer:
      return dtype.is_int() || dtype.is_uint();
    case DtypeClass::IntegerOrBool:
      return dtype.is_int() || dtype.is_uint() || dtype.is_bool();
    case DtypeClass::Bool:
      return dtype.is_bool();
  }
  return false;
}

// "a floating-point", for "must be a floating-point tensor".
inline const char* dtype_class_phrase(DtypeClass cls) {
  switch (cls) {
    case DtypeClass::Any:
      return "a";
    case DtypeClass::Numeric:
      return "a numeric (non-bool)";
    case DtypeClass::Float:
      return "a floating-point";
    case DtypeClass::Integer:
      return "an integer";
    case DtypeClass::IntegerOrBool:
      return "an integer or bool";
    case DtypeClass::Bool:
      return "a bool";
  }
  return "a";
}

// Input i as a tensor whose rank may be unknown (elementwise ops pass an
// unknown rank through); throws Error naming the argument if it is no tensor.
inline const TensorTypeNode& tensor_any_rank(const RelationArgs& args, size_t i) {
  if (const auto* t = as<TensorTypeNode>(args.inputs[i])) return *t;
  return args.tensor(i);  // throws: not a tensor
}

// Throws Error "argument 'x' must be a floating-point tensor, got Tensor[...]"
// unless input i's dtype is in the class.
inline void expect_dtype_class(const RelationArgs& args, size_t i, DtypeClass cls) {
  const TensorTypeNode& t = tensor_any_rank(args, i);
  if (!dtype_in_class(t.dtype, cls))
    throw_error(args.arg_name(i), " must be ", dtype_class_phrase(cls), " tensor, got ",
                describe(t));
}

// The type of t with its dtype replaced (an unknown rank stays unknown).
inline Type with_dtype(const TensorTypeNode& t, DataType dtype) {
  if (!t.shape) return TensorTypeNode::make_unknown_rank(dtype);
  return TensorTypeNode::make(*t.shape, dtype);
}

}  // namespace anvil::ir::relation
