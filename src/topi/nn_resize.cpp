// Computes of image.resize1d/2d/3d (ONNX Resize as the reference kernel defines it) and
// image.grid_sample (PyTorch's grid_sampler). Each output coordinate maps back to the input
// (by the coordinate transformation mode, or through the grid), then takes its nearest
// element or a linear or cubic blend of its neighbours, separably per axis. Coordinates and
// weights are computed in float64, as the reference does, so that rounding to the nearest
// element picks the same one; the blend is cast to the output dtype at the end. Antialiasing
// a downsample widens the linear or cubic filter by 1 / scale over correspondingly more taps.
// dyn.image.resize reads its scales or sizes and its roi at run time: the same element
// expression over float64 expressions instead of constants, with a shape function for the
// output dims; antialiasing there makes the tap count a value, which the compute reduces over.
#include <algorithm>
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

const DataType kF64 = DataType::float64();

PrimExpr f64(double value) { return tir::make_const(kF64, value); }
PrimExpr floor64(PrimExpr x) { return tir::call_intrin(kF64, "floor", {std::move(x)}); }

// How one axis is resized (the reference's AxisResize): `position` is the axis in the primal
// index; the lengths are int64 and the rest float64, constants when the resize is static.
struct AxisResize {
  size_t position = 0;
  PrimExpr in, out;
  PrimExpr scale;   // what the coordinate transform divides by
  PrimExpr length;  // the resized length: out for sizes, in * scale for scales
  PrimExpr roi_start = f64(0), roi_end = f64(1);
};

struct ResizeOptions {
  std::string method, mode, rounding;
  double cubic_alpha;
  bool exclude_outside;
  bool antialias;
  double extrapolation;
};

// The input coordinate (float64) of output index o.
PrimExpr original_coordinate(const PrimExpr& o, const AxisResize& ax, const std::string& mode) {
  PrimExpr x = tir::cast(kF64, o);
  PrimExpr in = tir::cast(kF64, ax.in);
  if (mode == "half_pixel") return (x + f64(0.5)) / ax.scale - f64(0.5);
  if (mode == "half_pixel_symmetric") {
    // Keeps the input's centre on the output's when in * scale was rounded to the output size.
    PrimExpr shift = in / f64(2) * (f64(1) - tir::cast(kF64, ax.out) / ax.length);
    return shift + (x + f64(0.5)) / ax.scale - f64(0.5);
  }
  if (mode == "pytorch_half_pixel")
    return tir::select(ax.length > f64(1), (x + f64(0.5)) / ax.scale - f64(0.5), f64(0));
  if (mode == "align_corners")
    return tir::select(ax.length > f64(1), x * (in - f64(1)) / (ax.length - f64(1)), f64(0));
  if (mode == "asymmetric") return x / ax.scale;
  if (mode == "tf_half_pixel_for_nn") return (x + f64(0.5)) / ax.scale;
  if (mode != "tf_crop_and_resize")
    throw_error("image.resize: unknown coordinate_transformation_mode \"", mode, "\"");
  PrimExpr span = (ax.roi_end - ax.roi_start) * (in - f64(1));
  return tir::select(ax.length > f64(1),
                     ax.roi_start * (in - f64(1)) + x * span / (ax.length - f64(1)),
                     f64(0.5) * (ax.roi_start + ax.roi_end) * (in - f64(1)));
}

// Whether coordinate x lies outside the input (tf_crop_and_resize then extrapolates).
PrimExpr outside_input(const PrimExpr& x, const AxisResize& ax) {
  return tir::logical_or(x<f64(0), x> tir::cast(kF64, ax.in) - f64(1));
}

// Keys' cubic convolution kernel with parameter a at distance d >= 0.
PrimExpr cubic_weight(const PrimExpr& d, double a) {
  PrimExpr near = ((f64(a + 2) * d - f64(a + 3)) * d) * d + f64(1);
  PrimExpr far = ((f64(a) * d - f64(5 * a)) * d + f64(8 * a)) * d - f64(4 * a);
  return tir::select(d <= f64(1), near, tir::select(d < f64(2), far, f64(0)));
}

// The input indices (int64, clamped to the axis) and float64 weights one output index reads.
struct Taps {
  std::vector<PrimExpr> index, weight;
};

PrimExpr clamp_index(const PrimExpr& i, const PrimExpr& in) {
  return tir::min(tir::max(i, tir::make_int(0)), in - tir::make_int(1));
}

