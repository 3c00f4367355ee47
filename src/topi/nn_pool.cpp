// Computes of pooling: nn.max_pool (also with argmax indices), nn.avg_pool and nn.lp_pool
// over 1 to 3 spatial axes, their inverse nn.max_unpool (dyn.nn.max_unpool: the output shape
// an operand, which its shape function reads), nn.global_{max,avg}_pool2d and
// nn.adaptive_{max,avg}_pool1d/2d/3d, in any layout the op table accepts. Windowed pools read a
// padded stage (TVM's pad_temp: the lowest value for max, 0 for the sums) and reduce over the
// window in one block; averages divide in a following elementwise stage, by the elements inside the
// input unless count_include_pad.
#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

enum class PoolKind { Max, MaxWithArgmax, Avg, Lp };

// The windows of one pooling op, per spatial axis, in primal order.
struct PoolWindows {
  std::vector<int64_t> in, out, window, stride, dilation, pad_before, pad_after;
  std::vector<int64_t> explicit_pad_after;  // pad_after without the ceil_mode overhang

  // How many taps of output position o of axis i lie inside the input.
  int64_t taps_inside(size_t i, int64_t o) const {
    int64_t count = 0;
    for (int64_t k = 0; k < window[i]; ++k) {
      int64_t at = o * stride[i] - pad_before[i] + k * dilation[i];
      count += at >= 0 && at < in[i];
    }
    return count;
  }

  // The same as an expression of o: the k in [0, window) with 0 <= o*s - pad + k*d < in.
  PrimExpr taps_inside_expr(size_t i, const PrimExpr& o) const {
    auto ceil_div = [](PrimExpr a, int64_t d) { return (a + (d - 1)) / d; };
    PrimExpr first = o * stride[i];
    PrimExpr lo = tir::max(ceil_div(pad_before[i] - first, dilation[i]), 0);
    PrimExpr hi = tir::min(ceil_div(in[i] + pad_before[i] - first, dilation[i]), window[i]);
    return tir::max(hi - lo, 0);
  }

  // The taps of output position o of axis i inside the input and its explicit padding (what
  // count_include_pad divides by; a ceil_mode overhang is not counted).
  PrimExpr taps_in_padding_expr(size_t i, const PrimExpr& o) const {
    PrimExpr room = in[i] + pad_before[i] + explicit_pad_after[i] - o * stride[i];
    return tir::min(tir::max((room + (dilation[i] - 1)) / dilation[i], 0), window[i]);
  }

  // True when some window of some axis holds no element of the input.
  bool has_empty_window() const {
    for (size_t i = 0; i < in.size(); ++i)
      for (int64_t o = 0; o < out[i]; ++o)
        if (taps_inside(i, o) == 0) return true;
    return false;
  }
};

