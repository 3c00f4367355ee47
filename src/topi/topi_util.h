// Small building blocks shared by the compute definitions of src/topi/: numpy broadcasting of
// index lists, axis normalisation, the reduced-axis plan of the reduction attrs, constants of
// a dtype's range, and NaN-aware float comparisons that mirror the reference kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/structural_equal.h"
#include "anvil/tir/tir.h"

namespace anvil::topi {

using tir::PrimExpr;
using tir::Var;

// A tensor name for the output of op: "T_" + op with dots as underscores ("T_nn_relu").
inline std::string tensor_name(const std::string& op) {
  std::string name = "T_" + op;
  for (char& c : name)
    if (c == '.') c = '_';
  return name;
}

// The value of a static extent. A symbolic one is an Error: the compute declines the dynamic
// shape, and the group is not compiled for it.
inline int64_t static_extent(const PrimExpr& extent) {
  auto value = tir::as_const_int(extent);
  if (!value) throw_error("a compute needs a static extent here");
  return *value;
}

inline std::vector<int64_t> static_shape(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (const PrimExpr& e : t.shape()) shape.push_back(static_extent(e));
  return shape;
}

// axis in [-rank, rank) counted from the end when negative; throws Error naming op otherwise.
inline int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank)
    throw_error(op, ": axis ", axis, " is out of range for rank ", rank);
  return normalized;
}

// True when two shape expressions are the same (the same size variable, or equal constants).
inline bool same_extent(const PrimExpr& a, const PrimExpr& b) {
  if (a.get() == b.get()) return true;
  auto x = tir::as_const_int(a), y = tir::as_const_int(b);
  if (x && y) return *x == *y;
  return tir::structural_equal(a, b);
}

// The product of shape expressions (a constant when all are).
inline PrimExpr shape_product(const std::vector<PrimExpr>& dims) {
  PrimExpr total = tir::make_int(1);
  for (const PrimExpr& d : dims) total = total * d;
  return total;
}

// The index along one axis of an operand of extent `dim` for output index i along an output
// axis of extent `extent`, in a numpy broadcast: a dim of extent 1 always reads element 0. A
// size variable that is not the output's dim (the output's is a constant or a broadcast(a, b)
// dim) may be 1 at run time, so that is tested; against a constant the index is also kept
// below the variable.
inline PrimExpr broadcast_axis_index(const PrimExpr& dim, const PrimExpr& i,
                                     const PrimExpr& extent) {
  if (tir::is_one(dim)) return tir::make_int(0);
  if (tir::as_const_int(dim) || same_extent(dim, extent)) return i;
  PrimExpr in_range = tir::as_const_int(extent) ? tir::min(i, dim - 1) : i;
  return tir::select(tir::eq(dim, tir::make_int(1)), tir::make_int(0), in_range);
}

// The indices into an operand of dims `dims` for an output element at `index` of a
// numpy-broadcast result of shape `extents`: the dims align with the trailing output dims (see
// broadcast_axis_index).
inline std::vector<PrimExpr> broadcast_index(const std::vector<PrimExpr>& dims,
                                             const std::vector<PrimExpr>& index,
                                             const std::vector<PrimExpr>& extents) {
  size_t rank = dims.size();
  ANVIL_ICHECK(rank <= index.size() && index.size() == extents.size(), "broadcast of rank ", rank,
               " into rank ", index.size());
  size_t offset = index.size() - rank;
  std::vector<PrimExpr> result;
  for (size_t d = 0; d < rank; ++d)
    result.push_back(broadcast_axis_index(dims[d], index[offset + d], extents[offset + d]));
  return result;
}

// The same for tensor t.
inline std::vector<PrimExpr> broadcast_index(const te::Tensor& t,
                                             const std::vector<PrimExpr>& index,
                                             const std::vector<PrimExpr>& extents) {
  return broadcast_index(t.shape(), index, extents);
}

// t read at a broadcast position of a result of shape `extents` (see broadcast_index).
inline PrimExpr broadcast_load(const te::Tensor& t, const std::vector<Var>& index,
                               const std::vector<PrimExpr>& extents) {
  return t.at(broadcast_index(t, std::vector<PrimExpr>(index.begin(), index.end()), extents));
}

// Which axes of a rank-`rank` tensor a reduction folds: every axis when `axes` is empty, the
// listed ones otherwise, the others with exclude. Throws Error on a bad or repeated axis.
inline std::vector<bool> reduced_axes(const std::vector<int64_t>& axes, bool exclude, int64_t rank,
                                      const std::string& op) {
  if (axes.empty()) return std::vector<bool>(size_t(rank), true);
  std::vector<bool> listed(size_t(rank), false);
  for (int64_t axis : axes) {
    int64_t a = normalize_axis(axis, rank, op);
    if (listed[size_t(a)]) throw_error(op, ": axis ", axis, " is listed twice");
    listed[size_t(a)] = true;
  }
  if (exclude) listed.flip();
  return listed;
}

// An integer immediate of dtype (bit patterns of unsigned 64-bit values are kept as is).
inline PrimExpr int_const(DataType dtype, int64_t value) { return tir::make_int(value, dtype); }

