// Pass order (TVM's relay.build at each opt level):
//   always      InferType, DynamicToStatic (dyn.* ops with constant shape operands become
//               static ops, the only ones with TE computes), FuseOps (level 0: every call
//               alone), lowering
//   level >= 1  SimplifyInference, fusion of groups
//   level >= 2  FoldConstant, EliminateCommonSubexpr, FoldScaleAxis
//   level 3     AlterOpLayout, SimplifyExpr (cancels meeting layout transforms)
// FoldConstant runs again after the passes that leave constant subgraphs behind
// (SimplifyInference's scale/shift, FoldScaleAxis' scaled weights, AlterOpLayout's packed
// weights).
#include "driver/pipeline.h"

#include <string>

#include "anvil/ir/infer_type.h"
#include "anvil/transform/passes.h"

namespace anvil::driver {
namespace {

using transform::Pass;
using transform::PassContext;

Pass pass(std::string name, int min_level, std::function<ir::IRModule(const ir::IRModule&)> fn) {
  return Pass{std::move(name), min_level,
              [fn](const ir::IRModule& mod, const PassContext&) { return fn(mod); }};
}

}  // namespace

ir::IRModule optimize(const ir::IRModule& mod, const PassContext& ctx, int vector_lanes) {
  int fuse_level = ctx.opt_level >= 1 ? 1 : 0;
  int max_depth = std::stoi(ctx.get_config("relay.FuseOps.max_depth", "256"));
  std::vector<Pass> passes = {
      pass("InferType", 0, [](const ir::IRModule& m) { return ir::infer_type(m); }),
      pass("DynamicToStatic", 0, transform::dynamic_to_static),
      pass("SimplifyInference", 1, transform::simplify_inference),
      pass("FoldConstant", 2, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      pass("EliminateCommonSubexpr", 2, transform::eliminate_common_subexpr),
      pass("FoldScaleAxis", 2, transform::fold_scale_axis),
      pass("FoldConstant", 2, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      pass("AlterOpLayout", 3,
           [vector_lanes](const ir::IRModule& m) {
             return transform::alter_op_layout(m, vector_lanes);
           }),
      pass("SimplifyExpr", 3, transform::simplify_expr),
      pass("FoldConstant", 3, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      pass("FuseOps", 0,
           [fuse_level, max_depth](const ir::IRModule& m) {
             return transform::fuse_ops(m, fuse_level, max_depth);
           }),
  };
  return transform::run_passes(mod, passes, ctx);
}

}  // namespace anvil::driver