template <int N, typename AttrsT>
PoolWindows pool_windows(const AttrsT& a, const std::vector<int64_t>& in_primal,
                         const std::vector<int64_t>& out_primal) {
  PoolWindows w;
  w.in.assign(in_primal.begin() + 2, in_primal.end());
  w.out.assign(out_primal.begin() + 2, out_primal.end());
  w.window = nn::spread(a.pool_size, N, 1);
  w.stride = nn::spread(a.strides, N, 1);
  w.dilation = nn::spread(a.dilation, N, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  w.pad_before.assign(pad.begin(), pad.begin() + N);
  for (int i = 0; i < N; ++i) {
    // With ceil_mode the last window may reach past the after-padding; pad that far too.
    int64_t last = (w.out[size_t(i)] - 1) * w.stride[size_t(i)] +
                   (w.window[size_t(i)] - 1) * w.dilation[size_t(i)] + 1;
    int64_t needed = last - w.pad_before[size_t(i)] - w.in[size_t(i)];
    w.pad_after.push_back(std::max(pad[size_t(N + i)], needed));
    w.explicit_pad_after.push_back(pad[size_t(N + i)]);
  }
  return w;
}

// An elementwise stage over `shape` from a per-element function of the stored indices.
te::Tensor elementwise(const std::vector<PrimExpr>& shape,
                       std::function<PrimExpr(const std::vector<PrimExpr>&)> f,
                       const std::string& name) {
  return te::compute(
      shape, [f](const std::vector<tir::Var>& idx) { return f(nn::var_exprs(idx)); }, name);
}

// sum / divisor, in float64 for integer data (the reference's arithmetic, truncated back).
PrimExpr divide(const PrimExpr& sum, const PrimExpr& divisor, DataType dtype) {
  if (dtype.is_float() || dtype.is_bfloat()) return sum / tir::cast(dtype, divisor);
  DataType f64 = DataType::float64();
  return tir::cast(dtype, tir::cast(f64, sum) / tir::cast(f64, divisor));
}

// The extents of data's spatial axes (in primal order, read through the layout) when one of
// them is a size variable; nullopt when all are static.
std::optional<std::vector<PrimExpr>> symbolic_spatial_extents(const te::Tensor& data,
                                                              const nn::LayoutMap& layout,
                                                              const std::string& letters) {
  std::vector<PrimExpr> extents;
  bool symbolic = false;
  for (char axis : letters) {
    extents.push_back(data.shape()[layout.stored_axis(axis)]);
    symbolic |= !tir::as_const_int(extents.back());
  }
  if (!symbolic) return std::nullopt;
  return extents;
}

// Max and average pooling over spatial dims that are size variables (images of any size): each
// tap is read only where it lies inside the input (if_then_else), so no padded stage of a
// static size is needed. As in the general path, a max over a window with no tap inside is 0,
// and an average divides by the whole window with count_include_pad, else by the taps inside.
// nullopt when the spatial dims are static (the general path).
template <int N, typename AttrsT>
std::optional<te::Tensor> pool_over_symbolic_dims(const ComputeArgs& args, const AttrsT& a,
                                                  PoolKind kind, const nn::LayoutMap& in_map,
                                                  const nn::LayoutMap& out_map) {
  const te::Tensor& data = args.inputs[0];
  const std::string letters = nn::spatial_axes(N);
  const std::optional<std::vector<PrimExpr>> symbolic_in =
      symbolic_spatial_extents(data, in_map, letters);
  if (!symbolic_in) return std::nullopt;
  const std::vector<PrimExpr>& in = *symbolic_in;
  const std::vector<int64_t> window = nn::spread(a.pool_size, N, 1);
  const std::vector<int64_t> stride = nn::spread(a.strides, N, 1);
  const std::vector<int64_t> dilation = nn::spread(a.dilation, N, 1);
  const std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  const DataType dtype = data.dtype();
  const bool max = kind == PoolKind::Max;
  const PrimExpr outside =
      max ? tir::reduce_identity(tir::ReduceKind::Max, dtype) : tir::make_const(dtype, 0);
  std::vector<tir::IterVar> reduce = nn::reduce_axes(window, "r", letters);
  const std::vector<PrimExpr> out_shape = args.out_shape();
  te::Tensor pooled = te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> p = out_map.to_primal(nn::var_exprs(idx));
        PrimExpr inside;
        for (size_t i = 0; i < size_t(N); ++i) {
          PrimExpr at = p[2 + i] * stride[i] - pad[i] + reduce[i].var * dilation[i];
          inside = nn::and_also(inside, tir::logical_and(at >= 0, at < in[i]));
          p[2 + i] = at;
        }
        PrimExpr x = nn::if_then_else(inside, data.at(in_map.to_stored(p)), outside);
        return max ? tir::max_reduce(x, reduce) : tir::sum(x, reduce);
      },
      max ? "pool_max" : "pool_sum");
  // How many taps of the window at output position o lie inside the input along axis i: the
  // k in [0, window) with 0 <= first + k * dilation < in.
  auto taps_inside = [&](size_t i, const PrimExpr& o) {
    PrimExpr first = o * stride[i] - pad[i];
    PrimExpr d = tir::make_int(dilation[i]);
    PrimExpr lo = tir::max(tir::floordiv(-first + (dilation[i] - 1), d), tir::make_int(0));
    PrimExpr hi = tir::min(tir::floordiv(in[i] - 1 - first, d), tir::make_int(window[i] - 1));
    return tir::max(hi - lo + 1, tir::make_int(0));
  };
  bool count_include_pad = false;
  if constexpr (requires { a.count_include_pad; }) count_include_pad = a.count_include_pad;
  // count_include_pad: the taps inside the input and its explicit padding.
  auto taps_in_padding = [&](size_t i, const PrimExpr& o) {
    PrimExpr room = in[i] + pad[i] + pad[size_t(N) + i] - o * stride[i];
    PrimExpr d = tir::make_int(dilation[i]);
    PrimExpr n = tir::floordiv(room + (dilation[i] - 1), d);
    return tir::min(tir::max(n, tir::make_int(0)), tir::make_int(window[i]));
  };
  return te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> p = out_map.to_primal(nn::var_exprs(idx));
        PrimExpr value = pooled.at(nn::var_exprs(idx));
        PrimExpr taps, padded_taps;
        for (size_t i = 0; i < size_t(N); ++i) {
          PrimExpr t = taps_inside(i, p[2 + i]);
          taps = taps ? taps * t : t;
          PrimExpr u = taps_in_padding(i, p[2 + i]);
          padded_taps = padded_taps ? padded_taps * u : u;
        }
        if (max) return tir::select(taps > 0, value, tir::make_const(dtype, 0));
        // An empty window sums to 0; dividing by 1 keeps it 0.
        PrimExpr divisor = tir::max(count_include_pad ? padded_taps : taps, 1);
        return divide(value, divisor, dtype);
      },
      max ? "pool_max_or_zero" : "pool_avg");
}

