// The simplify pass: every expression of a function goes through the
// arithmetic analyzer with the ranges of the enclosing loops and block
// iteration variables known, loops of extent 1 disappear (their variable
// becomes the loop's min), and branches and asserts whose condition is
// provable are resolved.
#include <limits>

#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {

namespace {

bool is_const_value(const PrimExpr& e) {
  return e->kind == ExprKind::IntImm || e->kind == ExprKind::FloatImm;
}

// The largest value of a signed integer type.
int64_t type_max(DataType t) {
  return t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1;
}

bool is_no_op(const Stmt& s) {
  const auto* eval = as<EvaluateNode>(s);
  return eval && is_const_value(eval->value);
}

class StmtSimplifier : public Mutator {
 public:
  explicit StmtSimplifier(Analyzer& analyzer) : analyzer_(analyzer) {}

  PrimExpr mutate(const PrimExpr& e) override { return e ? analyzer_.simplify(e) : e; }
  Stmt mutate(const Stmt& s) override { return Mutator::mutate(s); }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    PrimExpr min = mutate(node->min), extent = mutate(node->extent);
    if (auto n = as_const_int(extent); n && *n <= 1 && extent.dtype().lanes == 1) {
      if (*n <= 0) return evaluate(make_int(0, DataType::int32()));
      // One iteration: the body with the loop variable fixed at min.
      return mutate(substitute(node->body, VarMap{{node->loop_var.get(), min}}));
    }
    analyzer_.bind(node->loop_var, Range::from_min_extent(min, extent));
    Stmt body = mutate(node->body);
    analyzer_.unbind(node->loop_var);
    if (is_no_op(body)) return body;
    if (min.get() == node->min.get() && extent.get() == node->extent.get() &&
        body.get() == node->body.get())
      return self;
    return ForNode::make(node->loop_var, min, extent, node->for_kind, body, node->annotations);
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
    for (const IterVar& iv : node->iter_vars)
      analyzer_.bind(iv.var, Range::from_min_extent(mutate(iv.dom.min), mutate(iv.dom.extent)));
    Stmt result = Mutator::mutate_Block(node, self);
    for (const IterVar& iv : node->iter_vars) analyzer_.unbind(iv.var);
    return result;
  }

  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt& self) override {
    PrimExpr value = mutate(node->value);
    if (is_const_value(value) || value->kind == ExprKind::Var)
      return mutate(substitute(node->body, VarMap{{node->var.get(), value}}));
    bool is_index = (value.dtype().is_int() || value.dtype().is_uint()) &&
                    value.dtype().lanes == 1 && node->var->dtype == value.dtype();
    // The variable equals value: bounds and symbolic facts carry over, but
    // the body keeps referring to the variable.
    if (is_index)
      analyzer_.bind(node->var, Range::from_min_extent(value, make_int(1, value.dtype())));
    Stmt body = mutate(node->body);
    if (is_index) analyzer_.unbind(node->var);
    if (value.get() == node->value.get() && body.get() == node->body.get()) return self;
    return LetStmtNode::make(node->var, value, body);
  }

  Stmt mutate_AssertStmt(const AssertStmtNode* node, const Stmt& self) override {
    PrimExpr condition = mutate(node->condition);
    if (auto v = as_const_int(condition); v && *v != 0 && condition.dtype().lanes == 1)
      return mutate(node->body);
    Stmt body = mutate(node->body);
    if (condition.get() == node->condition.get() && body.get() == node->body.get()) return self;
    return AssertStmtNode::make(condition, node->message, body);
  }

  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    PrimExpr condition = mutate(node->condition);
    if (auto v = as_const_int(condition); v && condition.dtype().lanes == 1) {
      if (*v != 0) return mutate(node->then_case);
      if (node->else_case) return mutate(node->else_case);
      return evaluate(make_int(0, DataType::int32()));
    }
    Stmt then_case, else_case;
    {
      ConstraintScope scope(analyzer_, condition);
      then_case = mutate(node->then_case);
    }
    if (node->else_case) {
      ConstraintScope scope(analyzer_, logical_not(condition));
      else_case = mutate(node->else_case);
    }
    if (condition.get() == node->condition.get() && then_case.get() == node->then_case.get() &&
        else_case.get() == node->else_case.get())
      return self;
    if (else_case && is_no_op(else_case)) else_case = nullptr;
    return IfThenElseNode::make(condition, then_case, else_case);
  }

  Stmt mutate_SeqStmt(const SeqStmtNode* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Stmt> seq = mutate_all(node->seq, changed);
    if (!changed) return self;
    // Statements that became no-ops (a removed loop or branch) drop out.
    std::vector<Stmt> kept;
    for (const Stmt& s : seq)
      if (!is_no_op(s)) kept.push_back(s);
    return seq_stmt(std::move(kept));
  }

 private:
  Analyzer& analyzer_;
};

}  // namespace

PrimFunc simplify(const PrimFunc& func) {
  Analyzer analyzer;
  // Symbolic shape dimensions come from DLTensor shapes: never negative.
  for (const auto& [param, buffer] : func->buffer_map) {
    for (const PrimExpr& dim : buffer->shape) {
      if (const auto* v = as<VarNode>(dim); v && v->dtype.is_int())
        analyzer.bind(Var(v), Range::from_min_extent(make_int(0, v->dtype),
                                                     make_int(type_max(v->dtype), v->dtype)));
    }
  }
  StmtSimplifier simplifier(analyzer);
  Stmt body = simplifier.mutate(func->body);
  if (body.get() == func->body.get()) return func;
  return func->with_body(body);
}

}  // namespace anvil::tir::transform
