// The measured peaks: the bf16 unit is reported exactly where the CPU has one, with a rate, and
// the FP32 measurement names the widest instruction set it used.
#include "anvil/analysis/peak.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

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

// The tiles are reported where the kernel lists amx_bf16 among the CPU's flags (the operating
// system's view, independent of the CPUID check the measurement makes), and their rate is above
// the vdpbf16ps one: one tdpbf16ps is 16384 FLOPs.
TEST(PeakFlops, AmxIsReportedWhereTheCpuHasIt) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const bool has_amx =
      text.find(" amx_bf16") != std::string::npos && text.find(" amx_tile") != std::string::npos;
  const PeakMeasurement amx = measure_amx_bf16_peak_flops(1);
  EXPECT_EQ(!amx.isa.empty(), has_amx) << amx.isa;
  if (has_amx) {
    EXPECT_EQ(amx.isa, "AMX-BF16");
    EXPECT_GT(amx.gflops, measure_bf16_peak_flops(1).gflops);
  } else {
    EXPECT_EQ(amx.gflops, 0.0);
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