template <int N, typename AttrsT>
std::vector<te::Tensor> pool_compute(const ComputeArgs& args, PoolKind kind, const AttrsT& a,
                                     double p_value = 2.0) {
  const te::Tensor& data = args.inputs[0];
  const DataType dtype = data.dtype();
  const std::string order = nn::spatial_order("NC", N);
  const std::string axes = nn::spatial_axes(N);
  nn::LayoutMap in_map(a.layout, order);
  nn::LayoutMap out_map(a.out_layout.empty() ? a.layout : a.out_layout, order);
  std::vector<PrimExpr> out_shape = args.out_shape();
  if (kind == PoolKind::Max || kind == PoolKind::Avg)
    if (std::optional<te::Tensor> pooled =
            pool_over_symbolic_dims<N>(args, a, kind, in_map, out_map))
      return {*pooled};
  // The batch may be a size variable (-1 here); the windows only read the spatial sizes.
  const std::vector<int64_t> in_primal = in_map.primal_geometry(data.shape(), args.op_name());
  PoolWindows w = pool_windows<N>(a, in_primal, out_map.primal_geometry(out_shape, args.op_name()));

  const bool max = kind == PoolKind::Max || kind == PoolKind::MaxWithArgmax;
  PrimExpr pad_value =
      max ? tir::reduce_identity(tir::ReduceKind::Max, dtype) : tir::make_const(dtype, 0);
  te::Tensor padded = nn::pad_spatial(data, in_map, axes, w.pad_before, w.pad_after, pad_value);
  std::vector<tir::IterVar> reduce = nn::reduce_axes(w.window, "r", axes);

  // The padded input element that tap `window` of output (stored) index idx reads.
  auto tap_of = [=](const std::vector<PrimExpr>& idx, const std::vector<tir::IterVar>& window) {
    std::vector<PrimExpr> p = out_map.to_primal(idx);
    for (int i = 0; i < N; ++i)
      p[size_t(2 + i)] =
          p[size_t(2 + i)] * w.stride[size_t(i)] + window[size_t(i)].var * w.dilation[size_t(i)];
    return padded.at(in_map.to_stored(p));
  };
  auto tap = [=](const std::vector<PrimExpr>& idx) { return tap_of(idx, reduce); };
  auto spatial = [=](const std::vector<PrimExpr>& idx) {
    std::vector<PrimExpr> p = out_map.to_primal(idx);
    return std::vector<PrimExpr>(p.begin() + 2, p.end());
  };

  if (max) {
    te::Tensor pooled = te::compute(
        out_shape,
        [=](const std::vector<tir::Var>& idx) {
          return tir::max_reduce(tap(nn::var_exprs(idx)), reduce);
        },
        "pool_max");
    const bool empty_windows = w.has_empty_window();
    te::Tensor values = pooled;
    if (empty_windows) {
      // A window wholly in the padding gives 0, as the reference does, not the lowest value.
      values = elementwise(
          out_shape,
          [=](const std::vector<PrimExpr>& idx) {
            std::vector<PrimExpr> o = spatial(idx);
            PrimExpr inside;
            for (int i = 0; i < N; ++i)
              inside = nn::and_also(inside, w.taps_inside_expr(size_t(i), o[size_t(i)]) > 0);
            return tir::select(inside, pooled.at(idx), tir::make_const(dtype, 0));
          },
          "pool_max_or_zero");
    }
    if (kind == PoolKind::Max) return {values};
    // The first maximum in window order, which is also the smallest flat index into data
    // (the layout is the canonical one): the least index of a tap inside the input that
    // equals the maximum.
    std::vector<tir::IterVar> window = nn::reduce_axes(w.window, "r", axes);
    te::Tensor first = te::compute(
        out_shape,
        [=](const std::vector<tir::Var>& idx) {
          std::vector<PrimExpr> i = nn::var_exprs(idx);
          PrimExpr flat = i[0] * in_primal[1] + i[1];
          PrimExpr inside;
          for (size_t d = 0; d < size_t(N); ++d) {
            PrimExpr at = i[2 + d] * w.stride[d] - w.pad_before[d] + window[d].var * w.dilation[d];
            inside = nn::and_also(inside, tir::logical_and(at >= 0, at < w.in[d]));
            flat = flat * w.in[d] + at;
          }
          PrimExpr is_max = tir::eq(tap_of(i, window), pooled.at(i));
          return tir::min_reduce(flat, window, nn::and_also(inside, is_max));
        },
        "pool_argmax");
    if (!empty_windows) return {values, first};
    const PrimExpr none = tir::reduce_identity(tir::ReduceKind::Min, tir::kIndexType);
    return {values, elementwise(
                        out_shape,
                        [=](const std::vector<PrimExpr>& idx) {
                          PrimExpr index = first.at(idx);
                          return tir::select(tir::eq(index, none), tir::make_int(-1), index);
                        },
                        "pool_argmax_or_none")};
  }

  if (kind == PoolKind::Lp) {
    const double p = p_value;
    te::Tensor powered = te::compute(
        out_shape,
        [=](const std::vector<tir::Var>& idx) {
          PrimExpr x = tap(nn::var_exprs(idx));
          PrimExpr term = p == 2.0   ? x * x
                          : p == 1.0 ? tir::call_intrin(dtype, "fabs", {x})
                                     : tir::call_intrin(dtype, "pow",
                                                        {tir::call_intrin(dtype, "fabs", {x}),
                                                         tir::make_const(dtype, p)});
          return tir::sum(term, reduce);
        },
        "pool_sum");
    return {elementwise(
        out_shape,
        [=](const std::vector<PrimExpr>& idx) {
          PrimExpr s = powered.at(idx);
          if (p == 1.0) return s;
          if (p == 2.0) return tir::call_intrin(dtype, "sqrt", {s});
          return tir::call_intrin(dtype, "pow", {s, tir::make_const(dtype, 1.0 / p)});
        },
        "pool_lp")};
  }

  te::Tensor summed = te::compute(
      out_shape,
      [=](const std::vector<tir::Var>& idx) { return tir::sum(tap(nn::var_exprs(idx)), reduce); },
      "pool_sum");
  bool count_include_pad = false;
  if constexpr (requires { a.count_include_pad; }) count_include_pad = a.count_include_pad;
  return {elementwise(
      out_shape,
      [=](const std::vector<PrimExpr>& idx) {
        std::vector<PrimExpr> o = spatial(idx);
        PrimExpr divisor;
        for (int i = 0; i < N; ++i) {
          PrimExpr taps = count_include_pad ? w.taps_in_padding_expr(size_t(i), o[size_t(i)])
                                            : w.taps_inside_expr(size_t(i), o[size_t(i)]);
          divisor = divisor ? divisor * taps : taps;
        }
        // An empty window sums to 0; dividing by 1 keeps it 0.
        divisor = tir::max(divisor, 1);
        return divide(summed.at(idx), divisor, dtype);
      },
      "pool_avg")};
}

