// Reference kernels of pooling: max (also with argmax indices), average and Lp
// pooling over 1 to 3 spatial axes, max unpooling, global pooling and adaptive
// pooling. Data is read into the canonical (N, C, spatial...) order, so every
// layout takes one path; 1-D and 2-D run as 3-D with unit leading axes.
#include <array>
#include <cmath>
#include <limits>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;
using Axes3 = std::array<int64_t, 3>;

int64_t volume(const Axes3& a) { return a[0] * a[1] * a[2]; }

// The windows of one pooling op over planes of (N * C) images, padded to 3-D.
struct PoolGeometry {
  int64_t planes = 1;
  Axes3 in{1, 1, 1}, window{1, 1, 1}, out{1, 1, 1};
  Axes3 stride{1, 1, 1}, dilation{1, 1, 1}, pad_before{0, 0, 0}, pad_after{0, 0, 0};

  // The taps of output position o along slot s inside the padded input (the input and its
  // explicit padding; a ceil_mode overhang past that is not counted).
  int64_t taps_in_padding(int s, int64_t o) const {
    int64_t room = in[s] + pad_before[s] + pad_after[s] - o * stride[s];
    return std::clamp((room + dilation[s] - 1) / dilation[s], int64_t(0), window[s]);
  }
};

// The output size of one axis, by the rule of the type relation: with
// ceil_mode the count rounds up, but no window may start in the after-padding.
int64_t pooled_size(int64_t in, int64_t window, int64_t stride, int64_t dilation,
                    int64_t pad_before, int64_t pad_after, bool ceil_mode) {
  int64_t dilated = (window - 1) * dilation + 1;
  int64_t span = in + pad_before + pad_after - dilated;
  if (!ceil_mode) return span / stride + 1;
  int64_t last_start = (span + stride - 1) / stride;
  if (stride + pad_after <= dilated) return last_start + 1;
  return std::min(last_start, (in + pad_before - 1) / stride) + 1;
}

template <int N, typename AttrsT>
PoolGeometry pool_geometry(std::span<const int64_t> primal, const AttrsT& a) {
  PoolGeometry g;
  g.planes = primal[0] * primal[1];
  std::vector<int64_t> window = nn::spread(a.pool_size, N, 1);
  std::vector<int64_t> stride = nn::spread(a.strides, N, 1);
  std::vector<int64_t> dilation = nn::spread(a.dilation, N, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  for (int i = 0; i < N; ++i) {
    int slot = 3 - N + i;
    g.in[slot] = primal[2 + i];
    g.window[slot] = window[i];
    g.stride[slot] = stride[i];
    g.dilation[slot] = dilation[i];
    g.pad_before[slot] = pad[i];
    g.pad_after[slot] = pad[N + i];
    g.out[slot] =
        pooled_size(g.in[slot], window[i], stride[i], dilation[i], pad[i], pad[N + i], a.ceil_mode);
  }
  return g;
}

template <int N>
std::vector<int64_t> pooled_shape(std::span<const int64_t> primal, const PoolGeometry& g) {
  std::vector<int64_t> shape = {primal[0], primal[1]};
  for (int i = 0; i < N; ++i) shape.push_back(g.out[3 - N + i]);
  return shape;
}

// Calls visit(output index in the plane, in-plane indices of the window's
// elements that lie inside the input) for every output position of a plane.
template <typename Visit>
void for_each_window(const PoolGeometry& g, Visit&& visit) {
  std::vector<int64_t> taps;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        taps.clear();
        for (int64_t kd = 0; kd < g.window[0]; ++kd) {
          int64_t id = od * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t kh = 0; kh < g.window[1]; ++kh) {
            int64_t ih = oh * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            for (int64_t kw = 0; kw < g.window[2]; ++kw) {
              int64_t iw = ow * g.stride[2] - g.pad_before[2] + kw * g.dilation[2];
              if (iw < 0 || iw >= g.in[2]) continue;
              taps.push_back((id * g.in[1] + ih) * g.in[2] + iw);
            }
          }
        }
        visit((od * g.out[1] + oh) * g.out[2] + ow, taps);
      }
    }
  }
}