// The smallest and largest value of an integer or bool dtype, as an int64 bit pattern.
inline int64_t lowest_value(DataType dtype) {
  if (dtype.is_int())
    return dtype.bits == 64 ? std::numeric_limits<int64_t>::min()
                            : -(int64_t(1) << (dtype.bits - 1));
  return 0;
}
inline int64_t highest_value(DataType dtype) {
  if (dtype.is_bool()) return 1;
  if (dtype.is_int())
    return dtype.bits == 64 ? std::numeric_limits<int64_t>::max()
                            : (int64_t(1) << (dtype.bits - 1)) - 1;
  return dtype.bits == 64 ? -1 : (int64_t(1) << dtype.bits) - 1;
}

inline bool is_float_like(DataType dtype) { return dtype.is_float() || dtype.is_bfloat(); }

// Float tests, as bool expressions.
inline PrimExpr is_nan(PrimExpr x) {
  return tir::call_intrin(DataType::boolean().with_lanes(x.dtype().lanes), "isnan", {x});
}
inline PrimExpr is_inf(PrimExpr x) {
  return tir::call_intrin(DataType::boolean().with_lanes(x.dtype().lanes), "isinf", {x});
}
inline PrimExpr is_finite(PrimExpr x) {
  return tir::call_intrin(DataType::boolean().with_lanes(x.dtype().lanes), "isfinite", {x});
}

// A quiet NaN of a float dtype.
inline PrimExpr nan_of(DataType dtype) {
  return tir::make_const(dtype, std::numeric_limits<double>::quiet_NaN());
}

// The larger (smaller) of a and b where NaN wins, as numpy's maximum (minimum); integers compare
// plainly.
inline PrimExpr nan_maximum(PrimExpr a, PrimExpr b) {
  if (!is_float_like(a.dtype())) return tir::max(a, b);
  PrimExpr larger = tir::select(tir::logical_or(a < b, is_nan(b)), b, a);
  return tir::select(is_nan(a), a, larger);
}
inline PrimExpr nan_minimum(PrimExpr a, PrimExpr b) {
  if (!is_float_like(a.dtype())) return tir::min(a, b);
  PrimExpr smaller = tir::select(tir::logical_or(b < a, is_nan(b)), b, a);
  return tir::select(is_nan(a), a, smaller);
}

// out[i...] = f(x[i...]), named after op.
inline te::Tensor map_elements(const te::Tensor& x, const std::string& op,
                               const std::function<PrimExpr(PrimExpr)>& f) {
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) { return f(x.at(std::vector<PrimExpr>(i.begin(), i.end()))); },
      tensor_name(op));
}

// x converted to dtype `to` with the reference kernels' cast rules: float to integer truncates
// and saturates (NaN becomes 0), anything to bool is "not zero", the rest as tir::cast.
PrimExpr cast_value(DataType to, PrimExpr x);

// Bitwise and / or / xor of two integer expressions of one dtype, and x shifted left or right
// by y bits with the reference's rules for shift counts outside [0, bits). TIR has no bitwise
// nodes, so these are built from arithmetic that the code generators turn into shifts and masks.
enum class BitwiseOp { And, Or, Xor };
PrimExpr bitwise(BitwiseOp op, PrimExpr a, PrimExpr b);
PrimExpr shift_left(PrimExpr x, PrimExpr y);
PrimExpr shift_right(PrimExpr x, PrimExpr y);

// One output element of a reduction as the body sees it: its index, the data index it folds
// over (kept dims from the output index, reduced dims from the reduction axes), the reduction
// axes in data-dim order, and the row-major position within the reduced sub-array.
struct ReductionPoint {
  std::vector<PrimExpr> out_index;
  std::vector<PrimExpr> data_index;
  std::vector<tir::IterVar> axes;
  PrimExpr reduced_position;
};

// The shape of a reduction of data_shape over the `reduced` dims (kept as 1 with keepdims).
std::vector<PrimExpr> reduced_shape(const std::vector<PrimExpr>& data_shape,
                                    const std::vector<bool>& reduced, bool keepdims);

// A compute over reduced_shape(...) whose body (typically a tir::sum/max_reduce over
// point.axes) is built by `body` for each output element.
te::Tensor reduce_compute(const std::vector<PrimExpr>& data_shape, const std::vector<bool>& reduced,
                          bool keepdims, const std::string& name,
                          const std::function<PrimExpr(const ReductionPoint&)>& body);

// A reduction of data over the `reduced` dims (kept as 1 with keepdims) into out_dtype: the
// body of the computes of sum, mean, max, ... whether the axes come from attrs or at run time.
using ReduceFn = std::function<te::Tensor(const te::Tensor& data, const std::vector<bool>& reduced,
                                          bool keepdims, DataType out_dtype)>;

// The compute and shape function of dyn.<op>, the reduction with its axes given as a tensor at
// run time (reduce_dynamic.cpp); ops without such a form are skipped.
void register_dynamic_reduction(const std::string& op, const ReduceFn& fold);

// The largest (smallest) element of data over the reduced dims where NaN wins, as the reference's
// max and min do; integers fold plainly. A second, NaN-counting pass makes this two computes.
te::Tensor nan_aware_extreme(const te::Tensor& data, const std::vector<bool>& reduced,
                             bool keepdims, bool largest, const std::string& name);

}  // namespace anvil::topi
