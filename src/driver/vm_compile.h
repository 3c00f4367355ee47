// Compilation of an optimized (unfused) @main into VM instructions: each control-flow region is
// fused on its own, fused groups with static types become kernel calls (lowered later by
// build_vm), everything else becomes a runtime function that evaluates the group with the
// reference kernels, and If becomes jumps.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/transform/pass.h"

namespace anvil::driver {

// @main as instructions. InvokeKernel instructions have index -1 until the kernels of
// kernel_calls are lowered and numbered.
struct VmProgram {
  vm::Function main;
  std::vector<Tensor> constants;
  std::vector<vm::RuntimeFunc> runtime_funcs;
  // (instruction index in main, the primitive function it calls), in order.
  std::vector<std::pair<size_t, ir::Function>> kernel_calls;
  // (instruction index in main, the PrimFunc of the module it calls with call_tir), in order.
  std::vector<std::pair<size_t, std::string>> prim_func_calls;
};

// Compiles @main of optimized (typed, params bound, not yet fused; lets allowed), fusing with
// the settings of ctx. Throws Error listing every operator with neither a compute nor a
// reference kernel.
VmProgram compile_vm_program(const ir::IRModule& optimized, const transform::PassContext& ctx,
                             const lower::LowerGroupOptions& lower_options);

}  // namespace anvil::driver
