// PassContext and run_passes: which passes run at which level, dumps, timing and remarks.
#include <gtest/gtest.h>

#include "anvil/transform/pass.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

// A pass that records that it ran and returns the module unchanged.
Pass recording_pass(const std::string& name, int level, std::vector<std::string>& log) {
  return Pass{name, level, [name, &log](const ir::IRModule& mod, const PassContext&) {
                log.push_back(name);
                return mod;
              }};
}

TEST(PassContext, EnabledByLevelAndDisabledList) {
  PassContext ctx;
  ctx.opt_level = 2;
  ctx.disabled_passes = {"FoldConstant"};
  EXPECT_TRUE(ctx.enabled("SimplifyInference", 1));
  EXPECT_TRUE(ctx.enabled("EliminateCommonSubexpr", 2));
  EXPECT_FALSE(ctx.enabled("AlterOpLayout", 3));
  EXPECT_FALSE(ctx.enabled("FoldConstant", 2));
  EXPECT_FALSE(ctx.enabled("FoldConstant", 0));
}

// A context made without arguments and build()'s default agree: opt level 3.
TEST(PassContext, DefaultsToBuildsOptLevel) {
  EXPECT_EQ(PassContext{}.opt_level, 3);
  EXPECT_TRUE(PassContext{}.enabled("AlterOpLayout", 3));
}

TEST(PassContext, ConfigFallsBack) {
  PassContext ctx;
  ctx.config["relay.FuseOps.max_depth"] = "8";
  EXPECT_EQ(ctx.get_config("relay.FuseOps.max_depth", "256"), "8");
  EXPECT_EQ(ctx.get_config("missing", "x"), "x");
  EXPECT_EQ(ctx.get_config("missing"), "");
}

TEST(RunPasses, RunsEnabledPassesInOrderAndDumps) {
  std::vector<std::string> log, dumped;
  std::vector<Pass> passes = {recording_pass("A", 0, log), recording_pass("B", 3, log),
                              recording_pass("C", 1, log), recording_pass("D", 1, log)};
  PassContext ctx;
  ctx.opt_level = 1;
  ctx.disabled_passes = {"D"};
  ctx.dump_after = {"C"};
  ctx.dump = [&](const std::string& pass, const ir::IRModule&) { dumped.push_back(pass); };
  ir::IRModule mod = testing::parse("def @main(%x: Tensor[(1), float32]) { %x }");
  run_passes(mod, passes, ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"A", "C"}));
  EXPECT_EQ(dumped, (std::vector<std::string>{"C"}));

  log.clear();
  dumped.clear();
  ctx.dump_after = {"all"};
  ctx.disabled_passes.clear();
  run_passes(mod, passes, ctx);
  EXPECT_EQ(log, (std::vector<std::string>{"A", "C", "D"}));
  EXPECT_EQ(dumped, (std::vector<std::string>{"A", "C", "D"}));
}

TEST(RunPasses, PrintsPassTimesWhenAsked) {
  std::vector<std::string> log;
  PassContext ctx;
  ctx.print_pass_times = true;
  ir::IRModule mod = testing::parse("def @main(%x: Tensor[(1), float32]) { %x }");
  ::testing::internal::CaptureStderr();
  run_passes(mod, {recording_pass("FoldConstant", 0, log)}, ctx);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pass times (total"), std::string::npos) << err;
  EXPECT_NE(err.find("FoldConstant"), std::string::npos) << err;
}

// A pass's remarks reach the caller's hook, named by the pass, and are printed with the times.
TEST(RunPasses, PassesRemarksOnAndPrintsThem) {
  Pass remarking{"AlterOpLayout", 0, [](const ir::IRModule& mod, const PassContext& ctx) {
                   ctx.remark("AlterOpLayout", "op(1): strategy declined: why");
                   return mod;
                 }};
  std::vector<std::string> heard;
  PassContext ctx;
  ctx.print_pass_times = true;
  ctx.on_remark = [&](const std::string& pass, const std::string& text) {
    heard.push_back(pass + "|" + text);
  };
  ir::IRModule mod = testing::parse("def @main(%x: Tensor[(1), float32]) { %x }");
  ::testing::internal::CaptureStderr();
  run_passes(mod, {remarking}, ctx);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(heard, std::vector<std::string>{"AlterOpLayout|op(1): strategy declined: why"});
  EXPECT_NE(err.find("pass remarks:\n  AlterOpLayout: op(1): strategy declined: why"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace anvil::transform
