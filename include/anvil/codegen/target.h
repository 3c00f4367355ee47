// Code generation targets: "llvm" (the host CPU unless -mcpu says otherwise),
// "llvm -mcpu=znver4 -mattr=+avx512f,+fma", or "c".
#pragma once

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

  // Parses a target string; throws Error naming the bad part ("unknown target kind 'cuda'",
  // "unknown option '-foo' in target 'llvm -foo'", "unknown CPU 'znver9'").
  static Target parse(std::string_view text);
  // The host: llvm with the host CPU name and its features.
  static Target host();
  // The canonical text form that parse reads back.
  std::string to_string() const;
  // Width of the widest vector registers in bits (512 with avx512f, 256 with avx2, ...), used
  // by schedules to pick vector lengths.
  int vector_bits() const;
  // Number of vector registers (32 with avx512f, 16 otherwise on x86-64).
  int vector_registers() const;
};

}  // namespace anvil::codegen