// The nearest element by the rounding method; "" means round for align_corners, else floor.
PrimExpr nearest_index(const PrimExpr& x, const ResizeOptions& o) {
  std::string method = o.rounding;
  if (method.empty()) method = o.mode == "align_corners" ? "round" : "floor";
  PrimExpr lower = floor64(x);
  PrimExpr frac = x - lower;
  PrimExpr upper = lower + f64(1);
  PrimExpr chosen;
  if (method == "floor") {
    chosen = lower;
  } else if (method == "ceil") {
    chosen = tir::select(tir::eq(frac, f64(0)), lower, upper);
  } else if (method == "round_prefer_floor") {
    chosen = tir::select(frac <= f64(0.5), lower, upper);
  } else if (method == "round_prefer_ceil" || method == "round") {
    // Half away from zero differs from half up only below 0, which clamps to 0 either way.
    chosen = tir::select(frac < f64(0.5), lower, upper);
  } else {
    throw_error("image.resize: unknown rounding_method \"", o.rounding, "\"");
  }
  return tir::cast(tir::kIndexType, chosen);
}

// A linear or cubic blend counts its neighbours from `base`, with 0 < ratio <= 1: at a whole
// coordinate the element itself is the right-hand neighbour (the reference's convention).
struct BlendOrigin {
  PrimExpr base, ratio;
};

BlendOrigin blend_origin(const PrimExpr& x) {
  PrimExpr floored = floor64(x);
  PrimExpr whole = tir::eq(x - floored, f64(0));
  return {tir::cast(tir::kIndexType, tir::select(whole, floored - f64(1), floored)),
          tir::select(whole, f64(1), x - floored)};
}

// The weight of the neighbour `offset` steps from the origin, before normalization, with the
// filter stretched by `stretch` (1 / the widening of an antialiased downsample).
PrimExpr tap_weight(const BlendOrigin& origin, const PrimExpr& offset, const PrimExpr& stretch,
                    const AxisResize& ax, const ResizeOptions& o) {
  PrimExpr d = tir::call_intrin(kF64, "fabs", {tir::cast(kF64, offset) - origin.ratio});
  d = stretch * d;
  PrimExpr w = o.method == "cubic" ? cubic_weight(d, o.cubic_alpha) : tir::max(f64(0), f64(1) - d);
  if (!o.exclude_outside) return w;
  PrimExpr index = origin.base + offset;
  return tir::select(tir::logical_and(index >= tir::make_int(0), index < ax.in), w, f64(0));
}

// The reach of the filter each way in input steps: 1 (linear) or 2 (cubic), widened by
// 1 / stretch; the taps run from origin + start to origin + 1 - start.
PrimExpr first_tap(const PrimExpr& stretch, const ResizeOptions& o) {
  const double reach = o.method == "cubic" ? -2.0 : -1.0;
  if (const auto* s = tir::as<tir::FloatImmNode>(stretch))
    return tir::make_int(int64_t(std::floor(reach / s->value) + 1));
  return tir::cast(tir::kIndexType, floor64(f64(reach) / stretch) + f64(1));
}

// The stretch of the filter: the scale when antialiasing a downsample, else 1.
PrimExpr filter_stretch(const AxisResize& ax, const ResizeOptions& o) {
  return o.antialias ? tir::min(ax.scale, f64(1)) : f64(1);
}

void check_method(const ResizeOptions& o) {
  if (o.method != "nearest_neighbor" && o.method != "linear" && o.method != "cubic")
    throw_error("image.resize: unknown method \"", o.method, "\"");
}

// The taps of an axis whose filter has a static number of them.
Taps axis_taps(const PrimExpr& x, const AxisResize& ax, const ResizeOptions& o) {
  Taps taps;
  if (o.method == "nearest_neighbor") {
    taps.index.push_back(clamp_index(nearest_index(x, o), ax.in));
    taps.weight.push_back(f64(1));
    return taps;
  }
  const BlendOrigin origin = blend_origin(x);
  const PrimExpr stretch = filter_stretch(ax, o);
  const std::optional<int64_t> start = tir::as_const_int(first_tap(stretch, o));
  ANVIL_ICHECK(start, "image.resize: antialiasing by a scale known only at run time");
  PrimExpr total;
  for (int64_t i = *start; i < 2 - *start; ++i) {
    PrimExpr w = tap_weight(origin, tir::make_int(i), stretch, ax, o);
    taps.index.push_back(clamp_index(origin.base + i, ax.in));
    taps.weight.push_back(w);
    total = total ? total + w : w;
  }
  if (o.exclude_outside || o.antialias)
    for (PrimExpr& w : taps.weight) w = tir::select(tir::eq(total, f64(0)), w, w / total);
  return taps;
}

