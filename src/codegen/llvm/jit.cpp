// In-memory linking of compiled kernel objects with ORC's LLJIT. The runtime's C ABI
// (AnvilSetLastError, AnvilParallelLaunch, ...) is defined by address, so that kernels link
// wherever this library runs, a process that loaded anvil with RTLD_LOCAL (a Python extension)
// included; libm and libc resolve from the running process.
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Host.h>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen {

namespace {

template <typename T>
T check(llvm::Expected<T> value, const char* what) {
  if (!value)
    throw_error("JIT compilation failed while ", what, ": ", llvm::toString(value.takeError()));
  return std::move(*value);
}

void check(llvm::Error error, const char* what) {
  if (error)
    throw_error("JIT compilation failed while ", what, ": ", llvm::toString(std::move(error)));
}

}  // namespace

Module jit_load(const ObjectCode& code) {
  llvm_backend::initialize_llvm();
  llvm::Triple triple(code.triple);
  if (triple.getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    throw_error("cannot run code for '", code.triple, "' on this machine; use write_object_file");
  llvm::orc::JITTargetMachineBuilder machine_builder(triple);
  std::unique_ptr<llvm::orc::LLJIT> jit =
      check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine_builder).create(),
            "creating the JIT");
  auto generator = check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             jit->getDataLayout().getGlobalPrefix()),
                         "opening the current process for symbol lookup");
  jit->getMainJITDylib().addGenerator(std::move(generator));
  llvm::orc::SymbolMap runtime_abi;
  auto define = [&](const char* name, auto* function) {
    runtime_abi[jit->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(function), llvm::JITSymbolFlags::Exported);
  };
  define("AnvilSetLastError", &AnvilSetLastError);
  define("AnvilParallelLaunch", &AnvilParallelLaunch);
  define("AnvilBackendAllocWorkspace", &AnvilBackendAllocWorkspace);
  define("AnvilBackendFreeWorkspace", &AnvilBackendFreeWorkspace);
  define("AnvilBackendRequestAMX", &AnvilBackendRequestAMX);
  check(jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime_abi))),
        "defining the runtime's symbols");
  for (size_t i = 0; i < code.kernel_objects.size(); ++i)
    check(jit->addObjectFile(
              llvm::MemoryBuffer::getMemBufferCopy(code.kernel_objects[i], code.symbols.at(i))),
          "adding an object");

  std::shared_ptr<llvm::orc::LLJIT> owner = std::move(jit);
  Module result = Module::create("jit");
  for (const std::string& symbol : code.packed_symbols) {
    llvm::orc::ExecutorAddr address = check(owner->lookup(symbol), "looking up a kernel");
    auto fn = address.toPtr<AnvilPackedCFunc>();
    result.add_function(symbol, wrap_c_kernel(fn, symbol, owner, "jit"));
  }
  return result;
}

Module jit_compile(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  return jit_load(compile_objects(funcs, target));
}

}  // namespace anvil::codegen
