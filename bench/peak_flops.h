// Measures the machine's float32 peak: independent fused multiply-adds on the
// widest vectors this CPU has, on a given number of threads.
#pragma once

namespace anvil::bench {

// Peak GFLOP/s on `threads` threads (each FMA counts as 2 flops per lane).
double measure_peak_gflops(int threads);

}  // namespace anvil::bench
