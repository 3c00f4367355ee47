// build_vm(): compiles a module for the virtual machine (TVM's relay.vm.compile). The graph
// passes and fusion run as for build(); every fused group with static shapes becomes a compiled
// kernel, and what the graph executor cannot run (If, data-dependent output shapes, dynamic
// dims) becomes VM instructions and runtime functions.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/runtime/vm.h"

namespace anvil::driver {

// What build_vm() returns: the executable (instructions, constants, kernels), and the lowered
// kernels kept for export.
class VmModule {
 public:
  // A fresh virtual machine over the executable.
  VirtualMachine create_vm() const;
  // The instructions of every function as text (docs/vm.md).
  std::string print_bytecode() const;
  // The compiled program itself (instructions, constants, kernels, runtime functions).
  const std::shared_ptr<const vm::Executable>& executable() const;
  // Writes a VM package x.tar (mod.so, mod.vm; docs/artifact-format.md) for load_module; any
  // other extension is an Error. Throws Error naming a runtime function that cannot be saved
  // (a group run by the reference kernels). The file appears whole or not at all. compiler is
  // the C compiler driver that links the library.
  void export_library(const std::string& path, const std::string& compiler = "cc") const;

  struct Impl;
  explicit VmModule(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

// Compiles @main of mod (params bound as constants) for the VM. Throws Error for ops with no
// compute and no runtime kernel (all listed at once) or a bad target.
VmModule build_vm(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options = {});

}  // namespace anvil::driver
