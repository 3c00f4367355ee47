// The LLVM back end: lowered PrimFuncs (tir::transform::lower output, packed
// calling convention) -> LLVM 16 IR -> machine code, in memory through ORC
// LLJIT or as an object / shared library. No LLVM type appears here.
//
// Kernels compile independently: each gets its own LLVM context and module, and a pool of
// threads optimizes and emits them side by side (compile_objects). The relocatable objects
// are kept, so one compilation serves both the in-memory module (jit_load) and an exported
// library (link_shared_library).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anvil/codegen/target.h"
#include "anvil/runtime/module.h"
#include "anvil/tir/tir.h"

namespace anvil::codegen {

// How compile_objects runs.
struct CodegenOptions {
  // Kernels compiled at once. 0 takes ANVIL_COMPILE_THREADS from the environment when set,
  // else the number of hardware threads; never more than there are kernels.
  int threads = 0;
};

// Where the time of compile_objects went. The per-step times are summed over the kernels (so
// over the threads that ran side by side); wall is the elapsed time of the whole call.
struct CodegenTimes {
  double build_ir_seconds = 0;  // tir -> LLVM IR, verification
  double optimize_seconds = 0;  // LLVM's optimization pipeline for the opt level
  double emit_seconds = 0;      // instruction selection through object file
  double wall_seconds = 0;
  int threads = 0;  // threads that compiled
  // The kernel that took longest (all steps), which bounds the wall time from below.
  std::string slowest_kernel;
  double slowest_kernel_seconds = 0;
};

// Machine code of a kernel set: one position-independent relocatable object per kernel plus
// one holding the kernel-library table (c_abi.h). The bytes depend only on the kernels and
// the target, never on the number of threads.
struct ObjectCode {
  std::string triple;                       // what the objects were compiled for
  std::vector<std::string> symbols;         // global symbol of each kernel, in input order
  std::vector<std::string> kernel_objects;  // ELF bytes, one per kernel, in input order
  std::string table_object;                 // the library table; refers to the packed kernels
  std::vector<std::string> packed_symbols;  // exported packed entry points, in input order
  CodegenTimes times;
};

// Compiles funcs (distinct, non-empty global symbols) to object code for target. Errors are
// those of code generation; when several kernels fail, the first one's error is thrown.
ObjectCode compile_objects(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                           const CodegenOptions& options = {});

// Links the kernel objects of code in memory (the table object is not needed there); the
// module's functions are the packed symbols and stay valid while the module (or a function
// taken from it) lives. Throws Error when code is not for this machine's architecture.
Module jit_load(const ObjectCode& code);

// Compiles funcs in memory: jit_load(compile_objects(funcs, target)).
Module jit_compile(const std::vector<tir::PrimFunc>& funcs, const Target& target = Target::host());

// The textual LLVM IR / assembly of the kernel library for funcs, as one module.
std::string emit_llvm_ir(const std::vector<tir::PrimFunc>& funcs, const Target& target);
std::string emit_assembly(const std::vector<tir::PrimFunc>& funcs, const Target& target);

// Writes one object file holding funcs and the kernel-library table (c_abi.h).
void write_object_file(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                       const std::string& path);

// Writes a kernel library (.so) that Module::load_shared loads: code's objects, then
// extra_objects (paths), linked with the system compiler driver (`compiler`) against nothing
// but libc/libm; runtime symbols (AnvilParallelLaunch, ...) resolve from libanvil_runtime at
// load time.
void link_shared_library(const ObjectCode& code, const std::string& path,
                         const std::string& compiler = "cc",
                         const std::vector<std::string>& extra_objects = {});

// compile_objects then link_shared_library.
void write_shared_library(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                          const std::string& path, const std::string& compiler = "cc");

}  // namespace anvil::codegen
