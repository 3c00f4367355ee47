// Pieces shared by the nn converter files: convolution and matrix products
// (convert_nn.cpp), pooling (convert_pool.cpp), padding and sub-pixel ops
// (convert_image.cpp), and Resize/Upsample (convert_resize.cpp).
#pragma once

#include <optional>
#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

void register_pool_converters(ConverterTable& table);
void register_image_converters(ConverterTable& table);
void register_resize_converters(ConverterTable& table);
void register_vision_converters(ConverterTable& table);
void register_linalg_converters(ConverterTable& table);

// The number of spatial axes of input i, an (N, C, spatial...) tensor with 1
// to 3 spatial axes; an error naming the node otherwise.
size_t spatial_rank(const ConvertContext& ctx, size_t i);

// The static spatial dims of input i; an error saying `what` needs them when
// any is symbolic.
std::vector<int64_t> static_spatial_dims(const ConvertContext& ctx, size_t i, const char* what);

// An attribute with one value per spatial axis, `fallback` for each when absent.
std::vector<int64_t> spatial_ints(const ConvertContext& ctx, const char* name, size_t n,
                                  int64_t fallback);

// The padding of a sliding window over input 0 (every before, then every
// after) from the node's auto_pad and pads attributes. SAME_UPPER and
// SAME_LOWER pad so that the output has ceil(in / stride) positions, the odd
// element after or before; they need static spatial dims.
std::vector<int64_t> window_padding(const ConvertContext& ctx, const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations);

// A scalar constant of the given dtype.
ir::Expr scalar_constant(ConvertContext& ctx, double value, DataType dtype);

// An N-d convolution of x by w with the node's kernel_shape, strides, pads,
// dilations and group attributes; the weight is input `weight_index` (for
// kernel_shape's fallback to its static dims).
ir::Expr convolution(ConvertContext& ctx, const ir::Expr& x, const ir::Expr& w,
                     std::optional<DataType> out_dtype, size_t weight_index = 1);

// Input x_index minus the zero point input zp_index (optional) in int32; a zero
// point of one value per slice of `axis` of x broadcasts along that axis.
ir::Expr shift_by_zero_point(ConvertContext& ctx, size_t x_index, size_t zp_index, int64_t axis);

// A 1-D int64 constant.
ir::Expr ints_constant(ConvertContext& ctx, const std::vector<int64_t>& values);

}  // namespace anvil::frontend::onnx_import
