#include "anvil/tir/functor.h"

namespace anvil::tir {

// ---------------------------------------------------------------- visitor

void Visitor::visit(const PrimExpr& e) {
  if (!e) return;
  switch (e->kind) {
#define ANVIL_TIR_EXPR(Name)                               \
  case ExprKind::Name:                                     \
    visit_##Name(static_cast<const Name##Node*>(e.get())); \
    break;
#include "anvil/tir/node_kinds.def"
  }
}

void Visitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
#define ANVIL_TIR_STMT(Name)                               \
  case StmtKind::Name:                                     \
    visit_##Name(static_cast<const Name##Node*>(s.get())); \
    break;
#include "anvil/tir/node_kinds.def"
  }
}

void Visitor::visit_buffer(const Buffer&) {}

void Visitor::visit_region(const BufferRegion& region) {
  visit_buffer(region.buffer);
  for (const Range& r : region.region) {
    visit(r.min);
    visit(r.extent);
  }
}

void Visitor::visit_IntImm(const IntImmNode*) {}
void Visitor::visit_FloatImm(const FloatImmNode*) {}
void Visitor::visit_StringImm(const StringImmNode*) {}
void Visitor::visit_Var(const VarNode*) {}
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                         \
  void Visitor::visit_##Name(const Name##Node* node) { \
    visit(node->a);                                    \
    visit(node->b);                                    \
  }
#include "anvil/tir/node_kinds.def"
void Visitor::visit_Not(const NotNode* node) { visit(node->a); }
void Visitor::visit_Select(const SelectNode* node) {
  visit(node->condition);
  visit(node->true_value);
  visit(node->false_value);
}
void Visitor::visit_Cast(const CastNode* node) { visit(node->value); }
void Visitor::visit_BufferLoad(const BufferLoadNode* node) {
  visit_buffer(node->buffer);
  for (const PrimExpr& i : node->indices) visit(i);
}
void Visitor::visit_Ramp(const RampNode* node) {
  visit(node->base);
  visit(node->stride);
}
void Visitor::visit_Broadcast(const BroadcastNode* node) { visit(node->value); }
void Visitor::visit_Let(const LetNode* node) {
  visit(node->value);
  visit(node->body);
}
void Visitor::visit_Call(const CallNode* node) {
  for (const PrimExpr& a : node->args) visit(a);
}
void Visitor::visit_Reduce(const ReduceNode* node) {
  for (const IterVar& iv : node->axis) {
    visit(iv.dom.min);
    visit(iv.dom.extent);
  }
  visit(node->source);
  visit(node->condition);
}

void Visitor::visit_LetStmt(const LetStmtNode* node) {
  visit(node->value);
  visit(node->body);
}
void Visitor::visit_AssertStmt(const AssertStmtNode* node) {
  visit(node->condition);
  visit(node->body);
}
void Visitor::visit_BufferStore(const BufferStoreNode* node) {
  visit_buffer(node->buffer);
  visit(node->value);
  for (const PrimExpr& i : node->indices) visit(i);
}
void Visitor::visit_Allocate(const AllocateNode* node) {
  visit_buffer(node->buffer);
  visit(node->body);
}
void Visitor::visit_For(const ForNode* node) {
  visit(node->min);
  visit(node->extent);
  visit(node->body);
}
void Visitor::visit_IfThenElse(const IfThenElseNode* node) {
  visit(node->condition);
  visit(node->then_case);
  visit(node->else_case);
}
void Visitor::visit_SeqStmt(const SeqStmtNode* node) {
  for (const Stmt& s : node->seq) visit(s);
}
void Visitor::visit_Evaluate(const EvaluateNode* node) { visit(node->value); }
void Visitor::visit_Block(const BlockNode* node) {
  for (const IterVar& iv : node->iter_vars) {
    visit(iv.dom.min);
    visit(iv.dom.extent);
  }
  for (const BufferRegion& r : node->reads) visit_region(r);
  for (const BufferRegion& r : node->writes) visit_region(r);
  for (const Buffer& b : node->alloc_buffers) visit_buffer(b);
  visit(node->init);
  visit(node->body);
}
void Visitor::visit_BlockRealize(const BlockRealizeNode* node) {
  for (const PrimExpr& v : node->iter_values) visit(v);
  visit(node->predicate);
  visit(Stmt(node->block));
}

