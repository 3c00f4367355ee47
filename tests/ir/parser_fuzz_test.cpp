// Malformed text never crashes the parser: every prefix of a valid module and
// a few hundred seeded byte mutations either parse or throw anvil::Error.
// Runs under AddressSanitizer with the other parsers of untrusted input.
#include <random>

#include "anvil/ir/verifier.h"
#include "text_test_util.h"

namespace anvil::ir::testing {
namespace {

using Problems = std::vector<std::string>;

// One module exercising every construct of the format.
std::string rich_module_text() {
  FakePrimFuncHooks hooks;
  TensorType t = tensor_type({1, 4}), channels = tensor_type({4});
  Var p0 = VarNode::make("p0", t);
  Function fused =
      FunctionNode::make({p0}, call("exp", {p0}), t, DictAttrs{}.with("Primitive", int64_t(1)));
  Var c = VarNode::make("c", tensor_type({}, DataType::boolean())), x = VarNode::make("x", t);
  Var g = VarNode::make("g", channels), b = VarNode::make("b", channels);
  Var m = VarNode::make("m", channels), v = VarNode::make("v", channels);
  Var y = VarNode::make("y");
  Tensor big = Tensor::empty({4, 8}, DataType::float32());
  for (int64_t i = 0; i < big.numel(); ++i) big.set_from_double(i, double(i) / 3);
  Tensor small = Tensor::empty({2}, DataType::int64());
  small.set_from_double(0, -1);
  small.set_from_double(1, 7);
  Expr bn = call("nn.batch_norm", {x, g, b, m, v}, {{"epsilon", 1e-3}});
  Var i = VarNode::make("i", tensor_type({}, DataType::int64())), a = VarNode::make("a", t);
  Tensor zero = Tensor::zeros({}, DataType::int64()), two = Tensor::empty({}, DataType::int64());
  two.set_from_double(0, 2);
  Expr loop = WhileNode::make(
      {i, a}, {ConstantNode::make(zero), y}, call("less", {i, ConstantNode::make(two)}),
      TupleNode::make({call("add", {i, ConstantNode::make(two)}), call("nn.relu", {a})}));
  Expr body = LetNode::make(
      y, CallNode::make(fused, {call("nn.relu", {x})}),
      IfNode::make(c,
                   TupleNode::make({y, ConstantNode::make(big), ConstantNode::make(small),
                                    TupleGetItemNode::make(loop, 1)}),
                   TupleNode::make({call("add", {y, y}), TupleGetItemNode::make(bn, 0)})));
  IRModule mod = module_of(FunctionNode::make({c, x, g, b, m, v}, body));
  IRModule mlp = mlp_dataflow_module();
  mod.add("mlp", mlp.get("main"));
  mod.add("relu0", mlp.get("relu0"));
  return print_module(mod);
}

// Parses text: success and anvil::Error are both fine; anything else fails the test.
void parse_survives(const std::string& text) {
  IRModule mod;
  try {
    mod = parse_module(text, "fuzz");
  } catch (const Error&) {
    return;
  }
  // What parses must also print and verify without a crash.
  EXPECT_NO_THROW(print_module(mod));
  EXPECT_NO_THROW(verify(mod));
}

TEST(ParserFuzz, TheRichModuleRoundTrips) {
  FakePrimFuncHooks hooks;
  std::string text = rich_module_text();
  IRModule parsed = parse_module(text, "rich");
  PrintOptions untyped{false, true};
  EXPECT_EQ(print_module(parse_module(print_module(parsed, untyped)), untyped),
            print_module(parsed, untyped));
  EXPECT_EQ(verify(parsed), (Problems{}));
}

TEST(ParserFuzz, EveryPrefixParsesOrFailsCleanly) {
  FakePrimFuncHooks hooks;
  std::string text = rich_module_text();
  for (size_t n = 0; n <= text.size(); ++n) parse_survives(text.substr(0, n));
}

TEST(ParserFuzz, RandomByteMutationsParseOrFailCleanly) {
  FakePrimFuncHooks hooks;
  std::string text = rich_module_text();
  std::mt19937 rng(20240601);
  // Bytes that steer the parser into its rarer paths, besides random ones.
  std::string interesting = "()[]{},:;=%@\"\\#?-+*.0123456789e fnlet\n";
  interesting += '\0';
  interesting += '\xff';
  for (int round = 0; round < 400; ++round) {
    std::string mutated = text;
    int flips = 1 + int(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      size_t pos = rng() % mutated.size();
      switch (rng() % 4) {
        case 0:
          mutated[pos] = char(rng() & 0xff);
          break;
        case 1:
          mutated[pos] = interesting[rng() % interesting.size()];
          break;
        case 2:
          mutated.erase(pos, 1 + rng() % 8);
          break;
        default:
          mutated.insert(pos, 1, interesting[rng() % interesting.size()]);
          break;
      }
      if (mutated.empty()) mutated = "x";
    }
    SCOPED_TRACE(round);
    parse_survives(mutated);
  }
}

TEST(ParserFuzz, TypesAndExpressionsSurviveTruncation) {
  const std::string type =
      "fn (Tensor[(n * 2 + 1, floordiv(n, 4), ?), float32], (int8,)) -> Tensor[?, bool]";
  for (size_t n = 0; n <= type.size(); ++n) {
    try {
      parse_type(type.substr(0, n));
    } catch (const Error&) {
    }
  }
  const std::string expr =
      "%0 = nn.conv2d(%x: Tensor[(1, 3, 8, 8), float32], const([1, -2.5, nan, inf], "
      "shape=(2, 2), dtype=float32), strides=[2, 2], out_dtype=\"float32\");\n(%0, %0.0, -3i64, "
      "True)";
  for (size_t n = 0; n <= expr.size(); ++n) {
    try {
      parse_expr(expr.substr(0, n));
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace anvil::ir::testing