// Max pooling on values of T; `indices`, when given, receives the flat index
// into the whole input of each maximum (the first one on ties). A window with
// no element inside the input gives 0.
template <typename T>
std::vector<T> max_pool_values(const PoolGeometry& g, const std::vector<T>& x,
                               std::vector<int64_t>* indices) {
  const int64_t in_plane = volume(g.in), out_plane = volume(g.out);
  std::vector<T> y(size_t(g.planes * out_plane), T(0));
  if (indices) indices->assign(y.size(), -1);
  for (int64_t p = 0; p < g.planes; ++p) {
    for_each_window(g, [&](int64_t o, const std::vector<int64_t>& taps) {
      if (taps.empty()) return;
      int64_t best = taps[0];
      for (int64_t t : taps)
        if (x[size_t(p * in_plane + t)] > x[size_t(p * in_plane + best)]) best = t;
      y[size_t(p * out_plane + o)] = x[size_t(p * in_plane + best)];
      if (indices) (*indices)[size_t(p * out_plane + o)] = p * in_plane + best;
    });
  }
  return y;
}

template <int N, typename T>
std::vector<Tensor> max_pool_with(const KernelArgs& args, bool with_indices) {
  const auto& a = args.attrs_as<MaxPoolAttrs<N>>();
  const std::string order = nn::spatial_order("NC", N);
  auto x = nn::read_primal<T>(args.inputs[0], a.layout, order);
  PoolGeometry g = pool_geometry<N>(x.shape, a);
  std::vector<int64_t> indices;
  std::vector<T> y = max_pool_values(g, x.values, with_indices ? &indices : nullptr);
  std::vector<int64_t> shape = pooled_shape<N>(x.shape, g);
  const std::string& out_layout = a.out_layout.empty() ? a.layout : a.out_layout;
  std::vector<Tensor> result = {nn::write_primal(y, shape, out_layout, order, args.out_dtype(0))};
  if (with_indices) result.push_back(from_int64s(indices, shape, DataType::int64()));
  return result;
}

template <int N>
std::vector<Tensor> max_pool_kernel(const KernelArgs& args) {
  if (is_integer_like(args.inputs[0].dtype())) return max_pool_with<N, int64_t>(args, false);
  return max_pool_with<N, double>(args, false);
}

template <int N>
std::vector<Tensor> max_pool_argmax_kernel(const KernelArgs& args) {
  if (is_integer_like(args.inputs[0].dtype())) return max_pool_with<N, int64_t>(args, true);
  return max_pool_with<N, double>(args, true);
}

// Average pooling divides by the elements inside the input, or with
// count_include_pad by those inside the padded input: the padding counts, a
// ceil_mode overhang past it does not (as the ONNX reference and PyTorch do).
template <int N>
std::vector<Tensor> avg_pool_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<AvgPoolAttrs<N>>();
  const std::string order = nn::spatial_order("NC", N);
  auto x = nn::read_primal<double>(args.inputs[0], a.layout, order);
  PoolGeometry g = pool_geometry<N>(x.shape, a);
  const int64_t in_plane = volume(g.in), out_plane = volume(g.out);
  std::vector<double> y(size_t(g.planes * out_plane), 0.0);
  auto padded_taps = [&](int64_t o) {
    int64_t ow = o % g.out[2], oh = o / g.out[2] % g.out[1], od = o / (g.out[2] * g.out[1]);
    return double(g.taps_in_padding(0, od) * g.taps_in_padding(1, oh) * g.taps_in_padding(2, ow));
  };
  for (int64_t p = 0; p < g.planes; ++p) {
    for_each_window(g, [&](int64_t o, const std::vector<int64_t>& taps) {
      if (taps.empty()) return;
      double sum = 0;
      for (int64_t t : taps) sum += x.values[size_t(p * in_plane + t)];
      y[size_t(p * out_plane + o)] =
          sum / (a.count_include_pad ? padded_taps(o) : double(taps.size()));
    });
  }
  const std::string& out_layout = a.out_layout.empty() ? a.layout : a.out_layout;
  return {nn::write_primal(y, pooled_shape<N>(x.shape, g), out_layout, order, args.out_dtype())};
}

