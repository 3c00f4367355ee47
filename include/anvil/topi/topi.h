// Operator lowering (TVM's TOPI): for each operator of the op table, a target-neutral
// tensor-expression compute that builds its outputs from te placeholders (and, for ops whose
// output dims depend on values, a shape function). They live beside the op table as per-op
// entries, registered by the family files in src/topi/. What a target does beyond that (its
// layouts, computes and schedules) is the op's strategy record (anvil/topi/strategy.h).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/te/te.h"

namespace anvil::topi {

// The tensor-IR variables of a group's symbolic dims: one int64 Var per size variable name
// (batch, seq), shared by every tensor of the group, so that the kernel binds each once from
// its arguments and checks every other use (make_packed_api).
class DimVars {
 public:
  // The dim as an index expression; throws Error for an unknown dim (?), which no kernel can
  // be compiled for.
  tir::PrimExpr to_expr(const ir::Dim& dim);
  std::vector<tir::PrimExpr> to_exprs(const std::vector<ir::Dim>& dims);
  const std::map<std::string, tir::Var>& vars() const { return vars_; }

 private:
  std::map<std::string, tir::Var> vars_;
};

// What a compute sees: the call (its attrs), one te tensor per argument of the call (an
// omitted optional input is a null te::Tensor), the call's inferred output type and the
// variables of its symbolic dims (null when every shape is static). A compute that needs a
// dim to be static says so with an Error (see static_extent), and the group is then not
// compiled for dynamic shapes.
struct ComputeArgs {
  const ir::CallNode& call;
  std::span<const te::Tensor> inputs;
  const ir::Type& out_type;
  DimVars* dim_vars = nullptr;
  // The sizes a shape function computed beyond the output dims (ShapeCompute::num_extras),
  // as the size variables the kernel receives them in; empty otherwise.
  std::span<const tir::PrimExpr> extras = {};

  // The call's attrs as T (the op's defaults when the call has none).
  template <typename T>
  const T& attrs_as() const {
    const T* typed = dynamic_cast<const T*>(attrs_node());
    ANVIL_ICHECK(typed != nullptr, op_name(), " expects attrs ", T::kTypeKey);
    return *typed;
  }
  const ir::AttrsNode* attrs_node() const;
  // Number of outputs: 1 for a tensor type, the field count for a tuple type.
  size_t num_outputs() const;
  // The shape of output i (a field of a tuple output) as index expressions.
  std::vector<tir::PrimExpr> out_shape(size_t i = 0) const;
  // The dtype of output i.
  DataType out_dtype(size_t i = 0) const;
  // The op's name, for tensor names and messages.
  const std::string& op_name() const;
};

// Builds an op's outputs: one tensor, or one per field of a tuple output, in order.
using ComputeFn = std::function<std::vector<te::Tensor>(const ComputeArgs&)>;

// Attaches the compute of an op to its row of the op table (replacing an earlier one).
void register_compute(std::string_view op_name, ComputeFn compute);

// The compute of an op, or nullptr; registers every family on first use.
const ComputeFn* find_compute(std::string_view op_name);

// An op whose output dims depend on values known only at run time (a shape operand given as
// a tensor, the data of nonzero): the VM runs its shape function, a small kernel that writes
// the output dims (every output's dims in order, tuple fields flattened) followed by
// `num_extras` further sizes into an int64 vector, binds them to fresh size variables
// (load_shape), allocates the outputs, then runs the op's compute with the outputs' dims as
// those variables and the extras in ComputeArgs::extras. The compute of the shape function
// sees the call's inferred type, whose unknown dims are ? (its rank must be known).
struct ShapeCompute {
  std::function<te::Tensor(const ComputeArgs&)> dims;
  std::function<size_t(const ir::CallNode&)> num_extras;  // null: none
};

// Attaches a shape function to an op (replacing an earlier one).
void register_shape_compute(std::string_view op_name, ShapeCompute shape);

// The shape function of an op, or nullptr; registers every family on first use.
const ShapeCompute* find_shape_compute(std::string_view op_name);

// Names of the ops in the op table that have no compute, sorted.
std::vector<std::string> ops_without_compute();

}  // namespace anvil::topi
