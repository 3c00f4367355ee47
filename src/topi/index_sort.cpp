// Computes of the ordering ops: sort, argsort and topk. TE has no sorting primitive, so each
// element's place in the sorted line is counted instead: rank[i] is the number of elements j
// of its line that sort before it, and output position p takes the element whose rank is p.
// Both steps are reductions along the axis (quadratic in its length, fine for the short axes
// these ops see in models). dyn.topk takes k at run time: its shape function writes it as the
// output's dim along the axis. The order is the reference's stable sort: NaN above every
// number, equal elements (all NaNs alike) in index order, descending order the reverse
// comparison with the same index tie-break.
#include "anvil/ir/attrs/transform.h"
#include "topi/topi_util.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

// The comparison key of an element: the reference compares integers as int64 (so uint64 as
// its bit pattern) and bool as 0/1; floats compare in their own dtype.
PrimExpr sort_key(const PrimExpr& x) {
  DataType dtype = x.dtype();
  if (dtype.is_bool()) return tir::cast(DataType::int32(), x);
  if (dtype.is_uint() && dtype.bits == 64) return tir::cast(DataType::int64(), x);
  return x;
}

// True when key a sorts strictly before key b in ascending order; NaN sorts last.
PrimExpr key_less(const PrimExpr& a, const PrimExpr& b) {
  if (!is_float_like(a.dtype())) return a < b;
  return tir::logical_and(tir::logical_not(is_nan(a)), tir::logical_or(is_nan(b), a < b));
}

// The sorted position along `axis` of every element of data.
te::Tensor sort_rank(const te::Tensor& data, size_t axis, bool ascending, const std::string& name) {
  tir::IterVar j = te::reduce_axis(data.shape()[axis], "j");
  return te::compute(
      data.shape(),
      [&](const std::vector<tir::Var>& index) {
        std::vector<PrimExpr> at_i = as_exprs(index);
        std::vector<PrimExpr> at_j = at_i;
        at_j[axis] = j.var;
        PrimExpr x_i = sort_key(data.at(at_i)), x_j = sort_key(data.at(at_j));
        PrimExpr j_first = ascending ? key_less(x_j, x_i) : key_less(x_i, x_j);
        PrimExpr i_first = ascending ? key_less(x_i, x_j) : key_less(x_j, x_i);
        PrimExpr tie_before = tir::logical_and(tir::logical_not(i_first), j.var < at_i[axis]);
        return tir::sum(tir::make_int(1), {j}, tir::logical_or(j_first, tie_before));
      },
      name + "_rank");
}

// The position along the axis of the element ranked p, for the first `k` ranks.
te::Tensor ranked_positions(const te::Tensor& rank, size_t axis, const PrimExpr& k,
                            const std::string& name) {
  std::vector<PrimExpr> shape = rank.shape();
  tir::IterVar i = te::reduce_axis(shape[axis], "i");
  shape[axis] = k;
  return te::compute(
      shape,
      [&](const std::vector<tir::Var>& index) {
        std::vector<PrimExpr> out = as_exprs(index);
        std::vector<PrimExpr> at_i = out;
        at_i[axis] = i.var;
        // Ranks are distinct, so exactly one i of the line matches.
        return tir::sum(PrimExpr(i.var), {i}, tir::eq(rank.at(at_i), out[axis]));
      },
      name + "_position");
}

struct SortResult {
  te::Tensor values, indices;
};

// The first k sorted elements of every line of data and their positions as `index_dtype`.
SortResult sort_along(const te::Tensor& data, int64_t axis_attr, bool ascending, const PrimExpr& k,
                      DataType index_dtype, const std::string& name) {
  size_t axis = size_t(wrap_axis(axis_attr, data.ndim()));
  te::Tensor rank = sort_rank(data, axis, ascending, name);
  te::Tensor position = ranked_positions(rank, axis, k, name);
  std::vector<PrimExpr> shape = position.shape();
  SortResult result;
  result.values = gather_compute(
      data, shape,
      [&](std::vector<PrimExpr> out) {
        out[axis] = position.at(out);
        return out;
      },
      name + "_values");
  result.indices = te::compute(
      shape,
      [&](const std::vector<tir::Var>& index) {
        return tir::cast(index_dtype, position.at(as_exprs(index)));
      },
      name + "_indices");
  return result;
}

std::vector<te::Tensor> sort(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::SortAttrs>();
  const te::Tensor& data = args.inputs[0];
  PrimExpr n = data.shape()[size_t(wrap_axis(attrs.axis, data.ndim()))];
  return {sort_along(data, attrs.axis, attrs.is_ascend, n, DataType::int64(), tensor_name(args))
              .values};
}

std::vector<te::Tensor> argsort(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ArgsortAttrs>();
  const te::Tensor& data = args.inputs[0];
  PrimExpr n = data.shape()[size_t(wrap_axis(attrs.axis, data.ndim()))];
  return {sort_along(data, attrs.axis, attrs.is_ascend, n, attrs.dtype, tensor_name(args)).indices};
}

// The outputs ret_type asks for.
std::vector<te::Tensor> topk_outputs(const ir::TopKAttrs& attrs, const SortResult& sorted) {
  if (attrs.ret_type == "values") return {sorted.values};
  if (attrs.ret_type == "indices") return {sorted.indices};
  return {sorted.values, sorted.indices};
}

// k < 1 takes the whole axis, as the type relation does.
std::vector<te::Tensor> topk(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::TopKAttrs>();
  const te::Tensor& data = args.inputs[0];
  PrimExpr n = data.shape()[size_t(wrap_axis(attrs.axis, data.ndim()))];
  PrimExpr k = attrs.k < 1 ? n : tir::make_int(attrs.k);
  return topk_outputs(
      attrs, sort_along(data, attrs.axis, attrs.is_ascend, k, attrs.dtype, tensor_name(args)));
}

// dyn.topk: k is the output's dim along the axis, which the shape function wrote (every
// output has that dim; the first's is used).
std::vector<te::Tensor> dyn_topk(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::TopKAttrs>();
  const te::Tensor& data = args.inputs[0];
  const size_t axis = size_t(wrap_axis(attrs.axis, data.ndim()));
  return topk_outputs(attrs, sort_along(data, attrs.axis, attrs.is_ascend, args.out_shape(0)[axis],
                                        attrs.dtype, tensor_name(args)));
}

// Every output's dims: the data's, with k along the axis. Unlike the attribute, k = 0 selects
// nothing; a negative k or one beyond the axis is rejected (-1).
te::Tensor dyn_topk_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::TopKAttrs>();
  const te::Tensor& data = args.inputs[0];
  const size_t axis = size_t(wrap_axis(attrs.axis, data.ndim()));
  const PrimExpr k = as_index(scalar_value(args.inputs[1]));
  std::vector<PrimExpr> dims = data.shape();
  dims[axis] = k;
  std::vector<PrimExpr> all;
  for (size_t i = 0; i < args.num_outputs(); ++i) all.insert(all.end(), dims.begin(), dims.end());
  return shape_function_result(
      all, tir::logical_and(k >= tir::make_int(0), k <= data.shape()[axis]), args);
}

}  // namespace

void register_sort_computes() {
  register_compute("sort", sort);
  register_compute("argsort", argsort);
  register_compute("topk", topk);
  register_compute("dyn.topk", dyn_topk);
  register_shape_compute("dyn.topk", ShapeCompute{dyn_topk_dims, nullptr});
}

}  // namespace anvil::topi::transform
