// Reference kernels of the quantized dialect. qnn.conv2d and qnn.dense are
// the float ops' kernels on operands with their zero points subtracted (int32,
// so padding adds nothing). qnn.quantize and qnn.dequantize are written as ONNX's
// QuantizeLinear and DequantizeLinear define them:
//   quantize:   saturate(round_half_even(x / scale) + zero_point)
//   dequantize: (x - zero_point) * scale
// The arithmetic is float32 (float64 when data or scale is float64), as in
// ONNX's reference and in ONNX Runtime: x / scale in double would round a few
// values to a different integer than every deployed implementation. A NaN
// quantizes to 0 after the zero point is added, as the compiled kernel's
// saturating conversion does.
#include <algorithm>
#include <cmath>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/qnn.h"
#include "reference/elemwise_kernels.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {

namespace {

// For each element of data (row-major), the flat index of its scale and zero point.
std::vector<int64_t> param_index(const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& scale_shape,
                                 const ir::QuantizeAttrs& attrs) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> index(size_t(n), 0);
  int64_t scale_numel = 1;
  for (int64_t d : scale_shape) scale_numel *= d;
  if (attrs.block_size == 0 && scale_numel == 1) return index;
  auto rank = int64_t(shape.size());
  int64_t axis = wrap_axis(attrs.axis, rank);
  if (attrs.block_size == 0) {
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[size_t(d)];
    for (int64_t i = 0; i < n; ++i) index[size_t(i)] = i / inner % shape[size_t(axis)];
    return index;
  }
  std::vector<int64_t> scale_strides = row_major_strides(scale_shape);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> at = unravel(i, shape);
    at[size_t(axis)] /= attrs.block_size;
    int64_t flat = 0;
    for (size_t d = 0; d < at.size(); ++d) flat += at[d] * scale_strides[d];
    index[size_t(i)] = flat;
  }
  return index;
}

// The range of an integer dtype.
std::pair<int64_t, int64_t> integer_range(DataType t) {
  if (t.is_int()) return {-(int64_t(1) << (t.bits - 1)), (int64_t(1) << (t.bits - 1)) - 1};
  return {0, (int64_t(1) << t.bits) - 1};
}

template <typename F>
std::vector<Tensor> quantize_in(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::QuantizeAttrs>();
  const Tensor& x = args.inputs[0];
  std::vector<double> values = to_doubles(x), scale = to_doubles(args.inputs[1]);
  std::vector<int64_t> zero_point = to_int64s(args.inputs[2]);
  std::vector<int64_t> at = param_index(x.shape_vector(), args.inputs[1].shape_vector(), attrs);
  DataType out = args.out_dtype();
  if (out.is_minifloat()) {
    // x / scale (+ a zero point that ONNX requires to be 0), rounded once, saturating.
    std::vector<double> zero = to_doubles(args.inputs[2]), scaled(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      size_t p = size_t(at[i]);
      scaled[i] = double(F(values[i]) / F(scale[p]) + F(zero[p]));
    }
    return {elemwise::store_floats(scaled, x.shape_vector(), out)};
  }
  auto [lo, hi] = integer_range(out);
  std::vector<int64_t> result(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    size_t p = size_t(at[i]);
    F q = std::nearbyint(F(values[i]) / F(scale[p])) + F(zero_point[p]);
    result[i] = std::isnan(q) ? 0 : q <= F(lo) ? lo : q >= F(hi) ? hi : int64_t(q);
  }
  return {from_int64s(result, x.shape_vector(), out)};
}

template <typename F>
std::vector<Tensor> dequantize_in(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::QuantizeAttrs>();
  const Tensor& x = args.inputs[0];
  std::vector<double> scale = to_doubles(args.inputs[1]);
  std::vector<int64_t> at = param_index(x.shape_vector(), args.inputs[1].shape_vector(), attrs);
  if (x.dtype().is_minifloat()) {
    std::vector<double> decoded = to_doubles(x), zero = to_doubles(args.inputs[2]);
    std::vector<double> result(decoded.size());
    for (size_t i = 0; i < decoded.size(); ++i) {
      size_t p = size_t(at[i]);
      result[i] = double((F(decoded[i]) - F(zero[p])) * F(scale[p]));
    }
    return {from_doubles(result, x.shape_vector(), args.out_dtype())};
  }
  std::vector<int64_t> values = to_int64s(x), zero_point = to_int64s(args.inputs[2]);
  std::vector<double> result(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    size_t p = size_t(at[i]);
    result[i] = double(F(values[i] - zero_point[p]) * F(scale[p]));
  }
  return {from_doubles(result, x.shape_vector(), args.out_dtype())};
}

bool wants_double(const KernelArgs& args) {
  return args.inputs[0].dtype() == DataType::float64() ||
         args.inputs[1].dtype() == DataType::float64();
}

std::vector<Tensor> quantize_kernel(const KernelArgs& args) {
  return wants_double(args) ? quantize_in<double>(args) : quantize_in<float>(args);
}

