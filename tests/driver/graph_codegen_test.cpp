// Graph codegen: the JSON of small lowered graphs (TVM's schema), storage reuse checked by
// replaying the plan, tuple outputs, params, and the plan of ResNet-18's shapes.
#include "driver/graph_codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "support/graph_memory_oracle.h"

namespace anvil::driver {
namespace {

using nlohmann::json;

ir::TensorType f32(std::vector<ir::Dim> shape) {
  return ir::TensorTypeNode::make(std::move(shape), DataType::float32());
}

ir::Expr kernel(const std::string& name, std::vector<ir::Expr> args, ir::Type out) {
  return ir::call_tir(ir::GlobalVarNode::make(name), std::move(args), std::move(out));
}

ir::Constant filled(std::vector<int64_t> shape, double value) {
  Tensor t = Tensor::empty(std::move(shape), DataType::float32());
  t.fill(value);
  return ir::ConstantNode::make(t);
}

json codegen(const std::vector<ir::Var>& params, const ir::Expr& body) {
  return json::parse(codegen_graph(ir::FunctionNode::make(params, body)).graph_json);
}

std::vector<int> storage_ids(const json& graph) {
  return graph["attrs"]["storage_id"][1].get<std::vector<int>>();
}

// Replays the graph in node order and expects that no storage ever holds two values that are
// live at once: a value lives from its node to its last reader (inputs, params and heads for
// the whole run), and a node's outputs may not share storage with what it reads.
void expect_plan_is_safe(const json& graph) {
  const json& nodes = graph["nodes"];
  std::vector<int> row_ptr = graph["node_row_ptr"].get<std::vector<int>>();
  std::vector<int> sid = storage_ids(graph);
  int num_entries = row_ptr.back();
  ASSERT_EQ(int(sid.size()), num_entries);
  const int forever = int(nodes.size());
  std::vector<int> first(num_entries), last(num_entries);
  for (size_t n = 0; n < nodes.size(); ++n) {
    bool is_input = nodes[n]["op"] == "null";
    for (int e = row_ptr[n]; e < row_ptr[n + 1]; ++e) {
      first[e] = is_input ? -1 : int(n);
      last[e] = is_input ? forever : int(n);
    }
    for (const json& input : nodes[n]["inputs"]) {
      int e = row_ptr[input[0].get<int>()] + input[1].get<int>();
      last[e] = std::max(last[e], int(n));
    }
  }
  for (const json& head : graph["heads"])
    last[row_ptr[head[0].get<int>()] + head[1].get<int>()] = forever;
  for (int a = 0; a < num_entries; ++a)
    for (int b = a + 1; b < num_entries; ++b)
      if (sid[a] == sid[b]) {
        bool disjoint = last[a] < first[b] || last[b] < first[a];
        EXPECT_TRUE(disjoint) << "entries " << a << " and " << b << " share storage " << sid[a]
                              << " while both are live";
      }
}

// ---------------------------------------------------------------- small graphs

TEST(GraphCodegen, TwoKernelGraphIsTvmJson) {
  ir::Var x = ir::VarNode::make("x", f32({2, 3}));
  ir::Expr e = kernel("fused_exp", {x}, f32({2, 3}));
  ir::Expr body = kernel("fused_add", {e, filled({3}, 1.0)}, f32({2, 3}));
  GraphCodegenResult result = codegen_graph(ir::FunctionNode::make({x}, body));
  // Nodes in the order the body reads them: x, the exp kernel, the constant, the add kernel.
  // Storage: x and p0 first (0, 1), then each kernel output; nothing can be reused. The exp
  // kernel's output, the one intermediate value, is the arena (24 bytes at offset 0).
  json expected = json::parse(R"({
    "nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "tvm_op", "name": "fused_exp",
       "attrs": {"func_name": "fused_exp", "num_inputs": "1", "num_outputs": "1",
                 "flatten_data": "0"},
       "inputs": [[0, 0, 0]]},
      {"op": "null", "name": "p0", "inputs": []},
      {"op": "tvm_op", "name": "fused_add",
       "attrs": {"func_name": "fused_add", "num_inputs": "2", "num_outputs": "1",
                 "flatten_data": "0"},
       "inputs": [[1, 0, 0], [2, 0, 0]]}
    ],
    "arg_nodes": [0, 2],
    "heads": [[3, 0, 0]],
    "attrs": {
      "dltype": ["list_str", ["float32", "float32", "float32", "float32"]],
      "shape": ["list_shape", [[2, 3], [2, 3], [3], [2, 3]]],
      "storage_id": ["list_int", [0, 2, 1, 3]],
      "arena_offset": ["list_int", [-1, 0, -1, -1]],
      "largest_live_set_bytes": ["size_t", 24]
    },
    "node_row_ptr": [0, 1, 2, 3, 4]
  })");
  EXPECT_EQ(json::parse(result.graph_json), expected) << result.graph_json;
  // Keys in TVM's order, so the file reads like the one TVM writes.
  EXPECT_LT(result.graph_json.find("\"nodes\""), result.graph_json.find("\"arg_nodes\""));
  ASSERT_EQ(result.params.size(), 1u);
  EXPECT_EQ(result.params[0].first, "p0");
  EXPECT_EQ(result.params[0].second.shape_vector(), std::vector<int64_t>{3});
}

