// The converter families. Each file registers its ONNX op types; a new family
// adds one declaration here and one call in register_all_converters.
#pragma once

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

void register_all_converters(ConverterTable& table);

void register_control_converters(ConverterTable& table);  // Constant, Identity, If, Loop
void register_math_converters(
    ConverterTable& table);                          // elementwise math, logic, casts, activations
void register_nn_converters(ConverterTable& table);  // Conv, pooling, normalization, Gemm, MatMul
void register_tensor_converters(ConverterTable& table);    // shapes, slicing, gathering, layout
void register_reduce_converters(ConverterTable& table);    // Reduce*, ArgMax, ArgMin
void register_norm_converters(ConverterTable& table);      // normalization, Softmax family, Dropout
void register_rnn_converters(ConverterTable& table);       // RNN, GRU, LSTM
void register_training_converters(ConverterTable& table);  // Adagrad, Momentum, Adam
void register_attention_converters(
    ConverterTable& table);  // Attention (opset 23), RMSNormalization, RotaryEmbedding, SwiGLU
void register_contrib_transformer_converters(
    ConverterTable& table);  // com.microsoft Attention, SkipLayerNormalization, FastGelu, ...
void register_linear_recurrence_converters(
    ConverterTable& table);                              // LinearAttention, CausalConvWithState
void register_signal_converters(ConverterTable& table);  // DFT
void register_ml_converters(ConverterTable& table);      // ai.onnx.ml Binarizer, ...
void register_quantize_converters(
    ConverterTable& table);  // QDQ, QLinear*, DynamicQuantizeLinear, com.microsoft Q ops

}  // namespace anvil::frontend::onnx_import
