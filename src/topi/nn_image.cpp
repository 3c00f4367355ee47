// Computes of image.resize1d/2d/3d (ONNX Resize as the reference kernel defines it) and
// image.grid_sample (PyTorch's grid_sampler). Each output coordinate maps back to the input
// (by the coordinate transformation mode, or through the grid), then takes its nearest
// element or a linear or cubic blend of its neighbours, separably per axis. Coordinates and
// weights are computed in float64, as the reference does, so that rounding to the nearest
// element picks the same one; the blend is cast to the output dtype at the end. Antialiasing
// a downsample widens the linear or cubic filter by 1 / scale over correspondingly more taps.
#include <algorithm>
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

const DataType kF64 = DataType::float64();

PrimExpr f64(double value) { return tir::make_const(kF64, value); }
PrimExpr floor64(PrimExpr x) { return tir::call_intrin(kF64, "floor", {std::move(x)}); }

// How one axis is resized (the reference's AxisResize).
struct AxisResize {
  int64_t in = 1, out = 1;
  double scale = 1;   // what the coordinate transform divides by
  double length = 1;  // the resized length: out for sizes, in * scale for scales
  double roi_start = 0, roi_end = 1;
};

struct ResizeOptions {
  std::string method, mode, rounding;
  double cubic_alpha;
  bool exclude_outside;
  bool antialias;
};

