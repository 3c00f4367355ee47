// build(): the whole compiler in one call (TVM's relay.build). An imported or hand-built
// module goes through the graph passes of the opt level, each fused group is lowered to a
// kernel, the kernels are compiled, and the graph is planned into graph JSON.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/package.h"
#include "anvil/transform/pass.h"

namespace anvil::driver {

struct BuildOptions {
  // "llvm [-mcpu=... -mattr=...]" (host CPU by default) or "c".
  std::string target = "llvm";
  // Passes, opt level (3 unless set) and dumps.
  transform::PassContext pass_context;
  // Print the lowered tensor IR of every kernel to stderr.
  bool print_tir = false;
  // Called as the build advances: ("lower", groups done, groups in all) for each fused group,
  // then ("codegen", 0, 1) and ("codegen", 1, 1) around machine code generation.
  std::function<void(const std::string& phase, int done, int total)> progress;
  // Threads compiling kernels to machine code; 0: ANVIL_COMPILE_THREADS, else all hardware
  // threads. The result does not depend on it.
  int compile_threads = 0;
  // The knob values each fused group is scheduled with (tuning records), or null for the
  // heuristic's (lower::LowerGroupOptions::config_for).
  std::function<const lower::KnobConfig*(const ir::Function& group,
                                         const lower::LowerGroupOptions& options)>
      config_for;
};

// The graph as build() lowers it: after the graph passes of the opt level, its groups fused
// (primitive functions called from @main); and the options each group is lowered with.
struct FusedGraph {
  ir::IRModule fused;
  lower::LowerGroupOptions lower_options;
};
FusedGraph fuse_graph(const ir::IRModule& mod,
                      const std::vector<std::pair<std::string, Tensor>>& params,
                      const BuildOptions& options = {});

// The ops called in a fused group, in execution order: "nn.conv2d, add, nn.relu".
std::string fused_op_names(const ir::FunctionNode& fn);

// What build() returns (TVM's executor factory): the graph, the compiled kernels, the params
// left after constant folding, and the lowered PrimFuncs kept for export.
class BuiltModule {
 public:
  const std::string& graph_json() const;
  const Module& lib() const;
  const std::vector<std::pair<std::string, Tensor>>& params() const;
  // A graph executor with the params loaded.
  GraphExecutor create_executor() const;
  // The package parts (graph JSON, kernel library, params).
  Package package() const;
  // The module as text at one stage: "relay" (the optimized, fused graph IR, headed by the
  // graph passes' remarks as // comments: strategies that declined an op, and why), "tir" (every
  // lowered kernel), "ll" (LLVM IR), "asm" (assembly) or "c" (C source). Anything else, or
  // "ll"/"asm" for the c target, is an Error naming the format.
  std::string get_source(const std::string& format) const;
  // Writes x.tar (mod.so, mod.json, mod.params) or x.so (self-contained), chosen by
  // extension; anything else is an Error. The file appears whole or not at all. compiler is
  // the C compiler driver that links the library (tvmc's --cross-compiler).
  void export_library(const std::string& path, const std::string& compiler = "cc") const;

  struct Impl;
  explicit BuiltModule(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

// Which executor serves mod: "graph" when every input shape is static and, after the graph
// passes of build(), every value has a static type, no If or While remains and every operator has a
// compute; "vm" otherwise (dynamic dims, control flow, data-dependent shapes, shape operands
// that arrive at run time). The passes run only when the unoptimized module is not plainly
// static.
std::string pick_executor(const ir::IRModule& mod,
                          const std::vector<std::pair<std::string, Tensor>>& params,
                          const BuildOptions& options = {});

// The precision build() runs convolutions and matrix products in for these options: "fp32" or
// "bf16", from the pass config "anvil.precision" (fp32, bf16 or auto) and the target
// (docs/precision.md). Throws Error for an unknown value.
std::string build_precision(const BuildOptions& options);

// The names of the graph passes of the pipeline, in order (what --disabled-pass accepts).
std::vector<std::string> pass_names();

// The graph executor's storage for a module as build() plans it (docs/fusion-and-memory.md).
struct GraphMemoryPlan {
  // What the graph executor will allocate: the activations' arena against the largest live
  // set (the most bytes of intermediate values alive at one node, the least any plan could
  // spend on them), the params left after constant folding, the inputs and outputs.
  GraphMemoryUse memory;
  // The graph JSON build() would write, storage plan included; kernel nodes are named after
  // their fused groups, since no kernel is lowered.
  std::string graph_json;
};

// build()'s graph passes and storage plan without lowering or compiling a kernel: cheap
// enough for analyses. Throws Error where build() would refuse the module (dynamic shapes,
// ops that compute output dims at run time, ops without a compute).
GraphMemoryPlan plan_graph_memory(const ir::IRModule& mod,
                                  const std::vector<std::pair<std::string, Tensor>>& params,
                                  const BuildOptions& options = {});

// Builds @main of mod with params bound as constants. Throws Error for unsupported ops (all
// listed at once), dynamic shapes, or a bad target.
BuiltModule build(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options = {});

// The kernels of a graph package that do heavy work on the generic schedule: "<kernel> (<fused
// ops>): <schedule>". A kernel is heavy when one of its ops reduces or has data reuse (fusion
// pattern comm-reduce or out-elementwise-fusable: convolutions, matmuls, dense, pooling,
// reductions, softmax) or is a normalization. There should be none: a target's strategy or the
// auto-scheduler takes each, and `anvil compile` warns of any left.
std::vector<std::string> heavy_generic_kernels(const std::string& graph_json);

}  // namespace anvil::driver
