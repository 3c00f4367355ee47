// The families of reference kernels, mirroring the op families. Each family
// file registers its kernels with register_kernel; a new family adds one
// declaration here and one call in kernel_registry.cpp.
#pragma once

namespace anvil::reference {

void register_elemwise_kernels();    // unary math, broadcasting binary ops, where, clip, cast
void register_activation_kernels();  // relu, gelu, prelu, ...
void register_nn_conv_kernels();     // conv1d/2d/3d, conv2d_transpose, blocked conv
void register_nn_dense_kernels();    // dense, matmul, batch_matmul, bias_add
void register_nn_pool_kernels();     // max/avg/lp/global/adaptive pooling
void register_nn_image_kernels();    // pad, resize, depth/space rearrangement, batch_flatten
void register_nn_norm_kernels();     // batch/layer/group/instance norm, lrn, softmax, dropout
void register_reduce_kernels();      // sum, mean, max, argmax, norms, variance, ...
void register_transform_kernels();   // reshape, transpose, concatenate, slices, cast,
                                     // layout_transform, ...
void register_index_kernels();       // take, gather/scatter, one_hot, topk, sort, cumsum, ...
void register_creation_kernels();    // arange, full/zeros/ones, shape_of, ...
void register_qnn_kernels();         // qnn.quantize, qnn.dequantize
void register_vision_kernels();      // vision.non_max_suppression
void register_linalg_kernels();      // linalg.det
void register_signal_kernels();      // signal.stft, signal.mel_weight_matrix
void register_ml_kernels();          // ml.tree_ensemble

// Winograd F(4x4, 3x3) blocked conv (nn_conv_winograd*.cpp).
void register_nn_conv_winograd_kernels();

}  // namespace anvil::reference
