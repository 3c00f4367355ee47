// Reference kernel of image.grid_sample, with the semantics of PyTorch's
// grid_sampler (which ONNX GridSample adopts): each output point maps its grid
// coordinates to input positions, handles positions outside the input by the
// padding mode, and interpolates separably over the 2 or 3 spatial axes.
#include <algorithm>
#include <array>
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// Mirrors x at the borders low and high, as often as needed, until it lies between them.
double reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x < low) {
    double distance = low - x;
    double flips = std::floor(distance / range), rest = distance - flips * range;
    return std::fmod(flips, 2.0) == 0 ? low + rest : high - rest;
  }
  if (x > high) {
    double distance = x - high;
    double flips = std::floor(distance / range), rest = distance - flips * range;
    return std::fmod(flips, 2.0) == 0 ? high - rest : low + rest;
  }
  return x;
}

// Keys' cubic convolution weights of the 4 neighbours at distance t from the second.
std::array<double, 4> cubic_weights(double t) {
  const double a = -0.75;
  auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// The input elements (index -1: a zero) and weights one grid coordinate reads along an axis.
struct AxisTaps {
  std::vector<int64_t> index;
  std::vector<double> weight;
};

AxisTaps axis_taps(double normalized, int64_t length, const GridSampleAttrs& a) {
  const auto size = double(length);
  // -1 and 1 are the centres of the end elements, or their outer edges.
  double x =
      a.align_corners ? (normalized + 1) / 2 * (size - 1) : ((normalized + 1) * size - 1) / 2;
  const double low = a.align_corners ? 0.0 : -0.5;
  const double high = a.align_corners ? size - 1 : size - 0.5;
  if (a.method == "nearest") x = std::nearbyint(x);  // halves to even, as PyTorch
  if (x < low || x > high) {
    if (a.padding_mode == "border") x = std::clamp(x, 0.0, size - 1);
    if (a.padding_mode == "reflection") x = reflect(x, low, high);
  }
  AxisTaps taps;
  if (a.method == "nearest") {
    taps.index = {int64_t(x)};
    taps.weight = {1.0};
  } else {
    const double base = std::floor(x), t = x - base;
    if (a.method == "bilinear") {
      taps.index = {int64_t(base), int64_t(base) + 1};
      taps.weight = {1 - t, t};
    } else {
      taps.index = {int64_t(base) - 1, int64_t(base), int64_t(base) + 1, int64_t(base) + 2};
      std::array<double, 4> w = cubic_weights(t);
      taps.weight.assign(w.begin(), w.end());
    }
  }
  // Neighbours outside the input read zeros, the nearest edge, or their mirror image.
  for (int64_t& i : taps.index) {
    if (i >= 0 && i < length) continue;
    if (a.padding_mode == "zeros") {
      i = -1;
    } else if (a.padding_mode == "border") {
      i = std::clamp<int64_t>(i, 0, length - 1);
    } else {
      i = std::clamp<int64_t>(int64_t(reflect(double(i), low, high)), 0, length - 1);
    }
  }
  return taps;
}

std::vector<Tensor> grid_sample_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<GridSampleAttrs>();
  const Tensor& data = args.inputs[0];
  const Tensor& grid_tensor = args.inputs[1];
  std::vector<double> x = to_doubles(data), grid = to_doubles(grid_tensor);
  std::span<const int64_t> ds = data.shape(), gs = grid_tensor.shape();
  const size_t axes = ds.size() - 2;
  std::vector<int64_t> in(ds.begin() + 2, ds.end()), out(gs.begin() + 2, gs.end());
  const int64_t in_plane = shape_numel(in), out_plane = shape_numel(out);
  const int64_t channels = ds[1];
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<double> y(size_t(ds[0] * channels * out_plane), 0.0);
  for (int64_t n = 0; n < ds[0]; ++n) {
    for (int64_t p = 0; p < out_plane; ++p) {
      // The grid lists x (the last axis) first.
      std::vector<AxisTaps> taps(axes);
      for (size_t k = 0; k < axes; ++k) {
        double g = grid[size_t((n * int64_t(axes) + int64_t(axes - 1 - k)) * out_plane + p)];
        taps[k] = axis_taps(g, in[k], a);
      }
      int64_t combinations = 1;
      for (const AxisTaps& t : taps) combinations *= int64_t(t.index.size());
      for (int64_t c = 0; c < channels; ++c) {
        const double* image = x.data() + (n * channels + c) * in_plane;
        double sum = 0;
        for (int64_t combo = 0; combo < combinations; ++combo) {
          double weight = 1;
          int64_t offset = 0;
          for (size_t k = axes, rest = size_t(combo); k-- > 0;) {
            const AxisTaps& t = taps[k];
            size_t choice = rest % t.index.size();
            rest /= t.index.size();
            weight *= t.weight[choice];
            offset =
                t.index[choice] < 0 || offset < 0 ? -1 : offset + t.index[choice] * in_strides[k];
          }
          if (offset >= 0) sum += weight * image[offset];
        }
        y[size_t((n * channels + c) * out_plane + p)] = sum;
      }
    }
  }
  std::vector<int64_t> shape = {ds[0], channels};
  shape.insert(shape.end(), out.begin(), out.end());
  return {from_doubles(y, shape, args.out_dtype())};
}

}  // namespace

void register_grid_sample_kernels() { register_kernel("image.grid_sample", grid_sample_kernel); }

}  // namespace anvil::reference
