// compile_objects: every kernel in its own LLVM context and module, compiled to a relocatable
// object by a pool of threads. LLVM allows concurrent work in distinct contexts; a target
// machine is used by one thread at a time, so each thread makes its own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <set>
#include <thread>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The thread count asked for: options, then ANVIL_COMPILE_THREADS, then the hardware.
int requested_threads(const CodegenOptions& options) {
  if (options.threads > 0) return options.threads;
  if (const char* text = std::getenv("ANVIL_COMPILE_THREADS"); text && *text)
    return anvil::detail::parse_thread_count(text, "ANVIL_COMPILE_THREADS");
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// Rejects what code generation would reject for the set as a whole, before any thread starts.
void check_symbols(const std::vector<tir::PrimFunc>& funcs) {
  std::set<std::string> seen;
  for (const tir::PrimFunc& func : funcs) {
    std::string symbol = func->global_symbol();
    if (symbol.empty())
      throw_error("LLVM code generation: a PrimFunc has no \"global_symbol\" attribute");
    if (!seen.insert(symbol).second)
      throw_error("LLVM code generation: two functions are named '", symbol, "'");
  }
}

// What one kernel compiles to.
struct KernelResult {
  std::string object;
  std::vector<std::string> packed_symbols;
  CodegenTimes times;
  std::exception_ptr error;
};

KernelResult compile_one(const tir::PrimFunc& func, const llvm_backend::ResolvedTarget& target,
                         llvm::TargetMachine& tm) {
  KernelResult result;
  llvm::LLVMContext context;
  Clock::time_point start = Clock::now();
  std::unique_ptr<llvm::Module> module = llvm_backend::build_module(
      {func}, target, tm, context, /*with_table=*/false, &result.packed_symbols);
  module->setModuleIdentifier(func->global_symbol());
  module->setSourceFileName(func->global_symbol());
  result.times.build_ir_seconds = seconds_since(start);
  start = Clock::now();
  llvm_backend::optimize_module(*module, tm, target.opt_level);
  result.times.optimize_seconds = seconds_since(start);
  start = Clock::now();
  result.object = llvm_backend::emit_machine_code(*module, tm, llvm::CGFT_ObjectFile);
  result.times.emit_seconds = seconds_since(start);
  return result;
}

}  // namespace

ObjectCode compile_objects(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                           const CodegenOptions& options) {
  Clock::time_point start = Clock::now();
  if (target.kind != "llvm")
    throw_error("the LLVM back end cannot compile for target '", target.to_string(), "'");
  check_symbols(funcs);
  int threads = std::min(requested_threads(options), std::max(1, int(funcs.size())));
  // Resolving the target reads the host and LLVM's registries once, before the threads start.
  llvm_backend::ResolvedTarget resolved = llvm_backend::resolve_target(target);

  std::vector<KernelResult> results(funcs.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    std::unique_ptr<llvm::TargetMachine> tm;
    // Kernels are taken in order, so every kernel before a failing one is finished and the
    // error reported (the first by index) does not depend on timing.
    for (size_t i = next++; i < funcs.size() && !failed; i = next++) {
      try {
        if (!tm) tm = llvm_backend::create_target_machine(resolved, /*pic=*/true);
        results[i] = compile_one(funcs[i], resolved, *tm);
      } catch (...) {
        results[i].error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool) thread.join();
  for (const KernelResult& result : results)
    if (result.error) std::rethrow_exception(result.error);

  ObjectCode code;
  code.triple = resolved.triple;
  for (size_t i = 0; i < funcs.size(); ++i) {
    KernelResult& result = results[i];
    code.symbols.push_back(funcs[i]->global_symbol());
    code.kernel_objects.push_back(std::move(result.object));
    code.packed_symbols.insert(code.packed_symbols.end(), result.packed_symbols.begin(),
                               result.packed_symbols.end());
    code.times.build_ir_seconds += result.times.build_ir_seconds;
    code.times.optimize_seconds += result.times.optimize_seconds;
    code.times.emit_seconds += result.times.emit_seconds;
    double seconds =
        result.times.build_ir_seconds + result.times.optimize_seconds + result.times.emit_seconds;
    if (seconds > code.times.slowest_kernel_seconds) {
      code.times.slowest_kernel_seconds = seconds;
      code.times.slowest_kernel = code.symbols.back();
    }
  }
  std::unique_ptr<llvm::TargetMachine> tm = llvm_backend::create_target_machine(resolved, true);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> table =
      llvm_backend::build_table_module(code.packed_symbols, resolved, *tm, context);
  code.table_object = llvm_backend::emit_machine_code(*table, *tm, llvm::CGFT_ObjectFile);
  code.times.threads = threads;
  code.times.wall_seconds = seconds_since(start);
  return code;
}

}  // namespace anvil::codegen