// The resized element at primal index p: the resized axes' taps blended (the last axis
// outermost, as the reference resizes the first axis first), read through `read`.
PrimExpr resized_element(const std::vector<PrimExpr>& p, const std::vector<AxisResize>& axes,
                         const ResizeOptions& o,
                         const std::function<PrimExpr(const std::vector<PrimExpr>&)>& read,
                         DataType out_dtype) {
  // A blend reads each axis' coordinate in every tap index and weight, so the coordinate is
  // bound once (the nearest element reads it in one index).
  const bool bind = o.method != "nearest_neighbor";
  std::vector<tir::Var> coordinates;
  std::vector<PrimExpr> coordinate_values;
  std::vector<Taps> taps;
  PrimExpr outside;
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisResize& ax = axes[i];
    PrimExpr x = original_coordinate(p[ax.position], ax, o.mode);
    if (bind) {
      coordinates.push_back(tir::VarNode::make("coord" + std::to_string(i), kF64));
      coordinate_values.push_back(x);
      x = coordinates.back();
    }
    if (o.mode == "tf_crop_and_resize") outside = nn::or_else(outside, outside_input(x, ax));
    taps.push_back(axis_taps(x, ax, o));
  }
  std::vector<PrimExpr> at = p;
  std::function<PrimExpr(int)> blend = [&](int axis) -> PrimExpr {
    if (axis < 0) return tir::cast(kF64, read(at));
    const Taps& t = taps[size_t(axis)];
    PrimExpr sum;
    for (size_t k = 0; k < t.index.size(); ++k) {
      at[axes[size_t(axis)].position] = t.index[k];
      PrimExpr term = t.weight[k] * blend(axis - 1);
      sum = sum ? sum + term : term;
    }
    return sum;
  };
  PrimExpr value = blend(int(axes.size()) - 1);
  if (outside) value = tir::select(outside, f64(o.extrapolation), value);
  value = tir::cast(out_dtype, value);
  for (size_t k = coordinates.size(); k-- > 0;)
    value = tir::let(coordinates[k], coordinate_values[k], value);
  return value;
}

// An axis resized to a size (the scale is out / in, unless coordinate_scales gives it) or by a
// scale (out = floor(in * scale)); the arithmetic is the reference's, in double.
AxisResize axis_resize(int64_t in, int64_t out, const std::vector<int64_t>& size,
                       const std::vector<double>& scales,
                       const std::vector<double>& coordinate_scales, size_t i) {
  double scale = 0, length = 0;
  if (size.empty() || !coordinate_scales.empty()) {
    scale = size.empty() ? (scales.size() == 1 ? scales[0] : scales[i]) : coordinate_scales[i];
    length = double(in) * scale;
  } else {
    scale = double(out) / double(in);
    length = double(out);
  }
  AxisResize ax;
  ax.in = tir::make_int(in);
  ax.out = tir::make_int(out);
  ax.scale = f64(scale);
  ax.length = f64(length);
  return ax;
}

ResizeOptions resize_options(const auto& a) {
  ResizeOptions o{a.method,
                  a.coordinate_transformation_mode,
                  a.rounding_method,
                  a.cubic_alpha,
                  a.cubic_exclude != 0,
                  a.antialias,
                  a.extrapolation_value};
  check_method(o);
  return o;
}

