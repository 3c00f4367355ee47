// Pieces shared by the quantization converters: ONNX's QDQ and QLinear ops
// (convert_quantize.cpp) and ONNX Runtime's com.microsoft quantized ops
// (convert_quantize_contrib.cpp).
#pragma once

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

void register_quantize_contrib_converters(ConverterTable& table);

// Input i, checked to be a float scale; when it is a constant, every value must
// be positive and finite (a zero scale divides by zero). Errors name the node and `name`.
ir::Expr checked_scale(ConvertContext& ctx, size_t i, const char* name);

// Zero point input i checked to have `dtype`; when absent, zeros of that dtype
// shaped like the scale (input scale_index).
ir::Expr zero_point_or_zero(ConvertContext& ctx, size_t i, size_t scale_index, DataType dtype,
                            const char* name);

// qnn.dequantize of input x_index with the scale and zero point inputs given
// (the zero point optional), per axis `axis` when the scale is a vector.
ir::Expr dequantize_input(ConvertContext& ctx, size_t x_index, size_t scale_index, size_t zp_index,
                          int64_t axis = 1);

// qnn.quantize of a float value with the scale and zero point inputs given (the
// zero point optional: then `fallback` is the output type).
ir::Expr quantize_to(ConvertContext& ctx, const ir::Expr& value, size_t scale_index,
                     size_t zp_index, DataType fallback, int64_t axis = 1);

// An int32 accumulator requantized: saturate(round(float(acc) * multiplier) +
// zero point), with the zero point input zp_index (absent: 0 of `fallback`).
ir::Expr requantize(ConvertContext& ctx, const ir::Expr& acc, const ir::Expr& multiplier,
                    size_t zp_index, DataType fallback);

// Input i (float) quantized to uint8 over its range extended to include 0, as
// DynamicQuantizeLinear defines it: scale = (max - min) / 255, zero point =
// saturate(round(-min / scale)).
struct DynamicQuantized {
  ir::Expr data, scale, zero_point;
};
DynamicQuantized dynamic_quantize_uint8(ConvertContext& ctx, size_t i);

// (A - a_zero_point) x B in int32 where A is uint8 (rank >= 2) with a scalar zero point known
// at compile or at run time (null: 0), and B (input b_index) is a 2-D int8 (K, N) whose zero
// point (input b_zp_index) is absent or zero: qnn.dense of A by B's transpose with zero points
// of 0, minus a_zero_point times B's column sums, so that the product runs as the int8 (VNNI)
// dense layer. Null where those conditions do not hold.
ir::Expr uint8_times_int8(ConvertContext& ctx, const ir::Expr& a, const ir::Expr& a_zero_point,
                          size_t b_index, size_t b_zp_index);

// Input i as float32 (scales given in float16 are widened).
ir::Expr as_float32(ConvertContext& ctx, size_t i);

// A 1-D vector v reshaped to broadcast along `axis` of a rank-`rank` tensor
// (trailing unit dims); a scalar or one-element v is returned as is.
ir::Expr along_axis(ConvertContext& ctx, const ir::Expr& v, int64_t rank, int64_t axis);

}  // namespace anvil::frontend::onnx_import
