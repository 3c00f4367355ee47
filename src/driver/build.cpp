// build(): bind params, run the pass pipeline, lower each group to a kernel, compile the
// kernels, plan the graph.
#include "anvil/driver/build.h"

#include <unistd.h>

#include <filesystem>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/codegen/target.h"
#include "anvil/ir/infer_type.h"
#include "anvil/transform/passes.h"
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

void BuiltModule::export_library(const std::string& path) const {
  export_package(path, impl_->graph_json, impl_->kernels, impl_->target, impl_->params);
}

namespace {

// Compiles the kernels with the C back end into a temporary shared library and loads it.
Module compile_with_c(const std::vector<tir::PrimFunc>& kernels) {
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::string path = (dir / ("anvil-c-" + std::to_string(::getpid()) + "-" +
                             std::to_string(reinterpret_cast<uintptr_t>(&kernels)) + ".so"))
                         .string();
  codegen::write_c_library(kernels, path);
  Module lib = Module::load_shared(path);
  std::filesystem::remove(path);  // the mapping stays valid
  return lib;
}

}  // namespace

BuiltModule build(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options) {
  codegen::Target target =
      options.target == "llvm" ? codegen::Target::host() : codegen::Target::parse(options.target);
  if (target.kind == "c" && target.mcpu.empty()) target.mcpu = codegen::Target::host().mcpu;
  int vector_bits =
      target.kind == "c" ? codegen::Target::host().vector_bits() : target.vector_bits();

  ir::IRModule typed = ir::infer_type(mod);
  ir::IRModule bound = transform::bind_params(typed, params);
  ir::IRModule fused = optimize(bound, options.pass_context, vector_bits / 32);

  lower::LowerGroupOptions lower_options;
  lower_options.vector_bits = vector_bits;
  lower_options.target_kind = target.kind;
  LoweredGraph lowered = lower_graph(fused, lower_options, options.print_tir);

  auto impl = std::make_shared<BuiltModule::Impl>();
  GraphCodegenResult graph = codegen_graph(lowered.main);
  impl->graph_json = std::move(graph.graph_json);
  impl->params = std::move(graph.params);
  impl->kernels = std::move(lowered.kernels);
  impl->target = target;
  impl->lib = target.kind == "c" ? compile_with_c(impl->kernels)
                                 : codegen::jit_compile(impl->kernels, target);
  return BuiltModule(std::move(impl));
}

}  // namespace anvil::driver
