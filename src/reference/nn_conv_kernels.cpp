// Reference kernels of the convolutions: nn.conv1d/2d/3d, their transposes,
// the blocked nn.contrib_conv2d_NCHWc, and the deformable convolutions. Every
// layout is first read into the canonical (N, C, spatial...) and (O, I,
// kernel...) orders, so one pair of loops serves them all; 1-D and 2-D run as
// 3-D with unit leading axes. Floats accumulate in double, integers
// (ConvInteger) in int64.
#include <array>
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;
using Axes3 = std::array<int64_t, 3>;

// One convolution's sizes, with 1-D and 2-D padded to 3-D by unit axes in front.
struct ConvGeometry {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  Axes3 in{1, 1, 1}, kernel{1, 1, 1}, out{1, 1, 1};
  Axes3 stride{1, 1, 1}, dilation{1, 1, 1}, pad_before{0, 0, 0};

  static int64_t volume(const Axes3& a) { return a[0] * a[1] * a[2]; }
};

// The positions p in [0, count) for which p * stride + offset lies in [0, limit):
// the output positions a kernel tap reaches inside the input (and, for the
// transpose, the input positions that land inside the output).
std::pair<int64_t, int64_t> valid_range(int64_t count, int64_t limit, int64_t stride,
                                        int64_t offset) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  if (limit - 1 - offset < 0) return {0, 0};
  int64_t hi = std::min(count, (limit - 1 - offset) / stride + 1);
  return {lo, std::max(lo, hi)};
}

// Fills the spatial part of a geometry from N spatial axes and the attributes.
template <int N>
ConvGeometry spatial_geometry(std::span<const int64_t> data, std::span<const int64_t> weight,
                              const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dilation,
                              const std::vector<int64_t>& padding, int64_t groups) {
  ConvGeometry g;
  g.batch = data[0];
  g.in_channels = data[1];
  g.groups = groups;
  std::vector<int64_t> s = nn::spread(strides, N, 1), d = nn::spread(dilation, N, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(padding, N);
  for (int i = 0; i < N; ++i) {
    int slot = 3 - N + i;
    g.in[slot] = data[2 + i];
    g.kernel[slot] = weight[2 + i];
    g.stride[slot] = s[i];
    g.dilation[slot] = d[i];
    g.pad_before[slot] = pad[i];
  }
  return g;
}

// The output's spatial shape in N axes (the last N of the 3-D geometry).
template <int N>
std::vector<int64_t> output_shape(const ConvGeometry& g) {
  std::vector<int64_t> shape = {g.batch, g.out_channels};
  for (int i = 0; i < N; ++i) shape.push_back(g.out[3 - N + i]);
  return shape;
}

// y[n, oc] = sum over the group's input channels and the kernel of w * x.
template <typename T>
void conv_forward(const ConvGeometry& g, const std::vector<T>& x, const std::vector<T>& w,
                  std::vector<T>& y) {
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  const int64_t in_plane = ConvGeometry::volume(g.in), out_plane = ConvGeometry::volume(g.out);
  const int64_t taps = ConvGeometry::volume(g.kernel);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      T* out = y.data() + (n * g.out_channels + oc) * out_plane;
      int64_t first_in = oc / out_per_group * in_per_group;
      for (int64_t icg = 0; icg < in_per_group; ++icg) {
        const T* image = x.data() + (n * g.in_channels + first_in + icg) * in_plane;
        const T* filter = w.data() + (oc * in_per_group + icg) * taps;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          int64_t off_d = kd * g.dilation[0] - g.pad_before[0];
          auto [d0, d1] = valid_range(g.out[0], g.in[0], g.stride[0], off_d);
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            int64_t off_h = kh * g.dilation[1] - g.pad_before[1];
            auto [h0, h1] = valid_range(g.out[1], g.in[1], g.stride[1], off_h);
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              int64_t off_w = kw * g.dilation[2] - g.pad_before[2];
              auto [w0, w1] = valid_range(g.out[2], g.in[2], g.stride[2], off_w);
              T tap = filter[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
              for (int64_t od = d0; od < d1; ++od) {
                int64_t id = od * g.stride[0] + off_d;
                for (int64_t oh = h0; oh < h1; ++oh) {
                  int64_t ih = oh * g.stride[1] + off_h;
                  T* out_row = out + (od * g.out[1] + oh) * g.out[2];
                  const T* in_row = image + (id * g.in[1] + ih) * g.in[2];
                  for (int64_t ow = w0; ow < w1; ++ow)
                    out_row[ow] += tap * in_row[ow * g.stride[2] + off_w];
                }
              }
            }
          }
        }
      }
    }
  }
}