// ---------------------------------------------------------------- mutator

PrimExpr Mutator::mutate(const PrimExpr& e) {
  if (!e) return e;
  switch (e->kind) {
#define ANVIL_TIR_EXPR(Name) \
  case ExprKind::Name:       \
    return mutate_##Name(static_cast<const Name##Node*>(e.get()), e);
#include "anvil/tir/node_kinds.def"
  }
  return e;
}

Stmt Mutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
#define ANVIL_TIR_STMT(Name) \
  case StmtKind::Name:       \
    return mutate_##Name(static_cast<const Name##Node*>(s.get()), s);
#include "anvil/tir/node_kinds.def"
  }
  return s;
}

Buffer Mutator::mutate_buffer(const Buffer& buffer) { return buffer; }

std::vector<PrimExpr> Mutator::mutate_all(const std::vector<PrimExpr>& items, bool& changed) {
  std::vector<PrimExpr> out;
  out.reserve(items.size());
  for (const PrimExpr& item : items) {
    out.push_back(mutate(item));
    if (out.back().get() != item.get()) changed = true;
  }
  return out;
}

std::vector<Stmt> Mutator::mutate_all(const std::vector<Stmt>& items, bool& changed) {
  std::vector<Stmt> out;
  out.reserve(items.size());
  for (const Stmt& item : items) {
    out.push_back(mutate(item));
    if (out.back().get() != item.get()) changed = true;
  }
  return out;
}

Range Mutator::mutate_range(const Range& range, bool& changed) {
  Range out{mutate(range.min), mutate(range.extent)};
  if (out.min.get() != range.min.get() || out.extent.get() != range.extent.get()) changed = true;
  return out;
}

IterVar Mutator::mutate_iter_var(const IterVar& iv, bool& changed) {
  return IterVar{iv.var, mutate_range(iv.dom, changed), iv.kind};
}

BufferRegion Mutator::mutate_region(const BufferRegion& region, bool& changed) {
  BufferRegion out{mutate_buffer(region.buffer), {}};
  if (out.buffer.get() != region.buffer.get()) changed = true;
  for (const Range& r : region.region) out.region.push_back(mutate_range(r, changed));
  return out;
}

PrimExpr Mutator::mutate_IntImm(const IntImmNode*, const PrimExpr& self) { return self; }
PrimExpr Mutator::mutate_FloatImm(const FloatImmNode*, const PrimExpr& self) { return self; }
PrimExpr Mutator::mutate_StringImm(const StringImmNode*, const PrimExpr& self) { return self; }
PrimExpr Mutator::mutate_Var(const VarNode*, const PrimExpr& self) { return self; }

#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                                    \
  PrimExpr Mutator::mutate_##Name(const Name##Node* node, const PrimExpr& self) { \
    PrimExpr a = mutate(node->a), b = mutate(node->b);                            \
    if (a.get() == node->a.get() && b.get() == node->b.get()) return self;        \
    return Name##Node::make(std::move(a), std::move(b));                          \
  }
#include "anvil/tir/node_kinds.def"

PrimExpr Mutator::mutate_Not(const NotNode* node, const PrimExpr& self) {
  PrimExpr a = mutate(node->a);
  return a.get() == node->a.get() ? self : PrimExpr(NotNode::make(a));
}

PrimExpr Mutator::mutate_Select(const SelectNode* node, const PrimExpr& self) {
  PrimExpr c = mutate(node->condition), t = mutate(node->true_value), f = mutate(node->false_value);
  if (c.get() == node->condition.get() && t.get() == node->true_value.get() &&
      f.get() == node->false_value.get())
    return self;
  return SelectNode::make(c, t, f);
}

PrimExpr Mutator::mutate_Cast(const CastNode* node, const PrimExpr& self) {
  PrimExpr v = mutate(node->value);
  return v.get() == node->value.get() ? self : PrimExpr(CastNode::make(node->dtype, v));
}

