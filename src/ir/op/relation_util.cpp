#include "ir/op/relation_util.h"

#include <algorithm>

namespace anvil::ir {

const TensorTypeNode& RelationArgs::tensor(size_t i) const {
  ANVIL_ICHECK(i < inputs.size(), op.name, " has no argument ", i);
  const auto* t = as<TensorTypeNode>(inputs[i]);
  if (!t) throw_error(arg_name(i), " must be a tensor, got ", type_to_string(inputs[i]));
  if (!t->shape)
    throw_error(arg_name(i), " must have a known rank, got ", type_to_string(inputs[i]));
  return *t;
}

std::string RelationArgs::arg_name(size_t i) const {
  if (i < op.input_names.size()) return "argument '" + op.input_names[i] + "'";
  if (op.variadic && !op.input_names.empty())
    return "argument '" + op.input_names.back() + "' " + std::to_string(i);
  return "argument " + std::to_string(i);
}

namespace relation {

int64_t normalize_axis(int64_t axis, int64_t rank, const char* attr_name) {
  if (axis < -rank || axis >= rank)
    throw_error("attribute '", attr_name, "' = ", axis, " is out of range for rank ", rank,
                " (expected ", -rank, " to ", rank - 1, ")");
  return axis < 0 ? axis + rank : axis;
}

std::vector<Dim> broadcast_shapes(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> result(rank, Dim(1));
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right, numpy style.
    const Dim* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!da) {
      result[i] = *db;
    } else if (!db) {
      result[i] = *da;
    } else if (*da == *db) {
      result[i] = *da;
    } else if (da->is_int() && da->int_value() == 1) {
      result[i] = *db;
    } else if (db->is_int() && db->int_value() == 1) {
      result[i] = *da;
    } else if (da->is_int() && db->is_int()) {
      throw_error("shapes ", dims_to_string(a), " and ", dims_to_string(b),
                  " cannot be broadcast: dimension ", i, " is ", da->to_string(), " vs ",
                  db->to_string());
    } else if (da->is_int()) {
      result[i] = *da;  // a symbolic dim must match the static one to be valid
    } else if (db->is_int()) {
      result[i] = *db;
    } else {
      result[i] = broadcast(*da, *db);  // checked when the size is computed at run time
    }
  }
  return result;
}

Type broadcast_relation(const RelationArgs& args, bool allow_mixed_dtypes) {
  ANVIL_ICHECK(!args.inputs.empty());
  bool unknown_rank = false;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const auto* t = as<TensorTypeNode>(args.inputs[i]);
    if (!t)
      throw_error(args.arg_name(i), " must be a tensor, got ", type_to_string(args.inputs[i]));
    unknown_rank |= !t->shape;
  }
  if (!allow_mixed_dtypes) expect_same_dtype(args);
  DataType dtype = as<TensorTypeNode>(args.inputs[0])->dtype;
  if (unknown_rank) return TensorTypeNode::make_unknown_rank(dtype);
  std::vector<Dim> shape = *as<TensorTypeNode>(args.inputs[0])->shape;
  for (size_t i = 1; i < args.inputs.size(); ++i)
    shape = broadcast_shapes(shape, *as<TensorTypeNode>(args.inputs[i])->shape);
  return TensorTypeNode::make(std::move(shape), dtype);
}

Type identity_relation(const RelationArgs& args) {
  ANVIL_ICHECK(!args.inputs.empty());
  if (!as<TensorTypeNode>(args.inputs[0]))
    throw_error(args.arg_name(0), " must be a tensor, got ", type_to_string(args.inputs[0]));
  return args.inputs[0];
}

void expect_same_dtype(const RelationArgs& args) {
  const auto* first = as<TensorTypeNode>(args.inputs[0]);
  if (!first)
    throw_error(args.arg_name(0), " must be a tensor, got ", type_to_string(args.inputs[0]));
  for (size_t i = 1; i < args.inputs.size(); ++i) {
    const auto* t = as<TensorTypeNode>(args.inputs[i]);
    if (!t)
      throw_error(args.arg_name(i), " must be a tensor, got ", type_to_string(args.inputs[i]));
    if (t->dtype != first->dtype)
      throw_error(args.arg_name(i), " has dtype ", t->dtype.to_string(), " but ", args.arg_name(0),
                  " has ", first->dtype.to_string());
  }
}

void expect_dim_equal(const Dim& got, const Dim& expected, const std::string& what) {
  if (got.is_int() && expected.is_int() && got.int_value() != expected.int_value())
    throw_error(what, " must be ", expected.to_string(), ", got ", got.to_string());
  if (!got.is_int() && !expected.is_int()) return;  // symbolic: not provably different
}

void expect_rank(const TensorTypeNode& t, int64_t rank, const std::string& what) {
  if (!t.shape || int64_t(t.shape->size()) != rank)
    throw_error(what, " must have rank ", rank, ", got ", describe(t));
}

std::string describe(const TensorTypeNode& t) { return type_to_string(Type(&t)); }

}  // namespace relation
}  // namespace anvil::ir