TEST(GraphCodegen, ChainReusesStorageForIntermediates) {
  ir::Var x = ir::VarNode::make("x", f32({64}));
  ir::Expr value = x;
  for (const char* name : {"a", "b", "c", "d", "e"}) value = kernel(name, {value}, f32({64}));
  json graph = codegen({x}, value);
  expect_plan_is_safe(graph);
  std::vector<int> sid = storage_ids(graph);
  // Entries: x, a, b, c, d, e (the head). a..d are intermediates.
  std::set<int> intermediate(sid.begin() + 1, sid.begin() + 5);
  EXPECT_EQ(intermediate.size(), 2u);
  EXPECT_EQ(std::set<int>(sid.begin(), sid.end()).size(), 4u);
}

TEST(GraphCodegen, HeadsAreNeverReused) {
  ir::Var x = ir::VarNode::make("x", f32({8}));
  ir::Expr a = kernel("a", {x}, f32({8}));
  ir::Expr b = kernel("b", {a}, f32({8}));
  ir::Expr c = kernel("c", {b}, f32({8}));
  ir::Expr d = kernel("d", {c}, f32({8}));
  // a is an output read early; without protection c would take its storage.
  json graph = codegen({x}, ir::TupleNode::make({a, d}));
  expect_plan_is_safe(graph);
  std::vector<int> sid = storage_ids(graph);
  EXPECT_EQ(graph["heads"], json::parse("[[1, 0, 0], [4, 0, 0]]"));
  for (int e : {0, 1, 4}) EXPECT_EQ(std::count(sid.begin(), sid.end(), sid[e]), 1) << "entry " << e;
}

TEST(GraphCodegen, TupleOutputsGiveOneEntryEach) {
  ir::Var x = ir::VarNode::make("x", f32({4, 2}));
  ir::Type pair = ir::TupleTypeNode::make({f32({2, 2}), f32({2, 2})});
  ir::Expr halves = kernel("fused_split", {x}, pair);
  ir::Expr second = ir::TupleGetItemNode::make(halves, 1);
  ir::Expr body = kernel("fused_exp", {second}, f32({2, 2}));
  json graph = codegen({x}, ir::TupleNode::make({body, ir::TupleGetItemNode::make(halves, 0)}));
  expect_plan_is_safe(graph);
  EXPECT_EQ(graph["nodes"][1]["attrs"]["num_outputs"], "2");
  EXPECT_EQ(graph["nodes"][2]["inputs"], json::parse("[[1, 1, 0]]"));
  EXPECT_EQ(graph["node_row_ptr"], json::parse("[0, 1, 3, 4]"));
  EXPECT_EQ(graph["heads"], json::parse("[[2, 0, 0], [1, 0, 0]]"));
  EXPECT_EQ(graph["attrs"]["shape"][1], json::parse("[[4, 2], [2, 2], [2, 2], [2, 2]]"));
}

// A whole tuple passed to a kernel gives one input per field.
TEST(GraphCodegen, TupleArgumentsAreFlattened) {
  ir::Var x = ir::VarNode::make("x", f32({4}));
  ir::Type pair = ir::TupleTypeNode::make({f32({4}), f32({4})});
  ir::Expr both = kernel("two", {x}, pair);
  json graph = codegen({x}, kernel("sum2", {both, x}, f32({4})));
  EXPECT_EQ(graph["nodes"][2]["inputs"], json::parse("[[1, 0, 0], [1, 1, 0], [0, 0, 0]]"));
  EXPECT_EQ(graph["nodes"][2]["attrs"]["num_inputs"], "3");
}

