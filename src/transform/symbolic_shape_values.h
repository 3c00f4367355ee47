// Symbolic evaluation of shape computations for DynamicToStatic. The ONNX exports of PyTorch
// models compute shapes at run time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape); with
// symbolic dims those computations are small integer tensors whose elements are dim
// expressions over the size variables (batch, seq * 6), which is what a static op's type needs.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::transform::detail {

// A small integer (or bool) tensor whose elements are dims, in row-major order; Dim::any() is
// an element whose value is not known. Only elements that are certain are anything but Any.
struct SymbolicValue {
  std::vector<int64_t> shape;
  std::vector<ir::Dim> elements;
  DataType dtype;
  // A tensor whose whole shape this value is (shape_of of it, possibly cast), or null: it stands
  // for the shape even where its dims are Any.
  ir::Expr shape_source;

  // The elements when every one is an integer.
  std::optional<std::vector<int64_t>> static_values() const;
};

// True when Any occurs in d (Any == Any holds for Dims, so equality alone cannot tell).
bool involves_any(const ir::Dim& d);

// a == b, both free of Any: the two are certainly the same size.
bool known_equal(const ir::Dim& a, const ir::Dim& b);

// A lower bound of d when every size variable is at least 1, or nullopt when none is evident.
std::optional<int64_t> lower_bound(const ir::Dim& d);

// Evaluates the integer subgraphs that compute shapes, memoized per node. Follows constants,
// shape_of / ndarray_size of typed tensors, casts between integer types, elementwise integer
// arithmetic and comparisons, where, and the ops that move elements (take, gather,
// strided_slice, concatenate, reshape, squeeze, expand_dims, ...) when their other operands
// are known integers. Nodes must be typed (checked_type).
class SymbolicShapeEvaluator {
 public:
  // The value of e, or null when e is none of the above.
  const SymbolicValue* evaluate(const ir::Expr& e);

 private:
  std::optional<SymbolicValue> compute(const ir::Expr& e);
  std::optional<SymbolicValue> compute_call(const ir::CallNode& call);
  std::optional<SymbolicValue> move_elements(const ir::CallNode& call);

  std::unordered_map<const ir::ExprNode*, std::optional<SymbolicValue>> memo_;
  std::vector<ir::Expr> keep_alive_;  // memo_ keys stay valid
};

}  // namespace anvil::transform::detail