PrimExpr Mutator::mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) {
  bool changed = false;
  Buffer buffer = mutate_buffer(node->buffer);
  if (buffer.get() != node->buffer.get()) changed = true;
  std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
  return changed ? PrimExpr(BufferLoadNode::make(buffer, std::move(indices))) : self;
}

PrimExpr Mutator::mutate_Ramp(const RampNode* node, const PrimExpr& self) {
  PrimExpr base = mutate(node->base), stride = mutate(node->stride);
  if (base.get() == node->base.get() && stride.get() == node->stride.get()) return self;
  return RampNode::make(base, stride, node->lanes);
}

PrimExpr Mutator::mutate_Broadcast(const BroadcastNode* node, const PrimExpr& self) {
  PrimExpr v = mutate(node->value);
  return v.get() == node->value.get() ? self : PrimExpr(BroadcastNode::make(v, node->lanes));
}

PrimExpr Mutator::mutate_Let(const LetNode* node, const PrimExpr& self) {
  PrimExpr value = mutate(node->value), body = mutate(node->body);
  if (value.get() == node->value.get() && body.get() == node->body.get()) return self;
  return LetNode::make(node->var, value, body);
}

PrimExpr Mutator::mutate_Call(const CallNode* node, const PrimExpr& self) {
  bool changed = false;
  std::vector<PrimExpr> args = mutate_all(node->args, changed);
  if (!changed) return self;
  return CallNode::make(node->dtype, node->op, std::move(args), node->call_kind);
}

PrimExpr Mutator::mutate_Reduce(const ReduceNode* node, const PrimExpr& self) {
  bool changed = false;
  std::vector<IterVar> axis;
  for (const IterVar& iv : node->axis) axis.push_back(mutate_iter_var(iv, changed));
  PrimExpr source = mutate(node->source), condition = mutate(node->condition);
  if (source.get() != node->source.get() || condition.get() != node->condition.get())
    changed = true;
  if (!changed) return self;
  return ReduceNode::make(node->combiner, source, std::move(axis), condition);
}

Stmt Mutator::mutate_LetStmt(const LetStmtNode* node, const Stmt& self) {
  PrimExpr value = mutate(node->value);
  Stmt body = mutate(node->body);
  if (value.get() == node->value.get() && body.get() == node->body.get()) return self;
  return LetStmtNode::make(node->var, value, body);
}

Stmt Mutator::mutate_AssertStmt(const AssertStmtNode* node, const Stmt& self) {
  PrimExpr condition = mutate(node->condition);
  Stmt body = mutate(node->body);
  if (condition.get() == node->condition.get() && body.get() == node->body.get()) return self;
  return AssertStmtNode::make(condition, node->message, body);
}

Stmt Mutator::mutate_BufferStore(const BufferStoreNode* node, const Stmt& self) {
  bool changed = false;
  Buffer buffer = mutate_buffer(node->buffer);
  if (buffer.get() != node->buffer.get()) changed = true;
  PrimExpr value = mutate(node->value);
  if (value.get() != node->value.get()) changed = true;
  std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
  return changed ? Stmt(BufferStoreNode::make(buffer, value, std::move(indices))) : self;
}

Stmt Mutator::mutate_Allocate(const AllocateNode* node, const Stmt& self) {
  Buffer buffer = mutate_buffer(node->buffer);
  Stmt body = mutate(node->body);
  if (buffer.get() == node->buffer.get() && body.get() == node->body.get()) return self;
  return AllocateNode::make(buffer, body);
}

Stmt Mutator::mutate_For(const ForNode* node, const Stmt& self) {
  PrimExpr min = mutate(node->min), extent = mutate(node->extent);
  Stmt body = mutate(node->body);
  if (min.get() == node->min.get() && extent.get() == node->extent.get() &&
      body.get() == node->body.get())
    return self;
  return ForNode::make(node->loop_var, min, extent, node->for_kind, body, node->annotations);
}

Stmt Mutator::mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) {
  PrimExpr condition = mutate(node->condition);
  Stmt then_case = mutate(node->then_case), else_case = mutate(node->else_case);
  if (condition.get() == node->condition.get() && then_case.get() == node->then_case.get() &&
      else_case.get() == node->else_case.get())
    return self;
  return IfThenElseNode::make(condition, then_case, else_case);
}

