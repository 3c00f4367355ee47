// The family files of src/topi/ each register their computes through one function, and each
// target folder its strategy records; registry.cpp calls them all once, on first use.
#pragma once

namespace anvil::topi {

void register_elemwise_computes();   // elemwise.cpp: unary/binary math, activations, cast, where
void register_reduce_computes();     // reduce.cpp: sum/mean/max/..., arg reductions, logsumexp
void register_transform_computes();  // transform.cpp: reshape, transpose, concat, split, ...
void register_index_computes();      // index.cpp: take, gather, one_hot, creation ops, ...
void register_nn_computes();         // nn.cpp: conv, dense, matmul, pool, norms, pad, resize
void register_qnn_computes();        // qnn.cpp: quantize, dequantize
void register_x86_strategies();      // x86/strategies.cpp: the x86 target's strategy records

}  // namespace anvil::topi
