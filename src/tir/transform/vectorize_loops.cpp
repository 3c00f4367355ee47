// vectorize_loops: a loop marked Vectorized with a constant extent L runs its
// body once with every expression that depends on the loop variable widened
// to L lanes: the variable itself becomes Ramp(min, 1, L), invariant operands
// are broadcast, loads and stores with a vector index become vector accesses.
//
// Vectorizing reorders the iterations' memory accesses (all lanes of one
// statement happen before the next statement), so it is done only where that
// cannot change results; anything else leaves a serial loop:
//  - a buffer written in the loop must be accessed (read or written) at one
//    and the same index everywhere in the loop, an index that depends only on
//    the loop variable and outside values and that, widened, is a ramp with a
//    constant non-zero stride, so each lane owns its own elements;
//  - a condition (if, assert, if_then_else) must not depend on the loop
//    variable: turning a guarded store into a select would read and write
//    the guarded-off lanes, which are typically out of bounds;
//  - nested loops must have bounds that do not depend on the loop variable;
//  - calls other than the elementwise math intrinsics must not depend on it.
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/intrinsics.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

// Thrown inside the widening of one loop when its body cannot be vectorized.
struct CannotVectorize {};

bool is_vector(const PrimExpr& e) { return e.dtype().lanes > 1; }

