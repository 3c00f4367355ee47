// The x86 strategy records come in op families named as in src/ir/op/ and src/reference/, one
// file each (a family too large for one file splits into <family>_<part>.cpp); each registers
// its records through one function, and register_x86_strategies (strategies.cpp) calls them all.
#pragma once

namespace anvil::topi::x86 {

void register_elemwise_binary_strategies();   // elemwise_binary.cpp: followers of blocked layouts
void register_nn_conv_strategies();           // nn_conv.cpp: conv2d to NCHW{b}c, its schedule
void register_nn_bf16_strategies();           // nn_bf16.cpp: bf16 conv and dense
void register_nn_conv_winograd_strategies();  // nn_conv_winograd.cpp: Winograd F(4x4, 3x3)
void register_nn_dense_strategies();          // nn_dense.cpp: packed dense, matmul, bias_add
void register_nn_pool_strategies();           // nn_pool.cpp: 2-D pools in NCHW{b}c
void register_qnn_strategies();               // qnn.cpp: int8 conv and dense layouts, followers
void register_qnn_conv_strategies();          // qnn_conv.cpp: blocked int8 conv schedules
void register_transform_slice_strategies();   // transform_slice.cpp: concatenate, strided_slice

}  // namespace anvil::topi::x86
