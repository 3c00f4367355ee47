// Tensor expressions (TVM's te): describe an operator as placeholders and
// computes with reductions, then turn the DAG into a PrimFunc in scheduled
// form (one block per compute, named after it) for the schedule primitives.
//
// A compute finds the tensors it reads by scanning its body for loads of
// tensor buffers: every live tensor is registered under its buffer (the
// registry entry goes away with the tensor), so `A(i, k)` inside a body is
// enough to make A an input. Tensors hold their inputs, so a DAG stays alive
// as long as its outputs do.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::te {

using anvil::DataType;
using tir::IterVar;
using tir::PrimExpr;
using tir::Var;

struct TensorNode;

// The result of placeholder or compute. t(i, j) reads element (i, j).
class Tensor : public Ref<const TensorNode> {
 public:
  Tensor() = default;
  Tensor(Ref<const TensorNode> node) : Ref<const TensorNode>(std::move(node)) {}  // NOLINT
  template <typename... Idx>
  PrimExpr operator()(Idx... indices) const {
    return at({PrimExpr(indices)...});
  }
  // A load of element indices (int64 index expressions); throws Error when
  // the count differs from the tensor's rank.
  PrimExpr at(std::vector<PrimExpr> indices) const;
  const std::vector<PrimExpr>& shape() const;
  DataType dtype() const;
  const std::string& name() const;
  int ndim() const { return int(shape().size()); }
};

struct TensorNode : RefCounted {
  std::string name;
  DataType dtype;
  std::vector<PrimExpr> shape;
  // The buffer this tensor becomes in the PrimFunc.
  tir::Buffer buffer;
  // Compute only: one spatial axis per output dim, the body in terms of
  // their vars (a Reduce at the top for reductions), and the tensors read.
  bool is_placeholder = true;
  std::vector<IterVar> axis;
  PrimExpr body;
  std::vector<Tensor> inputs;
  ~TensorNode() override;
};

// An input tensor.
Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name);

// out[i...] = fcompute(i...); the body may be a reduction (tir::sum, ...) over
// axes from reduce_axis, only at the top. The axes are named i, j, k, l (or
// i0, i1, ... past four dims).
Tensor compute(std::vector<PrimExpr> shape,
               std::function<PrimExpr(const std::vector<Var>& indices)> fcompute, std::string name);
// The same with the axes named by axis_names (one per dim), e.g. {"n", "c", "h", "w"}.
Tensor compute(std::vector<PrimExpr> shape,
               std::function<PrimExpr(const std::vector<Var>& indices)> fcompute, std::string name,
               std::vector<std::string> axis_names);

// A reduction axis over [0, extent) (or dom).
IterVar reduce_axis(PrimExpr extent, std::string name);
IterVar reduce_axis(tir::Range dom, std::string name);

// The PrimFunc computing every tensor that args' outputs depend on. args are
// the parameters in order (inputs and outputs); computes not in args become
// buffers allocated in the root block. global_symbol is name.
tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name = "main");

}  // namespace anvil::te
