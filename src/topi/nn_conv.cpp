// Computes of the convolutions: nn.conv1d/2d/3d, their transposes, and the deformable
// convolutions. The plain ones and the transposes take any data and kernel layout the op
// table accepts (NCHW/OIHW, NHWC/HWIO or OHWI, blocked NCHW16c). Every layout is indexed
// through its primal order, so for NCHW/OIHW the compute is TVM's natural form:
//   out[n, f, y, x] = sum over (rc, ry, rx) of
//     pad_temp[n, g * ic + rc, y * sh + ry * dh, x * sw + rx * dw] * w[f, rc, ry, rx],
// with the padded input a separate stage that the default schedule inlines.
#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

// The geometry of one convolution or transpose in primal order.
struct ConvShape {
  // (N, C, spatial...) (transposes only, which need static spatial dims) and (O, I, kernel...)
  // or (I, O, ...).
  std::vector<int64_t> data, weight;
  std::vector<int64_t> strides, dilation, pad_before, pad_after;
};

template <typename AttrsT, int N>
ConvShape conv_shape(const ComputeArgs& args, const AttrsT& a, const nn::LayoutMap& weight_map) {
  ConvShape s;
  s.weight = weight_map.primal_shape(nn::static_shape(args.inputs[1]));
  s.strides = nn::spread(a.strides, N, 1);
  s.dilation = nn::spread(a.dilation, N, 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, N);
  s.pad_before.assign(pad.begin(), pad.begin() + N);
  s.pad_after.assign(pad.begin() + N, pad.end());
  return s;
}

// Names of the output axes, from the layout ("NCHW" -> n, c, h, w; a sub-axis 16c -> c_inner).
std::vector<std::string> layout_axis_names(const std::string& layout) {
  std::vector<std::string> names;
  for (size_t i = 0; i < layout.size(); ++i) {
    char c = layout[i];
    if (c >= 'A' && c <= 'Z') {
      names.push_back(std::string(1, char(c - 'A' + 'a')));
    } else if (c >= 'a' && c <= 'z') {
      names.push_back(std::string(1, c) + "_inner");
    }
  }
  return names;
}

template <int N>
std::vector<te::Tensor> conv_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::ConvAttrs<N>>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& weight = args.inputs[1];
  const std::string data_order = nn::spatial_order("NC", N);
  const std::string axes = nn::spatial_axes(N);
  nn::LayoutMap data_map(a.data_layout, data_order);
  nn::LayoutMap weight_map(a.kernel_layout, nn::spatial_order("OI", N));
  const std::string out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  nn::LayoutMap out_map(out_layout, data_order);
  ConvShape s = conv_shape<ir::ConvAttrs<N>, N>(args, a, weight_map);

  const int64_t groups = a.groups;
  const int64_t in_per_group = s.weight[1];
  const int64_t out_per_group = s.weight[0] / groups;
  const DataType out_dtype = args.out_dtype();
  te::Tensor padded = nn::pad_spatial(data, data_map, axes, s.pad_before, s.pad_after,
                                      tir::make_const(data.dtype(), 0));

  // A stride along the innermost (contiguous) axis makes every load of a vector of outputs a
  // gather. The padded input is then stored by phases: split[..., p, j] = padded[..., j * s + p],
  // so that input x * s + t is split[..., t % s, x + t / s], contiguous in x.
  const size_t last = size_t(N - 1);
  const int64_t last_stride = s.strides[last];
  const bool by_phase = last_stride > 1 && a.data_layout == data_order;
  if (by_phase) {
    const PrimExpr padded_width = padded.shape()[2 + last];
    const std::optional<int64_t> width = tir::as_const_int(padded_width);
    std::vector<PrimExpr> shape(padded.shape().begin(), padded.shape().end() - 1);
    shape.push_back(tir::make_int(last_stride));
    shape.push_back(width ? tir::make_int((*width + last_stride - 1) / last_stride)
                          : (padded_width + (last_stride - 1)) / last_stride);
    const te::Tensor source = padded;
    padded = te::compute(
        shape,
        [=](const std::vector<tir::Var>& idx) {
          std::vector<PrimExpr> read = nn::var_exprs(idx);
          read.pop_back();
          read.back() = PrimExpr(idx[idx.size() - 1]) * last_stride + idx[idx.size() - 2];
          return nn::if_then_else(read.back() < padded_width, source.at(read),
                                  tir::make_const(source.dtype(), 0));
        },
        "pad_phases");
  }

  std::vector<int64_t> reduce_extents = {in_per_group};
  reduce_extents.insert(reduce_extents.end(), s.weight.begin() + 2, s.weight.end());
  std::vector<tir::IterVar> reduce = nn::reduce_axes(reduce_extents, "r", "c" + axes);

  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> out = out_map.to_primal(nn::var_exprs(idx));
    const PrimExpr& rc = reduce[0].var;
    PrimExpr channel = groups == 1 ? rc : out[1] / out_per_group * in_per_group + rc;
    std::vector<PrimExpr> x_index = {out[0], channel};
    std::vector<PrimExpr> w_index = {out[1], rc};
    for (int i = 0; i < N; ++i) {
      const tir::Var& r = reduce[size_t(1 + i)].var;
      x_index.push_back(out[size_t(2 + i)] * s.strides[size_t(i)] + r * s.dilation[size_t(i)]);
      w_index.push_back(r);
    }
    std::vector<PrimExpr> x_stored = data_map.to_stored(x_index);
    if (by_phase) {
      const PrimExpr tap = PrimExpr(reduce.back().var) * s.dilation[last];
      x_stored.back() = out[2 + last] + tap / last_stride;
      x_stored.push_back(x_stored.back());
      x_stored[x_stored.size() - 2] = tap % last_stride;
    }
    PrimExpr x = tir::cast(out_dtype, padded.at(x_stored));
    PrimExpr w = tir::cast(out_dtype, weight.at(weight_map.to_stored(w_index)));
    return tir::sum(x * w, reduce);
  };
  std::string name = "conv" + std::to_string(N) + "d_" + nn::lower_case(out_layout);
  return {te::compute(args.out_shape(), body, name, layout_axis_names(out_layout))};
}

