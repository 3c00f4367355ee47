// Lowering of the fused @main: each primitive group becomes a kernel (a lowered PrimFunc)
// and its call a call_tir of that kernel.
#pragma once

#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/tir/tir.h"

namespace anvil::driver {

struct LoweredGraph {
  ir::Function main;                   // calls are call_tir(@kernel, ...)
  std::vector<tir::PrimFunc> kernels;  // lowered (packed calling convention)
};

// Lowers every group of @main; structurally equal groups share one kernel. Throws one Error
// listing every operator without a compute before lowering anything.
LoweredGraph lower_graph(const ir::IRModule& fused, const lower::LowerGroupOptions& options,
                         bool print_tir);

}  // namespace anvil::driver
