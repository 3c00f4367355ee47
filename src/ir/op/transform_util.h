// Pieces shared by the transform, index and creation families' relations, and
// the registration functions of the transform family's files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/attrs/transform.h"
#include "ir/op/dtype_check.h"
#include "ir/op/relation_util.h"

namespace anvil::ir {

// Parts of register_transform_ops, one per file.
void register_transform_shape_ops(OpTable& table);   // transform.cpp
void register_transform_slice_ops(OpTable& table);   // transform_slice.cpp
void register_transform_layout_ops(OpTable& table);  // transform_layout.cpp

namespace relation {

// True when a and b differ by a known non-zero constant: only then is a
// mismatch certain, symbolic dims being possibly equal at run time.
inline bool provably_different(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return false;
  auto diff = (a - b).as_int();
  return diff && *diff != 0;
}

// The better-known of two dims that must be equal: a static one over a
// symbolic one, a symbolic one over Any.
inline Dim more_known(const Dim& a, const Dim& b) {
  if (a.is_int() || b.is_any()) return a;
  if (b.is_int() || a.is_any()) return b;
  return a;
}

// Argument i as a tuple whose fields are all tensors of known rank; throws
// Error naming the argument otherwise.
inline std::vector<const TensorTypeNode*> tuple_of_tensors(const RelationArgs& args, size_t i) {
  const auto* tuple = as<TupleTypeNode>(args.inputs[i]);
  if (!tuple)
    throw_error(args.arg_name(i), " must be a tuple of tensors, got ",
                type_to_string(args.inputs[i]));
  std::vector<const TensorTypeNode*> fields;
  for (size_t f = 0; f < tuple->fields.size(); ++f) {
    const auto* t = as<TensorTypeNode>(tuple->fields[f]);
    if (!t || !t->shape)
      throw_error(args.arg_name(i), " field ", f, " must be a tensor of known rank, got ",
                  type_to_string(tuple->fields[f]));
    fields.push_back(t);
  }
  return fields;
}

// Throws Error unless argument i is a scalar (rank 0) tensor.
inline const TensorTypeNode& expect_scalar(const RelationArgs& args, size_t i) {
  const TensorTypeNode& t = args.tensor(i);
  if (!t.shape->empty()) throw_error(args.arg_name(i), " must be a scalar, got ", describe(t));
  return t;
}

// The length of argument i, a 1-D integer tensor of values known only at run
// time (dyn.* ops: shapes, axes, repeats); nullopt when the length is symbolic.
inline std::optional<int64_t> index_vector_length(const RelationArgs& args, size_t i) {
  const TensorTypeNode& t = args.tensor(i);
  expect_dtype_class(args, i, DtypeClass::Integer);
  expect_rank(t, 1, args.arg_name(i));
  return (*t.shape)[0].as_int();
}

// Throws Error unless argument i is an integer scalar or a 1-element 1-D
// tensor (ONNX passes such values either way).
inline const TensorTypeNode& expect_index_scalar(const RelationArgs& args, size_t i) {
  const TensorTypeNode& t = args.tensor(i);
  expect_dtype_class(args, i, DtypeClass::Integer);
  bool single = t.shape->empty() || (t.shape->size() == 1 && (*t.shape)[0].as_int() == 1);
  if (!single) throw_error(args.arg_name(i), " must be a scalar, got ", describe(t));
  return t;
}

// Throws Error unless `value` is one of `allowed`, naming the attribute.
inline void expect_one_of(const std::string& value, const std::vector<std::string>& allowed,
                          const char* attr_name) {
  for (const std::string& a : allowed)
    if (value == a) return;
  std::string list;
  for (size_t i = 0; i < allowed.size(); ++i) list += (i ? ", \"" : "\"") + allowed[i] + "\"";
  throw_error("attribute '", attr_name, "' = \"", value, "\" is not one of ", list);
}

}  // namespace relation
}  // namespace anvil::ir
