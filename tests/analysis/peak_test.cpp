// The measured peaks: the bf16 unit is reported exactly where the CPU has one, with a rate, and
// the FP32 measurement names the widest instruction set it used.
#include "anvil/analysis/peak.h"

#include <gtest/gtest.h>

namespace anvil::analysis {
namespace {

TEST(PeakFlops, Bf16UnitIsReportedWhereTheCpuHasIt) {
  const PeakMeasurement bf16 = measure_bf16_peak_flops(1);
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool has_unit = __builtin_cpu_supports("avx512bf16");
#else
  const bool has_unit = false;
#endif
  EXPECT_EQ(!bf16.isa.empty(), has_unit) << bf16.isa;
  if (has_unit) {
    EXPECT_EQ(bf16.vector_bits, 512);
    EXPECT_GT(bf16.gflops, 0.0);
  } else {
    EXPECT_EQ(bf16.gflops, 0.0);
  }
}

TEST(PeakFlops, Fp32NamesItsInstructionSet) {
  const PeakMeasurement narrow = measure_peak_flops(128, 1);
  EXPECT_EQ(narrow.vector_bits, 128);
  EXPECT_EQ(narrow.isa, "SSE2");
  EXPECT_GT(narrow.gflops, 0.0);
}

}  // namespace
}  // namespace anvil::analysis