template <int N>
std::vector<te::Tensor> resize_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::ResizeAttrs<N>>();
  const te::Tensor& data = args.inputs[0];
  const DataType out_dtype = args.out_dtype();
  nn::LayoutMap map(a.layout, nn::spatial_order("NC", N));
  std::vector<int64_t> in = map.primal_geometry(data.shape(), args.op_name());
  std::vector<PrimExpr> out_shape = args.out_shape();
  std::vector<int64_t> out = map.primal_geometry(out_shape, args.op_name());
  std::vector<AxisResize> axes;
  for (int i = 0; i < N; ++i) {
    AxisResize ax = axis_resize(in[size_t(2 + i)], out[size_t(2 + i)], a.size, a.scales,
                                a.coordinate_scales, size_t(i));
    ax.position = size_t(2 + i);
    if (!a.roi.empty()) {
      ax.roi_start = f64(a.roi[size_t(i)]);
      ax.roi_end = f64(a.roi[size_t(N + i)]);
    }
    axes.push_back(ax);
  }
  const ResizeOptions options = resize_options(a);
  auto body = [=](const std::vector<tir::Var>& idx) {
    return resized_element(
        map.to_primal(nn::var_exprs(idx)), axes, options,
        [&](const std::vector<PrimExpr>& at) { return data.at(map.to_stored(at)); }, out_dtype);
  };
  return {te::compute(out_shape, body, "resize")};
}

// ---------------------------------------------------------------- dyn.image.resize

// The axes dyn.image.resize resizes, in the order listed (every axis when none is).
std::vector<size_t> listed_axes(const ir::DynResizeAttrs& a, size_t rank) {
  std::vector<size_t> listed;
  for (int64_t axis : a.axes) listed.push_back(size_t(transform::wrap_axis(axis, int64_t(rank))));
  if (a.axes.empty())
    for (size_t d = 0; d < rank; ++d) listed.push_back(d);
  return listed;
}

// The resized axes of a dyn.image.resize call, their scales read from the target and roi
// operands as the reference kernel reads them; `out` gives each axis' output length (the
// output's size variables in the kernel, null in the shape function, which computes it).
std::vector<AxisResize> dyn_axes(const ComputeArgs& args, const std::vector<PrimExpr>& out) {
  const auto& a = args.attrs_as<ir::DynResizeAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& roi = args.inputs[1];
  const te::Tensor& target = args.inputs[2];
  const std::vector<size_t> listed = listed_axes(a, data.ndim());
  const int64_t count = int64_t(listed.size());
  if (transform::vector_length(target) != count)
    throw_error(args.op_name(), ": ", transform::vector_length(target), " ", a.target,
                " given for ", count, " resized axes");
  const int64_t roi_length = transform::vector_length(roi);
  if (roi_length != 0 && roi_length != 2 * count)
    throw_error(args.op_name(), ": 'roi' has ", roi_length, " values, expected ", 2 * count,
                " (starts then ends of the resized axes)");
  auto value = [&](const te::Tensor& t, int64_t j) {
    return tir::cast(kF64, t.at({tir::make_int(j)}));
  };
  // keep_aspect_ratio_policy: one scale for every axis, the largest that fits (not_larger) or
  // the smallest that covers (not_smaller); the sizes round half up.
  const bool one_scale = a.target == "sizes" && a.keep_aspect_ratio_policy != "stretch";
  PrimExpr common;
  for (int64_t j = 0; one_scale && j < count; ++j) {
    PrimExpr s = value(target, j) / tir::cast(kF64, data.shape()[listed[size_t(j)]]);
    if (!common)
      common = s;
    else if (a.keep_aspect_ratio_policy == "not_smaller")
      common = tir::max(common, s);
    else
      common = tir::min(common, s);
  }
  std::vector<AxisResize> axes;
  for (int64_t j = 0; j < count; ++j) {
    AxisResize ax;
    ax.position = listed[size_t(j)];
    ax.in = data.shape()[ax.position];
    PrimExpr in = tir::cast(kF64, ax.in);
    if (a.target == "scales" || one_scale) {
      ax.scale = one_scale ? common : value(target, j);
      ax.length = in * ax.scale;
      ax.out = one_scale ? tir::cast(tir::kIndexType, floor64(ax.length + f64(0.5)))
                         : tir::cast(tir::kIndexType, floor64(ax.length));
    } else {
      ax.out = transform::as_index(target.at({tir::make_int(j)}));
      ax.length = tir::cast(kF64, ax.out);
      ax.scale = ax.length / in;
    }
    if (!out.empty()) ax.out = out[ax.position];
    if (roi_length != 0) {
      ax.roi_start = value(roi, j);
      ax.roi_end = value(roi, count + j);
    }
    axes.push_back(ax);
  }
  return axes;
}

bool runtime_taps(const ir::DynResizeAttrs& a) {
  return a.antialias && a.method != "nearest_neighbor";
}

