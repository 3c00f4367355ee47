// FuseOps' analysis: @main's body as an indexed dataflow graph, its post-dominator tree, and
// the partition of its op calls into fusion groups (TVM's IndexedForwardGraph, DominatorTree
// and GraphPartitioner). The rewrite into primitive functions lives in fuse_ops.cpp.
#pragma once

#include <unordered_map>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/ir/op.h"

namespace anvil::transform::fusion {

// A data edge from a producer to the node that reads it.
struct GraphEdge {
  int consumer = -1;
  // How the consumer reads the value: the consumer op's pattern, with Broadcast lowered to
  // ElemWise when this input already has the output's shape; Opaque for everything else.
  ir::OpPattern pattern = ir::OpPattern::Opaque;
};

// One value of the graph: a Var, a Constant, a call or a TupleGetItem. Tuple nodes are no
// nodes of their own: their fields connect straight to the tuple's readers, so a tuple built
// for concatenate fuses with it, and a tuple that is the result marks its fields extern.
struct GraphNode {
  const ir::ExprNode* expr = nullptr;
  // The op's fusion pattern for fusable op calls, Opaque for every other node.
  ir::OpPattern pattern = ir::OpPattern::Opaque;
  // A call of an op of the table other than call_tir / call_dps_packed: it ends up in a group.
  bool is_op_call = false;
  // Read by the function result (or by something outside the graph), so it must stay visible.
  bool extern_ref = false;
  std::vector<GraphEdge> outputs;
};

// The nodes in topological order: every producer before its readers.
struct IndexedGraph {
  std::vector<GraphNode> nodes;
  std::unordered_map<const ir::ExprNode*, int> index_of;

  // The index of a node's expression; an internal error when it is not a node.
  int index(const ir::ExprNode* expr) const;
};

// The data inputs of an expression in graph terms: arguments that are Tuple nodes are
// replaced by their fields (recursively); operators, global vars, extern functions and
// functions are not data and are left out.
void collect_data_inputs(const ir::Expr& expr, std::vector<ir::Expr>& out);

// Builds the graph of a dataflow body (Calls, Tuples, TupleGetItems, Vars, Constants;
// functions called are leaves). Walks iteratively, so deep graphs do not exhaust the stack.
// Throws Error naming the construct on If, Let or binding blocks.
IndexedGraph build_indexed_graph(const ir::Expr& body);

// A node's place in the post-dominator tree.
struct PostDomNode {
  int parent = -1;  // the immediate post-dominator; -1 when the value escapes (a tree root)
  int depth = 1;
  // The widest edge pattern on any path from the node to its parent.
  ir::OpPattern pattern = ir::OpPattern::Opaque;
};

// The post-dominator tree of the graph, one entry per node.
std::vector<PostDomNode> post_dominator_tree(const IndexedGraph& graph);

// Per node, the index of the node whose value its group returns (the group's output), or
// -1 for nodes that are not op calls. fuse_opt_level 0 gives every op call its own group;
// groups never hold more than max_depth calls.
std::vector<int> partition_graph(const IndexedGraph& graph, int fuse_opt_level, int max_depth);

}  // namespace anvil::transform::fusion
