// The family files of src/topi/ each register their computes (and schedules) through one
// function; registry.cpp calls them all once, on first use of the table.
#pragma once

namespace anvil::topi {

void register_elemwise_computes();   // elemwise.cpp: unary/binary math, activations, cast, where
void register_reduce_computes();     // reduce.cpp: sum/mean/max/..., arg reductions, logsumexp
void register_transform_computes();  // transform.cpp: reshape, transpose, concat, split, ...
void register_index_computes();      // index.cpp: take, gather, one_hot, creation ops, ...
void register_nn_computes();         // nn.cpp: conv, dense, matmul, pool, norms, pad, resize
void register_qnn_computes();        // qnn.cpp: quantize, dequantize
void register_x86_schedules();       // x86/schedules.cpp: x86 layout and schedule strategies

}  // namespace anvil::topi