// Expression equality with variables and buffers compared by identity; used
// to check that every access of a written buffer uses the same index.
bool same_expr(const PrimExpr& a, const PrimExpr& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::IntImm:
      return as<IntImmNode>(a)->value == as<IntImmNode>(b)->value;
    case ExprKind::FloatImm:
      return as<FloatImmNode>(a)->value == as<FloatImmNode>(b)->value;
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                      \
  case ExprKind::Name:                                              \
    return same_expr(as<Name##Node>(a)->a, as<Name##Node>(b)->a) && \
           same_expr(as<Name##Node>(a)->b, as<Name##Node>(b)->b);
#include "anvil/tir/node_kinds.def"
    case ExprKind::Not:
      return same_expr(as<NotNode>(a)->a, as<NotNode>(b)->a);
    case ExprKind::Cast:
      return same_expr(as<CastNode>(a)->value, as<CastNode>(b)->value);
    case ExprKind::Select: {
      const auto *x = as<SelectNode>(a), *y = as<SelectNode>(b);
      return same_expr(x->condition, y->condition) && same_expr(x->true_value, y->true_value) &&
             same_expr(x->false_value, y->false_value);
    }
    case ExprKind::BufferLoad: {
      const auto *x = as<BufferLoadNode>(a), *y = as<BufferLoadNode>(b);
      if (x->buffer->data.get() != y->buffer->data.get()) return false;
      if (x->indices.size() != y->indices.size()) return false;
      for (size_t k = 0; k < x->indices.size(); ++k)
        if (!same_expr(x->indices[k], y->indices[k])) return false;
      return true;
    }
    case ExprKind::Call: {
      const auto *x = as<CallNode>(a), *y = as<CallNode>(b);
      if (x->op != y->op || x->call_kind != y->call_kind || x->args.size() != y->args.size())
        return false;
      for (size_t k = 0; k < x->args.size(); ++k)
        if (!same_expr(x->args[k], y->args[k])) return false;
      return true;
    }
    default:
      return false;
  }
}

// Checks the memory rule of the header comment on the loop body before it is widened.
class AccessChecker : public Visitor {
 public:
  // True when every written buffer is accessed at one index free of body-local variables.
  static bool safe(const Stmt& body) {
    AccessChecker checker;
    checker.visit(body);
    for (const auto& [data, indices] : checker.accesses_) {
      if (!checker.written_.count(data)) continue;
      for (const std::vector<PrimExpr>& index : indices) {
        if (index.size() != indices[0].size()) return false;
        for (size_t k = 0; k < index.size(); ++k) {
          if (!same_expr(index[k], indices[0][k])) return false;
          if (uses_var(index[k], [&](const VarNode* v) { return checker.local_.count(v) > 0; }))
            return false;
        }
      }
    }
    return true;
  }

 private:
  void visit_BufferLoad(const BufferLoadNode* node) override {
    accesses_[node->buffer->data.get()].push_back(node->indices);
    Visitor::visit_BufferLoad(node);
  }
  void visit_BufferStore(const BufferStoreNode* node) override {
    written_.insert(node->buffer->data.get());
    accesses_[node->buffer->data.get()].push_back(node->indices);
    Visitor::visit_BufferStore(node);
  }
  void visit_For(const ForNode* node) override {
    local_.insert(node->loop_var.get());
    Visitor::visit_For(node);
  }
  void visit_LetStmt(const LetStmtNode* node) override {
    local_.insert(node->var.get());
    Visitor::visit_LetStmt(node);
  }
  void visit_Let(const LetNode* node) override {
    local_.insert(node->var.get());
    Visitor::visit_Let(node);
  }

  std::unordered_map<const VarNode*, std::vector<std::vector<PrimExpr>>> accesses_;
  std::unordered_set<const VarNode*> written_;
  std::unordered_set<const VarNode*> local_;
};

// Widens the body of one vectorized loop; throws CannotVectorize.
class Widener : public Mutator {
 public:
  Widener(const Var& loop_var, const PrimExpr& min, int lanes) : var_(loop_var), lanes_(lanes) {
    ramp_ = ramp(cast(loop_var->dtype, min), make_int(1, loop_var->dtype), lanes);
  }

  PrimExpr mutate_Var(const VarNode* node, const PrimExpr& self) override {
    if (node == var_.get()) return ramp_;
    auto it = widened_vars_.find(node);
    return it == widened_vars_.end() ? self : PrimExpr(it->second);
  }

#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                                    \
  PrimExpr mutate_##Name(const Name##Node* node, const PrimExpr& self) override { \
    return widen_binary<ExprKind::Name>(node, self);                              \
  }
#include "anvil/tir/node_kinds.def"

  PrimExpr mutate_Not(const NotNode* node, const PrimExpr& self) override {
    return Mutator::mutate_Not(node, self);
  }

  PrimExpr mutate_Select(const SelectNode* node, const PrimExpr& self) override {
    PrimExpr c = mutate(node->condition), t = mutate(node->true_value);
    PrimExpr f = mutate(node->false_value);
    if (!is_vector(c) && !is_vector(t) && !is_vector(f)) {
      // Children were mutated once already; mutating them again would make nested selects
      // exponential.
      if (c.get() == node->condition.get() && t.get() == node->true_value.get() &&
          f.get() == node->false_value.get())
        return self;
      return SelectNode::make(c, t, f);
    }
    // A scalar condition may select between vectors; a vector one needs vector sides.
    return SelectNode::make(c, widen(t), widen(f));
  }

  PrimExpr mutate_Cast(const CastNode* node, const PrimExpr& self) override {
    PrimExpr v = mutate(node->value);
    if (v.get() == node->value.get()) return self;
    return CastNode::make(node->dtype.with_lanes(v.dtype().lanes), v);
  }

  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    bool changed = false;
    std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
    if (!changed) return self;
    return BufferLoadNode::make(node->buffer, widen_all_if_any(indices));
  }

  PrimExpr mutate_Ramp(const RampNode*, const PrimExpr&) override { throw CannotVectorize{}; }
  PrimExpr mutate_Broadcast(const BroadcastNode*, const PrimExpr&) override {
    throw CannotVectorize{};
  }
  PrimExpr mutate_Reduce(const ReduceNode*, const PrimExpr&) override { throw CannotVectorize{}; }

  PrimExpr mutate_Let(const LetNode* node, const PrimExpr& self) override {
    PrimExpr value = mutate(node->value);
    if (!is_vector(value)) return Mutator::mutate_Let(node, self);
    Var vector_var = bind_widened(node->var, value);
    PrimExpr body = mutate(node->body);
    return LetNode::make(vector_var, value, body);
  }

  PrimExpr mutate_Call(const CallNode* node, const PrimExpr& self) override {
    bool changed = false;
    std::vector<PrimExpr> args = mutate_all(node->args, changed);
    if (!changed) return self;
    bool any_vector = false;
    for (const PrimExpr& a : args) any_vector = any_vector || is_vector(a);
    if (!any_vector) return CallNode::make(node->dtype, node->op, args, node->call_kind);
    const IntrinsicInfo* info =
        node->call_kind == CallKind::Intrinsic ? find_intrinsic(node->op) : nullptr;
    // reinterpret keeps the element width, so it is lane by lane too.
    bool elementwise =
        info && (info->intrinsic_class == IntrinsicClass::FloatMath ||
                 info->intrinsic_class == IntrinsicClass::FloatTest || node->op == "likely" ||
                 node->op == "reinterpret" || node->op == "round_to_int32");
    if (node->op == "if_then_else") {
      // Only the side taken is evaluated: a per-lane condition would evaluate both.
      if (is_vector(args[0])) throw CannotVectorize{};
      args[1] = widen(args[1]);
      args[2] = widen(args[2]);
      return CallNode::make(node->dtype.with_lanes(uint16_t(lanes_)), node->op, args);
    }
    if (!elementwise) throw CannotVectorize{};
    for (PrimExpr& a : args) a = widen(a);
    return CallNode::make(node->dtype.with_lanes(uint16_t(lanes_)), node->op, args);
  }

  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt& self) override {
    PrimExpr value = mutate(node->value);
    if (!is_vector(value)) return Mutator::mutate_LetStmt(node, self);
    Var vector_var = bind_widened(node->var, value);
    Stmt body = mutate(node->body);
    return LetStmtNode::make(vector_var, value, body);
  }

  Stmt mutate_AssertStmt(const AssertStmtNode* node, const Stmt& self) override {
    require_invariant(node->condition);
    return Mutator::mutate_AssertStmt(node, self);
  }

  Stmt mutate_BufferStore(const BufferStoreNode* node, const Stmt&) override {
    bool changed = false;
    std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
    PrimExpr value = mutate(node->value);
    bool vector_index = false;
    for (const PrimExpr& i : indices) {
      if (!is_vector(i)) continue;
      vector_index = true;
      // Distinct lanes must write distinct elements for the order not to matter.
      const auto* r = as<RampNode>(i);
      if (!r || !as_const_int(r->stride) || is_zero(r->stride)) throw CannotVectorize{};
    }
    // A store every lane makes to one place (a reduction into a scalar, or a
    // repeated write) is not a vector store.
    if (!vector_index) throw CannotVectorize{};
    return BufferStoreNode::make(node->buffer, widen(value), widen_all_if_any(indices));
  }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    if (node->for_kind == ForKind::Parallel || node->for_kind == ForKind::Vectorized)
      throw CannotVectorize{};
    require_invariant(node->min);
    require_invariant(node->extent);
    return Mutator::mutate_For(node, self);
  }

  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    require_invariant(node->condition);
    return Mutator::mutate_IfThenElse(node, self);
  }

  Stmt mutate_Evaluate(const EvaluateNode* node, const Stmt& self) override {
    // Runs once instead of once per lane: only a constant is the same either way.
    if (!as<IntImmNode>(node->value)) throw CannotVectorize{};
    return self;
  }

  Stmt mutate_Block(const BlockNode*, const Stmt&) override { throw CannotVectorize{}; }
  Stmt mutate_BlockRealize(const BlockRealizeNode*, const Stmt&) override {
    throw CannotVectorize{};
  }

 private:
  PrimExpr widen(const PrimExpr& e) const { return is_vector(e) ? e : broadcast(e, lanes_); }

  std::vector<PrimExpr> widen_all_if_any(std::vector<PrimExpr> items) const {
    bool any_vector = false;
    for (const PrimExpr& e : items) any_vector = any_vector || is_vector(e);
    if (any_vector)
      for (PrimExpr& e : items) e = widen(e);
    return items;
  }

  void require_invariant(const PrimExpr& e) {
    if (is_vector(mutate(e))) throw CannotVectorize{};
  }

  Var bind_widened(const Var& var, const PrimExpr& value) {
    Var vector_var = VarNode::make(var->name, value.dtype());
    widened_vars_[var.get()] = vector_var;
    return vector_var;
  }

  template <ExprKind K>
  PrimExpr widen_binary(const BinaryNode<K>* node, const PrimExpr& self) {
    PrimExpr a = mutate(node->a), b = mutate(node->b);
    if (a.get() == node->a.get() && b.get() == node->b.get()) return self;
    if (!is_vector(a) && !is_vector(b)) return BinaryNode<K>::make(a, b);
    // Ramp arithmetic stays a ramp, so contiguous accesses remain recognizable.
    if (a.dtype().element_of().is_int()) {
      const auto* ra = as<RampNode>(a);
      const auto* rb = as<RampNode>(b);
      if constexpr (K == ExprKind::Add || K == ExprKind::Sub) {
        auto combine = [](PrimExpr x, PrimExpr y) { return K == ExprKind::Add ? x + y : x - y; };
        if (ra && rb)
          return ramp(combine(ra->base, rb->base), combine(ra->stride, rb->stride), lanes_);
        if (ra && !is_vector(b)) return ramp(combine(ra->base, b), ra->stride, lanes_);
        if (rb && !is_vector(a)) {
          PrimExpr stride = K == ExprKind::Add ? rb->stride : -rb->stride;
          return ramp(combine(a, rb->base), stride, lanes_);
        }
      }
      if constexpr (K == ExprKind::Mul) {
        if (ra && !is_vector(b)) return ramp(ra->base * b, ra->stride * b, lanes_);
        if (rb && !is_vector(a)) return ramp(a * rb->base, a * rb->stride, lanes_);
      }
    }
    return BinaryNode<K>::make(widen(a), widen(b));
  }

  Var var_;
  int lanes_;
  PrimExpr ramp_;
  std::unordered_map<const VarNode*, Var> widened_vars_;
};

bool has_vector_expr(const Stmt& body) {
  bool found = false;
  pre_order_visit(
      body, [&](const PrimExpr& e) { found = found || is_vector(e); }, [](const Stmt&) {});
  return found;
}

class LoopVectorizer : public Mutator {
 public:
  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    // Inner loops first: an outer vectorized loop over vector code stays serial.
    Stmt inner = Mutator::mutate_For(node, self);
    if (node->for_kind != ForKind::Vectorized) return inner;
    const auto* loop = as<ForNode>(inner);
    std::optional<int64_t> extent = as_const_int(loop->extent);
    if (extent && *extent == 1) return substitute(loop->body, {{loop->loop_var.get(), loop->min}});
    if (extent && *extent > 1 && *extent <= 65535 && !has_vector_expr(loop->body) &&
        AccessChecker::safe(loop->body)) {
      try {
        return Widener(loop->loop_var, loop->min, int(*extent)).mutate(loop->body);
      } catch (const CannotVectorize&) {
      }
    }
    return ForNode::make(loop->loop_var, loop->min, loop->extent, ForKind::Serial, loop->body,
                         loop->annotations);
  }
};

}  // namespace

PrimFunc vectorize_loops(const PrimFunc& func) {
  Stmt body = LoopVectorizer().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