// The output dims, then (antialiasing a linear or cubic filter) each resized axis' first tap,
// which fixes how many taps it reads. A length that is negative or not finite, an axis that
// is read from but empty, or an antialias scale that is not positive for a non-empty axis is
// rejected (-1).
te::Tensor dyn_resize_dims(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::DynResizeAttrs>();
  const ResizeOptions o = resize_options(a);
  const te::Tensor& data = args.inputs[0];
  std::vector<PrimExpr> dims = data.shape();
  std::vector<PrimExpr> extras;
  PrimExpr valid = tir::make_const(DataType::boolean(), 1);
  for (const AxisResize& ax : dyn_axes(args, {})) {
    // Lengths beyond 2^52 are not sizes anyone can allocate; the bound keeps the cast defined.
    valid = tir::logical_and(valid, tir::logical_and(ax.length >= f64(0), ax.length < f64(0x1p52)));
    valid = tir::logical_and(
        valid, tir::logical_or(tir::eq(ax.out, tir::make_int(0)), ax.in > tir::make_int(0)));
    dims[ax.position] = ax.out;
    if (!runtime_taps(a)) continue;
    valid = tir::logical_and(valid,
                             tir::logical_or(tir::eq(ax.out, tir::make_int(0)), ax.scale > f64(0)));
    extras.push_back(
        tir::select(ax.scale > f64(0), first_tap(filter_stretch(ax, o), o), tir::make_int(0)));
  }
  return transform::shape_function_result(dims, valid, args, extras);
}

size_t dyn_resize_extras(const ir::CallNode& call) {
  const auto& a = call.attrs_as<ir::DynResizeAttrs>();
  return runtime_taps(a) ? listed_axes(a, transform::data_rank(call)).size() : 0;
}

// An antialiased linear or cubic downsample by a scale known at run time: how many taps an
// axis reads is a value (the shape function's extra), so each axis' weights and indices are
// tensors over (output index, tap), normalized by their sum, and the blend is a reduction
// over one tap axis per resized axis.
te::Tensor antialiased_resize(const ComputeArgs& args, const std::vector<AxisResize>& axes,
                              const ResizeOptions& o) {
  const te::Tensor& data = args.inputs[0];
  std::vector<te::Tensor> weights, indices, totals;
  for (size_t j = 0; j < axes.size(); ++j) {
    const AxisResize& ax = axes[j];
    const PrimExpr start = args.extras[j];
    const PrimExpr stretch = filter_stretch(ax, o);
    const std::vector<PrimExpr> shape = {ax.out, tir::make_int(2) - start * 2};
    const std::string tag = "_" + std::to_string(j);
    weights.push_back(te::compute(
        shape,
        [&](const std::vector<tir::Var>& i) {
          BlendOrigin origin = blend_origin(original_coordinate(i[0], ax, o.mode));
          return tap_weight(origin, start + i[1], stretch, ax, o);
        },
        "resize_weight" + tag));
    indices.push_back(te::compute(
        shape,
        [&](const std::vector<tir::Var>& i) {
          BlendOrigin origin = blend_origin(original_coordinate(i[0], ax, o.mode));
          return clamp_index(origin.base + start + i[1], ax.in);
        },
        "resize_index" + tag));
    const te::Tensor& w = weights.back();
    totals.push_back(te::compute(
        {ax.out},
        [&](const std::vector<tir::Var>& i) {
          tir::IterVar k = te::reduce_axis(shape[1], "k");
          return tir::sum(w.at({i[0], k.var}), {k});
        },
        "resize_total" + tag));
  }
  const std::vector<PrimExpr> out_shape = args.out_shape();
  te::Tensor blended = te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> at = nn::var_exprs(idx);
        std::vector<tir::IterVar> taps;
        PrimExpr weight = f64(1);
        for (size_t j = 0; j < axes.size(); ++j) {
          const size_t d = axes[j].position;
          taps.push_back(
              te::reduce_axis(tir::make_int(2) - args.extras[j] * 2, "t" + std::to_string(j)));
          weight = weight * weights[j].at({idx[d], taps.back().var});
          at[d] = indices[j].at({idx[d], taps.back().var});
        }
        return tir::sum(weight * tir::cast(kF64, data.at(at)), taps);
      },
      "resize_blend");
  return te::compute(
      out_shape,
      [&](const std::vector<tir::Var>& idx) {
        PrimExpr value = blended.at(nn::var_exprs(idx));
        PrimExpr outside;
        for (size_t j = 0; j < axes.size(); ++j) {
          const PrimExpr total = totals[j].at({idx[axes[j].position]});
          value = tir::select(tir::eq(total, f64(0)), value, value / total);
          if (o.mode == "tf_crop_and_resize")
            outside = nn::or_else(
                outside, outside_input(original_coordinate(idx[axes[j].position], axes[j], o.mode),
                                       axes[j]));
        }
        if (outside) value = tir::select(outside, f64(o.extrapolation), value);
        return tir::cast(args.out_dtype(), value);
      },
      "resize");
}

