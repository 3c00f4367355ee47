// Checking one hand-written x86 schedule: the group goes through the production group
// scheduler (lower::lower_primitive), which must record that the anchor op's strategy ran (a
// decline fails the test with its reason instead of falling back to the generic schedule), and
// the compiled kernel is compared with the reference interpreter on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/topi/strategy.h"
#include "topi/topi_test_util.h"

namespace anvil::x86_test {

// Random inputs for the group fn (seeded by position) in `inputs`, and the reference
// interpreter's outputs for them in `expected`.
inline void reference_run(const ir::Function& fn, std::vector<Tensor>& inputs,
                          std::vector<Tensor>& expected) {
  ir::IRModule mod;
  mod.add("main", fn);
  inputs.clear();
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const auto* type = ir::as<ir::TensorTypeNode>(fn->params[i]->checked_type);
    inputs.push_back(topi_test::random_tensor(*type->static_shape(), type->dtype, 7 + i));
  }
  expected = reference::Interpreter(mod).run(inputs);
}

// Compiles the scheduled kernel (named "kernel", one output), runs it on inputs and compares
// its output with expected[0] element by element (atol + rtol * |expected|).
inline void expect_kernel_matches(const tir::PrimFunc& scheduled, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& expected, double rtol, double atol) {
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

// The scheduled (not yet lowered) function of the group `function_text` as production
// schedules it; throws Error unless the strategy registered for `anchor_op` scheduled it.
// `inputs` receives random inputs and `expected` the reference outputs.
inline tir::PrimFunc schedule_group_with(const std::string& function_text,
                                         const std::string& anchor_op, std::vector<Tensor>& inputs,
                                         std::vector<Tensor>& expected, int vector_bits = 512,
                                         const lower::KnobConfig* config = nullptr) {
  ir::Function fn = topi_test::primitive_function(function_text);
  reference_run(fn, inputs, expected);

  const topi::Strategy* strategy = nullptr;
  for (const topi::Strategy* record : topi::find_strategies(anchor_op, {}))
    if (!strategy && record->schedule) strategy = record;
  if (!strategy) throw Error("no x86 schedule for " + anchor_op);
  lower::LowerGroupOptions options;
  options.vector_bits = vector_bits;
  if (config)
    options.config_for = [config](const ir::Function&, const lower::LowerGroupOptions&) {
      return config;
    };
  tir::PrimFunc scheduled = lower::lower_primitive(fn, "kernel", options);
  auto attr = [&](const char* key) {
    const ir::AttrValue* value = scheduled->func_attrs.find(key);
    const std::string* text = value ? std::get_if<std::string>(value) : nullptr;
    return text ? *text : std::string("(none)");
  };
  if (attr(topi::kScheduleAttr) != strategy->name)
    throw Error("the group ran the '" + attr(topi::kScheduleAttr) + "' schedule, not " +
                strategy->name + "; declined: " + attr(topi::kScheduleDeclinedAttr));
  return scheduled;
}

// Schedules the group with the x86 schedule of anchor_op, compiles it and compares it with
// the reference interpreter.
inline void check_x86_schedule(const std::string& function_text, const std::string& anchor_op,
                               int vector_bits = 512, double rtol = 1e-4, double atol = 1e-4,
                               const lower::KnobConfig* config = nullptr) {
  std::vector<Tensor> inputs, expected;
  tir::PrimFunc scheduled;
  try {
    scheduled =
        schedule_group_with(function_text, anchor_op, inputs, expected, vector_bits, config);
  } catch (const std::exception& e) {
    FAIL() << "scheduling: " << e.what();
  }
  expect_kernel_matches(scheduled, inputs, expected, rtol, atol);
}

}  // namespace anvil::x86_test
