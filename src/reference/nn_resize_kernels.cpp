// Reference kernels of image.resize1d/2d/3d and dyn.image.resize, following
// ONNX Resize: each resized axis maps output coordinates back to the input by
// the coordinate transformation mode, and interpolates with nearest, linear
// or cubic weights (widened when antialiasing a downsample). The filters are
// separable, so the axes are resized one after another in double.
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// How one axis is resized.
struct AxisResize {
  int64_t in = 1, out = 1;
  double scale = 1;   // what the coordinate transform divides by
  double length = 1;  // the resized length: out for sizes, in * scale for scales
  double roi_start = 0, roi_end = 1;
};

struct ResizeOptions {
  std::string method, mode, rounding;
  double cubic_alpha = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  bool antialias = false;
};

// The input indices (clamped to the axis) and weights one output position reads.
struct Taps {
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool outside = false;  // tf_crop_and_resize outside the input: the extrapolation value
};

double original_coordinate(int64_t out_index, const AxisResize& ax, const std::string& mode) {
  auto x = double(out_index);
  auto in = double(ax.in);
  if (mode == "half_pixel") return (x + 0.5) / ax.scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    // Keeps the centre of the input on the centre of the output when the
    // output length was rounded down from in * scale.
    double adjustment = double(ax.out) / ax.length;
    return in / 2 * (1 - adjustment) + (x + 0.5) / ax.scale - 0.5;
  }
  if (mode == "pytorch_half_pixel") return ax.length > 1 ? (x + 0.5) / ax.scale - 0.5 : 0.0;
  if (mode == "align_corners") return ax.length > 1 ? x * (in - 1) / (ax.length - 1) : 0.0;
  if (mode == "asymmetric") return x / ax.scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / ax.scale;
  ANVIL_ICHECK(mode == "tf_crop_and_resize", "unknown coordinate transformation ", mode);
  double span = (ax.roi_end - ax.roi_start) * (in - 1);
  if (ax.length > 1) return ax.roi_start * (in - 1) + x * span / (ax.length - 1);
  return 0.5 * (ax.roi_start + ax.roi_end) * (in - 1);
}

// Keys' cubic convolution kernel with parameter a.
double cubic_weight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// The nearest input index by the rounding method; "" is TVM's default: round
// for align_corners, floor otherwise.
int64_t nearest_index(double x, const std::string& rounding, const std::string& mode) {
  double lower = std::floor(x);
  if (x == lower) return int64_t(x);
  double frac = x - lower;
  std::string method = rounding;
  if (method.empty()) method = mode == "align_corners" ? "round" : "floor";
  if (method == "round_prefer_floor") return int64_t(frac <= 0.5 ? lower : lower + 1);
  if (method == "round_prefer_ceil") return int64_t(frac < 0.5 ? lower : lower + 1);
  if (method == "floor") return int64_t(lower);
  if (method == "ceil") return int64_t(lower + 1);
  return int64_t(std::round(x));
}

Taps axis_taps(int64_t out_index, const AxisResize& ax, const ResizeOptions& o) {
  Taps taps;
  double x = original_coordinate(out_index, ax, o.mode);
  if (o.mode == "tf_crop_and_resize" && (x < 0 || x > double(ax.in - 1))) {
    taps.outside = true;
    return taps;
  }
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, ax.in - 1); };
  if (o.method == "nearest_neighbor") {
    taps.index.push_back(clamp(nearest_index(x, o.rounding, o.mode)));
    taps.weight.push_back(1.0);
    return taps;
  }
  // Neighbours are counted from `base`, with 0 < ratio <= 1: at a whole
  // coordinate the input element itself is the right-hand neighbour (the ONNX
  // reference's convention, which decides the antialias window's ends).
  double base = std::floor(x), ratio = x - base;
  if (ratio == 0) {
    base -= 1;
    ratio = 1;
  }
  // Antialiasing a downsample stretches the filter by 1 / scale.
  double stretch = o.antialias ? std::min(ax.scale, 1.0) : 1.0;
  bool cubic = o.method == "cubic";
  // The filter reaches 1 (linear) or 2 (cubic) input steps each way, times 1 / stretch.
  auto start = int64_t(std::floor((cubic ? -2.0 : -1.0) / stretch) + 1);
  int64_t end = 2 - start;
  double total = 0;
  for (int64_t i = start; i < end; ++i) {
    double d = stretch * (double(i) - ratio);
    double w = cubic ? cubic_weight(d, o.cubic_alpha) : std::max(0.0, 1 - std::fabs(d));
    int64_t index = int64_t(base) + i;
    if (o.exclude_outside && (index < 0 || index >= ax.in)) w = 0;
    taps.index.push_back(clamp(index));
    taps.weight.push_back(w);
    total += w;
  }
  if ((o.antialias || o.exclude_outside) && total != 0)
    for (double& w : taps.weight) w /= total;
  return taps;
}

