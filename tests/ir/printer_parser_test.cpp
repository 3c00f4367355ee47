// The graph IR text format: golden texts, round trips (print -> parse ->
// structurally equal -> same text), and parse errors with their positions.
#include <cmath>
#include <limits>

#include "anvil/testing/workloads.h"
#include "text_test_util.h"

namespace anvil::ir::testing {
namespace {

Constant scalar(DataType dtype, double value) {
  Tensor t = Tensor::empty({}, dtype);
  t.set_from_double(0, value);
  return ConstantNode::make(t);
}

Constant filled(std::vector<int64_t> shape, DataType dtype, double start) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, start + double(i));
  return ConstantNode::make(t);
}

std::string parse_error(std::string_view text) {
  try {
    parse_module(text, "t");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// ---------------------------------------------------------------- golden texts

TEST(PrinterGolden, ConvBiasReluPrintsAsRelayText) {
  EXPECT_EQ(print_module(conv_bias_relu_module()),
            R"(#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3, 224, 224), float32], %conv0_weight: Tensor[(64, 3, 7, 7), float32], %conv0_bias: Tensor[(64), float32]) -> Tensor[(1, 64, 112, 112), float32] {
  %0 = nn.conv2d(%data, %conv0_weight, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]) /* ty=Tensor[(1, 64, 112, 112), float32] */;
  %1 = nn.bias_add(%0, %conv0_bias) /* ty=Tensor[(1, 64, 112, 112), float32] */;
  nn.relu(%1) /* ty=Tensor[(1, 64, 112, 112), float32] */
}
)");
}

TEST(PrinterGolden, TypesCanBeLeftOut) {
  PrintOptions options;
  options.show_types = false;
  EXPECT_EQ(print_module(conv_bias_relu_module(), options),
            R"(#[version = "0.0.5"]
def @main(%data: Tensor[(1, 3, 224, 224), float32], %conv0_weight: Tensor[(64, 3, 7, 7), float32], %conv0_bias: Tensor[(64), float32]) -> Tensor[(1, 64, 112, 112), float32] {
  %0 = nn.conv2d(%data, %conv0_weight, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]);
  %1 = nn.bias_add(%0, %conv0_bias);
  nn.relu(%1)
}
)");
}

TEST(PrinterGolden, DataflowBlockWithCallDpsPackedAndCallTir) {
  FakePrimFuncHooks hooks;
  EXPECT_EQ(print_module(mlp_dataflow_module()),
            R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n, 784), float32], %w0: Tensor[(128, 784), float32], %b0: Tensor[(128), float32], %w1: Tensor[(10, 128), float32], %b1: Tensor[(10), float32]) -> Tensor[(n, 10), float32] {
  dataflow {
    %lv0 = call_dps_packed("env.linear", (%x, %w0, %b0), out=Tensor[(n, 128), float32]) /* ty=Tensor[(n, 128), float32] */;
    %lv1 = call_tir(@relu0, (%lv0), out=Tensor[(n, 128), float32]) /* ty=Tensor[(n, 128), float32] */;
    %gv = call_dps_packed("env.linear", (%lv1, %w1, %b1), out=Tensor[(n, 10), float32]) /* ty=Tensor[(n, 10), float32] */;
    output(%gv);
  }
  %gv
}

prim_func @relu0 { relu over (n, 128) }
)");
}

TEST(PrinterGolden, PlainBindingsBlockAndAnnotatedBindings) {
  Var x = VarNode::make("x", tensor_type({2, 2}));
  Var y = VarNode::make("y", tensor_type({2, 2}));
  Var z = VarNode::make("z");
  BindingBlock block{{{y, call("add", {x, x})}, {z, call("multiply", {y, call("exp", {y})})}},
                     false};
  IRModule mod = module_of(FunctionNode::make({x}, SeqExprNode::make({block}, z)));
  EXPECT_EQ(print_module(mod), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) {
  bindings {
    %y: Tensor[(2, 2), float32] = add(%x, %x);
    %z = multiply(%y, exp(%y));
  }
  %z
}
)");
}

