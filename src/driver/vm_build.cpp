// build_vm(): the passes of build() up to fusion, VM compilation of @main (vm_compile.h), then
// the kernels of the static groups lowered and compiled once each, as build() does.
#include "anvil/driver/vm_build.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "anvil/codegen/target.h"
#include "anvil/ir/infer_type.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "anvil/transform/passes.h"
#include "driver/compile_kernels.h"
#include "driver/export.h"
#include "driver/lower_graph.h"
#include "driver/pipeline.h"
#include "driver/vm_compile.h"

namespace anvil::driver {
namespace {

// Lowers the primitive functions of the kernel calls (structurally equal ones share a kernel)
// by handing lower_graph() a @main that calls each once; returns the kernel name per call.
std::vector<std::string> lower_kernel_calls(const VmProgram& program,
                                            const lower::LowerGroupOptions& options, bool print_tir,
                                            const LowerProgress& progress,
                                            std::vector<tir::PrimFunc>& kernels) {
  if (program.kernel_calls.empty()) return {};
  std::vector<ir::Var> params;
  std::vector<ir::Expr> calls;
  for (const auto& [pc, fn] : program.kernel_calls) {
    std::vector<ir::Expr> args;
    for (const ir::Var& p : fn->params) {
      ir::Var param = ir::VarNode::make("a" + std::to_string(params.size()),
                                        p->checked_type ? p->checked_type : p->annotation);
      params.push_back(param);
      args.push_back(param);
    }
    calls.push_back(ir::CallNode::make(fn, std::move(args)));
  }
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make(params, ir::TupleNode::make(calls)));
  LoweredGraph lowered = lower_graph(ir::infer_type(mod), options, print_tir, progress);
  kernels = std::move(lowered.kernels);
  const auto* tuple = ir::as<ir::TupleNode>(lowered.main->body);
  ANVIL_ICHECK(tuple && tuple->fields.size() == calls.size(), "build_vm: lowering lost a call");
  std::vector<std::string> names;
  for (const ir::Expr& field : tuple->fields) {
    const auto* call = ir::as<ir::CallNode>(field);
    const auto* global = call ? ir::as<ir::GlobalVarNode>(call->args.at(0)) : nullptr;
    ANVIL_ICHECK(global, "build_vm: a group was not lowered to call_tir");
    names.push_back(global->name);
  }
  return names;
}

// Per kernel that takes size variables as scalar arguments (lower::kSizeVarArgsAttr), the
// programs of its invoke_kernel instructions' extra arguments: each variable as bound by @main.
std::map<std::string, std::vector<vm::DimProgram>> size_var_args(
    const std::vector<tir::PrimFunc>& kernels, const VmProgram& program) {
  std::map<std::string, std::vector<vm::DimProgram>> args;
  const std::vector<std::string>& bound = program.main.size_vars;
  for (const tir::PrimFunc& kernel : kernels) {
    const ir::AttrValue* attr = kernel->func_attrs.find(lower::kSizeVarArgsAttr);
    if (!attr) continue;
    std::vector<vm::DimProgram>& programs = args[kernel->global_symbol()];
    std::stringstream names(std::get<std::string>(*attr));
    for (std::string name; std::getline(names, name, ',');) {
      auto at = std::find(bound.begin(), bound.end(), name);
      ANVIL_ICHECK(at != bound.end(), "build_vm: kernel ", kernel->global_symbol(),
                   " takes size variable ", name, ", which no input binds");
      vm::DimProgram var;
      var.steps.push_back({vm::DimProgram::Op::Var, int64_t(at - bound.begin())});
      programs.push_back(std::move(var));
    }
  }
  return args;
}

// The PrimFuncs of the module that @main calls with call_tir, lowered as kernels named after
// them; each call's instruction gets its kernel's index.
void add_prim_func_kernels(const ir::IRModule& mod, VmProgram& program,
                           std::vector<tir::PrimFunc>& kernels, vm::Executable& exec,
                           std::map<std::string, int32_t>& kernel_index) {
  std::set<std::string> prim_funcs;
  for (const auto& [pc, name] : program.prim_func_calls) {
    auto [it, added] = kernel_index.emplace(name, int32_t(exec.kernel_names.size()));
    if (added) {
      prim_funcs.insert(name);
      kernels.push_back(lower_called_prim_func(mod, name, "build_vm"));
      exec.kernel_names.push_back(name);
    } else if (!prim_funcs.count(name)) {
      throw_error("build_vm: PrimFunc @", name, " has the name of a generated kernel");
    }
    program.main.instructions[pc].index = it->second;
  }
}

}  // namespace

struct VmModule::Impl {
  std::shared_ptr<const vm::Executable> executable;
  std::vector<tir::PrimFunc> kernels;  // lowered, for the library export links
  codegen::Target target;
  // The kernels' machine code, linked again by export_library (llvm targets).
  std::shared_ptr<const codegen::ObjectCode> object_code;
};

VmModule::VmModule(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
const std::shared_ptr<const vm::Executable>& VmModule::executable() const {
  return impl_->executable;
}
VirtualMachine VmModule::create_vm() const { return VirtualMachine(impl_->executable); }
std::string VmModule::print_bytecode() const { return vm::print_bytecode(*impl_->executable); }

void VmModule::export_library(const std::string& path, const std::string& compiler) const {
  // Serialized first: an executable that cannot be saved fails before anything is linked.
  std::string exec_bytes;
  try {
    exec_bytes = vm::save_executable(*impl_->executable);
  } catch (const Error& e) {
    throw_error("cannot write package '", path, "': ", e.what());
  }
  export_vm_package(path, exec_bytes, impl_->kernels, impl_->target, compiler,
                    impl_->object_code.get());
}

VmModule build_vm(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options) {
  BuildStart begun = start_build(mod, params, options);
  ir::IRModule optimized =
      optimize_before_fusion(begun.bound, options.pass_context, begun.pipeline);
  VmProgram program = compile_vm_program(optimized, options.pass_context, begun.lower_options);

  std::vector<tir::PrimFunc> kernels;
  std::vector<std::string> names = lower_kernel_calls(
      program, begun.lower_options, options.print_tir, begun.lower_progress, kernels);

  auto exec = std::make_shared<vm::Executable>();
  std::map<std::string, int32_t> kernel_index;
  std::map<std::string, std::vector<vm::DimProgram>> size_args = size_var_args(kernels, program);
  for (size_t i = 0; i < names.size(); ++i) {
    auto [it, added] = kernel_index.emplace(names[i], int32_t(exec->kernel_names.size()));
    if (added) exec->kernel_names.push_back(names[i]);
    vm::Instruction& call = program.main.instructions[program.kernel_calls[i].first];
    call.index = it->second;
    if (auto found = size_args.find(names[i]); found != size_args.end()) call.shape = found->second;
  }
  add_prim_func_kernels(optimized, program, kernels, *exec, kernel_index);
  exec->functions.push_back(std::move(program.main));
  exec->constants = std::move(program.constants);
  exec->runtime_funcs = std::move(program.runtime_funcs);
  if (options.progress) options.progress("codegen", 0, 1);
  CompiledKernels compiled = compile_kernel_library(kernels, begun.target, options.compile_threads);
  exec->lib = compiled.lib;
  if (options.progress) options.progress("codegen", 1, 1);
  return VmModule(std::make_shared<const VmModule::Impl>(VmModule::Impl{
      std::move(exec), std::move(kernels), begun.target, std::move(compiled.object_code)}));
}

}  // namespace anvil::driver
