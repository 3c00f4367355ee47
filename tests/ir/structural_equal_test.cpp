// Structural equality and hashing: alpha-renaming is invisible, any other
// difference is found and described by its path.
#include "text_test_util.h"

namespace anvil::ir::testing {
namespace {

struct Conv {
  Var data, weight;
  Function fn;
};

// relu(bias_add(conv2d(data, weight), bias)) with fresh variables each time.
Function conv_function(std::vector<int64_t> strides = {2, 2}, const char* activation = "nn.relu",
                       const std::string& prefix = "") {
  Var data = VarNode::make(prefix + "data", tensor_type({1, 3, 32, 32}));
  Var weight = VarNode::make(prefix + "weight", tensor_type({8, 3, 3, 3}));
  Var bias = VarNode::make(prefix + "bias", tensor_type({8}));
  Expr conv = call("nn.conv2d", {data, weight}, {{"strides", strides}, {"channels", int64_t(8)}});
  return FunctionNode::make({data, weight, bias},
                            call(activation, {call("nn.bias_add", {conv, bias})}));
}

Constant constant(std::vector<float> values, DataType dtype = DataType::float32()) {
  Tensor t = Tensor::empty({int64_t(values.size())}, dtype);
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
  return ConstantNode::make(t);
}

TEST(StructuralEqual, AlphaRenamedFunctionsAreEqualAndHashAlike) {
  Function a = conv_function(), b = conv_function({2, 2}, "nn.relu", "renamed_");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_TRUE(structural_equal(module_of(a), module_of(b)));
  EXPECT_FALSE(structural_mismatch(module_of(a), module_of(b)));
}

TEST(StructuralEqual, DifferentAttributeIsFoundAndNamed) {
  std::optional<std::string> mismatch =
      structural_mismatch(module_of(conv_function({2, 2})), module_of(conv_function({1, 1})));
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(*mismatch,
            "@main: body.args[0].args[0]: call of nn.conv2d: attribute strides: [2, 2] vs [1, 1]");
  EXPECT_NE(structural_hash(conv_function({2, 2})), structural_hash(conv_function({1, 1})));
}

TEST(StructuralEqual, DifferentOperatorIsFound) {
  std::optional<std::string> mismatch =
      structural_mismatch(module_of(conv_function()), module_of(conv_function({2, 2}, "nn.gelu")));
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(*mismatch, "@main: body.callee: operator nn.relu vs operator nn.gelu");
}

TEST(StructuralEqual, SwappedArgumentsDiffer) {
  Var x = VarNode::make("x", tensor_type({2})), y = VarNode::make("y", tensor_type({2}));
  Function a = FunctionNode::make({x, y}, call("subtract", {x, y}));
  Function b = FunctionNode::make({x, y}, call("subtract", {y, x}));
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_EQ(*structural_mismatch(module_of(a), module_of(b)),
            "@main: body.args[0]: %x vs %y (different variables)");
}

TEST(StructuralEqual, BindingStructureMatters) {
  TensorType t = tensor_type({2});
  Var x = VarNode::make("x", t), y = VarNode::make("y", t);
  // add(x, x) vs add(x, y): the same shape of tree, different bindings.
  EXPECT_FALSE(structural_equal(FunctionNode::make({x, y}, call("add", {x, x})),
                                FunctionNode::make({x, y}, call("add", {x, y}))));
  // let a = x; add(a, a)  vs  let b = x; add(b, x)
  Var a = VarNode::make("a"), b = VarNode::make("b");
  EXPECT_FALSE(structural_equal(FunctionNode::make({x}, LetNode::make(a, x, call("add", {a, a}))),
                                FunctionNode::make({x}, LetNode::make(b, x, call("add", {b, x})))));
  EXPECT_TRUE(structural_equal(FunctionNode::make({x}, LetNode::make(a, x, call("add", {a, x}))),
                               FunctionNode::make({y}, LetNode::make(b, y, call("add", {b, y})))));
  // Annotations of bound variables are part of the structure.
  Var x16 = VarNode::make("x", tensor_type({2}, DataType::float16()));
  EXPECT_FALSE(structural_equal(FunctionNode::make({x}, x), FunctionNode::make({x16}, x16)));
}

TEST(StructuralEqual, FreeVariablesMatchByIdentityUnlessMapped) {
  Var x = VarNode::make("x", tensor_type({2})), y = VarNode::make("y", tensor_type({2}));
  EXPECT_TRUE(structural_equal(call("nn.relu", {x}), call("nn.relu", {x})));
  EXPECT_FALSE(structural_equal(call("nn.relu", {x}), call("nn.relu", {y})));
  EXPECT_TRUE(structural_equal(call("nn.relu", {x}), call("nn.relu", {y}), true));
  // Mapped free variables still need a consistent mapping.
  EXPECT_FALSE(structural_equal(call("add", {x, x}), call("add", {x, y}), true));
  EXPECT_EQ(structural_hash(call("nn.relu", {x})), structural_hash(call("nn.relu", {y})));
}

TEST(StructuralEqual, MissingAttrsEqualDefaultAttrs) {
  Var x = VarNode::make("x", tensor_type({1, 4}));
  Expr implicit = CallNode::make(OpNode::get("nn.softmax"), {x});
  Expr explicit_default = call("nn.softmax", {x}, {{"axis", int64_t(-1)}});
  EXPECT_TRUE(structural_equal(implicit, explicit_default));
  EXPECT_EQ(structural_hash(implicit), structural_hash(explicit_default));
  EXPECT_FALSE(structural_equal(implicit, call("nn.softmax", {x}, {{"axis", int64_t(0)}})));
}

TEST(StructuralEqual, ConstantsCompareByDtypeShapeAndBytes) {
  EXPECT_TRUE(structural_equal(constant({1, 2}), constant({1, 2})));
  EXPECT_EQ(structural_hash(constant({1, 2})), structural_hash(constant({1, 2})));
  EXPECT_FALSE(structural_equal(constant({1, 2}), constant({1, 3})));
  EXPECT_FALSE(structural_equal(constant({1, 2}), constant({1, 2}, DataType::float64())));
  EXPECT_FALSE(structural_equal(constant({1, 2}), constant({1, 2, 0})));
  IRModule a = module_of(FunctionNode::make({}, constant({1, 2})));
  IRModule b = module_of(FunctionNode::make({}, constant({1, 5})));
  EXPECT_EQ(*structural_mismatch(a, b),
            "@main: body: constant Tensor[(2), float32] vs constant Tensor[(2), float32] with "
            "different values");
}

TEST(StructuralEqual, CheckedTypesAreIgnoredButAnnotationsAndOutputTypesCount) {
  Var x = VarNode::make("x", tensor_type({2}));
  Expr typed = call("nn.relu", {x});
  infer_expr_type(typed);
  EXPECT_TRUE(structural_equal(typed, call("nn.relu", {x})));
  Dim n = Dim::var("n");
  GlobalVar f = GlobalVarNode::make("f");
  EXPECT_TRUE(structural_equal(call_tir(f, {x}, tensor_type({n * 2})),
                               call_tir(f, {x}, tensor_type({n + n}))));
  EXPECT_FALSE(
      structural_equal(call_tir(f, {x}, tensor_type({n})), call_tir(f, {x}, tensor_type({n + 1}))));
  EXPECT_FALSE(structural_equal(call_tir(f, {x}, tensor_type({n})),
                                call_tir(GlobalVarNode::make("g"), {x}, tensor_type({n}))));
  EXPECT_FALSE(structural_equal(call_dps_packed("env.a", {x}, tensor_type({n})),
                                call_dps_packed("env.b", {x}, tensor_type({n}))));
  EXPECT_FALSE(
      structural_equal(FunctionNode::make({x}, x, tensor_type({2})), FunctionNode::make({x}, x)));
}

TEST(StructuralEqual, FunctionAttributesCount) {
  Var p = VarNode::make("p", tensor_type({2}));
  Function plain = FunctionNode::make({p}, call("exp", {p}));
  Function primitive =
      FunctionNode::make({p}, call("exp", {p}), nullptr, DictAttrs{}.with("Primitive", int64_t(1)));
  EXPECT_FALSE(structural_equal(plain, primitive));
  EXPECT_EQ(*structural_mismatch(module_of(plain), module_of(primitive)),
            "@main: function attributes {} vs {Primitive=1}");
}

TEST(StructuralEqual, BlocksCompareDataflownessAndBindings) {
  TensorType t = tensor_type({2});
  auto make = [&](bool dataflow_block, bool dataflow_var, const char* op) {
    Var x = VarNode::make("x", t);
    Var v = VarNode::make("v", nullptr, dataflow_var);
    Var out = VarNode::make("out");
    BindingBlock block{{{v, call(op, {x})}, {out, call("exp", {v})}}, dataflow_block};
    return FunctionNode::make({x}, SeqExprNode::make({block}, out));
  };
  EXPECT_TRUE(structural_equal(make(true, true, "nn.relu"), make(true, true, "nn.relu")));
  EXPECT_EQ(structural_hash(make(true, true, "nn.relu")),
            structural_hash(make(true, true, "nn.relu")));
  EXPECT_FALSE(structural_equal(make(true, true, "nn.relu"), make(false, true, "nn.relu")));
  EXPECT_FALSE(structural_equal(make(true, true, "nn.relu"), make(true, false, "nn.relu")));
  EXPECT_EQ(*structural_mismatch(module_of(make(true, true, "nn.relu")),
                                 module_of(make(true, true, "negative"))),
            "@main: body.blocks[0].%v.callee: operator nn.relu vs operator negative");
}

TEST(StructuralEqual, SharedAndDuplicatedSubexpressionsAreEqual) {
  Var x = VarNode::make("x", tensor_type({2}));
  Expr shared = call("nn.relu", {x});
  Expr dag = call("add", {shared, shared});
  Expr tree = call("add", {call("nn.relu", {x}), call("nn.relu", {x})});
  EXPECT_TRUE(structural_equal(dag, tree));
  EXPECT_EQ(structural_hash(dag), structural_hash(tree));
  // A chain that doubles its paths at every level compares in linear time.
  Expr a = x, b = x;
  for (int i = 0; i < 200; ++i) {
    a = call("add", {a, a});
    Expr copy = call("add", {b, b});
    b = copy;
  }
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, ModulesCompareByNameNotOrder) {
  FakePrimFuncHooks hooks;
  IRModule a, b;
  a.add("main", conv_function());
  a.add("kernel", fake_prim_func("x"));
  b.add("kernel", fake_prim_func("x"));
  b.add("main", conv_function());
  EXPECT_TRUE(structural_equal(a, b));
  IRModule c = b;
  c.add("kernel", fake_prim_func("y"));
  EXPECT_EQ(*structural_mismatch(a, c), "@kernel: PrimFuncs differ");
  IRModule d = a;
  d.add("extra", conv_function());
  EXPECT_EQ(*structural_mismatch(d, a), "@extra: only in the first module");
  EXPECT_EQ(*structural_mismatch(a, d), "@extra: only in the second module");
}

TEST(StructuralEqual, DeepChainsCompareAndHashWithoutDeepRecursion) {
  auto chain = [](const char* name) {
    Var x = VarNode::make(name, tensor_type({2}));
    Expr e = x;
    for (int i = 0; i < 10000; ++i) e = call("nn.relu", {e});
    return FunctionNode::make({x}, e);
  };
  EXPECT_TRUE(structural_equal(chain("a"), chain("b")));
  EXPECT_EQ(structural_hash(chain("a")), structural_hash(chain("b")));
}

}  // namespace
}  // namespace anvil::ir::testing
