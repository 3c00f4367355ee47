// Computes of the ordering ops: sort, argsort, topk and unique. TE has no sorting primitive, so
// each element's place in the sorted line is counted instead: rank[i] is the number of elements j
// of its line that sort before it, and output position p takes the element whose rank is p.
// Both steps are reductions along the axis (quadratic in its length, fine for the short axes
// these ops see in models). dyn.topk takes k at run time: its shape function writes it as the
// output's dim along the axis. The order is the reference's stable sort: NaN above every
// number, equal elements (all NaNs alike) in index order, descending order the reverse
// comparison with the same index tie-break.
#include <optional>

#include "anvil/ir/attrs/transform.h"
#include "topi/nn_util.h"
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

// ---------------------------------------------------------------- unique

// unique compares slices: along the axis, slice j is every element with index j there, in
// row-major order of the other dims; without an axis, each element of the flattened data is
// a slice of one. Every relation between slices is counted, not sorted, as above:
//   differs_at[j, k]  the first element where slices j and k differ (>= length if none),
//   first[j]          the first slice equal to slice j,
//   place[j]          how many distinct slices come before slice j in the output (by order
//                     of first occurrence, or lexicographically when sorted);
// slice j is distinct when first[j] = j, and the output's u-th slice is the distinct one with
// place u. NaN equals NaN and sorts above every number, as in the reference.
struct UniqueSlices {
  te::Tensor data;
  std::optional<size_t> axis;
  PrimExpr count, length;  // the number of slices, and of elements in each
  te::Tensor first, place;

  // Element e of slice j.
  PrimExpr element(const PrimExpr& j, const PrimExpr& e) const {
    std::vector<PrimExpr> shape = data.shape();
    if (!axis) return data.at(unravel(j, shape));
    std::vector<PrimExpr> others = shape;
    others.erase(others.begin() + std::ptrdiff_t(*axis));
    std::vector<PrimExpr> index = unravel(e, others);
    index.insert(index.begin() + std::ptrdiff_t(*axis), j);
    return data.at(index);
  }

  PrimExpr is_distinct(const PrimExpr& j) const { return tir::eq(first.at({j}), j); }
};

PrimExpr differ(const PrimExpr& x, const PrimExpr& y) {
  if (!is_float_like(x.dtype())) return tir::ne(x, y);
  return tir::logical_not(tir::logical_or(tir::eq(x, y), tir::logical_and(is_nan(x), is_nan(y))));
}

UniqueSlices unique_slices(const te::Tensor& data, const ir::UniqueAttrs& attrs,
                           const std::string& name) {
  UniqueSlices u;
  u.data = data;
  std::vector<PrimExpr> shape = data.shape();
  if (attrs.axis) {
    u.axis = size_t(wrap_axis(*attrs.axis, int64_t(data.ndim())));
    u.count = shape[*u.axis];
    shape.erase(shape.begin() + std::ptrdiff_t(*u.axis));
    u.length = shape_product(shape);
  } else {
    u.count = shape_product(shape);
    u.length = tir::make_int(1);
  }
  const UniqueSlices& slices = u;
  te::Tensor differs_at = te::compute(
      {u.count, u.count},
      [&](const std::vector<tir::Var>& jk) {
        tir::IterVar e = te::reduce_axis(slices.length, "e");
        return tir::min_reduce(PrimExpr(e.var), {e},
                               differ(slices.element(jk[0], e.var), slices.element(jk[1], e.var)));
      },
      name + "_differs_at");
  u.first = te::compute(
      {u.count},
      [&](const std::vector<tir::Var>& j) {
        tir::IterVar k = te::reduce_axis(slices.count, "k");
        return tir::min_reduce(PrimExpr(k.var), {k}, differs_at.at({j[0], k.var}) >= slices.length);
      },
      name + "_first");
  // Slice k sorts before slice j: at their first difference, k's element is the smaller.
  auto sorts_before = [&](const PrimExpr& k, const PrimExpr& j) {
    PrimExpr at = differs_at.at({k, j});
    PrimExpr smaller = key_less(sort_key(slices.element(k, at)), sort_key(slices.element(j, at)));
    return nn::if_then_else(at < slices.length, smaller, tir::const_false());
  };
  u.place = te::compute(
      {u.count},
      [&](const std::vector<tir::Var>& j) {
        tir::IterVar k = te::reduce_axis(slices.count, "k");
        PrimExpr before = attrs.sorted ? sorts_before(k.var, j[0]) : k.var < j[0];
        return tir::sum(tir::make_int(1), {k}, tir::logical_and(slices.is_distinct(k.var), before));
      },
      name + "_place");
  return u;
}

// The outputs: the distinct slices, the position of each's first occurrence, every slice's
// place among them, and how often each occurs. The number of distinct slices is the outputs'
// dim, which the shape function wrote.
std::vector<te::Tensor> unique(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::UniqueAttrs>();
  const std::string name = tensor_name(args);
  const UniqueSlices u = unique_slices(args.inputs[0], attrs, name);
  te::Tensor position = te::compute(
      args.out_shape(1),
      [&](const std::vector<tir::Var>& i) {
        tir::IterVar j = te::reduce_axis(u.count, "j");
        return tir::sum(PrimExpr(j.var), {j},
                        tir::logical_and(u.is_distinct(j.var), tir::eq(u.place.at({j.var}), i[0])));
      },
      name + "_indices");
  te::Tensor values = te::compute(
      args.out_shape(0),
      [&](const std::vector<tir::Var>& i) {
        if (!u.axis) return u.data.at(unravel(position.at({i[0]}), u.data.shape()));
        std::vector<PrimExpr> at = as_exprs(i);
        at[*u.axis] = position.at({i[*u.axis]});
        return u.data.at(at);
      },
      name + "_values");
  te::Tensor inverse = te::compute(
      args.out_shape(2),
      [&](const std::vector<tir::Var>& j) { return u.place.at({u.first.at({j[0]})}); },
      name + "_inverse");
  te::Tensor counts = te::compute(
      args.out_shape(3),
      [&](const std::vector<tir::Var>& i) {
        tir::IterVar j = te::reduce_axis(u.count, "j");
        return tir::sum(tir::make_int(1), {j}, tir::eq(u.first.at({j.var}), position.at({i[0]})));
      },
      name + "_counts");
  return {values, position, inverse, counts};
}

te::Tensor unique_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::UniqueAttrs>();
  const std::string name = tensor_name(args);
  const UniqueSlices u = unique_slices(args.inputs[0], attrs, name);
  te::Tensor distinct = te::compute(
      {tir::make_int(1)},
      [&](const std::vector<tir::Var>&) {
        tir::IterVar j = te::reduce_axis(u.count, "j");
        return tir::sum(tir::make_int(1), {j}, u.is_distinct(j.var));
      },
      name + "_distinct");
  const PrimExpr n = distinct.at({tir::make_int(0)});
  std::vector<PrimExpr> dims = {n};
  if (u.axis) {
    dims = u.data.shape();
    dims[*u.axis] = n;
  }
  dims.insert(dims.end(), {n, u.count, n});
  return int64_vector(dims, name + "_dims");
}

}  // namespace

void register_sort_computes() {
  register_compute("sort", sort);
  register_compute("argsort", argsort);
  register_compute("topk", topk);
  register_compute("dyn.topk", dyn_topk);
  register_shape_compute("dyn.topk", ShapeCompute{dyn_topk_dims, nullptr});
  register_compute("unique", unique);
  register_shape_compute("unique", ShapeCompute{unique_dims, nullptr});
}

}  // namespace anvil::topi::transform
