// Target strings: parsing, printing, errors naming the bad part, and what the vector width
// queries report for known CPUs.
#include "anvil/codegen/target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

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

// True when the target has exactly the features of the map (what a kernel built for it may use).
void expect_features(const Target& target, const std::string& triple,
                     const std::map<std::string, bool>& features) {
  Target spelled = Target::parse(target.to_string() + " -mtriple=" + triple);
  std::map<std::string, bool> got = Target::cpu_features(triple, spelled.mcpu);
  for (const std::string& attr : spelled.mattrs) got[attr.substr(1)] = attr[0] == '+';
  for (const auto& [name, present] : features)
    EXPECT_EQ(got.at(name), present) << name << " in " << target.to_string();
}

// A CPU that LLVM 16 does not name (AMD Zen 5: family 26, getHostCPUName() says "generic")
// takes the nearest named CPU of its vendor and keeps its own features.
TEST(Target, UnnamedHostResolvesToTheNearestCpuOfItsVendor) {
  const std::string triple = "x86_64-pc-linux-gnu";
  std::map<std::string, bool> zen5 = Target::cpu_features(triple, "znver4");
  for (const char* extra : {"avx512vp2intersect", "avxvnni", "movdiri", "movdir64b"})
    zen5[extra] = true;
  Target host = Target::describe_host(triple, "generic", "amd", zen5);
  EXPECT_EQ(host.mcpu, "znver4");
  EXPECT_NE(std::find(host.mattrs.begin(), host.mattrs.end(), "+avx512vp2intersect"),
            host.mattrs.end());
  expect_features(host, triple, zen5);
  EXPECT_EQ(Target::parse(host.to_string()).vector_bits(), 512);

  // A virtual machine that hides AVX-512 from a Zen 4 still resolves within AMD.
  std::map<std::string, bool> hidden = Target::cpu_features(triple, "znver4");
  for (auto& [name, present] : hidden)
    if (name.rfind("avx512", 0) == 0) present = false;
  Target no_avx512 = Target::describe_host(triple, "", "amd", hidden);
  EXPECT_TRUE(no_avx512.mcpu.rfind("znver", 0) == 0) << no_avx512.mcpu;
  expect_features(no_avx512, triple, hidden);
  EXPECT_EQ(Target::parse(no_avx512.to_string()).vector_bits(), 256);

  for (const char* cpu : {"icelake-server", "skylake-avx512", "haswell"}) {
    std::map<std::string, bool> features = Target::cpu_features(triple, cpu);
    Target intel = Target::describe_host(triple, "generic", "intel", features);
    EXPECT_EQ(intel.mcpu, cpu);
    EXPECT_TRUE(intel.mattrs.empty()) << intel.to_string();
  }
  // A named CPU stays itself; an unknown vendor stays generic, features still exact.
  std::map<std::string, bool> zen3 = Target::cpu_features(triple, "znver3");
  EXPECT_EQ(Target::describe_host(triple, "znver3", "amd", zen3).mcpu, "znver3");
  Target unknown = Target::describe_host(triple, "generic", "", zen3);
  EXPECT_EQ(unknown.mcpu, "generic");
  expect_features(unknown, triple, zen3);
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