TEST(PrinterGolden, AnonymousPrimitiveFunctionWithAttrs) {
  TensorType t = tensor_type({1, 4});
  Var p0 = VarNode::make("p0", t), p1 = VarNode::make("p1", t);
  Function fused = FunctionNode::make({p0, p1}, call("nn.relu", {call("add", {p0, p1})}), nullptr,
                                      DictAttrs{}.with("Primitive", int64_t(1)));
  Var x = VarNode::make("x", t), w = VarNode::make("w", t);
  IRModule mod =
      module_of(FunctionNode::make({x, w}, CallNode::make(fused, {call("nn.relu", {x}), w})));
  EXPECT_EQ(print_module(infer_type(mod)), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {
  %1 = fn (%p0: Tensor[(1, 4), float32], %p1: Tensor[(1, 4), float32], Primitive=1) {
    %0 = add(%p0, %p1) /* ty=Tensor[(1, 4), float32] */;
    nn.relu(%0) /* ty=Tensor[(1, 4), float32] */
  };
  %2 = nn.relu(%x) /* ty=Tensor[(1, 4), float32] */;
  %1(%2, %w) /* ty=Tensor[(1, 4), float32] */
}
)");
}

TEST(PrinterGolden, SharedSubexpressionsPrintOnceAndTuplesIndex) {
  Var x = VarNode::make("x", tensor_type({3}));
  Expr r = call("nn.relu", {x});
  Expr pair = TupleNode::make({r, r});
  Expr body = TupleNode::make({TupleGetItemNode::make(pair, 1), TupleNode::make({x})});
  PrintOptions untyped;
  untyped.show_types = false;
  EXPECT_EQ(print_module(module_of(FunctionNode::make({x}, body)), untyped),
            R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) {
  %0 = nn.relu(%x);
  %1 = (%0, %0);
  %2 = %1.1;
  %3 = (%x,);
  (%2, %3)
}
)");
}

TEST(PrinterGolden, LetAndIf) {
  Var c = VarNode::make("c", tensor_type({}, DataType::boolean()));
  Var x = VarNode::make("x", tensor_type({2}));
  Var y = VarNode::make("y", tensor_type({2}));
  Expr branch = IfNode::make(c, call("nn.relu", {y}), call("negative", {y}));
  Expr body = LetNode::make(y, call("add", {x, x}), call("multiply", {branch, y}));
  PrintOptions untyped;
  untyped.show_types = false;
  EXPECT_EQ(print_module(module_of(FunctionNode::make({c, x}, body)), untyped),
            R"(#[version = "0.0.5"]
def @main(%c: bool, %x: Tensor[(2), float32]) {
  let %y: Tensor[(2), float32] = add(%x, %x);
  %0 = if (%c) {
    nn.relu(%y)
  } else {
    negative(%y)
  };
  multiply(%0, %y)
}
)");
}

TEST(PrinterGolden, ConstantsAndMetadata) {
  Var x = VarNode::make("x", tensor_type({2, 2}));
  Expr body = TupleNode::make({scalar(DataType::float32(), 1), scalar(DataType::float32(), -0.5),
                               scalar(DataType::float32(), 2e-5), scalar(DataType::float64(), 1),
                               scalar(DataType::int32(), -3), scalar(DataType::int64(), 4),
                               scalar(DataType::boolean(), 1), scalar(DataType::uint8(), 200),
                               scalar(DataType::float32(), std::numeric_limits<double>::infinity()),
                               filled({2, 2}, DataType::int64(), 1),
                               filled({3, 8}, DataType::float32(), 0)});
  PrintOptions untyped;
  untyped.show_types = false;
  std::string text = print_module(module_of(FunctionNode::make({x}, body)), untyped);
  std::string header = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) {
  (1f, -0.5f, 2e-05f, 1f64, -3, 4i64, True, 200u8, const([inf], shape=(), dtype=float32), const([1, 2, 3, 4], shape=(2, 2), dtype=int64), meta[relay.Constant][0])
}
#[metadata]
)";
  EXPECT_EQ(text.substr(0, header.size()), header);
  untyped.include_metadata = false;
  EXPECT_EQ(print_module(module_of(FunctionNode::make({x}, body)), untyped) + "#[metadata]\n",
            header);
}