// The transpose by phases, for unit dilation in the primal layouts: along an axis of stride s,
// output o with o + pad_before = q * s + r (phase r, row q) receives exactly the taps
// k = r + m * s of the inputs q - m, so each phase is a plain convolution of the input with
// the sub-kernel w[r + m * s] (m < M = ceil(K / s), zero past K), with no multiply by the
// zeros that spreading the input inserts (3 of 4 in 2-D at stride 2, 7 of 8 in 3-D):
//   phases[n, f, r..., q...] = sum over (c, j...) of
//     x_pad[n, c, q + j...] * w_sub[c, f, r..., M - 1 - j...],
// where x_pad is the input with M - 1 zeros before it (and zeros past its end up to the last
// row), and the output interleaves the phases: y[n, f, o...] = phases[n, f, r..., q...].
// Its rows q are the contiguous axis of the phases, which the auto-scheduler vectorizes.
template <int N>
std::vector<te::Tensor> conv_transpose_by_phases(const ComputeArgs& args,
                                                 const ir::ConvTransposeAttrs<N>& a,
                                                 const ConvShape& s,
                                                 const std::vector<int64_t>& out_primal) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& weight = args.inputs[1];
  const int64_t groups = a.groups;
  const int64_t in_per_group = s.data[1] / groups;
  const int64_t out_per_group = s.weight[1];
  const DataType out_dtype = args.out_dtype();
  std::vector<int64_t> taps(N), rows(N), pad_rows(N);
  for (size_t i = 0; i < size_t(N); ++i) {
    const int64_t stride = s.strides[i], kernel = s.weight[2 + i];
    taps[i] = (kernel + stride - 1) / stride;
    rows[i] = (out_primal[2 + i] + s.pad_before[i] + stride - 1) / stride;
    pad_rows[i] = rows[i] + taps[i] - 1;
  }
  const PrimExpr zero = tir::make_const(data.dtype(), 0);

  std::vector<PrimExpr> pad_shape = {data.shape()[0], data.shape()[1]};
  for (size_t i = 0; i < size_t(N); ++i) pad_shape.push_back(tir::make_int(pad_rows[i]));
  te::Tensor x_pad = te::compute(
      pad_shape,
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = {idx[0], idx[1]};
        PrimExpr inside;
        for (size_t i = 0; i < size_t(N); ++i) {
          PrimExpr at = PrimExpr(idx[2 + i]) - (taps[i] - 1);
          inside = nn::and_also(inside, at >= 0);
          inside = nn::and_also(inside, at < s.data[2 + i]);
          read.push_back(at);
        }
        return nn::if_then_else(inside, data.at(read), zero);
      },
      "pad_temp");

  // w_sub[c, f, r..., m...] = w[c, f, r + m * s...], zero past the kernel.
  std::vector<PrimExpr> sub_shape = {tir::make_int(s.weight[0]), tir::make_int(out_per_group)};
  for (size_t i = 0; i < size_t(N); ++i) sub_shape.push_back(tir::make_int(s.strides[i]));
  for (size_t i = 0; i < size_t(N); ++i) sub_shape.push_back(tir::make_int(taps[i]));
  te::Tensor w_sub = te::compute(
      sub_shape,
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = {idx[0], idx[1]};
        PrimExpr inside;
        for (size_t i = 0; i < size_t(N); ++i) {
          PrimExpr k = PrimExpr(idx[2 + i]) + PrimExpr(idx[2 + N + i]) * s.strides[i];
          inside = nn::and_also(inside, k < s.weight[2 + i]);
          read.push_back(k);
        }
        return nn::if_then_else(inside, weight.at(read), tir::make_const(weight.dtype(), 0));
      },
      "weight_phases");

  std::vector<int64_t> reduce_extents = {in_per_group};
  reduce_extents.insert(reduce_extents.end(), taps.begin(), taps.end());
  std::vector<tir::IterVar> reduce =
      nn::reduce_axes(reduce_extents, "r", "c" + nn::spatial_axes(N));
  std::vector<PrimExpr> phase_shape = {args.out_shape()[0], tir::make_int(out_primal[1])};
  for (size_t i = 0; i < size_t(N); ++i) phase_shape.push_back(tir::make_int(s.strides[i]));
  for (size_t i = 0; i < size_t(N); ++i) phase_shape.push_back(tir::make_int(rows[i]));
  te::Tensor phases = te::compute(
      phase_shape,
      [=](const std::vector<tir::Var>& idx) {
        const PrimExpr f = idx[1];
        const PrimExpr& rc = reduce[0].var;
        PrimExpr channel = groups == 1 ? rc : f / out_per_group * in_per_group + rc;
        PrimExpr out_channel = groups == 1 ? f : f % out_per_group;
        std::vector<PrimExpr> x_index = {idx[0], channel};
        std::vector<PrimExpr> w_index = {channel, out_channel};
        for (size_t i = 0; i < size_t(N); ++i) w_index.push_back(idx[2 + i]);
        for (size_t i = 0; i < size_t(N); ++i) {
          const tir::Var& j = reduce[1 + i].var;
          x_index.push_back(PrimExpr(idx[2 + N + i]) + j);
          w_index.push_back(PrimExpr(taps[i] - 1) - j);
        }
        PrimExpr x = tir::cast(out_dtype, x_pad.at(x_index));
        PrimExpr w = tir::cast(out_dtype, w_sub.at(w_index));
        return tir::sum(x * w, reduce);
      },
      "conv" + std::to_string(N) + "d_transpose_phases");

  std::string name = "conv" + std::to_string(N) + "d_transpose_" + nn::lower_case(a.data_layout);
  return {te::compute(
      args.out_shape(),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = {idx[0], idx[1]};
        for (size_t i = 0; i < size_t(N); ++i)
          read.push_back((PrimExpr(idx[2 + i]) + s.pad_before[i]) % s.strides[i]);
        for (size_t i = 0; i < size_t(N); ++i)
          read.push_back((PrimExpr(idx[2 + i]) + s.pad_before[i]) / s.strides[i]);
        return phases.at(read);
      },
      name, layout_axis_names(a.data_layout))};
}

