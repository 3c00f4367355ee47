// In-memory compilation with ORC's LLJIT. Runtime symbols (AnvilSetLastError,
// AnvilParallelLaunch, ...) and libm resolve from the running process.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/Error.h>
#include <llvm/TargetParser/Host.h>

#include "anvil/codegen/llvm.h"
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

Module jit_compile(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  if (target.kind != "llvm")
    throw_error("the LLVM back end cannot compile for target '", target.to_string(), "'");
  llvm_backend::initialize_llvm();
  llvm_backend::ResolvedTarget resolved = llvm_backend::resolve_target(target);
  llvm::Triple triple(resolved.triple);
  if (triple.getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    throw_error("cannot run code for '", resolved.triple,
                "' on this machine; use write_object_file");

  llvm::orc::JITTargetMachineBuilder machine_builder(triple);
  machine_builder.setCPU(resolved.cpu);
  llvm::SubtargetFeatures features(resolved.features);
  machine_builder.addFeatures(features.getFeatures());
  machine_builder.setCodeGenOptLevel(resolved.opt_level >= 3   ? llvm::CodeGenOpt::Aggressive
                                     : resolved.opt_level == 0 ? llvm::CodeGenOpt::None
                                                               : llvm::CodeGenOpt::Default);
  std::unique_ptr<llvm::TargetMachine> tm =
      check(machine_builder.createTargetMachine(), "creating the target machine");

  auto context = std::make_unique<llvm::LLVMContext>();
  std::vector<std::string> symbols;
  std::unique_ptr<llvm::Module> module =
      llvm_backend::build_module(funcs, resolved, *tm, *context, /*with_table=*/false, &symbols);

  std::unique_ptr<llvm::orc::LLJIT> jit =
      check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine_builder).create(),
            "creating the JIT");
  auto generator = check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             jit->getDataLayout().getGlobalPrefix()),
                         "opening the current process for symbol lookup");
  jit->getMainJITDylib().addGenerator(std::move(generator));
  module->setDataLayout(jit->getDataLayout());
  check(jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
        "adding the module");

  std::shared_ptr<llvm::orc::LLJIT> owner = std::move(jit);
  Module result = Module::create("jit");
  for (const std::string& symbol : symbols) {
    llvm::orc::ExecutorAddr address = check(owner->lookup(symbol), "looking up a kernel");
    auto fn = address.toPtr<AnvilPackedCFunc>();
    result.add_function(symbol, wrap_c_kernel(fn, symbol, owner, "jit"));
  }
  return result;
}

}  // namespace anvil::codegen
