// The analysis half of FuseOps: indexed graph, post-dominator tree and grouping.
#include "transform/fuse_ops_graph.h"

#include <algorithm>
#include <utility>

namespace anvil::transform::fusion {
namespace {

using ir::OpPattern;

OpPattern widest(OpPattern a, OpPattern b) { return int(a) >= int(b) ? a : b; }

bool is_data(const ir::Expr& expr) {
  switch (expr->kind) {
    case ir::ExprKind::Op:
    case ir::ExprKind::GlobalVar:
    case ir::ExprKind::ExternFunc:
    case ir::ExprKind::Function:
    case ir::ExprKind::PrimFunc:
      return false;
    default:
      return true;
  }
}

// True for a call that a group may hold: an op of the table that does not call out.
bool is_fusable_op_call(const ir::CallNode& call) {
  const ir::OpNode* op = call.op();
  return op && op->name != "call_tir" && op->name != "call_dps_packed";
}

bool same_shape(const ir::Type& a, const ir::Type& b) {
  const auto* ta = ir::as<ir::TensorTypeNode>(a);
  const auto* tb = ir::as<ir::TensorTypeNode>(b);
  if (!ta || !tb || !ta->shape || !tb->shape || ta->shape->size() != tb->shape->size())
    return false;
  for (size_t i = 0; i < ta->shape->size(); ++i)
    if (!((*ta->shape)[i] == (*tb->shape)[i])) return false;
  return true;
}

// How a call reads one of its inputs (see GraphEdge::pattern).
OpPattern edge_pattern(const GraphNode& consumer, const ir::Expr& input) {
  if (!consumer.is_op_call) return OpPattern::Opaque;
  // A tuple-valued input (a multi-output op read whole) cannot flow inside a group.
  if (ir::as<ir::TupleTypeNode>(input->checked_type)) return OpPattern::Opaque;
  OpPattern pattern = consumer.pattern;
  if (pattern == OpPattern::Broadcast &&
      same_shape(input->checked_type, consumer.expr->checked_type))
    return OpPattern::ElemWise;
  return pattern;
}

// The expressions the post-order walk descends into.
void collect_children(const ir::Expr& expr, std::vector<ir::Expr>& out) {
  switch (expr->kind) {
    case ir::ExprKind::Call:
      for (const ir::Expr& arg : ir::as<ir::CallNode>(expr)->args)
        if (is_data(arg)) out.push_back(arg);
      break;
    case ir::ExprKind::Tuple:
      for (const ir::Expr& field : ir::as<ir::TupleNode>(expr)->fields)
        if (is_data(field)) out.push_back(field);
      break;
    case ir::ExprKind::TupleGetItem:
      out.push_back(ir::as<ir::TupleGetItemNode>(expr)->tuple);
      break;
    case ir::ExprKind::If:
    case ir::ExprKind::While:
    case ir::ExprKind::Let:
    case ir::ExprKind::SeqExpr:
      throw_error("fuse_ops: @main must be a dataflow graph; found ",
                  ir::expr_kind_name(expr->kind));
    default:
      break;
  }
}

// ---------------------------------------------------------------- post-dominators

// The lowest common ancestor of two tree nodes, widening pattern with every edge climbed;
// -1 when they lie in different trees.
int common_post_dominator(const std::vector<PostDomNode>& tree, int lhs, int rhs,
                          OpPattern& pattern) {
  while (lhs != rhs) {
    if (lhs < 0 || rhs < 0) return -1;
    if (tree[lhs].depth < tree[rhs].depth) {
      pattern = widest(pattern, tree[rhs].pattern);
      rhs = tree[rhs].parent;
    } else if (tree[rhs].depth < tree[lhs].depth) {
      pattern = widest(pattern, tree[lhs].pattern);
      lhs = tree[lhs].parent;
    } else {
      pattern = widest(pattern, widest(tree[lhs].pattern, tree[rhs].pattern));
      lhs = tree[lhs].parent;
      rhs = tree[rhs].parent;
    }
  }
  return lhs;
}

// ---------------------------------------------------------------- partition

struct Group {
  int parent = -1;  // union-find link; -1 at a root
  OpPattern pattern = OpPattern::Opaque;
  int num_calls = 0;
  int num_anchors = 0;  // ops of pattern >= CommReduce
};

class Partitioner {
 public:
  Partitioner(const IndexedGraph& graph, int max_depth)
      : graph_(graph),
        max_depth_(max_depth),
        groups_(graph.nodes.size()),
        visit_stamp_(graph.nodes.size(), 0) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const GraphNode& node = graph.nodes[i];
      groups_[i].pattern = node.pattern;
      groups_[i].num_calls = node.is_op_call ? 1 : 0;
      groups_[i].num_anchors = node.is_op_call && int(node.pattern) >= int(OpPattern::CommReduce);
    }
  }