// The transpose scatters: each input element adds w * x to the outputs its
// kernel taps reach, y[i * stride + k * dilation - pad].
template <typename T>
void conv_transpose_forward(const ConvGeometry& g, const std::vector<T>& x, const std::vector<T>& w,
                            std::vector<T>& y) {
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  const int64_t in_plane = ConvGeometry::volume(g.in), out_plane = ConvGeometry::volume(g.out);
  const int64_t taps = ConvGeometry::volume(g.kernel);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ic = 0; ic < g.in_channels; ++ic) {
      const T* image = x.data() + (n * g.in_channels + ic) * in_plane;
      int64_t first_out = ic / in_per_group * out_per_group;
      for (int64_t ocg = 0; ocg < out_per_group; ++ocg) {
        T* out = y.data() + (n * g.out_channels + first_out + ocg) * out_plane;
        const T* filter = w.data() + (ic * out_per_group + ocg) * taps;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          int64_t off_d = kd * g.dilation[0] - g.pad_before[0];
          auto [d0, d1] = valid_range(g.in[0], g.out[0], g.stride[0], off_d);
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            int64_t off_h = kh * g.dilation[1] - g.pad_before[1];
            auto [h0, h1] = valid_range(g.in[1], g.out[1], g.stride[1], off_h);
            for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
              int64_t off_w = kw * g.dilation[2] - g.pad_before[2];
              auto [w0, w1] = valid_range(g.in[2], g.out[2], g.stride[2], off_w);
              T tap = filter[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
              for (int64_t id = d0; id < d1; ++id) {
                int64_t od = id * g.stride[0] + off_d;
                for (int64_t ih = h0; ih < h1; ++ih) {
                  int64_t oh = ih * g.stride[1] + off_h;
                  T* out_row = out + (od * g.out[1] + oh) * g.out[2];
                  const T* in_row = image + (id * g.in[1] + ih) * g.in[2];
                  for (int64_t iw = w0; iw < w1; ++iw)
                    out_row[iw * g.stride[2] + off_w] += tap * in_row[iw];
                }
              }
            }
          }
        }
      }
    }
  }
}

template <int N, typename T>
std::vector<Tensor> conv_with(const KernelArgs& args, const ConvAttrs<N>& a) {
  const std::string data_order = nn::spatial_order("NC", N);
  const std::string weight_order = nn::spatial_order("OI", N);
  auto x = nn::read_primal<T>(args.inputs[0], a.data_layout, data_order);
  auto w = nn::read_primal<T>(args.inputs[1], a.kernel_layout, weight_order);
  ConvGeometry g =
      spatial_geometry<N>(x.shape, w.shape, a.strides, a.dilation, a.padding, a.groups);
  g.out_channels = w.shape[0];
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  for (int i = 0; i < N; ++i) {
    int slot = 3 - N + i;
    int64_t window = (g.kernel[slot] - 1) * g.dilation[slot] + 1;
    g.out[slot] = (g.in[slot] + pad[i] + pad[N + i] - window) / g.stride[slot] + 1;
  }
  std::vector<int64_t> out_shape = output_shape<N>(g);
  std::vector<T> y(size_t(shape_numel(out_shape)), T(0));
  conv_forward(g, x.values, w.values, y);
  const std::string& out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  return {nn::write_primal(y, out_shape, out_layout, data_order, args.out_dtype())};
}

template <int N>
std::vector<Tensor> conv_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ConvAttrs<N>>();
  if (nn::integer_math({args.inputs[0].dtype(), args.inputs[1].dtype()}))
    return conv_with<N, int64_t>(args, a);
  return conv_with<N, double>(args, a);
}

