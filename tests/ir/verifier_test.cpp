// The verifier: one test per rule, each checking the message it gives.
#include "anvil/ir/verifier.h"

#include "anvil/testing/workloads.h"
#include "text_test_util.h"

namespace anvil::ir::testing {
namespace {

using Problems = std::vector<std::string>;

TEST(Verifier, WellFormedModulesPass) {
  FakePrimFuncHooks hooks;
  EXPECT_EQ(verify(conv_bias_relu_module(), {true}), (Problems{}));
  EXPECT_EQ(verify(mlp_dataflow_module(), {true}), (Problems{}));
  EXPECT_EQ(verify(anvil::testing::workload_by_name("mlp").mod, {true}), (Problems{}));
  EXPECT_NO_THROW(check_well_formed(conv_bias_relu_module()));
}

TEST(Verifier, VariableBoundTwice) {
  Var x = VarNode::make("x", tensor_type({2}));
  EXPECT_EQ(verify(module_of(FunctionNode::make({x, x}, x))),
            (Problems{"@main: variable %x is bound 2 times"}));
  Var y = VarNode::make("y", tensor_type({2}));
  EXPECT_EQ(verify(module_of(FunctionNode::make({y}, LetNode::make(y, y, y)))),
            (Problems{"@main: variable %y is bound 2 times"}));
}

TEST(Verifier, VariableUsedOutsideItsScope) {
  TensorType t = tensor_type({2});
  Var x = VarNode::make("x", t), v = VarNode::make("v");
  // The let's variable escapes its body.
  Expr body = TupleNode::make({LetNode::make(v, x, v), v});
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, body))),
            (Problems{"@main: variable %v is used outside its scope"}));
  // A parameter of a nested function used by its caller.
  Var p = VarNode::make("p", t);
  Expr fn_then_p = TupleNode::make({FunctionNode::make({p}, p), p});
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, fn_then_p))),
            (Problems{"@main: variable %p is used outside its scope"}));
  // A let in the then-branch seen from the else-branch.
  Var c = VarNode::make("c", tensor_type({}, DataType::boolean()));
  Var w = VarNode::make("w");
  Expr branches = IfNode::make(c, LetNode::make(w, x, w), w);
  EXPECT_EQ(verify(module_of(FunctionNode::make({c, x}, branches))),
            (Problems{"@main: variable %w is used outside its scope"}));
}

TEST(Verifier, FreeVariable) {
  Var x = VarNode::make("x", tensor_type({2})), z = VarNode::make("z", tensor_type({2}));
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, call("add", {x, z})))),
            (Problems{"@main: variable %z is free (bound nowhere in the function)"}));
}

TEST(Verifier, DataflowVariablesStayInTheirBlock) {
  TensorType t = tensor_type({2});
  Var x = VarNode::make("x", t);
  Var lv = VarNode::make("lv0", nullptr, true), gv = VarNode::make("gv");
  BindingBlock block{{{lv, call("nn.relu", {x})}, {gv, call("exp", {lv})}}, true};
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, SeqExprNode::make({block}, gv)))),
            (Problems{}));
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, SeqExprNode::make({block}, lv)))),
            (Problems{"@main: dataflow variable %lv0 is used outside its dataflow block"}));
  BindingBlock later{{{VarNode::make("y"), call("exp", {lv})}}, false};
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, SeqExprNode::make({block, later}, gv)))),
            (Problems{"@main: dataflow variable %lv0 is used outside its dataflow block"}));
  Var a = VarNode::make("a", nullptr, true);
  BindingBlock plain{{{a, call("nn.relu", {x})}}, false};
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, SeqExprNode::make({plain}, x)))),
            (Problems{"@main: dataflow variable %a is bound outside a dataflow block"}));
}

TEST(Verifier, BindingUsedBeforeItIsBound) {
  TensorType t = tensor_type({2});
  Var x = VarNode::make("x", t), a = VarNode::make("a"), b = VarNode::make("b");
  BindingBlock block{{{a, call("exp", {b})}, {b, call("nn.relu", {x})}}, false};
  EXPECT_EQ(verify(module_of(FunctionNode::make({x}, SeqExprNode::make({block}, a)))),
            (Problems{"@main: variable %b is used outside its scope"}));
}

TEST(Verifier, GlobalFunctionsMustExist) {
  Var x = VarNode::make("x", tensor_type({2}));
  Expr body = TupleNode::make({CallNode::make(GlobalVarNode::make("helper"), {x}),
                               call_tir(GlobalVarNode::make("kernel"), {x}, tensor_type({2}))});
  IRModule mod = module_of(FunctionNode::make({x}, body));
  EXPECT_EQ(verify(mod), (Problems{"@main refers to @helper, which the module does not define",
                                   "@main refers to @kernel, which the module does not define"}));
  Var y = VarNode::make("y", tensor_type({2}));
  mod.add("helper", FunctionNode::make({y}, y));
  FakePrimFuncHooks hooks;
  mod.add("kernel", fake_prim_func(""));
  EXPECT_EQ(verify(mod), (Problems{}));
}

TEST(Verifier, RequireTypesListsUntypedExpressions) {
  Var x = VarNode::make("x", tensor_type({2}));
  IRModule untyped = module_of(FunctionNode::make({x}, call("nn.relu", {x})));
  EXPECT_EQ(verify(untyped), (Problems{}));
  EXPECT_EQ(verify(untyped, {true}),
            (Problems{"@main: function has no type (run InferType)",
                      "@main: variable %x has no type (run InferType)",
                      "@main: call of nn.relu has no type (run InferType)"}));
  EXPECT_EQ(verify(infer_type(untyped), {true}), (Problems{}));
  // InferType above typed x itself; a fresh variable makes 12 untyped nodes.
  Var fresh = VarNode::make("x", tensor_type({2}));
  Expr chain = fresh;
  for (int i = 0; i < 10; ++i) chain = call("exp", {chain});
  EXPECT_EQ(verify(module_of(FunctionNode::make({fresh}, chain)), {true}).back(),
            "@main: 7 more expressions have no type");
}

TEST(Verifier, CheckWellFormedThrowsAnInternalError) {
  Var x = VarNode::make("x", tensor_type({2}));
  try {
    check_well_formed(module_of(FunctionNode::make({x, x}, x)));
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("@main: variable %x is bound 2 times"), std::string::npos);
  }
}

TEST(Verifier, ParsedTextThatPassesTheParserCanStillBeChecked) {
  // The parser resolves names by scope, so a parsed module is well-formed by construction.
  IRModule mod = parse_module(R"(def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { exp(%p) };
  let %y = %0(%x);
  dataflow {
    %a = nn.relu(%y);
    %b = add(%a, %x);
    output(%b);
  }
  %b
})");
  EXPECT_EQ(verify(mod), (Problems{}));
  EXPECT_EQ(verify(infer_type(mod), {true}), (Problems{}));
}

}  // namespace
}  // namespace anvil::ir::testing