TEST(GraphCodegen, ConstantsBecomeParamsInOrderOfFirstUse) {
  // An input already named p0 pushes the constants' names on.
  ir::Var x = ir::VarNode::make("p0", f32({2}));
  ir::Constant c1 = filled({2}, 1.0), c2 = filled({2}, 2.0);
  ir::Expr a = kernel("k", {x, c1}, f32({2}));
  ir::Expr b = kernel("k", {a, c2}, f32({2}));
  ir::Expr body = kernel("k", {b, c1}, f32({2}));
  GraphCodegenResult result = codegen_graph(ir::FunctionNode::make({x}, body));
  json graph = json::parse(result.graph_json);
  ASSERT_EQ(result.params.size(), 2u);
  EXPECT_EQ(result.params[0].first, "p1");
  EXPECT_TRUE(result.params[0].second.same_as(c1->data));
  EXPECT_EQ(result.params[1].first, "p2");
  EXPECT_TRUE(result.params[1].second.same_as(c2->data));
  EXPECT_EQ(graph["arg_nodes"], json::parse("[0, 1, 3]"));
  // The same kernel called three times: one func_name, three node names.
  std::vector<std::string> names, funcs;
  for (const json& node : graph["nodes"])
    if (node["op"] == "tvm_op") {
      names.push_back(node["name"]);
      funcs.push_back(node["attrs"]["func_name"]);
    }
  EXPECT_EQ(names, (std::vector<std::string>{"k", "k_1", "k_2"}));
  EXPECT_EQ(funcs, (std::vector<std::string>{"k", "k", "k"}));
}

TEST(GraphCodegen, HeadThatIsAnInputOrParamIsCopied) {
  ir::Var x = ir::VarNode::make("x", f32({3}));
  ir::Constant c = filled({3}, 5.0);
  json graph = codegen({x}, ir::TupleNode::make({x, c}));
  // x, p0, then one __copy per head.
  ASSERT_EQ(graph["nodes"].size(), 4u);
  EXPECT_EQ(graph["nodes"][2]["attrs"]["func_name"], "__copy");
  EXPECT_EQ(graph["nodes"][2]["inputs"], json::parse("[[0, 0, 0]]"));
  EXPECT_EQ(graph["nodes"][3]["attrs"]["func_name"], "__copy");
  EXPECT_EQ(graph["nodes"][3]["inputs"], json::parse("[[1, 0, 0]]"));
  EXPECT_EQ(graph["heads"], json::parse("[[2, 0, 0], [3, 0, 0]]"));
  EXPECT_EQ(storage_ids(graph), (std::vector<int>{0, 1, 2, 3}));
}

std::string error_of(const std::vector<ir::Var>& params, const ir::Expr& body) {
  try {
    codegen_graph(ir::FunctionNode::make(params, body));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphCodegen, UnloweredCallIsAnError) {
  ir::Var x = ir::VarNode::make("x", f32({3}));
  EXPECT_EQ(error_of({x}, ir::call_op("exp", {x})),
            "graph codegen: @main must be lowered to kernel calls; found a call of exp");
}

TEST(GraphCodegen, SymbolicShapeIsAnError) {
  ir::Var x = ir::VarNode::make("x", f32({ir::Dim::var("n"), 3}));
  EXPECT_EQ(error_of({x}, kernel("k", {x}, f32({2, 3}))),
            "graph codegen: input 'x' has the symbolic shape Tensor[(n, 3), float32]; the graph "
            "executor needs static shapes");
}

// ---------------------------------------------------------------- ResNet-18

// Stands in for lowering: every fused group becomes call_tir of a kernel with its output type.
class FakeLowering : public ir::ExprMutator {
 public:
  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    ir::Expr mutated = ir::ExprMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(mutated);
    if (!ir::as<ir::FunctionNode>(call->callee)) return mutated;
    return ir::call_tir(ir::GlobalVarNode::make("fused_" + std::to_string(count_++)), call->args,
                        node->checked_type);
  }

 private:
  int count_ = 0;
};

// The fused ResNet-18 at 224x224 as graph codegen sees it after lowering.
ir::Function lowered_resnet18(ir::Function* fused_main = nullptr) {
  anvil::testing::Workload w = anvil::testing::resnet(18);
  ir::IRModule mod = transform::fuse_ops(transform::fold_constant(transform::simplify_inference(
                                             transform::bind_params(w.mod, w.params))),
                                         1);
  ir::Function main = mod.get_function("main");
  if (fused_main) *fused_main = main;
  return ir::FunctionNode::make(main->params, FakeLowering().mutate(main->body));
}

