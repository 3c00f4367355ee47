// Computes of the reductions over attrs-chosen axes (sum, mean, max, argmax, norms, variance,
// ...) and the shared reduction builder. Results follow the reference kernels: max and min let
// NaN win, integer means truncate toward zero, argmax breaks ties by the first (or last) index.
// Float sums accumulate in the data's dtype (float32 for the 16-bit floats).
#include "anvil/ir/attrs/reduce.h"

#include <functional>
#include <optional>
#include <string>

#include "anvil/tir/arith.h"
#include "anvil/topi/topi.h"
#include "topi/families.h"
#include "topi/topi_util.h"

namespace anvil::topi {

std::vector<PrimExpr> reduced_shape(const std::vector<PrimExpr>& data_shape,
                                    const std::vector<bool>& reduced, bool keepdims) {
  std::vector<PrimExpr> shape;
  for (size_t d = 0; d < data_shape.size(); ++d) {
    if (!reduced[d])
      shape.push_back(data_shape[d]);
    else if (keepdims)
      shape.push_back(tir::make_int(1));
  }
  return shape;
}

namespace {

// Lanes of the partial folds of a reduction along the innermost axis: one AVX-512 vector of
// float32 (two of AVX2).
constexpr int64_t kPartialLanes = 16;

// A reduction over the trailing data axes (the innermost alone, or several whose innermost is
// whole vectors), of static extent at least 2 * kPartialLanes:
// folding it element by element is a chain of dependent scalar operations (the plain form
// cannot be vectorized without reassociating it), so it is folded in two stages:
//   partial[out, l] = fold over c of source(x[out, c * L + l])       (c < E / L, a vector of L)
//   out             = fold over r < L + T of
//                       r < L ? partial[out, r] : source(x[out, (E / L) * L + r - L])
// with T = E % L the elements the vectors leave. Both branches of the select read in bounds
// (r - L + main >= main - L >= 0, and min(r, L - 1) < L), so evaluating both is safe.
// Returns nullopt when the body is not a plain fold (a condition, or not a Reduce at all).
std::optional<te::Tensor> reduce_innermost_in_lanes(
    const std::vector<PrimExpr>& data_shape, size_t trailing, bool keepdims,
    const std::string& name, const std::function<PrimExpr(const ReductionPoint&)>& body) {
  const size_t rank = data_shape.size(), kept = rank - trailing;
  // The trailing axes fold as one of `extent` elements (row-major); over several axes, rows of
  // the innermost one that are whole vectors keep every vector inside one row.
  int64_t extent = 1;
  for (size_t d = kept; d < rank; ++d) extent *= tir::as_const_int(data_shape[d]).value_or(0);
  const int64_t innermost = tir::as_const_int(data_shape.back()).value_or(0);
  if (trailing > 1 && innermost % kPartialLanes != 0) return std::nullopt;
  const int64_t main = extent / kPartialLanes * kPartialLanes, tail = extent - main;
  if (extent < 2 * kPartialLanes) return std::nullopt;
  std::vector<bool> reduced(rank, false);
  for (size_t d = kept; d < rank; ++d) reduced[d] = true;
  const std::vector<PrimExpr> out_shape = reduced_shape(data_shape, reduced, keepdims);

  // The point of body for output index `out` and flattened position `row_start + lane` of the
  // trailing axes (lane within the innermost axis, so that a vector of lanes stays contiguous).
  auto point_at = [&](const std::vector<Var>& out, PrimExpr row_start, PrimExpr lane,
                      tir::IterVar axis) {
    ReductionPoint p;
    p.out_index.assign(out.begin(), out.begin() + out_shape.size());
    p.data_index.assign(out.begin(), out.begin() + kept);
    std::vector<PrimExpr> trailing_index(trailing);
    PrimExpr rest = row_start;
    for (size_t d = rank; d-- > kept;) {
      if (d == kept) {
        trailing_index[d - kept] = rest;
        break;
      }
      trailing_index[d - kept] = tir::floormod(rest, data_shape[d]);
      rest = tir::floordiv(rest, data_shape[d]);
    }
    trailing_index.back() = trailing_index.back() + lane;
    for (PrimExpr& e : trailing_index) p.data_index.push_back(tir::simplify(e));
    p.axes = {axis};
    p.reduced_position = row_start + lane;
    return p;
  };
  bool plain = true;
  std::optional<tir::ReduceKind> combiner;
  std::vector<PrimExpr> partial_shape = out_shape;
  partial_shape.push_back(tir::make_int(kPartialLanes));
  te::Tensor partial = te::compute(
      partial_shape,
      [&](const std::vector<Var>& i) {
        tir::IterVar chunk = te::reduce_axis(tir::make_int(main / kPartialLanes), "c");
        PrimExpr folded =
            body(point_at(i, PrimExpr(chunk.var) * kPartialLanes, PrimExpr(i.back()), chunk));
        const auto* reduce = tir::as<tir::ReduceNode>(folded);
        if (!reduce || reduce->condition) {
          plain = false;
          return folded;
        }
        combiner = reduce->combiner;
        return folded;
      },
      name + "_partial");
  if (!plain || !combiner) return std::nullopt;
  te::Tensor result = te::compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        tir::IterVar r = te::reduce_axis(tir::make_int(kPartialLanes + tail), "r");
        std::vector<PrimExpr> lane_index(i.begin(), i.end());
        std::vector<PrimExpr> clamped = lane_index;
        lane_index.push_back(r.var);
        clamped.push_back(tir::min(PrimExpr(r.var), tir::make_int(kPartialLanes - 1)));
        PrimExpr source = partial.at(tail ? clamped : lane_index);
        if (tail) {
          // (Only a single trailing axis has a tail: several need whole vectors of rows.)
          PrimExpr position = PrimExpr(r.var) + (main - kPartialLanes);
          PrimExpr folded = body(point_at(i, position, tir::make_int(0), r));
          const auto* reduce = tir::as<tir::ReduceNode>(folded);
          if (!reduce || reduce->condition || reduce->combiner != *combiner) {
            plain = false;
            return folded;
          }
          source = tir::select(PrimExpr(r.var) < kPartialLanes, source, reduce->source);
        }
        return PrimExpr(tir::ReduceNode::make(*combiner, source, {r}));
      },
      name);
  if (!plain) return std::nullopt;
  return result;
}

}  // namespace

