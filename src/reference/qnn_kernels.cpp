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

#include "anvil/ir/attrs/qnn.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

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
  std::vector<int64_t> values = to_int64s(x), zero_point = to_int64s(args.inputs[2]);
  std::vector<double> scale = to_doubles(args.inputs[1]);
  std::vector<int64_t> at = param_index(x.shape_vector(), args.inputs[1].shape_vector(), attrs);
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

}  // namespace

void register_qnn_kernels() {
  register_kernel("qnn.conv2d", integer_product("nn.conv2d"));
  register_kernel("qnn.dense", integer_product("nn.dense"));
  register_kernel("qnn.quantize", quantize_kernel);
  register_kernel("qnn.dequantize", dequantize_kernel);
}

}  // namespace anvil::reference