TEST(PrinterGolden, MetaConstantsShowTheirType) {
  Var x = VarNode::make("x", tensor_type({3, 8}));
  IRModule mod = infer_type(
      module_of(FunctionNode::make({x}, call("add", {x, filled({3, 8}, DataType::float32(), 0)}))));
  PrintOptions options;
  options.include_metadata = false;
  EXPECT_EQ(print_module(mod, options), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3, 8), float32]) -> Tensor[(3, 8), float32] {
  add(%x, meta[relay.Constant][0] /* ty=Tensor[(3, 8), float32] */) /* ty=Tensor[(3, 8), float32] */
}
)");
}

TEST(PrinterGolden, SymbolicAndUnknownDims) {
  Dim n = Dim::var("n");
  Var x = VarNode::make("x", tensor_type({n, n * 2 + 1, floordiv(n, 2), floormod(n, 4),
                                          min(n, Dim::var("m")), Dim::any()}));
  Var y = VarNode::make("y", TensorTypeNode::make_unknown_rank(DataType::int8()));
  PrintOptions untyped;
  untyped.show_types = false;
  EXPECT_EQ(print_module(module_of(FunctionNode::make({x, y}, TupleNode::make({x, y}))), untyped),
            R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n, n * 2 + 1, floordiv(n, 2), floormod(n, 4), min(m, n), ?), float32], %y: Tensor[?, int8]) {
  (%x, %y)
}
)");
}

TEST(PrinterGolden, VariableNamesAreMadeUniqueAndQuotedWhenNeeded) {
  TensorType t = tensor_type({1});
  Var a = VarNode::make("x", t), b = VarNode::make("x", t), c = VarNode::make("input.1", t);
  Var d = VarNode::make("", t), e = VarNode::make("0", t);
  Expr body = TupleNode::make({a, b, c, d, e});
  PrintOptions untyped;
  untyped.show_types = false;
  EXPECT_EQ(print_module(module_of(FunctionNode::make({a, b, c, d, e}, body)), untyped),
            R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1), float32], %x_1: Tensor[(1), float32], %"input.1": Tensor[(1), float32], %v: Tensor[(1), float32], %v0: Tensor[(1), float32]) {
  (%x, %x_1, %"input.1", %v, %v0)
}
)");
}

// ---------------------------------------------------------------- round trips

TEST(PrinterRoundTrip, ConvBiasRelu) { expect_round_trip(conv_bias_relu_module()); }

TEST(PrinterRoundTrip, MlpWithDataflowBlockCallDpsPackedAndCallTir) {
  FakePrimFuncHooks hooks;
  expect_round_trip(mlp_dataflow_module());
  expect_round_trip(mlp_dataflow_module(false));
}

class PrinterWorkloadRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(PrinterWorkloadRoundTrip, PrintParseIsEqualAndPrintsTheSameText) {
  anvil::testing::Workload w = anvil::testing::workload_by_name(GetParam());
  std::string text = print_module(w.mod);
  IRModule parsed = parse_module(text, GetParam());
  std::optional<std::string> mismatch = structural_mismatch(w.mod, parsed);
  EXPECT_FALSE(mismatch) << *mismatch;
  EXPECT_EQ(print_module(infer_type(parsed)), text);
}

INSTANTIATE_TEST_SUITE_P(EveryWorkload, PrinterWorkloadRoundTrip,
                         ::testing::ValuesIn(anvil::testing::workload_names()),
                         [](const auto& info) { return info.param; });

TEST(PrinterRoundTrip, BatchNormTupleOutputs) {
  TensorType t = tensor_type({1, 8, 4, 4}), c = tensor_type({8});
  Var x = VarNode::make("x", t), g = VarNode::make("gamma", c), b = VarNode::make("beta", c);
  Var m = VarNode::make("mean", c), v = VarNode::make("var", c);
  Expr bn = call("nn.batch_norm", {x, g, b, m, v}, {{"epsilon", 2e-5}});
  Expr body = TupleNode::make({TupleGetItemNode::make(bn, 0), TupleGetItemNode::make(bn, 2)});
  expect_round_trip(infer_type(module_of(FunctionNode::make({x, g, b, m, v}, body))));
}