te::Tensor reduce_compute(const std::vector<PrimExpr>& data_shape, const std::vector<bool>& reduced,
                          bool keepdims, const std::string& name,
                          const std::function<PrimExpr(const ReductionPoint&)>& body) {
  // Reductions over trailing axes only (the innermost, or everything: a whole tensor's min and
  // max, as DynamicQuantizeLinear takes them) fold in vectors of partials.
  size_t trailing = 0;
  while (trailing < reduced.size() && reduced[reduced.size() - 1 - trailing]) ++trailing;
  bool trailing_only = trailing > 0;
  for (size_t d = 0; d + trailing < reduced.size(); ++d)
    trailing_only = trailing_only && !reduced[d];
  if (trailing_only)
    if (std::optional<te::Tensor> in_lanes =
            reduce_innermost_in_lanes(data_shape, trailing, keepdims, name, body))
      return *in_lanes;
  return te::compute(
      reduced_shape(data_shape, reduced, keepdims),
      [&](const std::vector<Var>& index) {
        ReductionPoint point;
        point.out_index.assign(index.begin(), index.end());
        point.reduced_position = tir::make_int(0);
        bool folds_nothing = false;
        size_t next = 0;
        for (size_t d = 0; d < data_shape.size(); ++d) {
          if (!reduced[d]) {
            point.data_index.push_back(point.out_index[next++]);
            continue;
          }
          if (keepdims) ++next;
          tir::IterVar axis = te::reduce_axis(data_shape[d], "k" + std::to_string(d));
          point.axes.push_back(axis);
          point.data_index.push_back(axis.var);
          point.reduced_position = point.reduced_position * data_shape[d] + axis.var;
          if (tir::is_zero(data_shape[d])) folds_nothing = true;
        }
        PrimExpr folded = body(point);
        // Lowering initializes a reduction inside its (here empty) loop, so a fold over no
        // elements would never be written; it is its combiner's identity from the start.
        const auto* reduce = tir::as<tir::ReduceNode>(folded);
        if (folds_nothing && reduce) return tir::reduce_identity(reduce->combiner, folded.dtype());
        return folded;
      },
      name);
}

