#include "anvil/ir/winograd.h"
#include "anvil/support/error.h"

namespace anvil::winograd {

Tensor transform_weight(const Tensor& weight, int64_t out_block) {
  const std::vector<int64_t> s = weight.shape_vector();
  const bool blocked = s.size() == 6;
  ANVIL_ICHECK((s.size() == 4 || blocked) && s[2] == 3 && s[3] == 3 &&
                   weight.dtype() == DataType::float32() && weight.is_contiguous(),
               "winograd::transform_weight wants a contiguous float32 3x3 OIHW weight");
  const int64_t ib = blocked ? s[4] : 1, ob = blocked ? s[5] : out_block;
  const int64_t in_channels = s[1] * ib, out_channels = blocked ? s[0] * ob : s[0];
  ANVIL_ICHECK(ob > 0 && out_channels % ob == 0 && (!blocked || out_block == 0 || out_block == ob),
               "winograd::transform_weight: output block ", out_block, " does not fit");
  const float* src = static_cast<const float*>(weight.data());
  // Element g[o][i][k][l] of either layout.
  auto tap = [&](int64_t o, int64_t i, int k, int l) {
    if (!blocked) return double(src[((o * in_channels + i) * 3 + k) * 3 + l]);
    return double(
        src[((((o / ob) * s[1] + i / ib) * 3 + k) * 3 + l) * ib * ob + (i % ib) * ob + o % ob]);
  };
  Tensor u = Tensor::empty({6, 6, out_channels / ob, in_channels, ob}, DataType::float32());
  float* dst = static_cast<float*>(u.data());
  for (int64_t o = 0; o < out_channels; ++o)
    for (int64_t i = 0; i < in_channels; ++i) {
      // G g (6 x 3), then (G g) G^T.
      std::array<std::array<double, 3>, 6> left{};
      for (int x = 0; x < 6; ++x)
        for (int l = 0; l < 3; ++l)
          for (int k = 0; k < 3; ++k) left[x][l] += kWeightTransform[x][k] * tap(o, i, k, l);
      for (int x = 0; x < 6; ++x)
        for (int y = 0; y < 6; ++y) {
          double sum = 0;
          for (int l = 0; l < 3; ++l) sum += left[x][l] * kWeightTransform[y][l];
          dst[(((x * 6 + y) * (out_channels / ob) + o / ob) * in_channels + i) * ob + o % ob] =
              float(sum);
        }
    }
  return u;
}

}  // namespace anvil::winograd
