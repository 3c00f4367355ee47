// The target of a build as build() resolves it, for the rooms that must compile for the same
// machine the same way (the tuner's measurement worker).
#pragma once

#include <string>

#include "anvil/codegen/target.h"

namespace anvil::driver {

// A target string resolved for a build: "llvm" is the host; "c" borrows the host CPU's name
// and vector width, since its kernels are compiled by the system compiler for this machine.
struct BuildTarget {
  codegen::Target target;
  int vector_bits = 0;  // the float SIMD width lowering vectorizes for
};

// The target build() compiles for when BuildOptions::target is `text`.
BuildTarget resolve_build_target(const std::string& text);

}  // namespace anvil::driver
