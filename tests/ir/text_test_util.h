// Modules and helpers shared by the printer, parser, structural equality and
// verifier tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/prim_func_hooks.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::ir::testing {

inline TensorType tensor_type(std::vector<Dim> shape, DataType dtype = DataType::float32()) {
  return TensorTypeNode::make(std::move(shape), dtype);
}

// Attrs of an op with the given fields set by name.
inline Attrs op_attrs(std::string_view op,
                      const std::vector<std::pair<std::string, AttrValue>>& fields) {
  const OpDef* def = OpTable::global().find(op);
  Ref<AttrsNode> attrs = def->default_attrs->make_default();
  for (const auto& [name, value] : fields) attrs->set_field(name, value);
  return Attrs(attrs);
}

inline Call call(std::string_view op, std::vector<Expr> args,
                 const std::vector<std::pair<std::string, AttrValue>>& fields = {}) {
  return call_op(op, std::move(args), fields.empty() ? nullptr : op_attrs(op, fields));
}

inline IRModule module_of(Function main) {
  IRModule mod;
  mod.add("main", std::move(main));
  return mod;
}

// A stand-in for the tensor IR's PrimFunc: its text is kept verbatim.
struct FakePrimFunc : BaseFuncNode {
  FakePrimFunc() : BaseFuncNode(ExprKind::PrimFunc) {}
  std::string body;
};

inline BaseFunc fake_prim_func(std::string body) {
  auto node = make_ref<FakePrimFunc>();
  node->body = std::move(body);
  return BaseFunc(node.get());
}

// Installs hooks that print a FakePrimFunc as "{ body }" for the life of the object.
class FakePrimFuncHooks {
 public:
  FakePrimFuncHooks() : saved_(prim_func_hooks()) {
    PrimFuncHooks hooks;
    hooks.print = [](const BaseFuncNode& f) {
      return "{" + static_cast<const FakePrimFunc&>(f).body + "}";
    };
    hooks.parse = [](std::string_view text, size_t& pos, const std::string& source) -> BaseFunc {
      while (pos < text.size() && text[pos] == ' ') ++pos;
      size_t close = text.find('}', pos);
      if (pos >= text.size() || text[pos] != '{' || close == std::string_view::npos)
        throw Error(source + ": expected '{' and '}' around the fake PrimFunc");
      BaseFunc f = fake_prim_func(std::string(text.substr(pos + 1, close - pos - 1)));
      pos = close + 1;
      return f;
    };
    hooks.equal = [](const BaseFuncNode& a, const BaseFuncNode& b) {
      return static_cast<const FakePrimFunc&>(a).body == static_cast<const FakePrimFunc&>(b).body;
    };
    hooks.hash = [](const BaseFuncNode& f) {
      return std::hash<std::string>()(static_cast<const FakePrimFunc&>(f).body);
    };
    set_prim_func_hooks(std::move(hooks));
  }
  ~FakePrimFuncHooks() { set_prim_func_hooks(saved_); }
  FakePrimFuncHooks(const FakePrimFuncHooks&) = delete;
  FakePrimFuncHooks& operator=(const FakePrimFuncHooks&) = delete;

 private:
  PrimFuncHooks saved_;
};

// conv2d + bias_add + relu over a 224x224 image, typed.
inline IRModule conv_bias_relu_module() {
  Var data = VarNode::make("data", tensor_type({1, 3, 224, 224}));
  Var weight = VarNode::make("conv0_weight", tensor_type({64, 3, 7, 7}));
  Var bias = VarNode::make("conv0_bias", tensor_type({64}));
  Expr conv = call("nn.conv2d", {data, weight},
                   {{"strides", std::vector<int64_t>{2, 2}},
                    {"padding", std::vector<int64_t>{3, 3, 3, 3}},
                    {"channels", int64_t(64)},
                    {"kernel_size", std::vector<int64_t>{7, 7}}});
  Expr body = call("nn.relu", {call("nn.bias_add", {conv, bias})});
  return infer_type(module_of(FunctionNode::make({data, weight, bias}, body)));
}

// The MLP of the MLC course in Relax form: one dataflow block, two calls of a
// runtime function and one call_tir, over a symbolic batch n. Needs FakePrimFuncHooks.
inline IRModule mlp_dataflow_module(bool typed = true) {
  Dim n = Dim::var("n");
  Var x = VarNode::make("x", tensor_type({n, 784}));
  Var w0 = VarNode::make("w0", tensor_type({128, 784}));
  Var b0 = VarNode::make("b0", tensor_type({128}));
  Var w1 = VarNode::make("w1", tensor_type({10, 128}));
  Var b1 = VarNode::make("b1", tensor_type({10}));
  Var lv0 = VarNode::make("lv0", nullptr, true);
  Var lv1 = VarNode::make("lv1", nullptr, true);
  Var gv = VarNode::make("gv", nullptr, false);
  BindingBlock block;
  block.is_dataflow = true;
  block.bindings = {
      {lv0, call_dps_packed("env.linear", {x, w0, b0}, tensor_type({n, 128}))},
      {lv1, call_tir(GlobalVarNode::make("relu0"), {lv0}, tensor_type({n, 128}))},
      {gv, call_dps_packed("env.linear", {lv1, w1, b1}, tensor_type({n, 10}))},
  };
  Expr body = SeqExprNode::make({block}, gv);
  IRModule mod = module_of(FunctionNode::make({x, w0, b0, w1, b1}, body));
  mod.add("relu0", fake_prim_func(" relu over (n, 128) "));
  return typed ? infer_type(mod) : mod;
}

// Print -> parse -> structurally equal; printing the result gives the same text.
inline void expect_round_trip(const IRModule& mod, const PrintOptions& options = {}) {
  std::string text = print_module(mod, options);
  SCOPED_TRACE(text);
  IRModule parsed = parse_module(text, "round-trip");
  std::optional<std::string> mismatch = structural_mismatch(mod, parsed);
  EXPECT_FALSE(mismatch) << *mismatch;
  // The parser leaves types to InferType, so type comments come back with it.
  bool typed = false;
  for (const auto& [name, f] : mod.functions()) typed |= bool(f->checked_type);
  typed &= options.show_types;
  IRModule again = typed ? infer_type(parsed) : parsed;
  EXPECT_EQ(print_module(again, options), text);
}

}  // namespace anvil::ir::testing