  std::vector<int> run(bool fuse) {
    if (fuse) {
      std::vector<PostDomNode> tree = post_dominator_tree(graph_);
      // Phase 0 lets every anchor take its epilogue before injective ops (phase 1) claim
      // the elementwise ops between them.
      for (int phase = 0; phase < 2; ++phase)
        for (int i = 0; i < int(graph_.nodes.size()); ++i) try_fuse(i, tree[i], phase);
    }
    std::vector<int> result(graph_.nodes.size(), -1);
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      if (graph_.nodes[i].is_op_call) result[i] = find(int(i));
    return result;
  }

 private:
  int find(int g) {
    int root = g;
    while (groups_[root].parent >= 0) root = groups_[root].parent;
    while (groups_[g].parent >= 0) {
      int next = groups_[g].parent;
      groups_[g].parent = root;
      g = next;
    }
    return root;
  }

  void try_fuse(int src, const PostDomNode& dom, int phase) {
    if (dom.parent < 0 || !graph_.nodes[src].is_op_call) return;
    int sink = dom.parent;
    int src_group = find(src);
    if (src_group == find(sink)) return;
    OpPattern kind = groups_[src_group].pattern;
    auto le = [](OpPattern a, OpPattern b) { return int(a) <= int(b); };
    if (kind == OpPattern::OutEWiseFusable) {
      // An anchor takes the ops after it when every edge on the way keeps its shape.
      if (phase != 0 || dom.pattern != OpPattern::ElemWise) return;
      fuse_if(src, sink, [&](OpPattern k, bool) { return le(k, OpPattern::Broadcast); });
    } else if (le(kind, OpPattern::Broadcast)) {
      if (!le(dom.pattern, OpPattern::Injective) && dom.pattern != OpPattern::CommReduce) return;
      // Side branches may be injective; the sink may already be an anchor's group.
      fuse_if(src, sink, [&](OpPattern k, bool is_sink) {
        return is_sink ? le(k, OpPattern::OutEWiseFusable) : le(k, OpPattern::Injective);
      });
    } else if (kind == OpPattern::Injective) {
      if (phase != 1) return;
      if (!le(dom.pattern, OpPattern::Injective) && dom.pattern != OpPattern::CommReduce) return;
      fuse_if(src, sink, [&](OpPattern k, bool is_sink) {
        return le(k, OpPattern::Injective) || (is_sink && k == OpPattern::CommReduce);
      });
    }
    // CommReduce, Tuple and Opaque groups take nothing after them.
  }

  // Every node on a path from src (excluded) to sink (included).
  std::vector<int> path_nodes(int src, int sink) {
    ++stamp_;
    std::vector<int> path, stack = {src};
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (n == sink) continue;
      for (const GraphEdge& edge : graph_.nodes[n].outputs) {
        if (visit_stamp_[edge.consumer] == stamp_) continue;
        visit_stamp_[edge.consumer] = stamp_;
        path.push_back(edge.consumer);
        stack.push_back(edge.consumer);
      }
    }
    return path;
  }

  template <typename Condition>
  void fuse_if(int src, int sink, Condition allowed) {
    std::vector<int> path = path_nodes(src, sink);
    for (int n : path)
      if (!graph_.nodes[n].is_op_call || !allowed(groups_[find(n)].pattern, n == sink)) return;
    // The groups that would become one: src's, and every group the path touches.
    std::vector<int> merged = {find(src)};
    for (int n : path) merged.push_back(find(n));
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
    int calls = 0, anchors = 0;
    for (int g : merged) {
      calls += groups_[g].num_calls;
      anchors += groups_[g].num_anchors;
    }
    if (anchors > 1 || calls > max_depth_) return;
    int target = find(sink);
    for (int g : merged) {
      if (g == target) continue;
      groups_[g].parent = target;
      groups_[target].num_calls += groups_[g].num_calls;
      if (groups_[g].num_anchors > 0) {
        groups_[target].num_anchors += groups_[g].num_anchors;
        groups_[target].pattern = widest(groups_[target].pattern, groups_[g].pattern);
      }
    }
  }

  const IndexedGraph& graph_;
  int max_depth_;
  std::vector<Group> groups_;
  std::vector<int> visit_stamp_;
  int stamp_ = 0;
};

}  // namespace