// Resizes values of `shape` along one axis; marks in `outside` the output
// coordinates of that axis that take the extrapolation value.
std::vector<double> resize_axis(const std::vector<double>& values, std::vector<int64_t>& shape,
                                size_t axis, const AxisResize& ax, const ResizeOptions& o,
                                std::vector<bool>& outside) {
  int64_t outer = shape_numel(std::span(shape).first(axis));
  int64_t inner = shape_numel(std::span(shape).subspan(axis + 1));
  std::vector<double> result(size_t(outer * ax.out * inner), 0.0);
  outside.assign(size_t(ax.out), false);
  for (int64_t x = 0; x < ax.out; ++x) {
    Taps taps = axis_taps(x, ax, o);
    outside[size_t(x)] = taps.outside;
    for (int64_t b = 0; b < outer; ++b) {
      double* out = result.data() + (b * ax.out + x) * inner;
      for (size_t t = 0; t < taps.index.size(); ++t) {
        const double* in = values.data() + (b * ax.in + taps.index[t]) * inner;
        for (int64_t i = 0; i < inner; ++i) out[i] += taps.weight[t] * in[i];
      }
    }
  }
  shape[axis] = ax.out;
  return result;
}

// Resizes the given axes of values (row-major, of `shape`) one after another.
std::vector<double> resize_axes(std::vector<double> values, std::vector<int64_t> shape,
                                const std::vector<std::pair<size_t, AxisResize>>& axes,
                                const ResizeOptions& o) {
  std::vector<std::vector<bool>> outside(shape.size());
  for (const auto& [axis, ax] : axes)
    values = resize_axis(values, shape, axis, ax, o, outside[axis]);
  if (o.mode != "tf_crop_and_resize") return values;
  // Outside the crop box on any axis, the output is the extrapolation value.
  for (size_t flat = 0; flat < values.size(); ++flat) {
    std::vector<int64_t> coord = unravel(int64_t(flat), shape);
    for (size_t k = 0; k < coord.size(); ++k)
      if (!outside[k].empty() && outside[k][size_t(coord[k])]) values[flat] = o.extrapolation_value;
  }
  return values;
}

// An axis resized by a scale: the output is floor(in * scale).
AxisResize by_scale(int64_t in, double scale) {
  AxisResize ax;
  ax.in = in;
  ax.scale = scale;
  ax.length = double(in) * scale;
  ax.out = int64_t(std::floor(ax.length));
  return ax;
}

// An axis resized to a size: the scale is out / in.
AxisResize to_size(int64_t in, int64_t out) {
  AxisResize ax;
  ax.in = in;
  ax.out = out;
  ax.scale = double(out) / double(in);
  ax.length = double(out);
  return ax;
}