std::vector<te::Tensor> dyn_resize(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::DynResizeAttrs>();
  const ResizeOptions options = resize_options(a);
  const te::Tensor& data = args.inputs[0];
  std::vector<AxisResize> axes = dyn_axes(args, args.out_shape());
  if (runtime_taps(a)) {
    if (args.extras.size() != axes.size())
      throw_error(args.op_name(),
                  ": the taps are counted at run time, which needs its shape "
                  "function");
    return {antialiased_resize(args, axes, options)};
  }
  const DataType out_dtype = args.out_dtype();
  auto body = [=](const std::vector<tir::Var>& idx) {
    return resized_element(
        nn::var_exprs(idx), axes, options,
        [&](const std::vector<PrimExpr>& at) { return data.at(at); }, out_dtype);
  };
  return {te::compute(args.out_shape(), body, "resize")};
}

// ---------------------------------------------------------------- grid_sample

// Mirrors x at the borders low and high, as often as needed, until it lies between them.
PrimExpr reflect(const PrimExpr& x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return f64(low);
  auto fold = [&](const PrimExpr& distance, double near_border, double far_border) {
    PrimExpr flips = floor64(distance / f64(range));
    PrimExpr rest = distance - flips * f64(range);
    PrimExpr even = tir::eq(tir::call_intrin(kF64, "fmod", {flips, f64(2)}), f64(0));
    PrimExpr toward = near_border < far_border ? f64(near_border) + rest : f64(near_border) - rest;
    PrimExpr back = near_border < far_border ? f64(far_border) - rest : f64(far_border) + rest;
    return tir::select(even, toward, back);
  };
  return tir::select(x < f64(low), fold(f64(low) - x, low, high),
                     tir::select(x > f64(high), fold(x - f64(high), high, low), x));
}

// The input position (float64) a normalized grid coordinate points at along an axis of
// `length` elements, with positions outside the input moved by the padding mode.
PrimExpr grid_position(const PrimExpr& normalized, int64_t length, const ir::GridSampleAttrs& a) {
  const auto size = double(length);
  PrimExpr x = a.align_corners ? (normalized + f64(1)) / f64(2) * f64(size - 1)
                               : ((normalized + f64(1)) * f64(size) - f64(1)) / f64(2);
  const double low = a.align_corners ? 0.0 : -0.5;
  const double high = a.align_corners ? size - 1 : size - 0.5;
  if (a.method == "nearest") x = tir::call_intrin(kF64, "round", {x});  // halves to even
  PrimExpr below = x < f64(low);
  PrimExpr above = x > f64(high);
  PrimExpr beyond = tir::logical_or(below, above);
  if (a.padding_mode == "border")
    return tir::select(beyond, tir::min(tir::max(x, f64(0)), f64(size - 1)), x);
  if (a.padding_mode == "reflection") return tir::select(beyond, reflect(x, low, high), x);
  return x;
}

// The mirror image inside [0, length) of an element index, as reflect() gives it for whole
// numbers: a period of 2 * (length - 1) about the end elements' centres with align_corners,
// of 2 * length about their outer edges without. Indices inside map to themselves.
PrimExpr mirror_index(const PrimExpr& i, int64_t length, bool align_corners) {
  if (align_corners && length == 1) return tir::make_int(0);
  const int64_t period = align_corners ? 2 * (length - 1) : 2 * length;
  PrimExpr r = i % period;
  return tir::select(r < length, r, (period - (align_corners ? 0 : 1)) - r);
}

