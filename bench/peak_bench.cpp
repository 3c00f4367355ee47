// The host's measured peaks, the figures the kernels' GFLOP/s are read against: FP32 (FMA
// chains on the widest vectors) and bf16 (vdpbf16ps chains, where the CPU has AVX-512 BF16),
// on 1 thread and on every core.
//
//     build/peak_bench [threads...]     (default: 1 and the number of cores)
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "anvil/analysis/peak.h"

int main(int argc, char** argv) {
  std::vector<int> threads;
  for (int i = 1; i < argc; ++i) {
    const int n = std::atoi(argv[i]);
    if (n < 1) {
      std::fprintf(stderr, "peak_bench: '%s' is not a thread count\n", argv[i]);
      return 2;
    }
    threads.push_back(n);
  }
  if (threads.empty()) threads = {1, int(std::max(1u, std::thread::hardware_concurrency()))};
  std::printf("| threads | FP32 GFLOP/s | ISA | bf16 GFLOP/s | bf16 unit | bf16 / FP32 |\n");
  std::printf("|---|---|---|---|---|---|\n");
  auto bf16_row = [](int t, const anvil::analysis::PeakMeasurement& fp32,
                     const anvil::analysis::PeakMeasurement& bf16) {
    if (bf16.isa.empty())
      std::printf("| %d | %.1f | %s | - | none | - |\n", t, fp32.gflops, fp32.isa.c_str());
    else
      std::printf("| %d | %.1f | %s | %.1f | %s | %.2fx |\n", t, fp32.gflops, fp32.isa.c_str(),
                  bf16.gflops, bf16.isa.c_str(), bf16.gflops / fp32.gflops);
  };
  for (int t : threads) {
    const anvil::analysis::PeakMeasurement fp32 = anvil::analysis::measure_peak_flops(512, t);
    bf16_row(t, fp32, anvil::analysis::measure_bf16_peak_flops(t));
    const anvil::analysis::PeakMeasurement amx = anvil::analysis::measure_amx_bf16_peak_flops(t);
    if (!amx.isa.empty()) bf16_row(t, fp32, amx);
  }
  return 0;
}