template <int N>
std::vector<Tensor> resize_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ResizeAttrs<N>>();
  const std::string order = nn::spatial_order("NC", N);
  auto x = nn::read_primal<double>(args.inputs[0], a.layout, order);
  ResizeOptions o{a.method,
                  a.coordinate_transformation_mode,
                  a.rounding_method,
                  a.cubic_alpha,
                  a.cubic_exclude != 0,
                  a.extrapolation_value,
                  a.antialias};
  std::vector<std::pair<size_t, AxisResize>> axes;
  for (int i = 0; i < N; ++i) {
    int64_t in = x.shape[size_t(2 + i)];
    AxisResize ax = a.size.empty() ? by_scale(in, a.scales.size() == 1 ? a.scales[0] : a.scales[i])
                                   : to_size(in, a.size.size() == 1 ? a.size[0] : a.size[i]);
    if (!a.coordinate_scales.empty()) {
      // The output keeps its size; coordinates follow the scale it was rounded from.
      int64_t out = ax.out;
      ax = by_scale(in, a.coordinate_scales[size_t(i)]);
      ax.out = out;
    }
    if (!a.roi.empty()) {
      ax.roi_start = a.roi[size_t(i)];
      ax.roi_end = a.roi[size_t(N + i)];
    }
    axes.emplace_back(size_t(2 + i), ax);
  }
  std::vector<int64_t> shape = x.shape;
  for (const auto& [axis, ax] : axes) shape[axis] = ax.out;
  std::vector<double> y = resize_axes(std::move(x.values), x.shape, axes, o);
  return {nn::write_primal(y, shape, a.layout, order, args.out_dtype())};
}

std::vector<Tensor> dyn_resize_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<DynResizeAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  auto rank = int64_t(shape.size());
  std::vector<size_t> listed;
  for (int64_t axis : a.axes) listed.push_back(size_t(wrap_axis(axis, rank)));
  if (a.axes.empty())
    for (int64_t k = 0; k < rank; ++k) listed.push_back(size_t(k));
  std::vector<double> target = to_doubles(args.inputs[2]), roi = to_doubles(args.inputs[1]);
  if (target.size() != listed.size())
    throw_error("dyn.image.resize: ", target.size(), " ", a.target, " given for ", listed.size(),
                " resized axes");
  if (!roi.empty() && roi.size() != 2 * listed.size())
    throw_error("dyn.image.resize: 'roi' has ", roi.size(), " values, expected ", 2 * listed.size(),
                " (starts then ends of the resized axes)");
  std::vector<AxisResize> resized(listed.size());
  if (a.target == "scales") {
    for (size_t i = 0; i < listed.size(); ++i) resized[i] = by_scale(shape[listed[i]], target[i]);
  } else if (a.keep_aspect_ratio_policy == "stretch") {
    for (size_t i = 0; i < listed.size(); ++i)
      resized[i] = to_size(shape[listed[i]], int64_t(target[i]));
  } else {
    // One scale for every listed axis, the largest that fits (not_larger) or
    // the smallest that covers (not_smaller); sizes round half up.
    bool larger = a.keep_aspect_ratio_policy == "not_smaller";
    double scale = larger ? 0.0 : INFINITY;
    for (size_t i = 0; i < listed.size(); ++i) {
      double s = target[i] / double(shape[listed[i]]);
      scale = larger ? std::max(scale, s) : std::min(scale, s);
    }
    for (size_t i = 0; i < listed.size(); ++i) {
      resized[i] = by_scale(shape[listed[i]], scale);
      resized[i].out = int64_t(resized[i].length + 0.5);
    }
  }
  std::vector<std::pair<size_t, AxisResize>> axes;
  for (size_t i = 0; i < listed.size(); ++i) {
    if (!roi.empty()) {
      resized[i].roi_start = roi[i];
      resized[i].roi_end = roi[listed.size() + i];
    }
    axes.emplace_back(listed[i], resized[i]);
  }
  ResizeOptions o{a.method,
                  a.coordinate_transformation_mode,
                  a.rounding_method,
                  a.cubic_alpha,
                  a.cubic_exclude != 0,
                  a.extrapolation_value,
                  a.antialias};
  std::vector<int64_t> out_shape = shape;
  for (const auto& [axis, ax] : axes) out_shape[axis] = ax.out;
  std::vector<double> y = resize_axes(to_doubles(data), shape, axes, o);
  return {from_doubles(y, out_shape, args.out_dtype())};
}

}  // namespace

void register_resize_kernels() {
  register_kernel("image.resize1d", resize_kernel<1>);
  register_kernel("image.resize2d", resize_kernel<2>);
  register_kernel("image.resize3d", resize_kernel<3>);
  register_kernel("dyn.image.resize", dyn_resize_kernel);
}

}  // namespace anvil::reference