int IndexedGraph::index(const ir::ExprNode* expr) const {
  auto it = index_of.find(expr);
  ANVIL_ICHECK(it != index_of.end(), "fuse_ops: ", ir::expr_kind_name(expr->kind),
               " is not a node of the dataflow graph");
  return it->second;
}

void collect_data_inputs(const ir::Expr& expr, std::vector<ir::Expr>& out) {
  if (!is_data(expr)) return;
  if (const auto* tuple = ir::as<ir::TupleNode>(expr)) {
    for (const ir::Expr& field : tuple->fields) collect_data_inputs(field, out);
    return;
  }
  out.push_back(expr);
}

IndexedGraph build_indexed_graph(const ir::Expr& body) {
  IndexedGraph graph;
  std::unordered_map<const ir::ExprNode*, bool> seen;
  // Iterative post-order: (expression, children pushed yet).
  std::vector<std::pair<ir::Expr, bool>> stack = {{body, false}};
  std::vector<ir::Expr> children;
  while (!stack.empty()) {
    auto [expr, expanded] = stack.back();
    if (expanded) {
      stack.pop_back();
      if (ir::as<ir::TupleNode>(expr)) continue;  // tuples are no nodes (see GraphNode)
      GraphNode node;
      node.expr = expr.get();
      if (const auto* call = ir::as<ir::CallNode>(expr); call && is_fusable_op_call(*call)) {
        node.is_op_call = true;
        node.pattern = call->op()->def->pattern;
      }
      graph.index_of[expr.get()] = int(graph.nodes.size());
      graph.nodes.push_back(std::move(node));
      continue;
    }
    stack.back().second = true;
    if (!seen.emplace(expr.get(), true).second) {
      stack.pop_back();
      continue;
    }
    children.clear();
    collect_children(expr, children);
    for (auto it = children.rbegin(); it != children.rend(); ++it)
      if (!seen.count(it->get())) stack.emplace_back(*it, false);
  }

  std::vector<ir::Expr> inputs;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::ExprNode* expr = graph.nodes[i].expr;
    inputs.clear();
    if (const auto* call = ir::as<ir::CallNode>(ir::Expr(expr))) {
      for (const ir::Expr& arg : call->args) collect_data_inputs(arg, inputs);
    } else if (const auto* get = ir::as<ir::TupleGetItemNode>(ir::Expr(expr))) {
      collect_data_inputs(get->tuple, inputs);
    }
    for (const ir::Expr& input : inputs) {
      GraphEdge edge{int(i), edge_pattern(graph.nodes[i], input)};
      graph.nodes[graph.index(input.get())].outputs.push_back(edge);
    }
  }
  inputs.clear();
  collect_data_inputs(body, inputs);
  for (const ir::Expr& result : inputs) graph.nodes[graph.index(result.get())].extern_ref = true;
  return graph;
}

std::vector<PostDomNode> post_dominator_tree(const IndexedGraph& graph) {
  std::vector<PostDomNode> tree(graph.nodes.size());
  // Readers come after producers, so walking backwards sees every reader's place first.
  for (int i = int(graph.nodes.size()) - 1; i >= 0; --i) {
    const GraphNode& node = graph.nodes[i];
    PostDomNode& entry = tree[i];
    if (node.extern_ref || node.outputs.empty()) continue;  // a root: the value escapes
    OpPattern pattern = OpPattern::ElemWise;
    int parent = node.outputs[0].consumer;
    for (const GraphEdge& edge : node.outputs) {
      parent = common_post_dominator(tree, parent, edge.consumer, pattern);
      pattern = widest(pattern, edge.pattern);
    }
    entry.parent = parent;
    entry.depth = parent < 0 ? 1 : tree[parent].depth + 1;
    entry.pattern = parent < 0 ? OpPattern::Opaque : pattern;
  }
  return tree;
}

std::vector<int> partition_graph(const IndexedGraph& graph, int fuse_opt_level, int max_depth) {
  return Partitioner(graph, std::max(max_depth, 1)).run(fuse_opt_level > 0);
}

}  // namespace anvil::transform::fusion
