// build(): bind params, run the pass pipeline, lower each group to a kernel, compile the
// kernels, plan the graph.
#include "anvil/driver/build.h"

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/codegen/target.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/tir/printer.h"
#include "anvil/transform/passes.h"
#include "driver/compile_kernels.h"
#include "driver/export.h"
#include "driver/graph_codegen.h"
#include "driver/lower_graph.h"
#include "driver/pipeline.h"

namespace anvil::driver {

struct BuiltModule::Impl {
  std::string graph_json;
  Module lib;
  std::vector<std::pair<std::string, Tensor>> params;
  std::vector<tir::PrimFunc> kernels;
  codegen::Target target;
  ir::IRModule optimized;  // after the graph passes, before lowering
};

BuiltModule::BuiltModule(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
const std::string& BuiltModule::graph_json() const { return impl_->graph_json; }
const Module& BuiltModule::lib() const { return impl_->lib; }
const std::vector<std::pair<std::string, Tensor>>& BuiltModule::params() const {
  return impl_->params;
}

GraphExecutor BuiltModule::create_executor() const { return package().create_executor(); }

Package BuiltModule::package() const {
  return Package{impl_->graph_json, impl_->lib, impl_->params};
}

std::string BuiltModule::get_source(const std::string& format) const {
  if (format == "relay") {
    ir::PrintOptions print;
    print.include_metadata = false;
    return ir::print_module(impl_->optimized, print);
  }
  if (format == "tir") {
    std::string text;
    for (const tir::PrimFunc& kernel : impl_->kernels) text += tir::print(kernel) + "\n";
    return text;
  }
  if (format == "c") return codegen::emit_c(impl_->kernels);
  if (format == "ll" || format == "asm") {
    if (impl_->target.kind == "c")
      throw_error("get_source: '", format, "' needs an llvm target; this module was built for c");
    return format == "ll" ? codegen::emit_llvm_ir(impl_->kernels, impl_->target)
                          : codegen::emit_assembly(impl_->kernels, impl_->target);
  }
  throw_error("unknown source format '", format, "' (expected relay, tir, ll, asm or c)");
}

void BuiltModule::export_library(const std::string& path, const std::string& compiler) const {
  export_package(path, impl_->graph_json, impl_->kernels, impl_->target, impl_->params, compiler);
}

BuiltModule build(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options) {
  auto [target, vector_bits] = resolve_build_target(options.target);

  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule bound = transform::bind_params(typed, params);
  ir::IRModule fused = optimize(bound, options.pass_context, vector_bits / 32);

  lower::LowerGroupOptions lower_options;
  lower_options.vector_bits = vector_bits;
  lower_options.target_kind = target.kind;
  LowerProgress lower_progress;
  if (options.progress)
    lower_progress = [&](int done, int total) { options.progress("lower", done, total); };
  LoweredGraph lowered = lower_graph(fused, lower_options, options.print_tir, lower_progress);

  auto impl = std::make_shared<BuiltModule::Impl>();
  impl->optimized = fused;
  GraphCodegenResult graph = codegen_graph(lowered.main, lowered.kernel_info);
  impl->graph_json = std::move(graph.graph_json);
  impl->params = std::move(graph.params);
  impl->kernels = std::move(lowered.kernels);
  impl->target = target;
  if (options.progress) options.progress("codegen", 0, 1);
  impl->lib = compile_kernels(impl->kernels, target);
  if (options.progress) options.progress("codegen", 1, 1);
  return BuiltModule(std::move(impl));
}

}  // namespace anvil::driver