template <int N>
std::vector<te::Tensor> max_pool(const ComputeArgs& args) {
  return pool_compute<N>(args, PoolKind::Max, args.attrs_as<ir::MaxPoolAttrs<N>>());
}

template <int N>
std::vector<te::Tensor> max_pool_with_argmax(const ComputeArgs& args) {
  return pool_compute<N>(args, PoolKind::MaxWithArgmax, args.attrs_as<ir::MaxPoolAttrs<N>>());
}

template <int N>
std::vector<te::Tensor> avg_pool(const ComputeArgs& args) {
  return pool_compute<N>(args, PoolKind::Avg, args.attrs_as<ir::AvgPoolAttrs<N>>());
}

template <int N>
std::vector<te::Tensor> lp_pool(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::LPPoolAttrs<N>>();
  return pool_compute<N>(args, PoolKind::Lp, a, a.p_value);
}

// Output i of an adaptive axis covers input [floor(i * in / out), ceil((i + 1) * in / out)).
// When out divides in every window has in / out elements and the reduction needs no
// condition; otherwise the reduce axis spans the largest window and is cut per output.
struct AdaptiveAxis {
  int64_t in, out, largest;
  bool uniform() const { return in % out == 0; }
  PrimExpr start(const PrimExpr& o) const { return uniform() ? o * (in / out) : o * in / out; }
  PrimExpr size(const PrimExpr& o) const {
    if (uniform()) return tir::make_int(in / out);
    return ((o + 1) * in + (out - 1)) / out - o * in / out;
  }
};

