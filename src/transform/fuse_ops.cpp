// FuseOps: rewrites @main so that each group found by the partition (fuse_ops_graph.cpp)
// becomes a call of a primitive function holding the group's calls.
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/transform/passes.h"
#include "transform/fuse_ops_graph.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using fusion::IndexedGraph;

bool has_bindings(const ir::Expr& body) {
  bool found = false;
  ir::post_order_visit(body, [&](const ir::Expr& e) {
    found |= e->kind == ir::ExprKind::SeqExpr || e->kind == ir::ExprKind::Let;
  });
  return found;
}

bool is_scalar_constant(const ir::Expr& expr) {
  const auto* constant = ir::as<ir::ConstantNode>(expr);
  return constant && constant->data.ndim() == 0;
}

ir::Type type_of(const ir::Expr& expr) {
  if (expr->checked_type) return expr->checked_type;
  if (const auto* var = ir::as<ir::VarNode>(expr); var && var->annotation) return var->annotation;
  ANVIL_ICHECK(false, "fuse_ops: ", ir::expr_kind_name(expr->kind), " has no type; run infer_type");
  return nullptr;
}

// Rebuilds the body bottom-up, replacing each group by a call of its primitive function.
class GroupRewriter {
 public:
  GroupRewriter(const IndexedGraph& graph, const std::vector<int>& group_of)
      : graph_(graph), group_of_(group_of), outer_(graph.nodes.size()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      if (group_of[i] >= 0) members_[group_of[i]].push_back(int(i));
  }

  ir::Expr rewrite(const ir::Expr& body) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const fusion::GraphNode& node = graph_.nodes[i];
      ir::Expr self(node.expr);
      if (node.is_op_call) {
        if (is_group_output(int(i))) outer_[i] = build_group(int(i));
      } else if (const auto* get = ir::as<ir::TupleGetItemNode>(self)) {
        ir::Expr tuple = outer(get->tuple);
        outer_[i] =
            tuple == get->tuple ? self : ir::Expr(ir::TupleGetItemNode::make(tuple, get->index));
      } else if (const auto* call = ir::as<ir::CallNode>(self)) {
        bool changed = false;
        std::vector<ir::Expr> args;
        for (const ir::Expr& arg : call->args) {
          args.push_back(outer(arg));
          changed |= args.back() != arg;
        }
        outer_[i] = changed ? ir::Expr(ir::CallNode::make(call->callee, std::move(args),
                                                          call->attrs, call->type_args))
                            : self;
      } else {
        outer_[i] = self;  // vars and constants
      }
    }
    return outer(body);
  }

 private:
  bool in_group(int node, int group) const { return group_of_[node] == group; }

  // True when the node's value is read outside its group: it is what the group returns.
  bool is_group_output(int node) const {
    const fusion::GraphNode& n = graph_.nodes[node];
    if (n.extern_ref) return true;
    for (const fusion::GraphEdge& edge : n.outputs)
      if (!in_group(edge.consumer, group_of_[node])) return true;
    return false;
  }

  // The expression of @main's new body that holds e's value.
  ir::Expr outer(const ir::Expr& expr) {
    if (const auto* tuple = ir::as<ir::TupleNode>(expr)) {
      auto it = outer_tuples_.find(tuple);
      if (it != outer_tuples_.end()) return it->second;
      bool changed = false;
      std::vector<ir::Expr> fields;
      for (const ir::Expr& field : tuple->fields) {
        fields.push_back(outer(field));
        changed |= fields.back() != field;
      }
      ir::Expr result = changed ? ir::Expr(ir::TupleNode::make(std::move(fields))) : expr;
      outer_tuples_[tuple] = result;
      return result;
    }
    auto it = graph_.index_of.find(expr.get());
    if (it == graph_.index_of.end()) return expr;  // ops, global vars, functions
    ANVIL_ICHECK(outer_[it->second], "fuse_ops: a value is read before its group is built");
    return outer_[it->second];
  }

  // The call of a new primitive function computing the group whose output is `output`.
  ir::Expr build_group(int output) {
    int group = group_of_[output];
    for (int member : members_[group])
      ANVIL_ICHECK(member == output || !is_group_output(member),
                   "fuse_ops: a fused group would have two outputs");
    std::vector<ir::Var> params;
    std::vector<ir::Expr> args;
    std::unordered_map<const ir::ExprNode*, ir::Expr> inner;  // members, params, tuples

    auto inner_value = [&](auto&& self, const ir::Expr& expr) -> ir::Expr {
      auto found = inner.find(expr.get());
      if (found != inner.end()) return found->second;
      ir::Expr result;
      if (const auto* tuple = ir::as<ir::TupleNode>(expr)) {
        std::vector<ir::Expr> fields;
        for (const ir::Expr& field : tuple->fields) fields.push_back(self(self, field));
        result = ir::TupleNode::make(std::move(fields));
      } else if (!graph_.index_of.count(expr.get()) || is_scalar_constant(expr)) {
        result = expr;  // ops and rank-0 constants live inside the group
      } else {
        // Members were visited in order, so anything unknown here comes from outside.
        ir::Var param = ir::VarNode::make("p" + std::to_string(params.size()), type_of(expr));
        params.push_back(param);
        args.push_back(outer(expr));
        result = param;
      }
      inner[expr.get()] = result;
      return result;
    };

    for (int member : members_[group]) {
      const auto* call = ir::as<ir::CallNode>(ir::Expr(graph_.nodes[member].expr));
      std::vector<ir::Expr> call_args;
      for (const ir::Expr& arg : call->args) call_args.push_back(inner_value(inner_value, arg));
      inner[call] =
          ir::CallNode::make(call->callee, std::move(call_args), call->attrs, call->type_args);
    }
    ir::Expr output_expr(graph_.nodes[output].expr);
    ir::Function fn =
        ir::FunctionNode::make(params, inner.at(output_expr.get()), type_of(output_expr),
                               ir::DictAttrs{}.with("Primitive", int64_t(1)));
    return ir::CallNode::make(fn, std::move(args));
  }

  const IndexedGraph& graph_;
  const std::vector<int>& group_of_;
  std::vector<ir::Expr> outer_;
  std::unordered_map<int, std::vector<int>> members_;  // topological order
  std::unordered_map<const ir::TupleNode*, ir::Expr> outer_tuples_;
};

}  // namespace

ir::IRModule fuse_ops(const ir::IRModule& mod, int fuse_opt_level, int max_depth) {
  ir::Function main = mod.get_function("main");
  ir::IRModule typed = main->body->checked_type ? mod : ir::infer_type(mod);
  main = typed.get_function("main");
  ir::Expr body = main->body;
  if (has_bindings(body)) {
    ir::IRModule flat = typed;
    flat.add("main", ir::FunctionNode::make(main->params, transform::inline_bindings(body),
                                            main->ret_type, main->func_attrs));
    main = ir::infer_type(flat).get_function("main");
    body = main->body;
  }

  fusion::IndexedGraph graph = fusion::build_indexed_graph(body);
  bool any_call = false;
  for (const fusion::GraphNode& node : graph.nodes) any_call |= node.is_op_call;
  if (!any_call) return mod;

  std::vector<int> group_of = fusion::partition_graph(graph, fuse_opt_level, max_depth);
  ir::Expr fused_body = GroupRewriter(graph, group_of).rewrite(body);
  ir::IRModule result = typed;
  result.add("main",
             ir::FunctionNode::make(main->params, fused_body, main->ret_type, main->func_attrs));
  return ir::infer_type(result);
}

}  // namespace anvil::transform
