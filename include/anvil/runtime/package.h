// Compiled-model packages (TVM's export_library / load_module): the graph JSON, the kernel
// library and the params of a built model, as a .tar (mod.so, mod.json, mod.params, like
// tvmc) or as one self-contained shared object. docs/artifact-format.md has both layouts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

// The parts of a built model.
struct Package {
  std::string graph_json;
  Module lib;
  std::vector<std::pair<std::string, Tensor>> params;

  // A graph executor over this package with its params loaded.
  GraphExecutor create_executor(Device device = Device::cpu()) const;
};

// Symbols a self-contained .so exports beside the kernel-library table (c_abi.h).
#define ANVIL_PACKAGE_GRAPH_JSON_SYMBOL "anvil_package_graph_json"    // const char[], NUL-ended
#define ANVIL_PACKAGE_PARAMS_SYMBOL "anvil_package_params"            // const uint8_t[]
#define ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL "anvil_package_params_size"  // const uint64_t

// Reads a package written by export_library: a .tar (by content, whatever the extension) or
// a self-contained .so. The .tar's mod.so is extracted to a private temporary directory.
// Throws Error naming the file and what is wrong (missing member, bad JSON, bad params).
Package load_module(const std::string& path);

}  // namespace anvil
