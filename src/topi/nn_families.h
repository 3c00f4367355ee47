// The neural-network computes come in families, one file each; register_nn_computes (nn.cpp)
// calls them all.
#pragma once

namespace anvil::topi {

void register_nn_conv_computes();   // nn_conv.cpp: conv1d/2d/3d and their transposes
void register_nn_dense_computes();  // nn_dense.cpp: dense, matmul, batch_matmul, numpy matmul
void register_nn_pool_computes();   // nn_pool.cpp: max/avg/lp, global and adaptive pooling
void register_nn_norm_computes();   // nn_norm.cpp: batch/layer/instance/group norm, lrn, softmax,
                                    // dropout
void register_nn_image_computes();  // nn_image.cpp: pad, depth/space rearrangement; resize
void register_resize_computes();    // nn_resize.cpp: image.resize1d/2d/3d, grid_sample

}  // namespace anvil::topi