TEST(PrinterRoundTrip, SymbolicDims) {
  Dim n = Dim::var("n"), m = Dim::var("m");
  Var x = VarNode::make("x", tensor_type({n, 4}));
  Var y = VarNode::make("y", tensor_type({n * m - 1, floordiv(n + 1, 2), max(n, m), Dim::any()}));
  Var z = VarNode::make("z", TensorTypeNode::make_unknown_rank(DataType::float16()));
  Expr body = TupleNode::make({call("nn.relu", {x}), y, z});
  expect_round_trip(module_of(FunctionNode::make({x, y, z}, body, nullptr)));
  expect_round_trip(infer_type(module_of(FunctionNode::make({x}, call("nn.relu", {x})))));
}

TEST(PrinterRoundTrip, LetIfAndNestedFunctions) {
  TensorType t = tensor_type({2});
  Var c = VarNode::make("c", tensor_type({}, DataType::boolean()));
  Var x = VarNode::make("x", t), y = VarNode::make("y", t), f = VarNode::make("f");
  Var p = VarNode::make("p", t), q = VarNode::make("q", t);
  Function inner = FunctionNode::make({p}, call("nn.relu", {p}), t);
  Expr branch = IfNode::make(c, CallNode::make(f, {y}), LetNode::make(q, x, call("negative", {q})));
  Expr body =
      LetNode::make(f, inner, LetNode::make(y, call("add", {x, x}), call("multiply", {branch, y})));
  expect_round_trip(module_of(FunctionNode::make({c, x}, body)));
  expect_round_trip(infer_type(module_of(FunctionNode::make({c, x}, body))));
}

TEST(PrinterRoundTrip, AnonymousPrimitiveFunctionsAndGlobalCalls) {
  TensorType t = tensor_type({1, 4});
  Var p0 = VarNode::make("p0", t);
  DictAttrs attrs = DictAttrs{}.with("Primitive", int64_t(1)).with("hash", std::string("5be2c3"));
  Function fused = FunctionNode::make({p0}, call("exp", {p0}), t, attrs);
  Var x = VarNode::make("x", t);
  IRModule mod;
  Var q = VarNode::make("q", t);
  mod.add("helper", FunctionNode::make({q}, call("nn.relu", {q}), t));
  Expr shared = CallNode::make(fused, {x});
  mod.add("main", FunctionNode::make({x}, CallNode::make(GlobalVarNode::make("helper"),
                                                         {call("add", {shared, shared})})));
  expect_round_trip(mod);
  expect_round_trip(infer_type(mod));
}

TEST(PrinterRoundTrip, ConstantsScalarSmallAndLargeWithMetadata) {
  Var x = VarNode::make("x", tensor_type({3, 8}));
  std::vector<Expr> fields;
  for (DataType dt : {DataType::float32(), DataType::float64(), DataType::float16(),
                      DataType::int8(), DataType::int16(), DataType::int32(), DataType::int64(),
                      DataType::uint8(), DataType::uint16(), DataType::uint32(), DataType::uint64(),
                      DataType::boolean(), DataType::bfloat16()}) {
    fields.push_back(scalar(dt, 1));
    fields.push_back(filled({2, 3}, dt, 0));
  }
  fields.push_back(scalar(DataType::float32(), 0.1));
  fields.push_back(scalar(DataType::float32(), -1e-30));
  fields.push_back(scalar(DataType::float32(), 1e-45));  // subnormal
  fields.push_back(scalar(DataType::float64(), 5e-324));
  fields.push_back(scalar(DataType::float32(), std::nan("")));
  fields.push_back(scalar(DataType::float64(), 0.1));
  fields.push_back(scalar(DataType::int64(), double(std::numeric_limits<int32_t>::min()) * 4));
  fields.push_back(filled({0, 5}, DataType::float32(), 0));
  Constant big = filled({3, 8}, DataType::float32(), 0.25);
  fields.push_back(call("add", {x, big}));
  fields.push_back(call("multiply", {big, filled({8}, DataType::float32(), -7)}));
  fields.push_back(filled({64}, DataType::int32(), -7));
  expect_round_trip(module_of(FunctionNode::make({x}, TupleNode::make(fields))));
}

