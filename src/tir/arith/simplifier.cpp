// The bottom-up driver: simplifies the operands of a node, then hands them to
// the rules of its kind. Nodes the rules do not know (loads, calls) keep their
// shape with simplified operands.
#include "anvil/tir/functor.h"
#include "tir/arith/arith_internal.h"

namespace anvil::tir {

PrimExpr Analyzer::Impl::binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
  switch (kind) {
    case ExprKind::Add:
      return add(a, b);
    case ExprKind::Sub:
      return sub(a, b);
    case ExprKind::Mul:
      return mul(a, b);
    case ExprKind::Div:
      return truncdiv(a, b);
    case ExprKind::Mod:
      return truncmod(a, b);
    case ExprKind::FloorDiv:
      return floordiv(a, b);
    case ExprKind::FloorMod:
      return floormod(a, b);
    case ExprKind::Min:
      return min(a, b);
    case ExprKind::Max:
      return max(a, b);
    case ExprKind::And:
      return logical_and(a, b);
    case ExprKind::Or:
      return logical_or(a, b);
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      return compare(kind, a, b);
    default:
      ANVIL_ICHECK(false, "binary rule for ", expr_kind_name(kind));
  }
  return nullptr;
}

namespace {

// The operands of a binary node, whatever its kind.
std::pair<PrimExpr, PrimExpr> binary_operands(const PrimExpr& e) {
  const PrimExpr *a = nullptr, *b = nullptr;
  tir::binary_operands(e.get(), a, b);
  if (!a) return {};
  return {*a, *b};
}

bool same(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

}  // namespace

PrimExpr Analyzer::Impl::visit(const PrimExpr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::StringImm:
      return e;
    case ExprKind::Var: {
      const VarInfo* info = find(as<VarNode>(e));
      return info && info->value ? info->value : e;
    }
    case ExprKind::Not:
      return logical_not(visit(as<NotNode>(e)->a));
    case ExprKind::Select: {
      const auto* n = as<SelectNode>(e);
      return select(visit(n->condition), visit(n->true_value), visit(n->false_value));
    }
    case ExprKind::Cast:
      return cast(e.dtype(), visit(as<CastNode>(e)->value));
    case ExprKind::BufferLoad: {
      const auto* n = as<BufferLoadNode>(e);
      std::vector<PrimExpr> indices;
      for (const PrimExpr& i : n->indices) indices.push_back(visit(i));
      if (same(indices, n->indices)) return e;
      return BufferLoadNode::make(n->buffer, std::move(indices));
    }
    case ExprKind::Ramp: {
      const auto* n = as<RampNode>(e);
      PrimExpr base = visit(n->base), stride = visit(n->stride);
      if (arith::as_scalar_int(stride) == int64_t(0)) return BroadcastNode::make(base, n->lanes);
      if (base.get() == n->base.get() && stride.get() == n->stride.get()) return e;
      return RampNode::make(base, stride, n->lanes);
    }
    case ExprKind::Broadcast: {
      const auto* n = as<BroadcastNode>(e);
      PrimExpr value = visit(n->value);
      return value.get() == n->value.get() ? e : PrimExpr(BroadcastNode::make(value, n->lanes));
    }
    case ExprKind::Let:
      return visit_let(as<LetNode>(e), e);
    case ExprKind::Call: {
      const auto* n = as<CallNode>(e);
      std::vector<PrimExpr> args;
      for (const PrimExpr& a : n->args) args.push_back(visit(a));
      if (n->call_kind == CallKind::Intrinsic && n->op == "if_then_else" && args.size() == 3) {
        if (auto c = arith::as_scalar_int(args[0])) return *c ? args[1] : args[2];
      }
      if (same(args, n->args)) return e;
      return CallNode::make(n->dtype, n->op, std::move(args), n->call_kind);
    }
    case ExprKind::Reduce: {
      const auto* n = as<ReduceNode>(e);
      // The reduction axes range over their domains inside the body.
      std::vector<std::pair<Var, std::optional<VarInfo>>> saved;
      for (const IterVar& iv : n->axis) {
        VarInfo info;
        info.var = iv.var;
        PrimExpr min = visit(iv.dom.min);
        PrimExpr last = visit(sub(add(min, visit(iv.dom.extent)), make_int(1, min.dtype())));
        info.bound = {bound(min).min_value, bound(last).max_value};
        saved.emplace_back(iv.var, replace_info(iv.var, std::move(info)));
      }
      PrimExpr source = visit(n->source);
      PrimExpr condition = n->condition ? visit(n->condition) : PrimExpr();
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) replace_info(it->first, it->second);
      if (source.get() == n->source.get() && condition.get() == n->condition.get()) return e;
      return ReduceNode::make(n->combiner, source, n->axis, condition);
    }
    default: {
      auto [a, b] = binary_operands(e);
      ANVIL_ICHECK(a && b, "simplify: unexpected expression kind ", expr_kind_name(e->kind));
      return binary(e->kind, visit(a), visit(b));
    }
  }
}

PrimExpr Analyzer::Impl::visit_let(const LetNode* n, const PrimExpr& self) {
  PrimExpr value = visit(n->value);
  // Immediates and variables are free to repeat: inline them.
  if (value->kind == ExprKind::IntImm || value->kind == ExprKind::FloatImm ||
      value->kind == ExprKind::Var) {
    VarMap map{{n->var.get(), value}};
    return visit(substitute(n->body, map));
  }
  VarInfo info;
  info.var = n->var;
  info.bound = bound(value);
  std::optional<VarInfo> previous = replace_info(n->var, std::move(info));
  PrimExpr body = visit(n->body);
  replace_info(n->var, std::move(previous));
  if (!uses_var_node(body, n->var.get())) return body;
  if (value.get() == n->value.get() && body.get() == n->body.get()) return self;
  return LetNode::make(n->var, value, body);
}

}  // namespace anvil::tir