// The transpose as a plain convolution (TVM's formulation): the input is spread out by the
// stride and padded so that every window lies inside it, then convolved with the kernel
// flipped. Position j of the spread input holds x[(j - P) / s] when (j - P) is a multiple of
// s inside the input, else 0, where P = (kernel - 1) * dilation - pad_before.
template <int N>
std::vector<te::Tensor> conv_transpose_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::ConvTransposeAttrs<N>>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& weight = args.inputs[1];
  const std::string data_order = nn::spatial_order("NC", N);
  const std::string axes = nn::spatial_axes(N);
  nn::LayoutMap data_map(a.data_layout, data_order);
  nn::LayoutMap weight_map(a.kernel_layout, nn::spatial_order("IO", N));
  const std::string out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  nn::LayoutMap out_map(out_layout, data_order);
  ConvShape s = conv_shape<ir::ConvTransposeAttrs<N>, N>(args, a, weight_map);
  // The transpose spreads the input over its static extents; the batch may be -1.
  s.data = data_map.primal_geometry(data.shape(), args.op_name());
  std::vector<int64_t> out_primal =
      out_map.primal_shape(nn::static_ints(args.out_shape(), args.op_name()));

  const std::string primal_kernel = nn::spatial_order("IO", N);
  const bool unit_dilation =
      std::all_of(s.dilation.begin(), s.dilation.end(), [](int64_t d) { return d == 1; });
  if (unit_dilation && a.data_layout == data_order && out_layout == data_order &&
      a.kernel_layout == primal_kernel)
    return conv_transpose_by_phases<N>(args, a, s, out_primal);

  const int64_t groups = a.groups;
  const int64_t in_per_group = s.data[1] / groups;
  const int64_t out_per_group = s.weight[1];
  const DataType out_dtype = args.out_dtype();

  // The spread and padded input, in the data's layout.
  std::vector<int64_t> spread_shape = nn::static_shape(data);
  std::vector<size_t> positions;
  std::vector<int64_t> offset(N), kernel(N);
  for (int i = 0; i < N; ++i) {
    positions.push_back(data_map.stored_axis(axes[size_t(i)]));
    kernel[size_t(i)] = s.weight[size_t(2 + i)];
    int64_t reach = (kernel[size_t(i)] - 1) * s.dilation[size_t(i)];
    offset[size_t(i)] = reach - s.pad_before[size_t(i)];
    spread_shape[positions.back()] = out_primal[size_t(2 + i)] + reach;
  }
  te::Tensor spread = te::compute(
      nn::int_exprs(spread_shape),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = nn::var_exprs(idx);
        PrimExpr inside;
        for (int i = 0; i < N; ++i) {
          size_t p = positions[size_t(i)];
          int64_t stride = s.strides[size_t(i)];
          PrimExpr shifted = idx[p] - offset[size_t(i)];
          read[p] = stride == 1 ? shifted : shifted / stride;
          inside = nn::and_also(inside, shifted >= 0);
          inside = nn::and_also(inside, shifted < (s.data[size_t(2 + i)] - 1) * stride + 1);
          if (stride > 1) inside = nn::and_also(inside, tir::eq(shifted % stride, 0));
        }
        return nn::if_then_else(inside, data.at(read), tir::make_const(data.dtype(), 0));
      },
      "data_pad");

  std::vector<int64_t> reduce_extents = {in_per_group};
  reduce_extents.insert(reduce_extents.end(), kernel.begin(), kernel.end());
  std::vector<tir::IterVar> reduce = nn::reduce_axes(reduce_extents, "r", "c" + axes);

  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> out = out_map.to_primal(nn::var_exprs(idx));
    const PrimExpr& rc = reduce[0].var;
    PrimExpr channel = groups == 1 ? rc : out[1] / out_per_group * in_per_group + rc;
    PrimExpr out_channel = groups == 1 ? out[1] : out[1] % out_per_group;
    std::vector<PrimExpr> x_index = {out[0], channel};
    std::vector<PrimExpr> w_index = {channel, out_channel};
    for (int i = 0; i < N; ++i) {
      const tir::Var& r = reduce[size_t(1 + i)].var;
      x_index.push_back(out[size_t(2 + i)] + r * s.dilation[size_t(i)]);
      w_index.push_back(kernel[size_t(i)] - 1 - r);
    }
    PrimExpr x = tir::cast(out_dtype, spread.at(data_map.to_stored(x_index)));
    PrimExpr w = tir::cast(out_dtype, weight.at(weight_map.to_stored(w_index)));
    return tir::sum(x * w, reduce);
  };
  std::string name = "conv" + std::to_string(N) + "d_transpose_" + nn::lower_case(out_layout);
  return {te::compute(args.out_shape(), body, name, layout_axis_names(out_layout))};
}