// The input coordinate (float64) of output index o.
PrimExpr original_coordinate(const PrimExpr& o, const AxisResize& ax, const std::string& mode) {
  PrimExpr x = tir::cast(kF64, o);
  const auto in = double(ax.in);
  if (mode == "half_pixel") return (x + f64(0.5)) / f64(ax.scale) - f64(0.5);
  if (mode == "half_pixel_symmetric") {
    // Keeps the input's centre on the output's when in * scale was rounded to the output size.
    const double shift = in / 2 * (1 - double(ax.out) / ax.length);
    return f64(shift) + (x + f64(0.5)) / f64(ax.scale) - f64(0.5);
  }
  if (mode == "pytorch_half_pixel")
    return ax.length > 1 ? (x + f64(0.5)) / f64(ax.scale) - f64(0.5) : f64(0);
  if (mode == "align_corners") return ax.length > 1 ? x * f64(in - 1) / f64(ax.length - 1) : f64(0);
  if (mode == "asymmetric") return x / f64(ax.scale);
  if (mode == "tf_half_pixel_for_nn") return (x + f64(0.5)) / f64(ax.scale);
  if (mode != "tf_crop_and_resize")
    throw_error("image.resize: unknown coordinate_transformation_mode \"", mode, "\"");
  double span = (ax.roi_end - ax.roi_start) * (in - 1);
  if (ax.length > 1) return f64(ax.roi_start * (in - 1)) + x * f64(span) / f64(ax.length - 1);
  return f64(0.5 * (ax.roi_start + ax.roi_end) * (in - 1));
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

PrimExpr clamp_index(const PrimExpr& i, int64_t in) { return tir::min(tir::max(i, 0), in - 1); }

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

Taps axis_taps(const PrimExpr& x, const AxisResize& ax, const ResizeOptions& o) {
  Taps taps;
  if (o.method == "nearest_neighbor") {
    taps.index.push_back(clamp_index(nearest_index(x, o), ax.in));
    taps.weight.push_back(f64(1));
    return taps;
  }
  if (o.method != "linear" && o.method != "cubic")
    throw_error("image.resize: unknown method \"", o.method, "\"");
  // Neighbours count from `base`, with 0 < ratio <= 1: at a whole coordinate the element
  // itself is the right-hand neighbour (the reference's convention).
  PrimExpr floored = floor64(x);
  PrimExpr whole = tir::eq(x - floored, f64(0));
  PrimExpr base = tir::cast(tir::kIndexType, tir::select(whole, floored - f64(1), floored));
  PrimExpr ratio = tir::select(whole, f64(1), x - floored);
  const bool cubic = o.method == "cubic";
  // Antialiasing a downsample widens the filter by 1 / scale, so it reaches that many more
  // input steps each way (1 for linear, 2 for cubic, when not widened).
  const double stretch = o.antialias ? std::min(ax.scale, 1.0) : 1.0;
  const auto start = int64_t(std::floor((cubic ? -2.0 : -1.0) / stretch) + 1);
  const int64_t end = 2 - start;
  const bool normalize = o.exclude_outside || o.antialias;
  PrimExpr total;
  for (int64_t i = start; i < end; ++i) {
    PrimExpr d = tir::call_intrin(kF64, "fabs", {f64(double(i)) - ratio});
    if (stretch != 1.0) d = f64(stretch) * d;
    PrimExpr w = cubic ? cubic_weight(d, o.cubic_alpha) : tir::max(f64(0), f64(1) - d);
    PrimExpr index = base + i;
    if (o.exclude_outside) w = tir::select(tir::logical_and(index >= 0, index < ax.in), w, f64(0));
    taps.index.push_back(clamp_index(index, ax.in));
    taps.weight.push_back(w);
    total = total ? total + w : w;
  }
  if (normalize)
    for (PrimExpr& w : taps.weight) w = tir::select(tir::eq(total, f64(0)), w, w / total);
  return taps;
}

// An axis resized to a size (the scale is out / in, unless coordinate_scales gives it) or by a
// scale (out = floor(in * scale)).
AxisResize axis_resize(int64_t in, int64_t out, const std::vector<int64_t>& size,
                       const std::vector<double>& scales,
                       const std::vector<double>& coordinate_scales, size_t i) {
  AxisResize ax;
  ax.in = in;
  ax.out = out;
  if (size.empty() || !coordinate_scales.empty()) {
    ax.scale = size.empty() ? (scales.size() == 1 ? scales[0] : scales[i]) : coordinate_scales[i];
    ax.length = double(in) * ax.scale;
  } else {
    ax.scale = double(out) / double(in);
    ax.length = double(out);
  }
  return ax;
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
    if (!a.roi.empty()) {
      ax.roi_start = a.roi[size_t(i)];
      ax.roi_end = a.roi[size_t(N + i)];
    }
    axes.push_back(ax);
  }
  const ResizeOptions options{a.method,
                              a.coordinate_transformation_mode,
                              a.rounding_method,
                              a.cubic_alpha,
                              a.cubic_exclude != 0,
                              a.antialias};
  const double extrapolation = a.extrapolation_value;
  const bool crop = options.mode == "tf_crop_and_resize";

  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> p = map.to_primal(nn::var_exprs(idx));
    // A blend reads each axis' coordinate in every tap index and weight, so the coordinate
    // is bound once (the nearest element reads it in one index).
    const bool bind = options.method != "nearest_neighbor";
    std::vector<tir::Var> coordinates;
    std::vector<PrimExpr> coordinate_values;
    std::vector<Taps> taps;
    PrimExpr outside;
    for (int i = 0; i < N; ++i) {
      const AxisResize& ax = axes[size_t(i)];
      PrimExpr x = original_coordinate(p[size_t(2 + i)], ax, options.mode);
      if (bind) {
        coordinates.push_back(tir::VarNode::make("coord" + std::to_string(i), kF64));
        coordinate_values.push_back(x);
        x = coordinates.back();
      }
      if (crop) {
        PrimExpr before_start = x < f64(0);
        PrimExpr past_end = x > f64(double(ax.in - 1));
        PrimExpr beyond = tir::logical_or(before_start, past_end);
        outside = outside ? tir::logical_or(outside, beyond) : beyond;
      }
      taps.push_back(axis_taps(x, ax, options));
    }
    // The blend, the last axis outermost as the reference resizes the first axis first.
    std::vector<PrimExpr> at = p;
    std::function<PrimExpr(int)> blend = [&](int axis) -> PrimExpr {
      if (axis < 0) return tir::cast(kF64, data.at(map.to_stored(at)));
      const Taps& t = taps[size_t(axis)];
      PrimExpr sum;
      for (size_t k = 0; k < t.index.size(); ++k) {
        at[size_t(2 + axis)] = t.index[k];
        PrimExpr term = t.weight[k] * blend(axis - 1);
        sum = sum ? sum + term : term;
      }
      return sum;
    };
    PrimExpr value = blend(N - 1);
    if (outside) value = tir::select(outside, f64(extrapolation), value);
    value = tir::cast(out_dtype, value);
    for (size_t k = coordinates.size(); k-- > 0;)
      value = tir::let(coordinates[k], coordinate_values[k], value);
    return value;
  };
  return {te::compute(out_shape, body, "resize")};
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
    if (a.padding_mode == "border") i = clamp_index(i, length);
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

void register_nn_image_computes() {
  register_compute("image.grid_sample", grid_sample_compute);
  register_compute("image.resize1d", resize_compute<1>);
  register_compute("image.resize2d", resize_compute<2>);
  register_compute("image.resize3d", resize_compute<3>);
}

}  // namespace anvil::topi