// A pool to one element per channel over spatial dims that are size variables (a CNN's head
// on images of any size): each output reads its whole plane, and an average divides by the
// plane's size. nullopt when every spatial dim is static (the general path below) or when an
// output dim is not 1 (declined there).
std::optional<std::vector<te::Tensor>> global_pool_over_symbolic_dims(
    const ComputeArgs& args, bool max, int n, const nn::LayoutMap& in_map,
    const nn::LayoutMap& out_map) {
  const te::Tensor& data = args.inputs[0];
  const std::string letters = nn::spatial_axes(n);
  const std::optional<std::vector<PrimExpr>> symbolic_in =
      symbolic_spatial_extents(data, in_map, letters);
  if (!symbolic_in) return std::nullopt;
  const std::vector<PrimExpr>& extents = *symbolic_in;
  const std::vector<PrimExpr> out_shape = args.out_shape();
  for (char axis : letters)
    if (!tir::is_one(out_shape[out_map.stored_axis(axis)])) return std::nullopt;
  std::vector<tir::IterVar> reduce;
  for (int i = 0; i < n; ++i)
    reduce.push_back(
        te::reduce_axis(extents[size_t(i)], "r" + nn::lower_case(letters.substr(size_t(i), 1))));
  te::Tensor pooled = te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> p = out_map.to_primal(nn::var_exprs(idx));
        for (int i = 0; i < n; ++i) p[size_t(2 + i)] = reduce[size_t(i)].var;
        PrimExpr x = data.at(in_map.to_stored(p));
        return max ? tir::max_reduce(x, reduce) : tir::sum(x, reduce);
      },
      max ? "global_pool_max" : "global_pool_sum");
  if (max) return std::vector<te::Tensor>{pooled};
  const PrimExpr count = shape_product(extents);
  const DataType dtype = data.dtype();
  return std::vector<te::Tensor>{te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        return divide(pooled.at(nn::var_exprs(idx)), count, dtype);
      },
      "global_pool_avg")};
}

