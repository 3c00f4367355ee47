// The machine's measured FP32 peak: the rate of a loop of independent FMA chains on the widest
// vectors the CPU runs (no wider than asked), on a given number of threads started together.
// `anvil analyze --target` divides a model's FLOPs by it, and the benchmarks report their rates
// as a fraction of it, so both use this one measurement.
#pragma once

#include <string>

namespace anvil::analysis {

struct PeakMeasurement {
  double gflops = 0;    // over all threads
  int vector_bits = 0;  // 512, 256, 128, or 32 (scalar)
  std::string isa;      // "AVX-512", "AVX2+FMA", "SSE2" or "scalar"
  int threads = 1;
};

// Grows the run until it takes about 50 ms, then keeps the best of four runs of that length.
PeakMeasurement measure_peak_flops(int max_vector_bits, int threads);

// The bf16 rate of the host's bf16 dot-product unit (AVX-512 BF16: chains of vdpbf16ps, four
// FLOPs per float lane: two products and their two additions), measured the same way; gflops 0
// and an empty isa where the CPU has none. The bf16 kernels report their rates against it.
PeakMeasurement measure_bf16_peak_flops(int threads);

// The bf16 rate of the host's AMX tiles (chains of tdpbf16ps on 2 x 2 accumulator tiles, 16 x
// 16 sums of 32 products each: 16384 FLOPs an instruction), measured the same way; gflops 0
// and an empty isa where the CPU has no AMX-BF16 or the operating system refuses the tiles.
// Kernels built for the host run their bf16 products on the tiles where this is non-zero.
PeakMeasurement measure_amx_bf16_peak_flops(int threads);

}  // namespace anvil::analysis