// The taps read around position x (a float64 variable) along an axis of `length` elements;
// indices may lie outside the axis only with padding_mode zeros (they then read 0).
Taps grid_taps(const PrimExpr& x, int64_t length, const ir::GridSampleAttrs& a) {
  Taps taps;
  if (a.method == "nearest") {
    taps.index = {tir::cast(tir::kIndexType, x)};
    taps.weight = {f64(1)};
  } else {
    PrimExpr floored = floor64(x);
    PrimExpr base = tir::cast(tir::kIndexType, floored);
    PrimExpr t = x - floored;
    if (a.method == "bilinear") {
      taps.index = {base, base + 1};
      taps.weight = {f64(1) - t, t};
    } else {
      const double alpha = -0.75;
      auto near = [&](const PrimExpr& d) {
        return ((f64(alpha + 2) * d - f64(alpha + 3)) * d) * d + f64(1);
      };
      auto far = [&](const PrimExpr& d) {
        return ((f64(alpha) * d - f64(5 * alpha)) * d + f64(8 * alpha)) * d - f64(4 * alpha);
      };
      taps.index = {base - 1, base, base + 1, base + 2};
      taps.weight = {far(t + f64(1)), near(t), near(f64(1) - t), far(f64(2) - t)};
    }
  }
  // Neighbours outside the input take the nearest edge or their mirror image.
  for (PrimExpr& i : taps.index) {
    if (a.padding_mode == "border") i = clamp_index(i, tir::make_int(length));
    if (a.padding_mode == "reflection") i = mirror_index(i, length, a.align_corners);
  }
  return taps;
}

// image.grid_sample: data (N, C, spatial...) sampled at grid (N, axes, out spatial...), whose
// first field is x (the last axis).
std::vector<te::Tensor> grid_sample_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::GridSampleAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& grid = args.inputs[1];
  const DataType out_dtype = args.out_dtype();
  const std::vector<int64_t> in = nn::static_shape(data);
  const int axes = int(in.size()) - 2;
  auto body = [=](const std::vector<tir::Var>& idx) {
    // A blend reads each axis' position in every tap index and weight, so the position is
    // bound once (the nearest element reads it once and uses it directly).
    const bool bind = a.method != "nearest";
    std::vector<Taps> taps;
    std::vector<tir::Var> positions;
    std::vector<PrimExpr> position_values;
    for (int k = 0; k < axes; ++k) {
      std::vector<PrimExpr> at = nn::var_exprs(idx);
      at[1] = tir::make_int(axes - 1 - k);
      PrimExpr position = grid_position(tir::cast(kF64, grid.at(at)), in[size_t(2 + k)], a);
      if (bind) {
        positions.push_back(tir::VarNode::make("pos" + std::to_string(k), kF64));
        position_values.push_back(position);
        position = positions.back();
      }
      taps.push_back(grid_taps(position, in[size_t(2 + k)], a));
    }
    std::vector<PrimExpr> at = {idx[0], idx[1]};
    at.resize(size_t(2 + axes));
    PrimExpr inside;
    std::function<PrimExpr(int)> blend = [&](int axis) -> PrimExpr {
      if (axis < 0) {
        PrimExpr value = tir::cast(kF64, data.at(at));
        return inside ? nn::if_then_else(inside, value, f64(0)) : value;
      }
      const Taps& t = taps[size_t(axis)];
      PrimExpr sum;
      PrimExpr outer_inside = inside;
      for (size_t k = 0; k < t.index.size(); ++k) {
        at[size_t(2 + axis)] = t.index[k];
        inside = outer_inside;
        if (a.padding_mode == "zeros")
          inside = nn::and_also(
              inside, tir::logical_and(t.index[k] >= 0, t.index[k] < in[size_t(2 + axis)]));
        PrimExpr term = t.weight[k] * blend(axis - 1);
        sum = sum ? sum + term : term;
      }
      inside = outer_inside;
      return sum;
    };
    PrimExpr value = tir::cast(out_dtype, blend(axes - 1));
    for (size_t k = positions.size(); k-- > 0;)
      value = tir::let(positions[k], position_values[k], value);
    return value;
  };
  return {te::compute(args.out_shape(), body, "grid_sample")};
}

}  // namespace

void register_resize_computes() {
  register_compute("image.grid_sample", grid_sample_compute);
  register_compute("image.resize1d", resize_compute<1>);
  register_compute("image.resize2d", resize_compute<2>);
  register_compute("image.resize3d", resize_compute<3>);
  register_compute("dyn.image.resize", dyn_resize);
  register_shape_compute("dyn.image.resize", ShapeCompute{dyn_resize_dims, dyn_resize_extras});
}

}  // namespace anvil::topi