te::Tensor nan_aware_extreme(const te::Tensor& data, const std::vector<bool>& reduced,
                             bool keepdims, bool largest, const std::string& name) {
  auto fold = largest ? tir::max_reduce : tir::min_reduce;
  te::Tensor extreme = reduce_compute(
      data.shape(), reduced, keepdims, name + "_red",
      [&](const ReductionPoint& p) { return fold(data.at(p.data_index), p.axes, nullptr); });
  if (!is_float_like(data.dtype())) return extreme;
  // The plain float max drops NaN (comparisons with it are false), so NaN is looked for apart.
  te::Tensor has_nan =
      reduce_compute(data.shape(), reduced, keepdims, name + "_nan", [&](const ReductionPoint& p) {
        return tir::max_reduce(tir::cast(DataType::int32(), is_nan(data.at(p.data_index))), p.axes);
      });
  return te::compute(
      extreme.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> index(i.begin(), i.end());
        // Over an empty set the NaN count folds to int32's lowest value, which is no NaN.
        return tir::select(has_nan.at(index) > 0, nan_of(data.dtype()), extreme.at(index));
      },
      name);
}

namespace {

// The number of elements folded into each output element, as an index expression (a size
// variable among the reduced dims makes it symbolic).
PrimExpr reduced_count_expr(const te::Tensor& data, const std::vector<bool>& reduced) {
  PrimExpr count = tir::make_int(1);
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count = count * data.shape()[d];
  return count;
}

// The same where it must be static.
int64_t reduced_count(const te::Tensor& data, const std::vector<bool>& reduced) {
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= static_extent(data.shape()[d]);
  return count;
}

// The dtype sums of dtype accumulate in: float32 for the 16-bit floats, else dtype itself.
DataType accumulate_dtype(DataType dtype) {
  if (dtype.is_bfloat() || (dtype.is_float() && dtype.bits == 16)) return DataType::float32();
  return dtype;
}

// out = cast(out dtype, finish(fold over the axes of source(x))).
struct SimpleReduction {
  tir::ReduceKind combiner;
  std::function<PrimExpr(PrimExpr x, DataType acc)> source;
  std::function<PrimExpr(PrimExpr folded, PrimExpr count)> finish;  // null: the folded value
  std::function<DataType(DataType data)> accumulate = accumulate_dtype;
};

// Registers op's compute over the axes of its ReduceAttrs and, for the ops that have a form
// with the axes given at run time, dyn.<op>'s (reduce_dynamic.cpp).
void register_reduction(const std::string& op, ReduceFn fold) {
  register_compute(op, [op, fold](const ComputeArgs& args) {
    const auto& attrs = args.attrs_as<ir::ReduceAttrs>();
    const te::Tensor& data = args.inputs[0];
    std::vector<bool> reduced = reduced_axes(attrs.axis, attrs.exclude, data.ndim(), op);
    return std::vector<te::Tensor>{fold(data, reduced, attrs.keepdims, args.out_dtype())};
  });
  register_dynamic_reduction(op, fold);
}

void register_simple_reduction(const std::string& op, SimpleReduction spec) {
  register_reduction(op, [op, spec](const te::Tensor& data, const std::vector<bool>& reduced,
                                    bool keepdims, DataType out_dtype) {
    DataType acc = spec.accumulate(data.dtype());
    std::string name = tensor_name(op);
    // A reduction must be the whole body of its compute, so finishing (or narrowing the
    // accumulator) takes a second, elementwise compute.
    bool one_stage = !spec.finish && acc == out_dtype;
    te::Tensor folded =
        reduce_compute(data.shape(), reduced, keepdims, one_stage ? name : name + "_red",
                       [&](const ReductionPoint& p) {
                         PrimExpr source = spec.source(data.at(p.data_index), acc);
                         return tir::ReduceNode::make(spec.combiner, source, p.axes);
                       });
    if (one_stage) return folded;
    PrimExpr count = reduced_count_expr(data, reduced);
    return te::compute(
        folded.shape(),
        [&](const std::vector<Var>& i) {
          PrimExpr value = folded.at(std::vector<PrimExpr>(i.begin(), i.end()));
          return tir::cast(out_dtype, spec.finish ? spec.finish(value, count) : value);
        },
        name);
  });
}

PrimExpr as_acc(PrimExpr x, DataType acc) { return tir::cast(acc, x); }

PrimExpr abs_value(PrimExpr x) {
  if (is_float_like(x.dtype())) return tir::call_intrin(x.dtype(), "fabs", {x});
  if (x.dtype().is_uint()) return x;
  return tir::select(x < 0, 0 - x, x);
}

// Integer means sum exactly in 64 bits and truncate toward zero, as the reference does.
DataType mean_accumulate(DataType dtype) {
  if (dtype == DataType::uint64()) return dtype;
  if (dtype.is_int() || dtype.is_uint()) return DataType::int64();
  return accumulate_dtype(dtype);
}

void register_arithmetic_reductions() {
  using tir::ReduceKind;
  register_simple_reduction("sum", {ReduceKind::Sum, as_acc, nullptr});
  register_simple_reduction("prod", {ReduceKind::Prod, as_acc, nullptr});
  register_simple_reduction(
      "mean", {ReduceKind::Sum, as_acc,
               [](PrimExpr sum, PrimExpr count) -> PrimExpr {
                 std::optional<int64_t> known = tir::as_const_int(count);
                 if (is_float_like(sum.dtype()))
                   return sum / (known ? tir::make_const(sum.dtype(), *known)
                                       : tir::cast(sum.dtype(), count));
                 // The reference's integer mean of nothing is 0.
                 if (known)
                   return *known == 0 ? int_const(sum.dtype(), 0)
                                      : tir::truncdiv(sum, int_const(sum.dtype(), *known));
                 PrimExpr divisor = tir::cast(sum.dtype(), tir::max(count, tir::make_int(1)));
                 return tir::truncdiv(sum, divisor);
               },
               mean_accumulate});
  register_simple_reduction(
      "l1_norm", {ReduceKind::Sum,
                  [](PrimExpr x, DataType acc) { return as_acc(abs_value(x), acc); }, nullptr});
  register_simple_reduction("sum_square", {ReduceKind::Sum,
                                           [](PrimExpr x, DataType acc) {
                                             PrimExpr v = as_acc(x, acc);
                                             return v * v;
                                           },
                                           nullptr});
  register_simple_reduction("l2_norm", {ReduceKind::Sum,
                                        [](PrimExpr x, DataType acc) {
                                          PrimExpr v = as_acc(x, acc);
                                          return v * v;
                                        },
                                        [](PrimExpr sum, PrimExpr) {
                                          return tir::call_intrin(sum.dtype(), "sqrt", {sum});
                                        }});
  // all and any of bool data: the min and max of the flags as int32.
  auto flag = [](PrimExpr x, DataType) { return tir::cast(DataType::int32(), x); };
  // Positive rather than non-zero: the max over an empty set is int32's lowest value (false).
  auto to_bool = [](PrimExpr folded, PrimExpr) { return folded > 0; };
  auto int32_acc = [](DataType) { return DataType::int32(); };
  register_simple_reduction("all", {ReduceKind::Min, flag, to_bool, int32_acc});
  register_simple_reduction("any", {ReduceKind::Max, flag, to_bool, int32_acc});
}

void register_extreme(const std::string& op, bool largest) {
  register_reduction(op, [op, largest](const te::Tensor& data, const std::vector<bool>& reduced,
                                       bool keepdims, DataType) {
    if (data.dtype().is_bool()) {
      // The max of flags is their any, the min their all.
      te::Tensor folded = reduce_compute(
          data.shape(), reduced, keepdims, tensor_name(op) + "_red", [&](const ReductionPoint& p) {
            PrimExpr x = tir::cast(DataType::int32(), data.at(p.data_index));
            return largest ? tir::max_reduce(x, p.axes) : tir::min_reduce(x, p.axes);
          });
      return te::compute(
          folded.shape(),
          [&](const std::vector<Var>& i) {
            return folded.at(std::vector<PrimExpr>(i.begin(), i.end())) > 0;
          },
          tensor_name(op));
    }
    return nan_aware_extreme(data, reduced, keepdims, largest, tensor_name(op));
  });
}

// The position of the first (or last) element equal to the extreme, in two passes: the
// NaN-aware extreme, then the smallest (largest) position that holds it.
void register_arg_extreme(const std::string& op, bool largest) {
  register_compute(op, [op, largest](const ComputeArgs& args) {
    const auto& attrs = args.attrs_as<ir::ArgReduceAttrs>();
    const te::Tensor& data = args.inputs[0];
    std::vector<bool> reduced = reduced_axes(attrs.axis, attrs.exclude, data.ndim(), op);
    std::string name = tensor_name(op);
    te::Tensor extreme = nan_aware_extreme(data, reduced, attrs.keepdims, largest, name + "_value");
    bool last = attrs.select_last_index;
    DataType out_dtype = args.out_dtype();
    return std::vector<te::Tensor>{
        reduce_compute(data.shape(), reduced, attrs.keepdims, name, [&](const ReductionPoint& p) {
          PrimExpr x = data.at(p.data_index);
          PrimExpr best = extreme.at(p.out_index);
          PrimExpr match = tir::eq(x, best);
          if (is_float_like(x.dtype()))
            match = tir::logical_or(match, tir::logical_and(is_nan(x), is_nan(best)));
          PrimExpr position = tir::cast(out_dtype, p.reduced_position);
          if (last)
            return tir::max_reduce(tir::select(match, position, int_const(out_dtype, -1)), p.axes);
          int64_t past_end = reduced_count(data, reduced);
          return tir::min_reduce(tir::select(match, position, int_const(out_dtype, past_end)),
                                 p.axes);
        })};
  });
}

// variance(data, mean) and std: the mean of the squared deviations from the given mean
// (broadcast to the data), divided by N - 1 when unbiased.
void register_variance(const std::string& op, bool take_sqrt) {
  register_compute(op, [op, take_sqrt](const ComputeArgs& args) {
    const auto& attrs = args.attrs_as<ir::VarianceAttrs>();
    const te::Tensor& data = args.inputs[0];
    const te::Tensor& mean = args.inputs[1];
    std::vector<bool> reduced = reduced_axes(attrs.axis, attrs.exclude, data.ndim(), op);
    DataType acc = accumulate_dtype(data.dtype());
    std::string name = tensor_name(op);
    te::Tensor squares = reduce_compute(
        data.shape(), reduced, attrs.keepdims, name + "_red", [&](const ReductionPoint& p) {
          PrimExpr m = mean.at(broadcast_index(mean, p.data_index, data.shape()));
          PrimExpr d = tir::cast(acc, data.at(p.data_index)) - tir::cast(acc, m);
          return tir::sum(d * d, p.axes);
        });
    double divisor = double(reduced_count(data, reduced)) - (attrs.unbiased ? 1 : 0);
    return std::vector<te::Tensor>{te::compute(
        squares.shape(),
        [&](const std::vector<Var>& i) {
          PrimExpr v =
              squares.at(std::vector<PrimExpr>(i.begin(), i.end())) / tir::make_const(acc, divisor);
          if (take_sqrt) v = tir::call_intrin(acc, "sqrt", {v});
          return tir::cast(data.dtype(), v);
        },
        name)};
  });
}

// log(sum(exp(x))) shifted by the NaN-aware max m so exp cannot overflow; a non-finite m is
// the result itself (NaN, +inf, or -inf when every element is -inf).
void register_logsumexp() {
  register_reduction("logsumexp", [](const te::Tensor& data, const std::vector<bool>& reduced,
                                     bool keepdims, DataType) {
    std::string name = tensor_name("logsumexp");
    DataType acc = accumulate_dtype(data.dtype());
    te::Tensor top = nan_aware_extreme(data, reduced, keepdims, true, name + "_max");
    te::Tensor sum = reduce_compute(
        data.shape(), reduced, keepdims, name + "_sum", [&](const ReductionPoint& p) {
          PrimExpr shifted = tir::cast(acc, data.at(p.data_index) - top.at(p.out_index));
          return tir::sum(tir::call_intrin(acc, "exp", {shifted}), p.axes);
        });
    return te::compute(
        top.shape(),
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> index(i.begin(), i.end());
          PrimExpr m = top.at(index);
          PrimExpr log_sum = tir::cast(data.dtype(), tir::call_intrin(acc, "log", {sum.at(index)}));
          return tir::select(is_finite(m), m + log_sum, m);
        },
        name);
  });
}

}  // namespace

void register_reduce_computes() {
  register_arithmetic_reductions();
  register_extreme("max", true);
  register_extreme("min", false);
  register_arg_extreme("argmax", true);
  register_arg_extreme("argmin", false);
  register_variance("variance", false);
  register_variance("std", true);
  register_logsumexp();
}

}  // namespace anvil::topi
