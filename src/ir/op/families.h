// The operator families. Each family file registers its ops in the one table;
// a new family adds one declaration here and one call in op_table.cpp.
#pragma once

#include "anvil/ir/op.h"

namespace anvil::ir {

void register_builtin_ops(OpTable& table);   // call_tir, call_dps_packed
void register_nn_conv_ops(OpTable& table);   // conv1d/2d/3d, conv2d_transpose, blocked conv
void register_nn_dense_ops(OpTable& table);  // dense, matmul, batch_matmul, bias_add
void register_nn_pool_ops(OpTable& table);   // max/avg/lp/global/adaptive pooling
void register_nn_image_ops(
    OpTable& table);  // pad, resize, depth/space rearrangement, batch_flatten
void register_nn_norm_ops(
    OpTable& table);  // batch/layer/group/instance norm, lrn, softmax, dropout
void register_nn_activation_ops(OpTable& table);  // relu, gelu, prelu, ...
void register_elemwise_ops(OpTable& table);   // unary math, broadcasting binary ops, where, clip
void register_reduce_ops(OpTable& table);     // sum, mean, max, argmax, norms, variance, ...
void register_transform_ops(OpTable& table);  // reshape, transpose, concatenate, slices, cast, ...
void register_index_ops(OpTable& table);  // take, gather/scatter, one_hot, topk, sort, cumsum, ...
void register_creation_ops(OpTable& table);  // arange, full/zeros/ones, shape_of, ...
void register_qnn_ops(OpTable& table);       // qnn.quantize, qnn.dequantize
void register_vision_ops(OpTable& table);    // vision.non_max_suppression
void register_linalg_ops(OpTable& table);    // linalg.det
void register_signal_ops(OpTable& table);    // signal.stft, signal.mel_weight_matrix
void register_ml_ops(OpTable& table);        // ml.tree_ensemble

// Winograd F(4x4, 3x3) blocked conv (nn_conv_winograd*.cpp).
void register_nn_conv_winograd_ops(OpTable& table);

}  // namespace anvil::ir
