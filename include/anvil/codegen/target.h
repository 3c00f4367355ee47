// Code generation targets: "llvm" (the host CPU unless -mcpu says otherwise),
// "llvm -mcpu=znver4 -mattr=+avx512f,+fma", or "c"; either may name the keys of its strategy
// records ("c -keys=mychip,x86").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace anvil::codegen {

struct Target {
  std::string kind = "llvm";        // "llvm" or "c"
  std::string mcpu;                 // empty: the host CPU
  std::vector<std::string> mattrs;  // "+avx512f", "-avx512bw", ...
  std::string mtriple;              // empty: the host triple
  int opt_level = 3;                // LLVM's -O level, "-opt-level=N"
  // The keys under which ops' strategy records are looked up, most specific first
  // ("-keys=mychip,x86"); empty: the CPU's ("x86").
  std::vector<std::string> keys;

  // Parses a target string; throws Error naming the bad part ("unknown target kind 'cuda'",
  // "unknown option '-foo' in target 'llvm -foo'", "unknown CPU 'znver9'").
  static Target parse(std::string_view text);
  // The host: llvm with the host CPU name and its features. A CPU that LLVM does not name
  // (newer than LLVM) becomes the nearest named CPU of its vendor (see describe_host).
  static Target host();
  // The target for a host whose CPU LLVM calls cpu_name ("generic" when it does not know it),
  // made by vendor ("amd", "intel", anything else) and with these features (LLVM names, true
  // when present). An unnamed CPU is resolved to the named CPU of the same vendor whose own
  // features differ least from the host's; the mattrs then list every difference, so the
  // target has exactly the host's features whatever the name.
  static Target describe_host(const std::string& triple, const std::string& cpu_name,
                              const std::string& vendor,
                              const std::map<std::string, bool>& features);
  // Every feature that host detection knows, true when cpu (of triple) has it: the form a
  // host reports.
  static std::map<std::string, bool> cpu_features(const std::string& triple,
                                                  const std::string& cpu);
  // The canonical text form that parse reads back.
  std::string to_string() const;
  // Width of the widest vector registers in bits (512 with avx512f, 256 with avx2, ...), used
  // by schedules to pick vector lengths.
  int vector_bits() const;
  // Number of vector registers (32 with avx512f, 16 otherwise on x86-64).
  int vector_registers() const;
  // True when the target has a bfloat16 dot-product unit that the bf16 kernels use
  // (AVX-512 BF16's vdpbf16ps); false for the c target, which emulates it.
  bool has_bf16_dot_product() const;
  // True when the target has AMX tiles with the bfloat16 product (amx-tile and amx-bf16):
  // the bf16 convolutions and dense layers then run on tdpbf16ps (src/topi/x86/amx_conv.cpp).
  bool has_amx_bf16() const;
};

}  // namespace anvil::codegen
