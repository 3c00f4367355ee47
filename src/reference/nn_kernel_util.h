// Pieces shared by the convolution, dense, pooling and image reference
// kernels: reading tensors in any IR data layout (NHWC, HWIO, blocked NCHW16c)
// into the canonical primal order and back, spreading per-axis attributes, and
// choosing exact integer or double arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/nn_geometry.h"
#include "reference/kernel_util.h"

namespace anvil::reference::nn {

// The primal (upper-case) axes of a layout, each with the block factor of its
// sub-axis (0 when the axis is not split): "NCHW16c" -> N, C/16 blocks, H, W, c16.
struct LayoutAxis {
  char name;       // upper case: primal axis; lower case: sub-axis
  int64_t factor;  // block size of a sub-axis, 0 for a primal axis
};
std::vector<LayoutAxis> parse_layout(std::string_view layout);

// The sizes of the primal axes of `order` ("NCHW") for a tensor of `shape`
// stored in `layout`; a blocked axis multiplies its outer and inner parts.
std::vector<int64_t> primal_shape(std::string_view layout, std::string_view order,
                                  std::span<const int64_t> shape);
// The shape in `layout` of a tensor whose primal sizes in `order` are `primal`.
std::vector<int64_t> layout_shape(std::string_view layout, std::string_view order,
                                  std::span<const int64_t> primal);
// For each element of a row-major array of primal shape (in `order`), the flat
// index of the same element in the tensor stored in `layout`.
std::vector<int64_t> layout_index_map(std::string_view layout, std::string_view order,
                                      std::span<const int64_t> primal);

// Values of a tensor as T: double, or int64 where integers must stay exact.
template <typename T>
std::vector<T> values_as(const Tensor& t) {
  if constexpr (std::is_same_v<T, double>) {
    return to_doubles(t);
  } else {
    return to_int64s(t);
  }
}

// A tensor of the given shape and dtype holding values of T.
template <typename T>
Tensor tensor_of(const std::vector<T>& values, std::vector<int64_t> shape, DataType dtype) {
  if constexpr (std::is_same_v<T, double>) {
    return from_doubles(values, std::move(shape), dtype);
  } else {
    return from_int64s(values, std::move(shape), dtype);
  }
}

// A tensor read as T in primal order, with its primal shape.
template <typename T>
struct PrimalValues {
  std::vector<T> values;
  std::vector<int64_t> shape;
};

// Reads t, stored in `layout`, as T in the primal `order`.
template <typename T>
PrimalValues<T> read_primal(const Tensor& t, std::string_view layout, std::string_view order) {
  std::vector<T> stored = values_as<T>(t);
  std::vector<int64_t> shape = primal_shape(layout, order, t.shape());
  if (layout == order) return {std::move(stored), std::move(shape)};
  std::vector<int64_t> map = layout_index_map(layout, order, shape);
  std::vector<T> values(stored.size());
  for (size_t i = 0; i < map.size(); ++i) values[i] = stored[size_t(map[i])];
  return {std::move(values), std::move(shape)};
}

// Writes values of primal shape (in `order`) as a tensor stored in `layout`.
template <typename T>
Tensor write_primal(const std::vector<T>& values, std::span<const int64_t> primal,
                    std::string_view layout, std::string_view order, DataType dtype) {
  std::vector<int64_t> shape = layout_shape(layout, order, primal);
  if (layout == order) return tensor_of(values, shape, dtype);
  std::vector<int64_t> map = layout_index_map(layout, order, primal);
  std::vector<T> stored(values.size());
  for (size_t i = 0; i < map.size(); ++i) stored[size_t(map[i])] = values[i];
  return tensor_of(stored, shape, dtype);
}

// An attribute given as one value per spatial axis, or one value for all.
std::vector<int64_t> spread(const std::vector<int64_t>& values, size_t n, int64_t fallback);
// Padding is read with ir::nn::expand_padding (anvil/ir/nn_geometry.h), as the relations
// read it.

// "NCW", "NCHW", "NCDHW" (or with `first_two` = "OI", "IO" for weights).
std::string spatial_order(std::string_view first_two, size_t n);

// True when the kernel computes on exact integers: all the given dtypes are integers.
bool integer_math(std::initializer_list<DataType> dtypes);

// A contiguous tensor with the same contents (t itself when already compact).
Tensor compact(const Tensor& t);

}  // namespace anvil::reference::nn

namespace anvil::reference {
// image.resize1d/2d/3d and dyn.image.resize (nn_resize_kernels.cpp) and
// image.grid_sample (nn_grid_sample_kernels.cpp), registered with the rest of
// the image family.
void register_resize_kernels();
void register_grid_sample_kernels();
}  // namespace anvil::reference