std::vector<Tensor> dequantize_kernel(const KernelArgs& args) {
  return wants_double(args) ? dequantize_in<double>(args) : dequantize_in<float>(args);
}

// Input i minus its zero point (input zp_index: a scalar, or one value per
// slice of axis 0) as an int32 tensor.
Tensor shifted(const KernelArgs& args, size_t i, size_t zp_index) {
  const Tensor& x = args.inputs[i];
  std::vector<int64_t> values = to_int64s(x), zero_point = to_int64s(args.inputs[zp_index]);
  int64_t per_slice =
      x.numel() / std::max<int64_t>(x.shape_vector().empty() ? 1 : x.shape_vector()[0], 1);
  for (size_t k = 0; k < values.size(); ++k)
    values[k] -=
        zero_point.size() == 1 ? zero_point[0] : zero_point[size_t(int64_t(k) / per_slice)];
  return from_int64s(values, x.shape_vector(), DataType::int32());
}

// qnn.conv2d and qnn.dense: the float op's kernel (which accumulates integers
// exactly in int64) on the shifted operands.
ReferenceKernel integer_product(const char* float_op) {
  return [float_op](const KernelArgs& args) {
    std::vector<Tensor> operands = {shifted(args, 0, 2), shifted(args, 1, 3)};
    const ReferenceKernel* kernel = find_kernel(float_op);
    return (*kernel)(KernelArgs{operands, args.attrs, args.out_type});
  };
}

// Strides, dilations, padding (top, left, bottom, right) and output size of a 2-D window.
struct ConvWindow {
  std::vector<int64_t> stride, dilation, pad;
  int64_t out_h, out_w;
};

ConvWindow conv_window(const ir::Conv2DAttrs& a, int64_t height, int64_t width, int64_t kernel_h,
                       int64_t kernel_w) {
  ConvWindow win{nn::spread(a.strides, 2, 1), nn::spread(a.dilation, 2, 1),
                 ir::nn::expand_padding(a.padding, 2), 0, 0};
  win.out_h =
      (height + win.pad[0] + win.pad[2] - win.dilation[0] * (kernel_h - 1) - 1) / win.stride[0] + 1;
  win.out_w =
      (width + win.pad[1] + win.pad[3] - win.dilation[1] * (kernel_w - 1) - 1) / win.stride[1] + 1;
  return win;
}

// qnn.contrib_conv2d_NCHWc, straight from its definition: data (N, CB, H, W, ib)
// padded with the zero point, weight (OB, CB/groups, KH, KW, ib/4, ob*4) where input
// channel c = 4q + r of a block and output channel j of a block sit at [q, 4j + r]; output
// block o reads the input blocks of its group.
std::vector<Tensor> conv2d_nchwc_int8_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const Tensor &data = args.inputs[0], &weight = args.inputs[1];
  std::vector<int64_t> d = data.shape_vector(), w = weight.shape_vector();
  std::vector<int64_t> x = to_int64s(data), k = to_int64s(weight);
  const int64_t zero_point = to_int64s(args.inputs[2])[0];
  const int64_t n_batch = d[0], all_in_blocks = d[1], height = d[2], width = d[3], ib = d[4];
  const int64_t out_blocks = w[0], in_blocks = w[1], kh_n = w[2], kw_n = w[3], ob = w[5] / 4;
  const int64_t out_blocks_per_group = out_blocks / std::max<int64_t>(1, a.groups);
  const ConvWindow win = conv_window(a, height, width, kh_n, kw_n);
  const int64_t oh_n = win.out_h, ow_n = win.out_w;
  const std::vector<int64_t>&stride = win.stride, &dilation = win.dilation, &pad = win.pad;
  std::vector<int64_t> out(size_t(n_batch * out_blocks * oh_n * ow_n * ob), 0);
  size_t at = 0;
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t o = 0; o < out_blocks; ++o)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow)
          for (int64_t j = 0; j < ob; ++j, ++at) {
            int64_t sum = 0;
            for (int64_t cb = 0; cb < in_blocks; ++cb)
              for (int64_t kh = 0; kh < kh_n; ++kh)
                for (int64_t kw = 0; kw < kw_n; ++kw) {
                  int64_t ih = oh * stride[0] + kh * dilation[0] - pad[0];
                  int64_t iw = ow * stride[1] + kw * dilation[1] - pad[1];
                  bool inside = ih >= 0 && ih < height && iw >= 0 && iw < width;
                  const int64_t data_block = o / out_blocks_per_group * in_blocks + cb;
                  for (int64_t c = 0; c < ib; ++c) {
                    int64_t xv =
                        inside
                            ? x[size_t(
                                  (((n * all_in_blocks + data_block) * height + ih) * width + iw) *
                                      ib +
                                  c)]
                            : zero_point;
                    int64_t wv = k[size_t(
                        ((((o * in_blocks + cb) * kh_n + kh) * kw_n + kw) * (ib / 4) + c / 4) * ob *
                            4 +
                        j * 4 + c % 4)];
                    sum += xv * wv;
                  }
                }
            out[at] = sum;
          }
  return {from_int64s(out, {n_batch, out_blocks, oh_n, ow_n, ob}, DataType::int32())};
}

