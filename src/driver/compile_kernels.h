// The target and code generation steps build() and build_vm() share.
#pragma once

#include <string>
#include <vector>

#include "anvil/codegen/target.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/tir.h"

namespace anvil::driver {

// A target string resolved for a build: "llvm" is the host; "c" borrows the host CPU's name
// and vector width, since its kernels are compiled by the system compiler for this machine.
struct BuildTarget {
  codegen::Target target;
  int vector_bits = 0;  // the float SIMD width lowering vectorizes for
};
BuildTarget resolve_build_target(const std::string& text);

// The lowered kernels compiled into a loaded Module: the LLVM JIT, or for the c target the C
// back end and the system compiler through a temporary shared library.
Module compile_kernels(const std::vector<tir::PrimFunc>& kernels, const codegen::Target& target);

}  // namespace anvil::driver
