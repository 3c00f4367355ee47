// Lowering of the fused @main: each primitive group becomes a kernel (a lowered PrimFunc)
// and its call a call_tir of that kernel.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/tir/tir.h"

namespace anvil::driver {

// What profiles show about a kernel: the ops fused into it and the work it does.
struct KernelInfo {
  std::string fused_ops;  // "nn.conv2d, add, nn.relu"
  int64_t flops = 0;      // per call (analysis::function_flops)
  // The schedule strategy that scheduled it ("x86.conv2d_nchwc", "generic"), and after
  // "generic", why the anchor's strategy declined.
  std::string schedule;
  // The optional schedule steps that were refused in it ("<step>: <reason>; ..."), if any.
  std::string schedule_refused;
};

struct LoweredGraph {
  ir::Function main;                              // calls are call_tir(@kernel, ...)
  std::vector<tir::PrimFunc> kernels;             // lowered (packed calling convention)
  std::map<std::string, KernelInfo> kernel_info;  // by kernel name; groups only
};

// Called as each fused group is lowered: (groups done, groups in all).
using LowerProgress = std::function<void(int done, int total)>;

// Throws one Error listing every operator called in main (groups included) without a compute.
void check_every_op_has_compute(const ir::Function& main);

// The PrimFunc @name of mod that call_tir calls, lowered as a kernel exported under `name`;
// `who` ("build", "build_vm") heads the Error when @name is not a PrimFunc.
tir::PrimFunc lower_called_prim_func(const ir::IRModule& mod, const std::string& name,
                                     const char* who);

// Lowers every group of @main; structurally equal groups share one kernel. Throws one Error
// listing every operator without a compute before lowering anything.
LoweredGraph lower_graph(const ir::IRModule& fused, const lower::LowerGroupOptions& options,
                         bool print_tir, const LowerProgress& progress = {});

}  // namespace anvil::driver