// Padding contributes |0|^p = 0, so only the elements inside the input count.
template <int N>
std::vector<Tensor> lp_pool_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<LPPoolAttrs<N>>();
  const std::string order = nn::spatial_order("NC", N);
  auto x = nn::read_primal<double>(args.inputs[0], a.layout, order);
  PoolGeometry g = pool_geometry<N>(x.shape, a);
  const int64_t in_plane = volume(g.in), out_plane = volume(g.out);
  std::vector<double> y(size_t(g.planes * out_plane), 0.0);
  for (int64_t p = 0; p < g.planes; ++p) {
    for_each_window(g, [&](int64_t o, const std::vector<int64_t>& taps) {
      double sum = 0;
      for (int64_t t : taps)
        sum += std::pow(std::fabs(x.values[size_t(p * in_plane + t)]), a.p_value);
      y[size_t(p * out_plane + o)] = std::pow(sum, 1.0 / a.p_value);
    });
  }
  const std::string& out_layout = a.out_layout.empty() ? a.layout : a.out_layout;
  return {nn::write_primal(y, pooled_shape<N>(x.shape, g), out_layout, order, args.out_dtype())};
}

// Reduces each plane's box [start, end) per spatial axis to one value by max or mean.
template <typename T>
T reduce_box(const T* plane, const Axes3& in, const Axes3& start, const Axes3& end, bool max) {
  T best = plane[(start[0] * in[1] + start[1]) * in[2] + start[2]];
  double sum = 0;
  for (int64_t d = start[0]; d < end[0]; ++d)
    for (int64_t h = start[1]; h < end[1]; ++h)
      for (int64_t w = start[2]; w < end[2]; ++w) {
        T v = plane[(d * in[1] + h) * in[2] + w];
        if (v > best) best = v;
        sum += double(v);
      }
  if (max) return best;
  return T(sum / double((end[0] - start[0]) * (end[1] - start[1]) * (end[2] - start[2])));
}

// Adaptive pooling (and global pooling, its one-output case): output i of an
// axis covers input [floor(i * in / out), ceil((i + 1) * in / out)).
template <int N, typename T>
std::vector<Tensor> adaptive_pool_with(const KernelArgs& args, const std::string& layout,
                                       const std::string& out_layout,
                                       const std::vector<int64_t>& output_size, bool max) {
  const std::string order = nn::spatial_order("NC", N);
  auto x = nn::read_primal<T>(args.inputs[0], layout, order);
  Axes3 in{1, 1, 1}, out{1, 1, 1};
  std::vector<int64_t> sizes = output_size.empty()
                                   ? std::vector<int64_t>(x.shape.begin() + 2, x.shape.end())
                                   : nn::spread(output_size, N, 1);
  for (int i = 0; i < N; ++i) {
    in[3 - N + i] = x.shape[2 + i];
    out[3 - N + i] = sizes[i];
  }
  int64_t planes = x.shape[0] * x.shape[1];
  std::vector<T> y(size_t(planes * volume(out)));
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = x.values.data() + p * volume(in);
    for (int64_t flat = 0; flat < volume(out); ++flat) {
      std::vector<int64_t> o = unravel(flat, out);
      Axes3 start, end;
      for (int k = 0; k < 3; ++k) {
        start[k] = o[k] * in[k] / out[k];
        end[k] = ((o[k] + 1) * in[k] + out[k] - 1) / out[k];
      }
      y[size_t(p * volume(out) + flat)] = reduce_box(plane, in, start, end, max);
    }
  }
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  return {nn::write_primal(y, shape, out_layout.empty() ? layout : out_layout, order,
                           args.out_dtype())};
}

template <int N>
std::vector<Tensor> adaptive_kernel(const KernelArgs& args, bool max) {
  const auto& a = args.attrs_as<AdaptivePoolAttrs<N>>();
  if (max && is_integer_like(args.inputs[0].dtype()))
    return adaptive_pool_with<N, int64_t>(args, a.layout, a.out_layout, a.output_size, max);
  return adaptive_pool_with<N, double>(args, a.layout, a.out_layout, a.output_size, max);
}

std::vector<Tensor> global_kernel(const KernelArgs& args, bool max) {
  const auto& a = args.attrs_as<GlobalPool2DAttrs>();
  if (max && is_integer_like(args.inputs[0].dtype()))
    return adaptive_pool_with<2, int64_t>(args, a.layout, a.out_layout, {1, 1}, max);
  return adaptive_pool_with<2, double>(args, a.layout, a.out_layout, {1, 1}, max);
}