TEST(PrinterRoundTrip, BindingBlocksLetsAndNestedSeqExprs) {
  TensorType t = tensor_type({4});
  Var x = VarNode::make("x", t);
  Var a = VarNode::make("a", t, true), b = VarNode::make("b", nullptr, false);
  Var c = VarNode::make("c"), d = VarNode::make("d"), e = VarNode::make("e");
  BindingBlock df{{{a, call("nn.relu", {x})}, {b, TupleNode::make({a, x})}}, true};
  BindingBlock plain{{{c, TupleGetItemNode::make(b, 0)}}, false};
  BindingBlock inner{{{d, call("exp", {c})}}, false};
  BindingBlock empty_df{{}, true};
  Expr nested = SeqExprNode::make({inner}, SeqExprNode::make({}, d));
  Expr body =
      SeqExprNode::make({df, plain, empty_df},
                        LetNode::make(e, nested, SeqExprNode::make({BindingBlock{{}, false}}, e)));
  expect_round_trip(module_of(FunctionNode::make({x}, body)));
  expect_round_trip(infer_type(module_of(FunctionNode::make({x}, body))));
}

TEST(PrinterRoundTrip, QuotedAndDuplicateNames) {
  TensorType t = tensor_type({1});
  Var a = VarNode::make("x", t), b = VarNode::make("x", t), c = VarNode::make("conv1/weight:0", t);
  IRModule mod;
  mod.add("my.func", FunctionNode::make({a, b, c}, TupleNode::make({a, b, c})));
  mod.add("main",
          FunctionNode::make({a}, CallNode::make(GlobalVarNode::make("my.func"), {a, a, a})));
  expect_round_trip(mod);
}

TEST(PrinterRoundTrip, LongChainsPrintAndParseWithoutDeepRecursion) {
  Var x = VarNode::make("x", tensor_type({2}));
  Expr body = x;
  for (int i = 0; i < 10000; ++i) body = call(i % 2 ? "nn.relu" : "negative", {body});
  Expr lets = body;
  for (int i = 0; i < 5000; ++i) {
    Var v = VarNode::make("v" + std::to_string(i));
    lets = LetNode::make(v, x, lets);
  }
  PrintOptions untyped;
  untyped.show_types = false;
  expect_round_trip(module_of(FunctionNode::make({x}, lets)), untyped);
}

TEST(PrinterExpr, FreeVariablesCarryTheirTypeWhereTheyFirstAppear) {
  Var x = VarNode::make("x", tensor_type({2}));
  Expr e = call("add", {call("nn.relu", {x}), x});
  std::string text = print_expr(e);
  EXPECT_EQ(text, "%0 = nn.relu(%x: Tensor[(2), float32]);\nadd(%0, %x)\n");
  Expr parsed = parse_expr(text);
  EXPECT_TRUE(structural_equal(e, parsed, true));
  EXPECT_FALSE(structural_equal(e, parsed, false));
  EXPECT_EQ(print_expr(parsed), text);
}

TEST(ParserTypes, ParsesEveryTypeForm) {
  Dim n = Dim::var("n");
  EXPECT_TRUE(types_equal(parse_type("Tensor[(n + n, 3), float32]"), tensor_type({n * 2, 3})));
  EXPECT_TRUE(types_equal(parse_type("Tensor[(3), float32]"), tensor_type({3})));
  EXPECT_TRUE(types_equal(parse_type("Tensor[(3,), float32]"), tensor_type({3})));
  EXPECT_TRUE(types_equal(parse_type("int64"), tensor_type({}, DataType::int64())));
  EXPECT_TRUE(types_equal(parse_type("Tensor[?, bool]"),
                          TensorTypeNode::make_unknown_rank(DataType::boolean())));
  EXPECT_TRUE(types_equal(parse_type("Tensor[(?, (n - 1) * 2, -1 * n + 8), float32]"),
                          tensor_type({Dim::any(), n * 2 - 2, Dim(8) - n})));
  EXPECT_TRUE(types_equal(parse_type("Tensor[(floordiv(n * 4, 2), min(n, 3)), float32]"),
                          tensor_type({n * 2, min(n, 3)})));
  EXPECT_TRUE(types_equal(parse_type("(float32,)"), TupleTypeNode::make({tensor_type({})})));
  EXPECT_TRUE(types_equal(parse_type("(float32)"), tensor_type({})));
  EXPECT_TRUE(types_equal(parse_type("()"), TupleTypeNode::make({})));
  EXPECT_TRUE(
      types_equal(parse_type("fn (float32, (int8, int8)) -> Tensor[(2), float32]"),
                  FuncTypeNode::make(
                      {tensor_type({}), TupleTypeNode::make({tensor_type({}, DataType::int8()),
                                                             tensor_type({}, DataType::int8())})},
                      tensor_type({2}))));
  for (const char* text :
       {"Tensor[(n, n * 2 + 1), float32]", "(Tensor[(1), int8], float16)",
        "fn (Tensor[?, float32]) -> (bool,)", "Tensor[(max(m, n), floormod(n, 3) + 1), uint8]"})
    EXPECT_EQ(type_to_string(parse_type(text)), text);
}