std::vector<te::Tensor> adaptive_pool(const ComputeArgs& args, bool max, int n,
                                      const std::string& layout, const std::string& out_layout) {
  const te::Tensor& data = args.inputs[0];
  const DataType dtype = data.dtype();
  const std::string order = nn::spatial_order("NC", n);
  nn::LayoutMap in_map(layout, order);
  nn::LayoutMap out_map(out_layout.empty() ? layout : out_layout, order);
  std::vector<PrimExpr> out_shape = args.out_shape();
  if (std::optional<std::vector<te::Tensor>> global =
          global_pool_over_symbolic_dims(args, max, n, in_map, out_map))
    return *global;
  std::vector<int64_t> in = in_map.primal_geometry(data.shape(), args.op_name());
  std::vector<int64_t> out = out_map.primal_geometry(out_shape, args.op_name());
  std::vector<AdaptiveAxis> axes;
  std::vector<int64_t> extents;
  for (int i = 0; i < n; ++i) {
    AdaptiveAxis axis{in[size_t(2 + i)], out[size_t(2 + i)], 0};
    for (int64_t o = 0; o < axis.out; ++o)
      axis.largest = std::max(
          axis.largest, ((o + 1) * axis.in + axis.out - 1) / axis.out - o * axis.in / axis.out);
    axes.push_back(axis);
    extents.push_back(axis.largest);
  }
  std::vector<tir::IterVar> reduce = nn::reduce_axes(extents, "r", nn::spatial_axes(n));
  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> p = out_map.to_primal(nn::var_exprs(idx));
    PrimExpr condition;
    for (int i = 0; i < n; ++i) {
      const AdaptiveAxis& axis = axes[size_t(i)];
      const PrimExpr o = p[size_t(2 + i)];
      const tir::Var& r = reduce[size_t(i)].var;
      if (!axis.uniform()) condition = nn::and_also(condition, r < axis.size(o));
      p[size_t(2 + i)] = axis.start(o) + r;
    }
    PrimExpr x = data.at(in_map.to_stored(p));
    return max ? tir::max_reduce(x, reduce, condition) : tir::sum(x, reduce, condition);
  };
  te::Tensor pooled = te::compute(out_shape, body, max ? "adaptive_pool_max" : "adaptive_pool_sum");
  if (max) return {pooled};
  auto average = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> p = out_map.to_primal(nn::var_exprs(idx));
    PrimExpr count;
    for (int i = 0; i < n; ++i) {
      PrimExpr size = axes[size_t(i)].size(p[size_t(2 + i)]);
      count = count ? count * size : size;
    }
    return divide(pooled.at(nn::var_exprs(idx)), count, dtype);
  };
  return {te::compute(out_shape, average, "adaptive_pool_avg")};
}

template <int N>
std::vector<te::Tensor> adaptive_compute(const ComputeArgs& args, bool max) {
  const auto& a = args.attrs_as<ir::AdaptivePoolAttrs<N>>();
  return adaptive_pool(args, max, N, a.layout, a.out_layout);
}

std::vector<te::Tensor> global_compute(const ComputeArgs& args, bool max) {
  const auto& a = args.attrs_as<ir::GlobalPool2DAttrs>();
  return adaptive_pool(args, max, 2, a.layout, a.out_layout);
}