// data (N, C, H, W) at the fractional point (y, x) (float64) by bilinear interpolation, the
// neighbours outside the image reading 0.
PrimExpr bilinear_or_zero(const te::Tensor& data, const PrimExpr& n, const PrimExpr& c,
                          const PrimExpr& y, const PrimExpr& x, int64_t height, int64_t width) {
  const DataType f64 = DataType::float64();
  PrimExpr y0 = tir::call_intrin(f64, "floor", {y}), x0 = tir::call_intrin(f64, "floor", {x});
  PrimExpr fy = y - y0, fx = x - x0;
  PrimExpr row0 = tir::cast(tir::kIndexType, y0), column0 = tir::cast(tir::kIndexType, x0);
  PrimExpr sum;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      PrimExpr row = row0 + dy, column = column0 + dx;
      PrimExpr inside = tir::logical_and(tir::logical_and(row >= 0, row < height),
                                         tir::logical_and(column >= 0, column < width));
      PrimExpr one = tir::make_const(f64, 1);
      PrimExpr weight = (dy ? fy : one - fy) * (dx ? fx : one - fx);
      PrimExpr value = nn::if_then_else(inside, tir::cast(f64, data(n, c, row, column)),
                                        tir::make_const(f64, 0));
      PrimExpr term = weight * value;
      sum = sum ? sum + term : term;
    }
  }
  return sum;
}

