#include "reference/kernel_util.h"

#include <cstring>

#include "anvil/support/error.h"

namespace anvil::reference {

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(size_t(t.numel()));
  DataType dt = t.dtype();
  if (t.is_contiguous() && dt == DataType::float32()) {
    const float* p = t.data_as<float>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
    return out;
  }
  if (t.is_contiguous() && dt == DataType::float64()) {
    std::memcpy(out.data(), t.data(), out.size() * sizeof(double));
    return out;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.get_as_double(int64_t(i));
  return out;
}

std::vector<int64_t> to_int64s(const Tensor& t) {
  std::vector<int64_t> out(size_t(t.numel()));
  DataType dt = t.dtype();
  const char* base = static_cast<const char*>(t.data());
  for (size_t i = 0; i < out.size(); ++i) {
    const char* p = base + t.byte_offset_of(int64_t(i));
    auto load = [p]<typename T>(T) {
      T v;
      std::memcpy(&v, p, sizeof(T));
      return v;
    };
    if (dt.is_bool()) {
      out[i] = load(uint8_t{}) != 0;
    } else if (dt.is_int()) {
      out[i] = dt.bits <= 8    ? load(int8_t{})
               : dt.bits == 16 ? load(int16_t{})
               : dt.bits == 32 ? load(int32_t{})
                               : load(int64_t{});
    } else if (dt.is_uint()) {
      out[i] = dt.bits <= 8    ? int64_t(load(uint8_t{}))
               : dt.bits == 16 ? int64_t(load(uint16_t{}))
               : dt.bits == 32 ? int64_t(load(uint32_t{}))
                               : int64_t(load(uint64_t{}));
    } else {
      out[i] = int64_t(t.get_as_double(int64_t(i)));
    }
  }
  return out;
}

Tensor from_doubles(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  ANVIL_ICHECK(int64_t(values.size()) == t.numel(), "value count ", values.size(), " vs ",
               t.numel());
  if (dtype == DataType::float32()) {
    float* p = t.data_as<float>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = float(values[i]);
    return t;
  }
  if (is_integer_like(dtype)) {
    std::vector<int64_t> ints(values.size());
    for (size_t i = 0; i < values.size(); ++i) ints[i] = int64_t(values[i]);
    return from_int64s(ints, t.shape_vector(), dtype);
  }
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
  return t;
}

Tensor from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> shape, DataType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  ANVIL_ICHECK(int64_t(values.size()) == t.numel(), "value count ", values.size(), " vs ",
               t.numel());
  char* base = static_cast<char*>(t.data());
  int64_t size = dtype.bytes();
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v = values[i];
    if (dtype.is_bool()) v = v != 0;
    v = wrap_to_bits(v, dtype);
    if (dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat()) {
      t.set_from_double(int64_t(i), double(v));
      continue;
    }
    // Two's complement truncation: the low bytes of the value, little-endian.
    std::memcpy(base + int64_t(i) * size, &v, size_t(size));
  }
  return t;
}

std::vector<int64_t> broadcast_shape(std::span<const int64_t> a, std::span<const int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> row_major_strides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

int64_t broadcast_source(int64_t out_flat, std::span<const int64_t> out_shape,
                         std::span<const int64_t> in_shape) {
  int64_t in_flat = 0, in_step = 1;
  size_t offset = out_shape.size() - in_shape.size();
  for (size_t i = out_shape.size(); i-- > 0;) {
    int64_t coord = out_flat % out_shape[i];
    out_flat /= out_shape[i];
    if (i < offset) continue;
    int64_t dim = in_shape[i - offset];
    if (dim != 1) in_flat += coord * in_step;
    in_step *= dim;
  }
  return in_flat;
}

std::vector<int64_t> unravel(int64_t flat, std::span<const int64_t> shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

}  // namespace anvil::reference
