// Compiled-model packages (TVM's export_library / load_module): the graph JSON, the kernel
// library and the params of a built model, as a .tar (mod.so, mod.json, mod.params, like
// tvmc) or as one self-contained shared object; or a VM executable and its kernel library, as
// a .tar (mod.so, mod.vm). docs/artifact-format.md has the layouts.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/vm.h"

namespace anvil {

// The parts of a built model: a graph (graph_json, params) or a VM executable, and the kernels.
struct Package {
  std::string graph_json;
  Module lib;
  std::vector<std::pair<std::string, Tensor>> params;
  // The program of a VM package (its lib is `lib`); null for a graph package.
  std::shared_ptr<const vm::Executable> vm_executable = nullptr;

  // True for a VM package (mod.vm), false for a graph package (mod.json).
  bool is_vm() const { return vm_executable != nullptr; }
  // A graph executor over this package with its params loaded; throws Error for a VM package.
  GraphExecutor create_executor(Device device = Device::cpu()) const;
  // A virtual machine over this package's executable; throws Error for a graph package.
  VirtualMachine create_vm(Device device = Device::cpu()) const;
};

// Symbols a self-contained .so exports beside the kernel-library table (c_abi.h).
#define ANVIL_PACKAGE_GRAPH_JSON_SYMBOL "anvil_package_graph_json"    // const char[], NUL-ended
#define ANVIL_PACKAGE_PARAMS_SYMBOL "anvil_package_params"            // const uint8_t[]
#define ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL "anvil_package_params_size"  // const uint64_t

// Reads a package written by export_library: a .tar (by content, whatever the extension) or
// a self-contained .so. A .tar with mod.vm and no mod.json is a VM package. The .tar's mod.so
// is extracted to a private temporary directory. Throws Error naming the file and what is
// wrong (missing member, bad JSON, bad params, bad executable).
Package load_module(const std::string& path);

}  // namespace anvil