// nn.deformable_conv2d and nn.modulated_deformable_conv2d (NCHW data, OIHW weight): tap
// (ky, kx) of output (y, x) samples data at (y * sh - pad + ky * dh + dy, likewise for x),
// (dy, dx) read from offset per tap and deformable group, times mask when modulated. One
// reduction over (rc, ry, rx), as the plain convolution.
std::vector<te::Tensor> deformable_conv_compute(const ComputeArgs& args, bool modulated) {
  const auto& a = args.attrs_as<ir::DeformableConv2DAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& offset = args.inputs[1];
  const te::Tensor& weight = args.inputs[2];
  const te::Tensor mask = modulated ? args.inputs[3] : te::Tensor();
  const std::vector<int64_t> ds = nn::static_shape(data), ws = nn::static_shape(weight);
  const std::vector<int64_t> strides = nn::spread(a.strides, 2, 1);
  const std::vector<int64_t> dilation = nn::spread(a.dilation, 2, 1);
  const std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);
  const int64_t in_per_group = ws[1], out_per_group = ws[0] / a.groups;
  const int64_t per_offset_group = ds[1] / a.deformable_groups;
  const int64_t kernel_w = ws[3], taps = ws[2] * ws[3];
  const DataType out_dtype = args.out_dtype(), f64 = DataType::float64();
  std::vector<tir::IterVar> reduce = nn::reduce_axes({in_per_group, ws[2], ws[3]}, "r", "cyx");
  auto body = [=](const std::vector<tir::Var>& idx) {
    const PrimExpr n = idx[0], oc = idx[1], oy = idx[2], ox = idx[3];
    const PrimExpr rc = reduce[0].var, ry = reduce[1].var, rx = reduce[2].var;
    PrimExpr ic = oc / out_per_group * in_per_group + rc;
    PrimExpr channel = ic / per_offset_group * taps + ry * kernel_w + rx;
    PrimExpr dy = tir::cast(f64, offset(n, channel * 2, oy, ox));
    PrimExpr dx = tir::cast(f64, offset(n, channel * 2 + 1, oy, ox));
    PrimExpr y = tir::cast(f64, oy * strides[0] - pad[0] + ry * dilation[0]) + dy;
    PrimExpr x = tir::cast(f64, ox * strides[1] - pad[1] + rx * dilation[1]) + dx;
    PrimExpr sample = bilinear_or_zero(data, n, ic, y, x, ds[2], ds[3]);
    if (modulated) sample = sample * tir::cast(f64, mask(n, channel, oy, ox));
    PrimExpr w = tir::cast(out_dtype, weight(oc, rc, ry, rx));
    return tir::sum(tir::cast(out_dtype, sample) * w, reduce);
  };
  std::string name = modulated ? "modulated_deformable_conv2d_nchw" : "deformable_conv2d_nchw";
  return {te::compute(args.out_shape(), body, name, {"n", "f", "y", "x"})};
}

}  // namespace

void register_nn_conv_computes() {
  register_compute("nn.deformable_conv2d",
                   [](const ComputeArgs& args) { return deformable_conv_compute(args, false); });
  register_compute("nn.modulated_deformable_conv2d",
                   [](const ComputeArgs& args) { return deformable_conv_compute(args, true); });
  register_compute("nn.conv1d", conv_compute<1>);
  register_compute("nn.conv2d", conv_compute<2>);
  register_compute("nn.conv3d", conv_compute<3>);
  register_compute("nn.conv1d_transpose", conv_transpose_compute<1>);
  register_compute("nn.conv2d_transpose", conv_transpose_compute<2>);
  register_compute("nn.conv3d_transpose", conv_transpose_compute<3>);
}

}  // namespace anvil::topi