Stmt Mutator::mutate_SeqStmt(const SeqStmtNode* node, const Stmt& self) {
  bool changed = false;
  std::vector<Stmt> seq = mutate_all(node->seq, changed);
  return changed ? seq_stmt(std::move(seq)) : self;
}

Stmt Mutator::mutate_Evaluate(const EvaluateNode* node, const Stmt& self) {
  PrimExpr value = mutate(node->value);
  return value.get() == node->value.get() ? self : Stmt(EvaluateNode::make(value));
}

Stmt Mutator::mutate_Block(const BlockNode* node, const Stmt& self) {
  bool changed = false;
  std::vector<IterVar> iter_vars;
  for (const IterVar& iv : node->iter_vars) iter_vars.push_back(mutate_iter_var(iv, changed));
  std::vector<BufferRegion> reads, writes;
  for (const BufferRegion& r : node->reads) reads.push_back(mutate_region(r, changed));
  for (const BufferRegion& r : node->writes) writes.push_back(mutate_region(r, changed));
  std::vector<Buffer> allocs;
  for (const Buffer& b : node->alloc_buffers) {
    allocs.push_back(mutate_buffer(b));
    if (allocs.back().get() != b.get()) changed = true;
  }
  Stmt init = mutate(node->init), body = mutate(node->body);
  if (init.get() != node->init.get() || body.get() != node->body.get()) changed = true;
  if (!changed) return self;
  return BlockNode::make(std::move(iter_vars), std::move(reads), std::move(writes), node->name,
                         body, init, std::move(allocs), node->annotations);
}

Stmt Mutator::mutate_BlockRealize(const BlockRealizeNode* node, const Stmt& self) {
  bool changed = false;
  std::vector<PrimExpr> values = mutate_all(node->iter_values, changed);
  PrimExpr predicate = mutate(node->predicate);
  Stmt block = mutate(Stmt(node->block));
  if (predicate.get() != node->predicate.get() || block.get() != node->block.get()) changed = true;
  if (!changed) return self;
  const auto* new_block = as<BlockNode>(block);
  ANVIL_ICHECK(new_block, "a mutator turned block '", node->block->name, "' into a ",
               stmt_kind_name(block->kind));
  return BlockRealizeNode::make(std::move(values), predicate, Block(new_block));
}

// ---------------------------------------------------------------- helpers

namespace {

class Substituter : public Mutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  PrimExpr mutate_Var(const VarNode* node, const PrimExpr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class PreOrder : public Visitor {
 public:
  PreOrder(const std::function<void(const PrimExpr&)>& on_expr,
           const std::function<void(const Stmt&)>& on_stmt)
      : on_expr_(on_expr), on_stmt_(on_stmt) {}
  void visit(const PrimExpr& e) override {
    if (!e) return;
    if (on_expr_) on_expr_(e);
    Visitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (!s) return;
    if (on_stmt_) on_stmt_(s);
    Visitor::visit(s);
  }

 private:
  const std::function<void(const PrimExpr&)>& on_expr_;
  const std::function<void(const Stmt&)>& on_stmt_;
};

}  // namespace

PrimExpr substitute(const PrimExpr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

void pre_order_visit(const PrimExpr& e, const std::function<void(const PrimExpr&)>& fn) {
  std::function<void(const Stmt&)> none;
  PreOrder(fn, none).visit(e);
}

void pre_order_visit(const Stmt& s, const std::function<void(const PrimExpr&)>& on_expr,
                     const std::function<void(const Stmt&)>& on_stmt) {
  PreOrder(on_expr, on_stmt).visit(s);
}

bool uses_var(const PrimExpr& e, const std::function<bool(const VarNode*)>& pred) {
  bool found = false;
  pre_order_visit(e, [&](const PrimExpr& x) {
    if (const auto* v = as<VarNode>(x); v && pred(v)) found = true;
  });
  return found;
}

bool uses_var(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  bool found = false;
  pre_order_visit(
      s,
      [&](const PrimExpr& x) {
        if (const auto* v = as<VarNode>(x); v && pred(v)) found = true;
      },
      nullptr);
  return found;
}

}  // namespace anvil::tir