TEST(GraphCodegen, ResNet18PlanComesWithinTwentyPercentOfTheLargestLiveSet) {
  GraphCodegenResult result = codegen_graph(lowered_resnet18());
  json graph = json::parse(result.graph_json);
  expect_plan_is_safe(graph);

  // The figures read from the JSON alone: both plans safe, the reported numbers theirs.
  anvil::testing::GraphMemoryFigures figures = anvil::testing::graph_memory_figures(graph);
  EXPECT_EQ(figures.problem, "");
  EXPECT_EQ(result.memory.activation_bytes, figures.arena_bytes);
  EXPECT_EQ(result.memory.largest_live_set, figures.largest_live_set);
  EXPECT_EQ(graph["attrs"]["largest_live_set_bytes"],
            json::array({"size_t", figures.largest_live_set}));
  EXPECT_EQ(result.memory.param_bytes + result.memory.io_bytes, figures.fixed_bytes);
  EXPECT_EQ(result.memory.io_bytes, 4 * (3 * 224 * 224 + 1000));

  // Bytes of the kernel outputs (not inputs or params), summed.
  const json& nodes = graph["nodes"];
  std::vector<int> row_ptr = graph["node_row_ptr"].get<std::vector<int>>();
  const json& shapes = graph["attrs"]["shape"][1];
  int64_t sum = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n]["op"] == "null") continue;
    for (int e = row_ptr[n]; e < row_ptr[n + 1]; ++e) {
      int64_t bytes = 4;
      for (int64_t d : shapes[e].get<std::vector<int64_t>>()) bytes *= d;
      sum += bytes;
    }
  }
  std::printf(
      "resnet18 activations: %lld bytes in the arena, %lld in slots, for %lld bytes of values; "
      "largest live set %lld bytes\n",
      (long long)figures.arena_bytes, (long long)figures.slot_activation_bytes, (long long)sum,
      (long long)figures.largest_live_set);
  EXPECT_GE(figures.arena_bytes, figures.largest_live_set);
  EXPECT_LE(figures.arena_bytes * 5, figures.largest_live_set * 6);  // within 1.2x
  EXPECT_LE(figures.slot_activation_bytes * 2, figures.largest_live_set * 3);
  EXPECT_LT(figures.slot_activation_bytes * 2, sum);
}

// Planning from the fused groups (what analyses use, no kernel lowered) gives the graph and
// the plan that lowering's call_tir calls give.
TEST(GraphCodegen, GroupsPlanAsTheirLoweredKernelsDo) {
  ir::Function fused;
  GraphCodegenResult lowered = codegen_graph(lowered_resnet18(&fused));
  GraphCodegenResult groups = codegen_graph_of_groups(fused);
  json a = json::parse(lowered.graph_json), b = json::parse(groups.graph_json);
  EXPECT_EQ(a["attrs"], b["attrs"]);
  EXPECT_EQ(a["node_row_ptr"], b["node_row_ptr"]);
  EXPECT_EQ(a["heads"], b["heads"]);
  ASSERT_EQ(a["nodes"].size(), b["nodes"].size());
  for (size_t n = 0; n < a["nodes"].size(); ++n)
    EXPECT_EQ(a["nodes"][n]["inputs"], b["nodes"][n]["inputs"]) << n;
  EXPECT_EQ(lowered.memory.activation_bytes, groups.memory.activation_bytes);
  EXPECT_EQ(lowered.memory.largest_live_set, groups.memory.largest_live_set);
  EXPECT_EQ(lowered.memory.param_bytes, groups.memory.param_bytes);
  EXPECT_EQ(lowered.params.size(), groups.params.size());
  // The nodes are named after the groups, as lowering names their kernels.
  int convolutions = 0;
  for (const json& node : b["nodes"])
    if (node["op"] == "tvm_op")
      convolutions += node["attrs"]["func_name"].get<std::string>().find("fused_nn_conv2d") == 0;
  int conv_calls = 0;  // FuseOps makes each convolution the first op of its group
  ir::post_order_visit(fused->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    conv_calls += call && call->op() && call->op()->name == "nn.conv2d";
  });
  EXPECT_GT(conv_calls, 0);
  EXPECT_EQ(convolutions, conv_calls);
}

}  // namespace
}  // namespace anvil::driver
