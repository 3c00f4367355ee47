// Pieces shared by the nn converter files: convolution and matrix products
// (convert_nn.cpp), pooling (convert_pool.cpp), padding and sub-pixel ops
// (convert_image.cpp), and Resize/Upsample (convert_resize.cpp).
#pragma once

#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

void register_pool_converters(ConverterTable& table);
void register_image_converters(ConverterTable& table);
void register_resize_converters(ConverterTable& table);

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

// A 1-D int64 constant.
ir::Expr ints_constant(ConvertContext& ctx, const std::vector<int64_t>& values);

}  // namespace anvil::frontend::onnx_import