// data[i] written at flat index indices[i] of a zero tensor of the implied
// shape, which then sits at the start of a zero tensor of out_shape.
template <typename T>
Tensor unpool_with(const KernelArgs& args, const std::vector<int64_t>& implied,
                   const std::vector<int64_t>& out_shape) {
  std::vector<T> data = nn::values_as<T>(args.inputs[0]);
  std::vector<int64_t> indices = to_int64s(args.inputs[1]);
  std::vector<T> scattered(size_t(shape_numel(implied)), T(0));
  for (size_t i = 0; i < data.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= int64_t(scattered.size()))
      throw_error("max_unpool: index ", indices[i], " is outside the unpooled tensor of ",
                  scattered.size(), " elements");
    scattered[size_t(indices[i])] = data[i];
  }
  std::vector<T> out(size_t(shape_numel(out_shape)), T(0));
  std::vector<int64_t> strides = row_major_strides(out_shape);
  for (size_t i = 0; i < scattered.size(); ++i) {
    std::vector<int64_t> coord = unravel(int64_t(i), implied);
    int64_t index = 0;
    for (size_t k = 0; k < coord.size() && index >= 0; ++k)
      index = coord[k] < out_shape[k] ? index + coord[k] * strides[k] : -1;
    if (index >= 0) out[size_t(index)] = scattered[i];
  }
  return nn::tensor_of(out, out_shape, args.out_dtype());
}

// The unpooled shape the window implies, and the output shape: output_size or
// a run-time shape (input 2) when given.
template <int N>
std::vector<Tensor> max_unpool_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<MaxUnpoolAttrs<N>>();
  std::vector<int64_t> implied = args.inputs[0].shape_vector();
  std::vector<int64_t> pool = nn::spread(a.pool_size, N, 1), stride = nn::spread(a.strides, N, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  for (int i = 0; i < N; ++i)
    implied[size_t(2 + i)] =
        (implied[size_t(2 + i)] - 1) * stride[i] + pool[i] - pad[i] - pad[N + i];
  std::vector<int64_t> out = implied;
  if (args.inputs.size() > 2) {
    out = to_int64s(args.inputs[2]);
    if (out.size() != implied.size())
      throw_error("max_unpool: output_shape has ", out.size(), " dims for data of rank ",
                  implied.size());
  } else if (!a.output_size.empty()) {
    std::vector<int64_t> size = nn::spread(a.output_size, N, 1);
    std::copy(size.begin(), size.end(), out.begin() + 2);
  }
  if (is_integer_like(args.inputs[0].dtype())) return {unpool_with<int64_t>(args, implied, out)};
  return {unpool_with<double>(args, implied, out)};
}

template <int N>
void register_windowed() {
  const std::string dims = std::to_string(N) + "d";
  register_kernel("nn.max_pool" + dims, max_pool_kernel<N>);
  register_kernel("nn.max_pool" + dims + "_with_argmax", max_pool_argmax_kernel<N>);
  register_kernel("nn.avg_pool" + dims, avg_pool_kernel<N>);
  register_kernel("nn.max_unpool" + dims, max_unpool_kernel<N>);
  register_kernel("dyn.nn.max_unpool" + dims, max_unpool_kernel<N>);
  register_kernel("nn.lp_pool" + dims, lp_pool_kernel<N>);
  register_kernel("nn.adaptive_max_pool" + dims,
                  [](const KernelArgs& args) { return adaptive_kernel<N>(args, true); });
  register_kernel("nn.adaptive_avg_pool" + dims,
                  [](const KernelArgs& args) { return adaptive_kernel<N>(args, false); });
}

}  // namespace

void register_nn_pool_kernels() {
  register_windowed<1>();
  register_windowed<2>();
  register_windowed<3>();
  register_kernel("nn.global_max_pool2d",
                  [](const KernelArgs& args) { return global_kernel(args, true); });
  register_kernel("nn.global_avg_pool2d",
                  [](const KernelArgs& args) { return global_kernel(args, false); });
}

}  // namespace anvil::reference
