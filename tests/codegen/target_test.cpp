// Target strings: parsing, printing, errors naming the bad part, and what the vector width
// queries report for known CPUs.
#include "anvil/codegen/target.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"

namespace anvil::codegen {
namespace {

std::string parse_error(const std::string& text) {
  try {
    Target::parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Target, ParsesEveryOption) {
  Target t = Target::parse(
      "llvm -mcpu=znver4 -mattr=+avx512f,-avx512bw -mtriple=x86_64-pc-linux-gnu -opt-level=2");
  EXPECT_EQ(t.kind, "llvm");
  EXPECT_EQ(t.mcpu, "znver4");
  EXPECT_EQ(t.mattrs, (std::vector<std::string>{"+avx512f", "-avx512bw"}));
  EXPECT_EQ(t.mtriple, "x86_64-pc-linux-gnu");
  EXPECT_EQ(t.opt_level, 2);
  EXPECT_EQ(
      t.to_string(),
      "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 -mattr=+avx512f,-avx512bw -opt-level=2");
  Target again = Target::parse(t.to_string());
  EXPECT_EQ(again.to_string(), t.to_string());
  EXPECT_EQ(Target::parse("llvm").to_string(), "llvm");
  EXPECT_EQ(Target::parse("c").kind, "c");
}

TEST(Target, ErrorsNameTheBadPart) {
  EXPECT_EQ(parse_error("cuda"), "unknown target kind 'cuda' (expected 'llvm' or 'c')");
  EXPECT_EQ(parse_error("llvm -foo"), "unknown option '-foo' in target 'llvm -foo'");
  EXPECT_NE(parse_error("llvm -mcpu=znver9").find("unknown CPU 'znver9'"), std::string::npos);
  EXPECT_NE(parse_error("llvm -opt-level=7").find("bad -opt-level '7'"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mattr=avx2").find("bad feature 'avx2'"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mtriple=nonsense-cpu-os").find("unknown target triple"),
            std::string::npos);
  EXPECT_EQ(parse_error(""), "empty target string");
}

TEST(Target, HostIsAConcreteCpu) {
  Target host = Target::host();
  EXPECT_EQ(host.kind, "llvm");
  EXPECT_FALSE(host.mcpu.empty());
  EXPECT_NE(host.mcpu, "generic");
  // The host's own description parses back.
  EXPECT_EQ(Target::parse(host.to_string()).to_string(), host.to_string());
  EXPECT_GE(host.vector_bits(), 128);
}

TEST(Target, VectorWidthFollowsCpuAndFeatures) {
  EXPECT_EQ(Target::parse("llvm -mcpu=znver4").vector_bits(), 512);
  EXPECT_EQ(Target::parse("llvm -mcpu=znver4").vector_registers(), 32);
  EXPECT_EQ(Target::parse("llvm -mcpu=skylake-avx512").vector_bits(), 512);
  EXPECT_EQ(Target::parse("llvm -mcpu=haswell").vector_bits(), 256);
  EXPECT_EQ(Target::parse("llvm -mcpu=haswell").vector_registers(), 16);
  EXPECT_EQ(Target::parse("llvm -mcpu=znver4 -mattr=-avx512f").vector_bits(), 256);
  EXPECT_EQ(Target::parse("llvm -mcpu=x86-64").vector_bits(), 128);
  EXPECT_EQ(Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").vector_bits(), 128);
  EXPECT_EQ(Target::parse("llvm -mtriple=aarch64-linux-gnu").vector_registers(), 32);
}

}  // namespace
}  // namespace anvil::codegen
