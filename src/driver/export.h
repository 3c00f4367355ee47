// Writing packages (export_library): .tar (mod.so, mod.json, mod.params) or one
// self-contained .so, and VM packages (.tar with mod.so, mod.vm); docs/artifact-format.md
// describes them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/codegen/target.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/tir.h"

namespace anvil::driver {

// Writes the package at path, the format chosen by the extension (.tar or .so; anything else
// is an Error). lowered_funcs are compiled for target into the kernel library, unless
// object_code (llvm targets) already holds their machine code. The file appears whole or not
// at all. compiler is the C compiler driver that assembles and links.
void export_package(const std::string& path, const std::string& graph_json,
                    const std::vector<tir::PrimFunc>& lowered_funcs, const codegen::Target& target,
                    const std::vector<std::pair<std::string, Tensor>>& params,
                    const std::string& compiler = "cc",
                    const codegen::ObjectCode* object_code = nullptr);

// Writes a VM package at path: a .tar of the kernel library (mod.so) and the serialized
// executable (exec_bytes, vm::save_executable) as mod.vm. Any other extension, .so included,
// is an Error. Otherwise as export_package.
void export_vm_package(const std::string& path, const std::string& exec_bytes,
                       const std::vector<tir::PrimFunc>& lowered_funcs,
                       const codegen::Target& target, const std::string& compiler = "cc",
                       const codegen::ObjectCode* object_code = nullptr);

}  // namespace anvil::driver
