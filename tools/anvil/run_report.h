// What `anvil run` prints about a run: tvmc's time summary, the top-N of an output, and the
// per-kernel profile table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/vm.h"

namespace anvil::cli {

// tvmc's block: "Execution time summary:", the centred header, the centred numbers.
void print_time_summary(const BenchmarkResult& result);

// The n largest values of a tensor (flattened) with their indices, largest first.
void print_top(const Tensor& output, int n);

// One row per kernel (name, fused ops, mean ms, share, GFLOP/s, % peak, the precision of its
// products), slowest first, then the sum of the kernel times against the measured whole-run
// time. peak_gflops / bf16_peak_gflops: the machine's measured FP32 / BF16 peaks on the run's
// threads (0: not measured), for the "% peak" column of float32 / bf16 kernels.
void print_profile(const std::vector<KernelProfile>& rows, double run_ms, double peak_gflops,
                   double bf16_peak_gflops = 0);

// "1.5 KiB", "12.3 MiB": bytes in binary units, one decimal (whole bytes below 1 KiB).
std::string binary_bytes(int64_t bytes);

// One line: "memory: activations 12.3 MiB planned, largest live set 11.0 MiB (1.12x), params
// 44.6 MiB, inputs and outputs 0.6 MiB"; the live set is left out when the graph does not
// record it, the ratio when the live set is empty.
void print_memory(const GraphMemoryUse& use);
// "memory: activations 2.1 MiB in 4 buffers, reused for 23.0 MiB allocated" (the VM's arena).
void print_memory(const VmMemoryUse& use);

}  // namespace anvil::cli
