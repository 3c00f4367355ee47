// A graph module holding a PrimFunc called through call_tir prints with the
// tensor IR text embedded, parses back structurally equal, and compares
// PrimFuncs structurally once the hooks are installed.
#include <gtest/gtest.h>

#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/structural_equal.h"
#include "text_corpus.h"

namespace anvil::tir {
namespace {

ir::IRModule relu_module(const std::string& kernel_text) {
  install_graph_ir_hooks();
  ir::Dim n = ir::Dim::var("n");
  ir::TensorType type = ir::TensorTypeNode::make({n, 128}, DataType::float32());
  ir::Var x = ir::VarNode::make("x", type);
  ir::Expr call = ir::call_tir(ir::GlobalVarNode::make("relu0"), {x}, type);
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({x}, call));
  mod.add("relu0", parse_prim_func(kernel_text));
  return mod;
}

TEST(TirGraphIrHooks, ModuleWithPrimFuncRoundTrips) {
  ir::IRModule mod = relu_module(testing::kRelu0);
  std::string text = ir::print_module(mod);
  EXPECT_NE(text.find("prim_func @relu0 @T.prim_func\ndef relu0(x: T.handle, y: T.handle):\n"),
            std::string::npos)
      << text;
  ir::IRModule parsed = ir::parse_module(text, "mod.txt");
  EXPECT_TRUE(ir::structural_equal(mod, parsed)) << text;
  EXPECT_EQ(ir::print_module(parsed), text);
}

TEST(TirGraphIrHooks, PrimFuncBetweenGraphFunctionsAndTwoKernels) {
  install_graph_ir_hooks();
  ir::IRModule mod = relu_module(testing::kRelu0);
  mod.add("linear0", parse_prim_func(testing::kLinear0));
  std::string text = ir::print_module(mod);
  ir::IRModule parsed = ir::parse_module(text, "mod.txt");
  EXPECT_TRUE(ir::structural_equal(mod, parsed)) << text;
  // The kernels are parsed anew, not shared.
  EXPECT_NE(parsed.functions()[1].second.get(), mod.functions()[1].second.get());
}

TEST(TirGraphIrHooks, DifferentKernelsAreNotEqual) {
  std::string other = testing::kRelu0;
  other.replace(other.find("T.float32(0)"), 12, "T.float32(1)");
  EXPECT_FALSE(ir::structural_equal(relu_module(testing::kRelu0), relu_module(other)));
  EXPECT_TRUE(ir::structural_equal(relu_module(testing::kRelu0), relu_module(testing::kRelu0)));
}

TEST(TirGraphIrHooks, ErrorsInsideTheKernelNameTheirLine) {
  ir::IRModule mod = relu_module(testing::kRelu0);
  std::string text = ir::print_module(mod);
  size_t at = text.find("T.max(");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "T.mux(");
  try {
    ir::parse_module(text, "mod.txt");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("unknown function T.mux"), std::string::npos) << message;
    EXPECT_EQ(message.rfind("mod.txt:", 0), 0u) << message;
  }
}

}  // namespace
}  // namespace anvil::tir
