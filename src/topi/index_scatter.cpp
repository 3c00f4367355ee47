// Computes of scatter_elements and scatter_nd, turned around: instead of writing each update
// to its target, each output element reduces over the updates that target it. A first compute
// reduces the matching updates (the last match for "update", their sum, product, min or max
// otherwise, plus their count for "mean"); a second combines that with the data element. The
// work is the output size times the number of candidate updates per element: the scatter
// axis for scatter_elements, every index tuple for scatter_nd, so it suits small scatters.
#include <limits>

#include "anvil/ir/attrs/transform.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

using tir::IterVar;
using tir::ReduceKind;

// Where the updates that may land on one output element are, and how to read them.
struct Candidates {
  std::vector<IterVar> axes;  // the reduction over candidate updates
  // Given the output index (and the reduction vars through the axes), whether the candidate
  // targets that element, the update value it holds, and its position in update order.
  std::function<PrimExpr(const std::vector<PrimExpr>&)> matches;
  std::function<PrimExpr(const std::vector<PrimExpr>&)> value;
  std::function<PrimExpr(const std::vector<PrimExpr>&)> order;
  // The update value at a position in update order, for the target index.
  std::function<PrimExpr(const std::vector<PrimExpr>&, const PrimExpr&)> value_at;
};

PrimExpr clamp_index(const PrimExpr& index, int64_t dim) {
  return tir::min(tir::max(index, tir::make_int(0)), tir::make_int(dim - 1));
}

// Negative indices count from the end (ONNX).
PrimExpr resolve(const PrimExpr& raw, int64_t dim) {
  PrimExpr index = as_index(raw);
  return tir::select(index < tir::make_int(0), index + tir::make_int(dim), index);
}

// The data element combined with the reduction of the updates that target it.
std::vector<te::Tensor> scatter(const ComputeArgs& args, const std::string& mode,
                                const Candidates& c) {
  const te::Tensor& data = args.inputs[0];
  DataType dtype = data.dtype();
  std::vector<PrimExpr> shape = args.out_shape();
  std::string name = tensor_name(args);
  auto reduce = [&](ReduceKind kind, std::function<PrimExpr(const std::vector<PrimExpr>&)> source,
                    const std::string& suffix) {
    return te::compute(
        shape,
        [&](const std::vector<tir::Var>& vars) {
          std::vector<PrimExpr> out = as_exprs(vars);
          return PrimExpr(tir::ReduceNode::make(kind, source(out), c.axes, c.matches(out)));
        },
        name + suffix);
  };
  if (mode == "update") {
    te::Tensor last = reduce(ReduceKind::Max, c.order, "_last");
    return {te::compute(
        shape,
        [&](const std::vector<tir::Var>& vars) {
          std::vector<PrimExpr> out = as_exprs(vars);
          PrimExpr at = last.at(out);
          PrimExpr safe = tir::max(at, tir::make_int(0));
          return tir::select(at >= tir::make_int(0), c.value_at(out, safe), data.at(out));
        },
        name)};
  }
  ReduceKind kind = mode == "mul"   ? ReduceKind::Prod
                    : mode == "min" ? ReduceKind::Min
                    : mode == "max" ? ReduceKind::Max
                                    : ReduceKind::Sum;
  te::Tensor reduced = reduce(kind, c.value, "_reduce");
  te::Tensor count;
  if (mode == "mean")
    count = reduce(
        ReduceKind::Sum, [](const std::vector<PrimExpr>&) { return tir::make_int(1); }, "_count");
  return {te::compute(
      shape,
      [&](const std::vector<tir::Var>& vars) {
        std::vector<PrimExpr> out = as_exprs(vars);
        PrimExpr x = data.at(out), r = reduced.at(out);
        if (mode != "mean") return tir::reduce_combine(kind, x, r);
        // The mean of the element and every update it received.
        PrimExpr n = count.at(out);
        PrimExpr divisor = tir::cast(dtype, n + tir::make_int(1));
        PrimExpr mean = dtype.is_float() || dtype.is_bfloat() ? (x + r) / divisor
                                                              : tir::truncdiv(x + r, divisor);
        return tir::select(n > tir::make_int(0), mean, x);
      },
      name)};
}

