// The order of the graph passes, TVM's relay.build at each opt level. docs/passes.md holds the
// one table of that order (and why each pass sits where it does); a test checks it against
// pass_names(), so a change here changes the table too.
#include "driver/pipeline.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <string>

#include "anvil/driver/build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/support/error.h"
#include "anvil/transform/passes.h"

namespace anvil::driver {
namespace {

using transform::Pass;
using transform::PassContext;

Pass pass(std::string name, int min_level, std::function<ir::IRModule(const ir::IRModule&)> fn) {
  return Pass{std::move(name), min_level,
              [fn](const ir::IRModule& mod, const PassContext&) { return fn(mod); }};
}

// FuseOps at the level and depth ctx selects.
ir::IRModule fuse_for(const ir::IRModule& mod, const PassContext& ctx) {
  int fuse_level = ctx.opt_level >= 1 ? 1 : 0;
  const std::string text = ctx.get_config("relay.FuseOps.max_depth", "256");
  int max_depth = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), max_depth);
  if (error != std::errc() || end != text.data() + text.size() || max_depth < 1)
    throw Error("pass config relay.FuseOps.max_depth must be a positive integer, got '" + text +
                "'");
  return transform::fuse_ops(mod, fuse_level, max_depth);
}

std::vector<Pass> passes_before_fusion(const PipelineTarget& target) {
  const int vector_lanes = target.vector_lanes;
  const std::vector<std::string>& strategy_keys = target.strategy_keys;
  return {
      pass("InferType", 0, [](const ir::IRModule& m) { return ir::infer_type(m); }),
      pass("DynamicToStatic", 0, transform::dynamic_to_static),
      pass("FakeQuantizationToInteger", 1, transform::fake_quantization_to_integer),
      pass("SimplifyInference", 1, transform::simplify_inference),
      // After SimplifyInference, whose scale/shift ops follow a layout where batch_norm would
      // not.
      Pass{"ConvertLayout", 0,
           [](const ir::IRModule& m, const PassContext& ctx) {
             std::string desired = ctx.get_config("relay.desired_layout");
             return desired.empty() ? m : transform::convert_layout(m, desired);
           }},
      pass("FoldConstant", 2, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      pass("EliminateCommonSubexpr", 2, transform::eliminate_common_subexpr),
      pass("FoldScaleAxis", 2, transform::fold_scale_axis),
      pass("FoldConstant", 2, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      pass("SplitDilatedConv", 3, transform::split_dilated_conv),
      pass("Conv1dAsConv2d", 3, transform::conv1d_as_conv2d),
      pass("Conv3dAsConv2d", 3, transform::conv3d_as_conv2d),
      pass("SinkTransposes", 3, transform::sink_transposes),
      // After the passes that fold scales into weights and turn other convolutions into
      // conv2d (in float32), before AlterOpLayout packs the bf16 weights.
      Pass{"ToMixedPrecision", 0,
           [target](const ir::IRModule& m, const PassContext& ctx) {
             return resolve_precision(ctx, target) == "bf16" ? transform::to_mixed_precision(m) : m;
           }},
      Pass{"AlterOpLayout", 3,
           [vector_lanes, strategy_keys, amx_bf16 = target.amx_bf16](const ir::IRModule& m,
                                                                     const PassContext& ctx) {
             std::vector<std::string> remarks;
             ir::IRModule out =
                 transform::alter_op_layout(m, vector_lanes, &remarks, strategy_keys, amx_bf16);
             for (const std::string& remark : remarks) ctx.remark("AlterOpLayout", remark);
             return out;
           }},
      pass("WinogradConv2D", 3, transform::winograd_conv2d),
      pass("SimplifyExpr", 3, transform::simplify_expr),
      pass("FoldConstant", 3, [](const ir::IRModule& m) { return transform::fold_constant(m); }),
      // Weights packed once per use (a shared weight, a recurrent layer's R at every step)
      // become one constant again.
      pass("EliminateCommonSubexpr", 3, transform::eliminate_common_subexpr),
  };
}

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const Pass& p : passes_before_fusion(PipelineTarget{}))
    if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  names.push_back("FuseOps");
  return names;
}

std::string resolve_precision(const PassContext& ctx, const PipelineTarget& target) {
  const std::string asked = ctx.get_config("anvil.precision", "fp32");
  if (asked != "fp32" && asked != "bf16" && asked != "auto")
    throw Error("pass config anvil.precision must be fp32, bf16 or auto, got '" + asked + "'");
  const std::string emulate = ctx.get_config("anvil.bf16_emulate", "0");
  if (emulate != "0" && emulate != "1" && emulate != "true" && emulate != "false")
    throw Error("pass config anvil.bf16_emulate must be 0, 1, true or false, got '" + emulate +
                "'");
  if (asked == "auto") return target.bf16_dot_product ? "bf16" : "fp32";
  // Emulation keeps bf16's rounding where the target has no unit (slower than fp32): what a
  // bf16 build computes can then be checked on any machine.
  if (asked == "bf16" && !target.bf16_dot_product && (emulate == "0" || emulate == "false")) {
    // Once per process: a build runs the pipeline once or twice (executor choice, then build).
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fprintf(stderr,
                   "precision bf16: the target has no bf16 dot-product unit (AVX-512 BF16); "
                   "building in fp32\n");
    return "fp32";
  }
  return asked;
}

ir::IRModule optimize(const ir::IRModule& mod, const PassContext& ctx,
                      const PipelineTarget& target) {
  std::vector<Pass> passes = passes_before_fusion(target);
  passes.push_back(Pass{
      "FuseOps", 0, [](const ir::IRModule& m, const PassContext& c) { return fuse_for(m, c); }});
  return transform::run_passes(mod, passes, ctx);
}

ir::IRModule optimize_before_fusion(const ir::IRModule& mod, const PassContext& ctx,
                                    const PipelineTarget& target) {
  return transform::run_passes(mod, passes_before_fusion(target), ctx);
}

ir::IRModule fuse_groups(const ir::IRModule& mod, const PassContext& ctx) {
  return fuse_for(mod, ctx);
}

}  // namespace anvil::driver
