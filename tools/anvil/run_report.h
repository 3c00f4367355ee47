// What `anvil run` prints about a run: tvmc's time summary, the top-N of an output, and the
// per-kernel profile table.
#pragma once

#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/tensor.h"

namespace anvil::cli {

// tvmc's block: "Execution time summary:", the centred header, the centred numbers.
void print_time_summary(const BenchmarkResult& result);

// The n largest values of a tensor (flattened) with their indices, largest first.
void print_top(const Tensor& output, int n);

// One row per kernel (name, fused ops, mean ms, share, GFLOP/s), slowest first, then the sum
// of the kernel times against the measured whole-run time.
void print_profile(const std::vector<KernelProfile>& rows, double run_ms);

}  // namespace anvil::cli