// qnn.contrib_depthwise_conv2d_NCHWc: channel c of block cb reads its own input channel.
std::vector<Tensor> depthwise_nchwc_int8_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<ir::Conv2DAttrs>();
  const Tensor &data = args.inputs[0], &weight = args.inputs[1];
  std::vector<int64_t> d = data.shape_vector(), w = weight.shape_vector();
  std::vector<int64_t> x = to_int64s(data), k = to_int64s(weight);
  const int64_t zero_point = to_int64s(args.inputs[2])[0];
  const ConvWindow win = conv_window(a, d[2], d[3], w[2], w[3]);
  const int64_t blocks = d[1], height = d[2], width = d[3], b = d[4];
  std::vector<int64_t> out(static_cast<size_t>(d[0] * blocks * win.out_h * win.out_w * b), 0);
  size_t at = 0;
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t cb = 0; cb < blocks; ++cb)
      for (int64_t oh = 0; oh < win.out_h; ++oh)
        for (int64_t ow = 0; ow < win.out_w; ++ow)
          for (int64_t c = 0; c < b; ++c, ++at) {
            int64_t sum = 0;
            for (int64_t kh = 0; kh < w[2]; ++kh)
              for (int64_t kw = 0; kw < w[3]; ++kw) {
                int64_t ih = oh * win.stride[0] + kh * win.dilation[0] - win.pad[0];
                int64_t iw = ow * win.stride[1] + kw * win.dilation[1] - win.pad[1];
                bool inside = ih >= 0 && ih < height && iw >= 0 && iw < width;
                int64_t xv =
                    inside ? x[size_t((((n * blocks + cb) * height + ih) * width + iw) * b + c)]
                           : zero_point;
                sum += xv * k[size_t(((cb * w[2] + kh) * w[3] + kw) * b + c)];
              }
            out[at] = sum;
          }
  return {from_int64s(out, {d[0], blocks, win.out_h, win.out_w, b}, DataType::int32())};
}

// qnn.add and qnn.mul: `combine` maps two integer inputs to the float value to round.
template <typename Combine>
Tensor qnn_binary(const KernelArgs& args, Combine combine) {
  const Tensor &lhs = args.inputs[0], &rhs = args.inputs[1];
  std::vector<int64_t> shape = broadcast_shape(lhs.shape_vector(), rhs.shape_vector());
  std::vector<int64_t> a = to_int64s(lhs), b = to_int64s(rhs);
  auto [lo, hi] = integer_range(args.out_dtype());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float v = std::nearbyint(combine(a[size_t(broadcast_source(i, shape, lhs.shape_vector()))],
                                     b[size_t(broadcast_source(i, shape, rhs.shape_vector()))]));
    out[size_t(i)] = v <= float(lo) ? lo : v >= float(hi) ? hi : int64_t(v);
  }
  return from_int64s(out, shape, args.out_dtype());
}

std::vector<Tensor> qnn_add_kernel(const KernelArgs& args) {
  const ir::QnnAddTerms t = ir::qnn_add_terms(args.attrs_as<ir::QnnBinaryAttrs>());
  return {qnn_binary(args, [&](int64_t x, int64_t y) {
    return std::fma(float(x), t.lhs_ratio, std::fma(float(y), t.rhs_ratio, t.offset));
  })};
}

std::vector<Tensor> qnn_mul_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ir::QnnBinaryAttrs>();
  const ir::QnnMulTerms t = ir::qnn_mul_terms(attrs);
  return {qnn_binary(args, [&](int64_t x, int64_t y) {
    // volatile: the product is rounded on its own, as the compute's, whatever the compiler's
    // contraction setting.
    volatile float product =
        float((x - attrs.lhs_zero_point) * (y - attrs.rhs_zero_point)) * t.ratio;
    return product + t.offset;
  })};
}

}  // namespace

void register_qnn_kernels() {
  register_kernel("qnn.add", qnn_add_kernel);
  register_kernel("qnn.mul", qnn_mul_kernel);
  register_kernel("qnn.contrib_depthwise_conv2d_NCHWc", depthwise_nchwc_int8_kernel);
  register_kernel("qnn.contrib_conv2d_NCHWc", conv2d_nchwc_int8_kernel);
  register_kernel("qnn.conv2d", integer_product("nn.conv2d"));
  register_kernel("qnn.dense", integer_product("nn.dense"));
  register_kernel("qnn.quantize", quantize_kernel);
  register_kernel("qnn.dequantize", dequantize_kernel);
}

}  // namespace anvil::reference
