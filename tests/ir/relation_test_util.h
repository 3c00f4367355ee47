// Helpers for type-relation tests of operators: annotated variables, typing a
// single call, and checking the message of a type error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/ir.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::ir::testing {

// A variable annotated with a tensor type.
inline Var tensor_var(const std::string& name, std::vector<Dim> shape,
                      DataType dtype = DataType::float32()) {
  return VarNode::make(name, TensorTypeNode::make(std::move(shape), dtype));
}

// The inferred type of a call of op on args.
inline Type infer_call(std::string_view op, std::vector<Expr> args, Attrs attrs = nullptr) {
  return infer_expr_type(call_op(op, std::move(args), std::move(attrs)));
}

// Succeeds when type is a tensor of exactly this shape and dtype.
inline ::testing::AssertionResult is_tensor(const Type& type, const std::vector<Dim>& shape,
                                            DataType dtype) {
  Type expected = TensorTypeNode::make(shape, dtype);
  if (types_equal(type, expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << type_to_string(type) << ", expected " << type_to_string(expected);
}

// Succeeds when typing expr throws anvil::Error whose message contains every word.
inline ::testing::AssertionResult type_error_mentions(const Expr& expr,
                                                      const std::vector<std::string>& words) {
  try {
    Type type = infer_expr_type(expr);
    return ::testing::AssertionFailure() << "no error; typed as " << type_to_string(type);
  } catch (const Error& e) {
    std::string message = e.what();
    for (const std::string& word : words)
      if (message.find(word) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks \"" << word << "\": " << message;
    return ::testing::AssertionSuccess();
  }
}

// Succeeds when a function of params returning body prints, parses back and
// compares structurally equal: the op's attrs survive the text form.
inline ::testing::AssertionResult round_trips(std::vector<Var> params, const Expr& body) {
  IRModule mod;
  mod.add("main", FunctionNode::make(std::move(params), body));
  std::string text = print_module(mod);
  try {
    IRModule parsed = parse_module(text);
    if (auto diff = structural_mismatch(mod, parsed))
      return ::testing::AssertionFailure() << *diff << "\n" << text;
    return ::testing::AssertionSuccess();
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << e.what() << "\n" << text;
  }
}

// The fusion pattern the table gives op.
inline OpPattern pattern_of(std::string_view op) {
  const OpDef* def = OpTable::global().find(op);
  EXPECT_NE(def, nullptr) << op;
  return def ? def->pattern : OpPattern::Opaque;
}

// Fresh attrs of T, filled in by `fill`.
template <typename T, typename Fill>
Ref<T> attrs_of(Fill fill) {
  auto attrs = make_attrs<T>();
  fill(*attrs);
  return attrs;
}

}  // namespace anvil::ir::testing
