// The steps build() and build_vm() share: resolving the target, typing the module with its
// params bound, the lowering options, and compiling the lowered kernels.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/codegen/target.h"
#include "anvil/driver/build.h"
#include "anvil/driver/build_target.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/tir.h"
#include "driver/lower_graph.h"
#include "driver/pipeline.h"

namespace anvil::driver {

// Where both builds start from: the target, `mod` typed with `params` bound (not yet
// optimized), and the options of lowering, whose progress goes to options.progress as "lower".
struct BuildStart {
  codegen::Target target;
  int vector_bits = 0;
  PipelineTarget pipeline;  // what the graph passes know of the target
  ir::IRModule bound;
  lower::LowerGroupOptions lower_options;
  LowerProgress lower_progress;  // empty without options.progress
};
BuildStart start_build(const ir::IRModule& mod,
                       const std::vector<std::pair<std::string, Tensor>>& params,
                       const BuildOptions& options);

// Kernels compiled once for both uses: loaded in memory, and for llvm targets kept as object
// code so that exporting links the same machine code instead of compiling it again.
struct CompiledKernels {
  Module lib;
  std::shared_ptr<const codegen::ObjectCode> object_code;  // null for the c target
  double load_seconds = 0;  // linking into memory (the system compiler's run for c)
};

// The lowered kernels compiled and loaded: for llvm targets by compile_objects on `threads`
// threads (0: the default of CodegenOptions) and the JIT's linker; for the c target by the C
// back end and the system compiler through a temporary shared library.
CompiledKernels compile_kernel_library(const std::vector<tir::PrimFunc>& kernels,
                                       const codegen::Target& target, int threads = 0);

// Wall-clock times of the build steps after the graph passes, printed like the pass times.
class PhaseTimes {
 public:
  // A row: name, seconds and an optional note ("29 kernels"). Nested rows are indented.
  void add(std::string name, double seconds, std::string note = {}, bool nested = false);
  // Prints "<title> (total X ms):" and the rows to stderr; nested rows are not in the total.
  void print(const std::string& title) const;

 private:
  struct Row {
    std::string name;
    double seconds = 0;
    std::string note;
    bool nested = false;
  };
  std::vector<Row> rows_;
};

}  // namespace anvil::driver
