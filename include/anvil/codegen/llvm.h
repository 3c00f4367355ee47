// The LLVM back end: lowered PrimFuncs (tir::transform::lower output, packed
// calling convention) -> LLVM 16 IR -> machine code, in memory through ORC
// LLJIT or as an object / shared library. No LLVM type appears here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anvil/codegen/target.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/tir.h"

namespace anvil::codegen {

// Compiles funcs in memory; the module's functions are their global symbols and stay valid
// while the module (or a function taken from it) lives.
Module jit_compile(const std::vector<tir::PrimFunc>& funcs, const Target& target = Target::host());

// The textual LLVM IR / assembly of the kernel library for funcs.
std::string emit_llvm_ir(const std::vector<tir::PrimFunc>& funcs, const Target& target);
std::string emit_assembly(const std::vector<tir::PrimFunc>& funcs, const Target& target);

// Writes an object file holding funcs and the kernel-library table (c_abi.h).
void write_object_file(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                       const std::string& path);

// Writes a kernel library (.so) that Module::load_shared loads: the object file linked with
// the system compiler driver (`compiler`, default "cc") against nothing but libc/libm;
// runtime symbols (AnvilParallelLaunch, ...) resolve from libanvil_runtime at load time.
void write_shared_library(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                          const std::string& path, const std::string& compiler = "cc");

}  // namespace anvil::codegen
