// pick_executor(): the graph executor for modules that are static through and through, the VM
// for the rest. The question is asked of the module the graph executor would see, so that a
// shape operand that constant folding turns static still goes to the faster executor.
#include "anvil/driver/build.h"
#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/topi/topi.h"
#include "driver/compile_kernels.h"
#include "driver/pipeline.h"

namespace anvil::driver {
namespace {

bool is_static_type(const ir::Type& type) {
  if (!type) return true;
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    for (const ir::Type& field : tuple->fields)
      if (!is_static_type(field)) return false;
    return true;
  }
  if (const auto* tensor = ir::as<ir::TensorTypeNode>(type))
    return tensor->static_shape().has_value();
  return true;
}

// An op the graph executor can run: it has a compute, and no shape function (whose sizes
// only the VM binds, even where the op's type happens to be static, as dyn.cumsum's is).
bool graph_compiles(const ir::OpNode& op) {
  return topi::find_compute(op.name) && !topi::find_shape_compute(op.name);
}

// True when every expression of @main has a static type, no If or While occurs and every op called
// can run on the graph executor (ops inside fused groups included).
bool graph_executor_can_run(const ir::IRModule& mod) {
  ir::Function main = mod.get_function("main");
  for (const ir::Var& param : main->params)
    if (!is_static_type(param->checked_type ? param->checked_type : param->annotation))
      return false;
  bool ok = true;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    if (!ok) return;
    if (e->kind == ir::ExprKind::If || e->kind == ir::ExprKind::While ||
        !is_static_type(e->checked_type)) {
      ok = false;
      return;
    }
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call) return;
    if (const ir::OpNode* op = call->op()) {
      if (!graph_compiles(*op)) ok = false;
      return;
    }
    if (const auto* fn = ir::as<ir::FunctionNode>(call->callee)) {
      for (const ir::Var& param : fn->params)
        if (!is_static_type(param->checked_type)) ok = false;
      ir::post_order_visit(fn->body, [&](const ir::Expr& inner) {
        const auto* inner_call = ir::as<ir::CallNode>(inner);
        if (!is_static_type(inner->checked_type)) ok = false;
        if (inner_call && inner_call->op() && !graph_compiles(*inner_call->op())) ok = false;
      });
    }
  });
  return ok;
}

}  // namespace

std::string pick_executor(const ir::IRModule& mod,
                          const std::vector<std::pair<std::string, Tensor>>& params,
                          const BuildOptions& options) {
  BuildStart begun = start_build(mod, params, options);
  for (const ir::Var& param : begun.bound.get_function("main")->params)
    if (!is_static_type(param->checked_type ? param->checked_type : param->annotation)) return "vm";
  if (graph_executor_can_run(begun.bound)) return "graph";
  ir::IRModule optimized =
      optimize_before_fusion(begun.bound, options.pass_context, begun.pipeline);
  return graph_executor_can_run(ir::infer_type(optimized)) ? "graph" : "vm";
}

}  // namespace anvil::driver