// ---------------------------------------------------------------- errors

TEST(ParserErrors, MissingParenthesis) {
  EXPECT_EQ(parse_error("def @main(%x: float32 {\n  %x\n}"),
            "t:1:23: expected ',' or ')' after a parameter, got '{'");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  nn.relu(%x\n}"),
            "t:3:1: expected ',' or ')' in the argument list, got '}'");
}

TEST(ParserErrors, UnknownOperator) {
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  nn.relux(%x)\n}"),
            "t:2:3: unknown operator 'nn.relux'");
}

TEST(ParserErrors, UnknownAttributeNamesOpAndKey) {
  EXPECT_EQ(
      parse_error(
          "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n"
          "  nn.conv2d(%x, %w, stride=[2, 2])\n}"),
      "t:2:21: operator nn.conv2d has no attribute 'stride' (it has: strides, padding, dilation, "
      "groups, channels, kernel_size, data_layout, kernel_layout, out_layout, out_dtype)");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  nn.relu(%x, alpha=1)\n}"),
            "t:2:15: operator nn.relu takes no attributes, got 'alpha'");
  EXPECT_EQ(
      parse_error(
          "def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n"
          "  nn.conv2d(%x, %w, channels=\"four\")\n}"),
      "t:2:30: operator nn.conv2d: attribute 'channels' expects an int, got string \"four\"");
}

TEST(ParserErrors, UnknownVariableAndFunction) {
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  add(%x, %y)\n}"),
            "t:2:11: unknown variable %y");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  @helper(%x)\n}"),
            "t:2:3: unknown global function @helper: the module does not define it");
  EXPECT_EQ(parse_error("def @main() { 1f }\ndef @main() { 2f }"), "t:2:5: @main is defined twice");
}

TEST(ParserErrors, BadTypeAndBadDimExpression) {
  EXPECT_EQ(
      parse_error("def @main(%x: Tensor[(1, 2), flaot32]) { %x }"),
      "t:1:30: expected a type or data type (float32, int64, bool, ...), got identifier 'flaot32'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n +), float32]) { %x }"),
            "t:1:26: expected a dimension (integer, size variable or '?'), got ')'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(ceil(n, 2)), float32]) { %x }"),
            "t:1:23: expected floordiv, floormod, min, max or broadcast before '(', got identifier 'ceil'");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(floordiv(n, 0)), float32]) { %x }"),
            "t:1:23: division by zero in dimension n / 0");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[1, 2]) { %x }"),
            "t:1:22: expected '(' to start the shape, or '?', got number 1");
}