// nn.max_unpool: each output element finds the data element scattered onto it, turned
// around as a search. Only the data elements whose pooling window covers the element can
// hold its index (max pooling's argmax lies in its window), ceil(pool / stride) of them per
// axis, so overlapping windows are covered too. A first stage keeps the last match in data
// order (the one the scatter writes last), a second reads its value, or 0 where none matched
// or the element lies past the implied size in a larger output.
template <int N>
std::vector<te::Tensor> max_unpool(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::MaxUnpoolAttrs<N>>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& indices = args.inputs[1];
  const DataType dtype = data.dtype();
  const std::vector<int64_t> in = nn::static_shape(data);
  const std::vector<int64_t> pool = nn::spread(a.pool_size, N, 1);
  const std::vector<int64_t> stride = nn::spread(a.strides, N, 1);
  const std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  std::vector<int64_t> implied = in, candidates;
  for (size_t i = 0; i < size_t(N); ++i) {
    implied[2 + i] = (in[2 + i] - 1) * stride[i] + pool[i] - pad[i] - pad[N + i];
    candidates.push_back(std::max<int64_t>((pool[i] + stride[i] - 1) / stride[i], 1));
  }
  std::vector<PrimExpr> out_shape = args.out_shape();
  std::vector<tir::IterVar> reduce = nn::reduce_axes(candidates, "r", nn::spatial_axes(N));

  te::Tensor last = te::compute(
      out_shape,
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> o = nn::var_exprs(idx);
        PrimExpr target = o[0] * in[1] + o[1];  // the flat index into the implied tensor
        PrimExpr order = tir::make_int(0);      // the candidate's position in data order
        std::vector<PrimExpr> at = {o[0], o[1]};
        PrimExpr valid;
        for (size_t i = 0; i < size_t(N); ++i) {
          const PrimExpr& p = o[2 + i];
          PrimExpr q = tir::floordiv(p + pad[i], tir::make_int(stride[i])) - reduce[i].var;
          valid = nn::and_also(valid, tir::logical_and(q >= 0, q < in[2 + i]));
          valid = nn::and_also(valid, p < implied[2 + i]);
          PrimExpr safe = tir::min(tir::max(q, tir::make_int(0)), tir::make_int(in[2 + i] - 1));
          at.push_back(safe);
          order = order * in[2 + i] + safe;
          target = target * implied[2 + i] + p;
        }
        PrimExpr index = tir::cast(tir::kIndexType, indices.at(at));
        return tir::max_reduce(order, reduce, tir::logical_and(valid, tir::eq(index, target)));
      },
      "unpool_last");
  return {te::compute(
      out_shape,
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> o = nn::var_exprs(idx);
        PrimExpr found = last.at(o);
        PrimExpr rest = tir::max(found, tir::make_int(0));
        std::vector<PrimExpr> at(size_t(N + 2));
        at[0] = o[0];
        at[1] = o[1];
        for (size_t i = size_t(N); i-- > 0;) {
          at[2 + i] = tir::floormod(rest, tir::make_int(in[2 + i]));
          rest = tir::floordiv(rest, tir::make_int(in[2 + i]));
        }
        return tir::select(found >= 0, data.at(at), tir::make_const(dtype, 0));
      },
      "unpool")};
}

// dyn.nn.max_unpool: the output shape is an operand; its batch and channels must be the
// data's, and no dim may be negative (else -1 dims).
te::Tensor dyn_max_unpool_dims(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& shape = args.inputs[2];
  const int64_t rank = int64_t(data.ndim());
  if (transform::vector_length(shape) != rank)
    throw_error(args.op_name(), ": output_shape has ", transform::vector_length(shape),
                " dims for data of rank ", rank);
  std::vector<PrimExpr> dims;
  PrimExpr valid = tir::const_true();
  for (int64_t d = 0; d < rank; ++d) {
    dims.push_back(transform::vector_element(shape, d));
    valid = tir::logical_and(valid, d < 2 ? tir::eq(dims.back(), data.shape()[size_t(d)])
                                          : dims.back() >= tir::make_int(0));
  }
  return transform::shape_function_result(dims, valid, args);
}

template <int N>
void register_windowed() {
  const std::string dims = std::to_string(N) + "d";
  register_compute("nn.max_pool" + dims, max_pool<N>);
  register_compute("nn.max_pool" + dims + "_with_argmax", max_pool_with_argmax<N>);
  register_compute("nn.avg_pool" + dims, avg_pool<N>);
  register_compute("nn.lp_pool" + dims, lp_pool<N>);
  register_compute("nn.max_unpool" + dims, max_unpool<N>);
  register_compute("dyn.nn.max_unpool" + dims, max_unpool<N>);
  register_shape_compute("dyn.nn.max_unpool" + dims, ShapeCompute{dyn_max_unpool_dims, nullptr});
  register_compute("nn.adaptive_max_pool" + dims,
                   [](const ComputeArgs& args) { return adaptive_compute<N>(args, true); });
  register_compute("nn.adaptive_avg_pool" + dims,
                   [](const ComputeArgs& args) { return adaptive_compute<N>(args, false); });
}

}  // namespace

void register_nn_pool_computes() {
  register_windowed<1>();
  register_windowed<2>();
  register_windowed<3>();
  register_compute("nn.global_max_pool2d",
                   [](const ComputeArgs& args) { return global_compute(args, true); });
  register_compute("nn.global_avg_pool2d",
                   [](const ComputeArgs& args) { return global_compute(args, false); });
}

}  // namespace anvil::topi