template <int N, typename T>
std::vector<Tensor> conv_transpose_with(const KernelArgs& args, const ConvTransposeAttrs<N>& a) {
  const std::string data_order = nn::spatial_order("NC", N);
  const std::string weight_order = nn::spatial_order("IO", N);
  auto x = nn::read_primal<T>(args.inputs[0], a.data_layout, data_order);
  auto w = nn::read_primal<T>(args.inputs[1], a.kernel_layout, weight_order);
  ConvGeometry g =
      spatial_geometry<N>(x.shape, w.shape, a.strides, a.dilation, a.padding, a.groups);
  g.out_channels = w.shape[1] * a.groups;
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  std::vector<int64_t> output_padding = nn::spread(a.output_padding, N, 0);
  for (int i = 0; i < N; ++i) {
    int slot = 3 - N + i;
    g.out[slot] = (g.in[slot] - 1) * g.stride[slot] - (pad[i] + pad[N + i]) +
                  (g.kernel[slot] - 1) * g.dilation[slot] + 1 + output_padding[i];
  }
  std::vector<int64_t> out_shape = output_shape<N>(g);
  std::vector<T> y(size_t(shape_numel(out_shape)), T(0));
  conv_transpose_forward(g, x.values, w.values, y);
  const std::string& out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  return {nn::write_primal(y, out_shape, out_layout, data_order, args.out_dtype())};
}

template <int N>
std::vector<Tensor> conv_transpose_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ConvTransposeAttrs<N>>();
  if (nn::integer_math({args.inputs[0].dtype(), args.inputs[1].dtype()}))
    return conv_transpose_with<N, int64_t>(args, a);
  return conv_transpose_with<N, double>(args, a);
}

// data (H x W) at a fractional point by bilinear interpolation, zero outside.
double bilinear_or_zero(const double* image, int64_t height, int64_t width, double y, double x) {
  const double y0 = std::floor(y), x0 = std::floor(x);
  double sum = 0;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      auto row = int64_t(y0) + dy, column = int64_t(x0) + dx;
      if (row < 0 || row >= height || column < 0 || column >= width) continue;
      double weight = (dy ? y - y0 : 1 - (y - y0)) * (dx ? x - x0 : 1 - (x - x0));
      sum += weight * image[row * width + column];
    }
  }
  return sum;
}

// Deformable convolution: tap (kh, kw) of output (oh, ow) reads data at
// (oh * stride - pad + kh * dilation + dy, likewise for x), with (dy, dx) from
// offset, scaled by mask in the modulated form.
std::vector<Tensor> deformable_conv_kernel(const KernelArgs& args, bool modulated) {
  const auto& a = args.attrs_as<DeformableConv2DAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<double> x = to_doubles(data), offset = to_doubles(args.inputs[1]);
  std::vector<double> w = to_doubles(args.inputs[2]);
  std::vector<double> mask = modulated ? to_doubles(args.inputs[3]) : std::vector<double>{};
  std::span<const int64_t> ds = data.shape(), ws = args.inputs[2].shape();
  const int64_t batch = ds[0], channels = ds[1], height = ds[2], width = ds[3];
  const int64_t out_channels = ws[0], in_per_group = ws[1], kh_size = ws[2], kw_size = ws[3];
  std::vector<int64_t> s = nn::spread(a.strides, 2, 1), d = nn::spread(a.dilation, 2, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);
  const int64_t out_h = (height + pad[0] + pad[2] - ((kh_size - 1) * d[0] + 1)) / s[0] + 1;
  const int64_t out_w = (width + pad[1] + pad[3] - ((kw_size - 1) * d[1] + 1)) / s[1] + 1;
  const int64_t out_per_group = out_channels / a.groups;
  const int64_t per_offset_group = channels / a.deformable_groups;
  const int64_t taps = kh_size * kw_size, plane = out_h * out_w;
  std::vector<double> y(size_t(batch * out_channels * plane), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t oc = 0; oc < out_channels; ++oc) {
      for (int64_t icg = 0; icg < in_per_group; ++icg) {
        const int64_t ic = oc / out_per_group * in_per_group + icg;
        const int64_t group = ic / per_offset_group;
        const double* image = x.data() + (n * channels + ic) * height * width;
        for (int64_t tap = 0; tap < taps; ++tap) {
          const int64_t kh = tap / kw_size, kw = tap % kw_size;
          const double weight = w[size_t(((oc * in_per_group + icg) * taps) + tap)];
          const int64_t channel = group * taps + tap;
          for (int64_t p = 0; p < plane; ++p) {
            const int64_t oh = p / out_w, ow = p % out_w;
            double dy =
                offset[size_t(((n * taps * a.deformable_groups + channel) * 2) * plane + p)];
            double dx =
                offset[size_t(((n * taps * a.deformable_groups + channel) * 2 + 1) * plane + p)];
            double sample =
                bilinear_or_zero(image, height, width, double(oh * s[0] - pad[0] + kh * d[0]) + dy,
                                 double(ow * s[1] - pad[1] + kw * d[1]) + dx);
            if (modulated)
              sample *= mask[size_t((n * taps * a.deformable_groups + channel) * plane + p)];
            y[size_t((n * out_channels + oc) * plane + p)] += weight * sample;
          }
        }
      }
    }
  }
  return {from_doubles(y, {batch, out_channels, out_h, out_w}, args.out_dtype())};
}