// Candidates of an output element: the updates at the same index but along the axis.
std::vector<te::Tensor> scatter_elements(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ScatterElementsAttrs>();
  const te::Tensor& indices = args.inputs[1];
  const te::Tensor& updates = args.inputs[2];
  std::vector<int64_t> shape = static_shape(args.inputs[0]);
  std::vector<int64_t> upd_shape = static_shape(updates);
  size_t axis = size_t(wrap_axis(attrs.axis, int64_t(shape.size())));
  IterVar r = te::reduce_axis(tir::make_int(upd_shape[axis]), "r");
  PrimExpr rv = r.var;
  // The update index of candidate rv, kept in bounds where the element has no candidate.
  auto at = [=](const std::vector<PrimExpr>& out, const PrimExpr& along) {
    std::vector<PrimExpr> u;
    for (size_t d = 0; d < out.size(); ++d)
      u.push_back(d == axis ? along : clamp_index(out[d], upd_shape[d]));
    return u;
  };
  Candidates c;
  c.axes = {r};
  c.matches = [=](const std::vector<PrimExpr>& out) {
    PrimExpr match = tir::eq(resolve(indices.at(at(out, rv)), shape[axis]), out[axis]);
    for (size_t d = 0; d < out.size(); ++d)
      if (d != axis && upd_shape[d] < shape[d])
        match = tir::logical_and(match, out[d] < tir::make_int(upd_shape[d]));
    return match;
  };
  c.value = [=](const std::vector<PrimExpr>& out) { return updates.at(at(out, rv)); };
  c.order = [=](const std::vector<PrimExpr>&) { return rv; };
  c.value_at = [=](const std::vector<PrimExpr>& out, const PrimExpr& position) {
    return updates.at(at(out, position));
  };
  return scatter(args, attrs.reduction, c);
}

// Candidates of an output element: every index tuple y (indices (M, Y...)); the update is
// updates[y..., the element's dims from M].
std::vector<te::Tensor> scatter_nd(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ScatterNDAttrs>();
  const te::Tensor& indices = args.inputs[1];
  const te::Tensor& updates = args.inputs[2];
  std::vector<int64_t> shape = static_shape(args.inputs[0]);
  std::vector<int64_t> index_shape = static_shape(indices);
  size_t m = size_t(index_shape[0]);
  std::vector<int64_t> tuple_shape(index_shape.begin() + 1, index_shape.end());
  std::vector<IterVar> axes;
  std::vector<PrimExpr> y;
  for (size_t k = 0; k < tuple_shape.size(); ++k) {
    axes.push_back(te::reduce_axis(tir::make_int(tuple_shape[k]), "y" + std::to_string(k)));
    y.push_back(axes.back().var);
  }
  auto update_at = [=](const std::vector<PrimExpr>& out, const std::vector<PrimExpr>& tuple) {
    std::vector<PrimExpr> u = tuple;
    u.insert(u.end(), out.begin() + ptrdiff_t(m), out.end());
    return updates.at(u);
  };
  Candidates c;
  c.axes = axes;
  c.matches = [=](const std::vector<PrimExpr>& out) {
    PrimExpr match;
    for (size_t j = 0; j < m; ++j) {
      std::vector<PrimExpr> at{tir::make_int(int64_t(j))};
      at.insert(at.end(), y.begin(), y.end());
      PrimExpr same = tir::eq(resolve(indices.at(at), shape[j]), out[j]);
      match = match ? tir::logical_and(match, same) : same;
    }
    return match ? match : tir::const_true();
  };
  c.value = [=](const std::vector<PrimExpr>& out) { return update_at(out, y); };
  c.order = [=](const std::vector<PrimExpr>&) { return ravel(y, tuple_shape); };
  c.value_at = [=](const std::vector<PrimExpr>& out, const PrimExpr& position) {
    return update_at(out, unravel(position, tuple_shape));
  };
  return scatter(args, attrs.mode, c);
}

}  // namespace

void register_index_scatter_computes() {
  register_compute("scatter_elements", scatter_elements);
  register_compute("scatter_nd", scatter_nd);
}

}  // namespace anvil::topi::transform