TEST(ParserErrors, NumbersThatDoNotFitAreErrorsNotOverflows) {
  // Dim arithmetic would overflow int64 here; the parser stops before it does.
  EXPECT_EQ(
      parse_error("def @main(%x: Tensor[(1000000 * 1000000 * 1000000 * 1000000), float32]) { %x }"),
      "t:1:51: dimension expression is too large");
  EXPECT_EQ(parse_error("def @main(%x: Tensor[(n * 4611686018427387904 * 4), float32]) { %x }"),
            "t:1:47: dimension expression is too large");
  EXPECT_EQ(parse_error("def @main() { 1e39f }"), "t:1:15: number 1e39f does not fit float32");
  EXPECT_EQ(parse_error("def @main() { 99999999999 }"),
            "t:1:15: number 99999999999 does not fit int32");
  EXPECT_EQ(parse_error("def @main(%x: float32) { nn.leaky_relu(%x, alpha=1e999f) }"),
            "t:1:50: number 1e999 is out of range for a float attribute");
  EXPECT_EQ(parse_error("def @main() { const([], shape=(9223372036854775807, 2, 0), dtype=int8) }"),
            "t:1:15: const(...) shape (9223372036854775807, 2, 0) is too large");
}

TEST(ParserErrors, UnterminatedStringAndComment) {
  EXPECT_EQ(parse_error(
                "def @main(%x: float32) {\n  call_dps_packed(\"env.linear, (%x), out=float32)\n}"),
            "t:2:19: expected '\"' to end the string, got end of line");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  %x /* ty=float32\n}"),
            "t:2:6: expected '*/' to close this comment, got end of input");
}

TEST(ParserErrors, MetaConstantWithoutOrOutsideMetadata) {
  EXPECT_EQ(parse_error("def @main() {\n  meta[relay.Constant][3]\n}"),
            "t:2:3: meta[relay.Constant][3] refers to the #[metadata] section, which this text "
            "does not have");
  Var x = VarNode::make("x", tensor_type({3, 8}));
  std::string text = print_module(
      module_of(FunctionNode::make({x}, call("add", {x, filled({3, 8}, DataType::float32(), 0)}))));
  std::string bad = text;
  bad.replace(bad.find("[0]"), 3, "[1]");
  EXPECT_EQ(
      parse_error(bad),
      "t:3:32: meta[relay.Constant][1] is out of range: the #[metadata] section holds 1 constants");
  std::string corrupt = text.substr(0, text.find("#[metadata]") + 12) + "!!!\n";
  EXPECT_EQ(parse_error(corrupt), "t:5:1: expected base64 text after #[metadata]");
}

TEST(ParserErrors, BlocksAndStatements) {
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  dataflow {\n    %a = nn.relu(%x);\n    "
                        "output(%b);\n  }\n  %a\n}"),
            "t:4:12: output %b is not bound in this dataflow block");
  EXPECT_EQ(
      parse_error("def @main(%x: float32) {\n  dataflow {\n    %a = nn.relu(%x);\n  }\n  %a\n}"),
      "t:5:3: unknown variable %a");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  %0 = nn.relu(%x)\n  %0\n}"),
            "t:3:3: expected ';' after the step, got '%0'");
  EXPECT_EQ(parse_error("def @main(%x: float32) {\n  add(%x, 1q)\n}"),
            "t:2:11: expected a number suffix (f, f16, f64, i8, i16, i64, u8, u16, u32, u64), got "
            "'q' in 1q");
  EXPECT_EQ(parse_error("def @main() {\n  const([1, 2, 3], shape=(2, 2), dtype=int8)\n}"),
            "t:2:3: const(...) has 3 elements but shape (2, 2) needs 4");
  EXPECT_EQ(parse_error("def @main() {\n  300i8\n}"), "t:2:3: number 300i8 does not fit int8");
  EXPECT_EQ(parse_error("#[version = \"0.0.4\"]\n"),
            "t:1:13: expected version \"0.0.5\", got \"0.0.4\"");
  EXPECT_EQ(parse_error("fn @main() { 1f }"),
            "t:1:1: expected 'def', 'prim_func' or end of input, got identifier 'fn'");
  EXPECT_EQ(parse_error("prim_func @relu0 { }"),
            "t:1:1: cannot parse prim_func @relu0: the tensor IR's parser is not installed "
            "(set_prim_func_hooks)");
}

TEST(ParserErrors, DeepNestingIsAnErrorNotACrash) {
  std::string text = "def @main(%x: float32) {\n  " + std::string(100000, '(') + "%x" +
                     std::string(100000, ')') + "\n}";
  EXPECT_EQ(parse_error(text), "t:2:258: nesting deeper than 256 levels");
}

}  // namespace
}  // namespace anvil::ir::testing
