// Pieces shared by the math converter files (arithmetic, logic, casts and
// clip, activations); register_math_converters calls each file's part.
#pragma once

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import::math {

void register_arithmetic_converters(ConverterTable& table);  // convert_math.cpp
void register_logic_converters(ConverterTable& table);       // convert_math_logic.cpp
void register_cast_converters(ConverterTable& table);        // convert_math_cast.cpp
void register_activation_converters(ConverterTable& table);  // convert_math_activation.cpp

// The element type of input i (its rank may be unknown); fails naming the node
// when the input is not a tensor.
DataType input_dtype(const ConvertContext& ctx, size_t i);

// A scalar constant of the given dtype.
ir::Expr scalar(ConvertContext& ctx, double value, DataType dtype);

// A converter calling a one-input op on input 0.
ConverterFn unary(const char* op_name);

// A converter calling a broadcasting two-input op on inputs 0 and 1. Before
// opset 7 ONNX broadcast only when the node says broadcast=1, aligning the
// second input at `axis` of the first; that is honoured for every opset.
ConverterFn binary(const char* op_name);

// The second input of a binary node, reshaped for the pre-opset-7
// broadcast=1/axis form so that numpy broadcasting matches it.
ir::Expr legacy_broadcast_rhs(ConvertContext& ctx);

}  // namespace anvil::frontend::onnx_import::math
