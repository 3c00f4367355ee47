#include "topi/topi_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/tir/transform.h"

namespace anvil::topi_test {
namespace {

std::vector<int64_t> static_shape_of(const ir::Type& type) {
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  EXPECT_TRUE(tensor && tensor->static_shape());
  return tensor ? tensor->static_shape().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
}

std::vector<ir::Type> output_types(const ir::Type& type) {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) return tuple->fields;
  return {type};
}

void compare(const Tensor& got, const Tensor& want, const std::string& what, Tolerance tol) {
  ASSERT_EQ(got.shape_vector(), want.shape_vector()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get_as_double(i), w = want.get_as_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w))) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", reference " << w;
      return;
    }
  }
}

// Lowers fn (a typed primitive function) both ways, runs it and compares with `expected`.
void run_and_compare(const ir::Function& fn, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& expected, const std::string& what, Tolerance tol) {
  std::vector<ir::Type> out_types = output_types(fn->body->checked_type);
  for (bool scheduled : {false, true}) {
    std::string label = what + (scheduled ? " (default schedule)" : " (naive)");
    lower::LowerGroupOptions options;
    options.schedule = scheduled;
    tir::PrimFunc func;
    Module module;
    try {
      func = tir::transform::lower(lower::lower_primitive(fn, "kernel", options));
      module = codegen::jit_compile({func});
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ": " << e.what();
      return;
    }
    std::vector<Tensor> outputs;
    std::vector<Value> args;
    for (const Tensor& t : inputs) args.emplace_back(t);
    for (const ir::Type& type : out_types) {
      const auto* tensor = ir::as<ir::TensorTypeNode>(type);
      outputs.push_back(Tensor::zeros(static_shape_of(type), tensor->dtype));
      args.emplace_back(outputs.back());
    }
    try {
      module.function("kernel").call(args);
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ": running: " << e.what();
      return;
    }
    ASSERT_EQ(outputs.size(), expected.size()) << label;
    for (size_t i = 0; i < outputs.size(); ++i)
      compare(outputs[i], expected[i], label + " output " + std::to_string(i), tol);
  }
}

ir::Function mark_primitive(const ir::Function& fn) {
  ir::DictAttrs attrs = fn->func_attrs.with("Primitive", int64_t(1));
  return ir::FunctionNode::make(fn->params, fn->body, fn->ret_type, attrs);
}

}  // namespace

Tensor random_tensor(std::vector<int64_t> shape, DataType dtype, uint64_t seed, double lo,
                     double hi) {
  Tensor t = Tensor::zeros(std::move(shape), dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(rng);
    if (dtype.is_bool())
      v = v > (lo + hi) / 2;
    else if (!dtype.is_float() && !dtype.is_bfloat())
      v = std::round(v);
    t.set_from_double(i, v);
  }
  return t;
}

ir::Attrs attrs(const std::string& op,
                const std::vector<std::pair<std::string, ir::AttrValue>>& fields) {
  return ir::make_op_attrs(op, fields);
}

ir::Function op_function(const std::string& op, const std::vector<Tensor>& inputs,
                         ir::Attrs call_attrs) {
  std::vector<ir::Var> params;
  std::vector<ir::Expr> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    params.push_back(ir::VarNode::make(
        "x" + std::to_string(i),
        ir::TensorTypeNode::make(
            std::vector<ir::Dim>(inputs[i].shape().begin(), inputs[i].shape().end()),
            inputs[i].dtype())));
    args.push_back(params.back());
  }
  ir::Call call = ir::call_op(op, args, call_attrs);
  ir::Function fn = mark_primitive(ir::FunctionNode::make(params, call));
  ir::IRModule mod;
  mod.add("main", fn);
  mod = ir::infer_type(mod);
  return mod.get_function("main");
}

void check_op(const std::string& op, const std::vector<Tensor>& inputs, ir::Attrs call_attrs,
              Tolerance tol) {
  const ir::Function fn = op_function(op, inputs, call_attrs);
  const auto* typed_call = ir::as<ir::CallNode>(fn->body);
  std::vector<Tensor> expected = reference::evaluate_call(*typed_call, inputs);
  run_and_compare(fn, inputs, expected, op, tol);
}

ir::Function primitive_function(const std::string& function_text) {
  ir::IRModule mod =
      ir::infer_type(ir::parse_module("def @main" + function_text.substr(function_text.find('('))));
  mod.add("main", mark_primitive(mod.get_function("main")));
  return ir::infer_type(mod).get_function("main");
}

void check_group(const std::string& function_text, std::vector<Tensor> inputs, Tolerance tol) {
  ir::Function fn = primitive_function(function_text);
  ir::IRModule mod;
  mod.add("main", fn);
  if (inputs.empty()) {
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const auto* type = ir::as<ir::TensorTypeNode>(
          fn->params[i]->checked_type ? fn->params[i]->checked_type : fn->params[i]->annotation);
      inputs.push_back(random_tensor(*type->static_shape(), type->dtype, 100 + i));
    }
  }
  std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
  run_and_compare(fn, inputs, expected, "group", tol);
}

Tensor run_kernel(const Module& module, const std::vector<Tensor>& inputs, const Tensor& like) {
  Tensor out = Tensor::zeros(like.shape_vector(), like.dtype());
  std::vector<Value> args;
  for (const Tensor& t : inputs) args.emplace_back(t);
  args.emplace_back(out);
  module.function("kernel").call(args);
  return out;
}

void expect_close_to_max(const Tensor& got, const Tensor& want, double rel_of_max,
                         const std::string& how) {
  double scale = 1;
  for (int64_t i = 0; i < want.numel(); ++i)
    scale = std::max(scale, std::abs(want.get_as_double(i)));
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (!(std::abs(got.get_as_double(i) - want.get_as_double(i)) <= rel_of_max * scale)) {
      ADD_FAILURE() << how << ": element " << i << " is " << got.get_as_double(i) << ", reference "
                    << want.get_as_double(i);
      return;
    }
  }
}

}  // namespace anvil::topi_test
