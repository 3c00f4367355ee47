// Reference kernel of nn.contrib_conv2d_winograd_NCHWc: Winograd F(4x4, 3x3) written out
// plainly, tile by tile, in double. Each 6x6 input patch d (tiles start every 4 pixels of the
// zero-padded input; with dilation d, the patches of each class of outputs (oh % d, ow % d)
// take every d-th input) becomes V = B^T d B, is multiplied point by point with the transformed
// weight U and summed over the input channels, and A^T M A gives the 4x4 output tile; outputs
// past the map's edge are dropped. The matrices are those of docs/winograd.md.
#include <array>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/winograd.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using Matrix6x6 = std::array<std::array<double, 6>, 6>;

using winograd::kInputTransform;
using winograd::kOutputTransform;

std::vector<Tensor> conv2d_winograd_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const Tensor& data = args.inputs[0];
  const Tensor& weight = args.inputs[1];
  std::span<const int64_t> ds = data.shape(), ws = weight.shape();
  const int64_t batch = ds[0], in_chunks = ds[1], height = ds[2], width = ds[3], ib = ds[4];
  const int64_t out_chunks = ws[2], in_channels = ws[3], ob = ws[4];
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);
  const std::vector<int64_t> dilation = nn::spread(a.dilation, 2, 1);
  const int64_t dh = dilation[0], dw = dilation[1];
  const int64_t out_h = height + pad[0] + pad[2] - 2 * dh, out_w = width + pad[1] + pad[3] - 2 * dw;
  const int64_t out_channels = out_chunks * ob;
  // Each class (ch, cw) of outputs (oh % dh, ow % dw) is an undilated convolution over the
  // inputs of its class, tiled in its own grid of ceil(out / d) rows and columns.
  const int64_t class_h = (out_h + dh - 1) / dh, class_w = (out_w + dw - 1) / dw;
  const int64_t tiles_h = (class_h + 3) / 4, tiles_w = (class_w + 3) / 4;
  std::vector<double> x = to_doubles(data), u = to_doubles(weight);
  std::vector<double> y(size_t(batch * out_channels * out_h * out_w), 0.0);

  auto input_at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    if (h < 0 || h >= height || w < 0 || w >= width) return 0.0;
    return x[size_t((((n * in_chunks + c / ib) * height + h) * width + w) * ib + c % ib)];
  };
  std::vector<Matrix6x6> v(static_cast<size_t>(in_channels));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t tile = 0; tile < dh * dw * tiles_h * tiles_w; ++tile) {
      {
        const int64_t ch = tile / (dw * tiles_h * tiles_w), cw = tile / (tiles_h * tiles_w) % dw;
        const int64_t th = tile / tiles_w % tiles_h, tw = tile % tiles_w;
        // V = B^T d B for every input channel.
        for (int64_t c = 0; c < in_channels; ++c) {
          Matrix6x6 d{}, t{};
          for (int r = 0; r < 6; ++r)
            for (int s = 0; s < 6; ++s)
              d[r][s] =
                  input_at(n, c, (th * 4 + r) * dh + ch - pad[0], (tw * 4 + s) * dw + cw - pad[1]);
          for (int i = 0; i < 6; ++i)
            for (int s = 0; s < 6; ++s)
              for (int r = 0; r < 6; ++r) t[i][s] += kInputTransform[i][r] * d[r][s];
          Matrix6x6& out = v[size_t(c)];
          for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
              out[i][j] = 0;
              for (int s = 0; s < 6; ++s) out[i][j] += t[i][s] * kInputTransform[j][s];
            }
        }
        for (int64_t o = 0; o < out_channels; ++o) {
          // M = sum over input channels of U .* V, then Y = A^T M A.
          Matrix6x6 m{};
          for (int64_t c = 0; c < in_channels; ++c)
            for (int i = 0; i < 6; ++i)
              for (int j = 0; j < 6; ++j)
                m[i][j] += u[size_t((((i * 6 + j) * out_chunks + o / ob) * in_channels + c) * ob +
                                    o % ob)] *
                           v[size_t(c)][i][j];
          std::array<std::array<double, 6>, 4> am{};
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 6; ++j)
              for (int k = 0; k < 6; ++k) am[i][j] += kOutputTransform[i][k] * m[k][j];
          for (int i = 0; i < 4; ++i) {
            const int64_t oh = (th * 4 + i) * dh + ch;
            if (oh >= out_h) break;
            for (int j = 0; j < 4; ++j) {
              const int64_t ow = (tw * 4 + j) * dw + cw;
              if (ow >= out_w) break;
              double sum = 0;
              for (int k = 0; k < 6; ++k) sum += am[i][k] * kOutputTransform[j][k];
              y[size_t((((n * out_chunks + o / ob) * out_h + oh) * out_w + ow) * ob + o % ob)] =
                  sum;
            }
          }
        }
      }
    }
  }
  return {from_doubles(y, {batch, out_chunks, out_h, out_w, ob}, args.out_dtype())};
}

}  // namespace

void register_nn_conv_winograd_kernels() {
  register_kernel("nn.contrib_conv2d_winograd_NCHWc", conv2d_winograd_kernel);
}

}  // namespace anvil::reference
