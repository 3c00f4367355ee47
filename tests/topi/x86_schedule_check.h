// Checking one hand-written x86 schedule directly: the group is lowered naive, its injective
// producers inlined as the group scheduler does, then the schedule under test is applied
// (a refused primitive fails the test instead of falling back to the generic schedule), and
// the compiled kernel is compared with the reference interpreter on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil::x86_test {

// The scheduled (not yet lowered) function of the group `function_text` after the schedule
// registered for `anchor_op`; `inputs` receives random inputs and `expected` the reference
// outputs.
inline tir::PrimFunc schedule_group_with(const std::string& function_text,
                                         const std::string& anchor_op, std::vector<Tensor>& inputs,
                                         std::vector<Tensor>& expected, int vector_bits = 512) {
  ir::Function fn = topi_test::primitive_function(function_text);
  ir::IRModule mod;
  mod.add("main", fn);
  inputs.clear();
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const auto* type = ir::as<ir::TensorTypeNode>(fn->params[i]->checked_type);
    inputs.push_back(topi_test::random_tensor(*type->static_shape(), type->dtype, 7 + i));
  }
  expected = reference::Interpreter(mod).run(inputs);

  const ir::CallNode* anchor = nullptr;
  std::function<void(const ir::Expr&)> find = [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call) return;
    if (call->op() && call->op()->name == anchor_op) anchor = call;
    for (const ir::Expr& arg : call->args) find(arg);
  };
  find(fn->body);
  if (!anchor) throw Error("no call of " + anchor_op);

  lower::LowerGroupOptions naive;
  naive.schedule = false;
  tir::Schedule sch(lower::lower_primitive(fn, "kernel", naive));
  const tir::Buffer output = sch.func()->buffer_map.back().second;
  std::vector<std::string> blocks;
  for (const tir::BlockRV& b : sch.get_child_blocks(sch.get_block("root")))
    blocks.push_back(b.name);
  std::string anchor_block;
  std::vector<std::string> epilogue;
  for (const std::string& name : blocks) {
    const tir::BlockNode* node = nullptr;
    tir::pre_order_visit(sch.func()->body, nullptr, [&](const tir::Stmt& s) {
      if (const auto* b = tir::as<tir::BlockNode>(s); b && b->name == name) node = b;
    });
    bool reduces = false;
    for (const tir::IterVar& iv : node->iter_vars) reduces |= iv.kind == tir::IterKind::Reduce;
    bool writes_output = node->writes[0].buffer->name == output->name;
    if (reduces) {
      anchor_block = name;
      epilogue.clear();
    } else if (!writes_output) {
      sch.compute_inline(sch.get_block(name));
    } else {
      epilogue.push_back(name);
    }
  }
  topi::ScheduleArgs args{*anchor, anchor_block, epilogue, vector_bits, "llvm"};
  const topi::ScheduleStrategy* strategy = topi::find_schedule(anchor_op);
  if (!strategy) throw Error("no x86 schedule for " + anchor_op);
  strategy->schedule(sch, args);
  return sch.func();
}

// Schedules the group with the x86 schedule of anchor_op, compiles it and compares it with
// the reference interpreter.
inline void check_x86_schedule(const std::string& function_text, const std::string& anchor_op,
                               int vector_bits = 512, double rtol = 1e-4, double atol = 1e-4) {
  std::vector<Tensor> inputs, expected;
  tir::PrimFunc scheduled;
  try {
    scheduled = schedule_group_with(function_text, anchor_op, inputs, expected, vector_bits);
  } catch (const std::exception& e) {
    FAIL() << "scheduling: " << e.what();
  }
  Module module = codegen::jit_compile({tir::transform::lower(scheduled)});
  ASSERT_EQ(expected.size(), 1u);
  Tensor out = Tensor::zeros(expected[0].shape_vector(), expected[0].dtype());
  std::vector<Value> call_args;
  for (const Tensor& t : inputs) call_args.emplace_back(t);
  call_args.emplace_back(out);
  module.function("kernel").call(call_args);
  for (int64_t i = 0; i < out.numel(); ++i) {
    double got = out.get_as_double(i), want = expected[0].get_as_double(i);
    if (!(std::fabs(got - want) <= atol + rtol * std::fabs(want))) {
      ADD_FAILURE() << "element " << i << " is " << got << ", reference " << want;
      return;
    }
  }
}

}  // namespace anvil::x86_test
