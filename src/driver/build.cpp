// build(): bind params, run the pass pipeline, lower each group to a kernel, compile the
// kernels, plan the graph.
#include "anvil/driver/build.h"

#include <chrono>
#include <set>
#include <string>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/codegen/target.h"
#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/tir/printer.h"
#include "anvil/topi/topi.h"
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
  ir::IRModule optimized;            // after the graph passes, before lowering
  std::vector<std::string> remarks;  // of the graph passes, "Pass: text"
  // The kernels' machine code, linked again by export_library (llvm targets).
  std::shared_ptr<const codegen::ObjectCode> object_code;
  bool print_times = false;  // --print-pass-times: report the export's time too
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
    std::string text;
    for (const std::string& remark : impl_->remarks) text += "// " + remark + "\n";
    return text + ir::print_module(impl_->optimized, print);
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

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The number of call_tir calls in main: the fused groups, each now calling its kernel.
int count_kernel_calls(const ir::Function& main) {
  int calls = 0;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (call && call->op() && call->op()->name == "call_tir") ++calls;
  });
  return calls;
}

// The graph executor allocates every tensor from its static type, so an op whose output dims
// only its shape function computes (at run time) cannot run on it; named all at once.
void reject_run_time_shapes(const ir::Function& main) {
  std::set<std::string> ops;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    const ir::OpNode* op = call ? call->op() : nullptr;
    if (op && topi::find_shape_compute(op->name)) ops.insert(op->name);
  });
  if (ops.empty()) return;
  std::string list;
  for (const std::string& op : ops) list += (list.empty() ? "" : ", ") + op;
  throw_error("build: operator", ops.size() > 1 ? "s " : " ", list, " compute",
              ops.size() > 1 ? "" : "s",
              " output dims at run time, which only the VM executor does");
}

}  // namespace

void BuiltModule::export_library(const std::string& path, const std::string& compiler) const {
  Clock::time_point start = Clock::now();
  export_package(path, impl_->graph_json, impl_->kernels, impl_->target, impl_->params, compiler,
                 impl_->object_code.get());
  if (impl_->print_times) {
    PhaseTimes times;
    times.add("link and write package", seconds_since(start));
    times.print("export times");
  }
}

FusedGraph fuse_graph(const ir::IRModule& mod,
                      const std::vector<std::pair<std::string, Tensor>>& params,
                      const BuildOptions& options) {
  BuildStart begun = start_build(mod, params, options);
  return FusedGraph{optimize(begun.bound, options.pass_context, begun.pipeline),
                    begun.lower_options};
}

GraphMemoryPlan plan_graph_memory(const ir::IRModule& mod,
                                  const std::vector<std::pair<std::string, Tensor>>& params,
                                  const BuildOptions& options) {
  BuildStart begun = start_build(mod, params, options);
  ir::IRModule fused = optimize(begun.bound, options.pass_context, begun.pipeline);
  ir::Function main = fused.get_function("main");
  reject_run_time_shapes(main);
  check_every_op_has_compute(main);
  GraphCodegenResult graph = codegen_graph_of_groups(main);
  return GraphMemoryPlan{graph.memory, std::move(graph.graph_json)};
}

BuiltModule build(const ir::IRModule& mod,
                  const std::vector<std::pair<std::string, Tensor>>& params,
                  const BuildOptions& options) {
  BuildStart begun = start_build(mod, params, options);
  const codegen::Target& target = begun.target;
  // The passes' remarks (strategies that declined, and why) head the optimized-IR dump.
  std::vector<std::string> remarks;
  transform::PassContext ctx = options.pass_context;
  ctx.on_remark = [&](const std::string& pass, const std::string& text) {
    remarks.push_back(pass + ": " + text);
    options.pass_context.remark(pass, text);
  };
  ir::IRModule fused = optimize(begun.bound, ctx, begun.pipeline);
  reject_run_time_shapes(fused.get_function("main"));

  PhaseTimes times;
  Clock::time_point start = Clock::now();
  LoweredGraph lowered =
      lower_graph(fused, begun.lower_options, options.print_tir, begun.lower_progress);
  times.add("lower kernels", seconds_since(start),
            std::to_string(count_kernel_calls(lowered.main)) + " calls of " +
                std::to_string(lowered.kernels.size()) + " distinct kernels");

  auto impl = std::make_shared<BuiltModule::Impl>();
  impl->optimized = fused;
  impl->remarks = std::move(remarks);
  start = Clock::now();
  GraphCodegenResult graph = codegen_graph(lowered.main, lowered.kernel_info);
  times.add("plan graph", seconds_since(start));
  impl->graph_json = std::move(graph.graph_json);
  impl->params = std::move(graph.params);
  impl->kernels = std::move(lowered.kernels);
  impl->target = target;
  impl->print_times = options.pass_context.print_pass_times;
  if (options.progress) options.progress("codegen", 0, 1);
  start = Clock::now();
  CompiledKernels compiled = compile_kernel_library(impl->kernels, target, options.compile_threads);
  double compile_seconds = seconds_since(start) - compiled.load_seconds;
  if (options.progress) options.progress("codegen", 1, 1);
  if (const codegen::ObjectCode* code = compiled.object_code.get()) {
    const codegen::CodegenTimes& t = code->times;
    times.add("compile kernels", compile_seconds, std::to_string(t.threads) + " threads");
    const char* summed = "summed over kernels";
    times.add("LLVM IR generation", t.build_ir_seconds, summed, /*nested=*/true);
    times.add("LLVM optimization", t.optimize_seconds, summed, /*nested=*/true);
    times.add("machine code emission", t.emit_seconds, summed, /*nested=*/true);
    times.add("slowest kernel", t.slowest_kernel_seconds, t.slowest_kernel, /*nested=*/true);
    times.add("JIT linking", compiled.load_seconds);
  } else {
    times.add("compile kernels (C)", compiled.load_seconds);
  }
  impl->lib = std::move(compiled.lib);
  impl->object_code = std::move(compiled.object_code);
  if (impl->print_times) times.print("build phase times");
  return BuiltModule(std::move(impl));
}

}  // namespace anvil::driver