// nn.contrib_conv2d_NCHWc_bf16: the packed weight unpacked to OIHW (input channel 2q + r of a
// block and output channel j at [q, 2j + r]), then the plain kernel on the blocked data.
std::vector<Tensor> conv2d_nchwc_bf16_kernel(const KernelArgs& args) {
  const Tensor& packed = args.inputs[1];
  std::vector<int64_t> k = packed.shape_vector();
  const int64_t out_blocks = k[0], in_blocks = k[1], taps = k[2] * k[3], ib = k[4] * 2,
                ob = k[5] / 2;
  const int64_t out = out_blocks * ob, in = in_blocks * ib;
  std::vector<double> src = to_doubles(packed), oihw(src.size());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t c = i % ib;
        oihw[size_t((o * in + i) * taps + t)] =
            src[size_t((((o / ob * in_blocks + i / ib) * taps + t) * (ib / 2) + c / 2) * ob * 2 +
                       o % ob * 2 + c % 2)];
      }
  const Tensor weight = from_doubles(oihw, {out, in, k[2], k[3]}, DataType::float32());
  ir::Conv2DAttrs attrs = args.attrs_as<ir::Conv2DAttrs>();
  attrs.kernel_layout = "OIHW";
  if (attrs.out_layout.empty()) attrs.out_layout = "NCHW" + std::to_string(ob) + "c";
  const std::vector<Tensor> inputs = {args.inputs[0], weight};
  return conv_with<2, double>(KernelArgs{inputs, &attrs, args.out_type}, attrs);
}

}  // namespace

void register_nn_conv_kernels() {
  register_kernel("nn.conv1d", conv_kernel<1>);
  register_kernel("nn.conv2d", conv_kernel<2>);
  register_kernel("nn.conv3d", conv_kernel<3>);
  // The blocked layouts are read like any other, so the plain kernel serves.
  register_kernel("nn.contrib_conv2d_NCHWc", conv_kernel<2>);
  register_kernel("nn.contrib_conv2d_NCHWc_bf16", conv2d_nchwc_bf16_kernel);
  register_kernel("nn.conv1d_transpose", conv_transpose_kernel<1>);
  register_kernel("nn.conv2d_transpose", conv_transpose_kernel<2>);
  register_kernel("nn.conv3d_transpose", conv_transpose_kernel<3>);
  register_kernel("nn.deformable_conv2d",
                  [](const KernelArgs& args) { return deformable_conv_kernel(args, false); });
  register_kernel("nn.modulated_deformable_conv2d",
                  [](const KernelArgs& args) { return deformable_conv_kernel(args, true); });
}

}  // namespace anvil::reference
