#include "tir/schedule/schedule_util.h"

#include <functional>

#include "anvil/support/error.h"
#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"

namespace anvil::tir::sched {

namespace {

// Calls fn on each statement directly below s (block init and body included).
void for_each_child(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::For:
      fn(as<ForNode>(s)->body);
      break;
    case StmtKind::SeqStmt:
      for (const Stmt& c : as<SeqStmtNode>(s)->seq) fn(c);
      break;
    case StmtKind::IfThenElse: {
      const auto* n = as<IfThenElseNode>(s);
      fn(n->then_case);
      if (n->else_case) fn(n->else_case);
      break;
    }
    case StmtKind::LetStmt:
      fn(as<LetStmtNode>(s)->body);
      break;
    case StmtKind::AssertStmt:
      fn(as<AssertStmtNode>(s)->body);
      break;
    case StmtKind::Allocate:
      fn(as<AllocateNode>(s)->body);
      break;
    case StmtKind::BlockRealize:
      fn(Stmt(as<BlockRealizeNode>(s)->block));
      break;
    case StmtKind::Block: {
      const auto* n = as<BlockNode>(s);
      if (n->init) fn(n->init);
      fn(n->body);
      break;
    }
    case StmtKind::BufferStore:
    case StmtKind::Evaluate:
      break;
  }
}

// Walks the statement tree keeping the loops since the enclosing block and
// that block's BlockRealize; on_realize / on_loop see both.
class ScopeWalker {
 public:
  std::function<bool(const BlockRealize&)> on_realize;  // true: stop the walk
  std::function<bool(const For&)> on_loop;

  void walk(const Stmt& s) {
    if (done_ || !s) return;
    if (const auto* loop = as<ForNode>(s)) {
      For ref(loop);
      if (on_loop && on_loop(ref)) {
        done_ = true;
        return;
      }
      loops_.push_back(ref);
      walk(loop->body);
      loops_.pop_back();
      return;
    }
    if (const auto* realize = as<BlockRealizeNode>(s)) {
      BlockRealize ref(realize);
      if (on_realize && on_realize(ref)) {
        done_ = true;
        return;
      }
      std::vector<For> saved_loops = std::move(loops_);
      BlockRealize saved_parent = parent_;
      loops_.clear();
      parent_ = ref;
      walk(realize->block->init);
      walk(realize->block->body);
      loops_ = std::move(saved_loops);
      parent_ = saved_parent;
      return;
    }
    for_each_child(s, [&](const Stmt& c) { walk(c); });
  }

  const std::vector<For>& loops() const { return loops_; }
  const BlockRealize& parent() const { return parent_; }

 private:
  std::vector<For> loops_;
  BlockRealize parent_;
  bool done_ = false;
};

std::string function_name(const PrimFunc& func) {
  std::string name = func->global_symbol();
  return name.empty() ? "main" : name;
}

}  // namespace

BlockLocation find_block(const PrimFunc& func, const std::string& name,
                         std::string_view primitive) {
  BlockLocation found;
  ScopeWalker walker;
  walker.on_realize = [&](const BlockRealize& realize) {
    if (realize->block->name != name) return false;
    found.realize = realize;
    found.block = realize->block;
    found.loops = walker.loops();
    found.parent = walker.parent();
    return true;
  };
  walker.walk(func->body);
  if (!found.realize)
    throw_error(primitive, ": no block named '", name, "' in function '", function_name(func), "'");
  return found;
}

LoopLocation find_loop(const PrimFunc& func, const Var& loop_var, std::string_view primitive) {
  if (!loop_var) throw_error(primitive, ": the loop is not set");
  LoopLocation found;
  ScopeWalker walker;
  walker.on_loop = [&](const For& loop) {
    if (loop->loop_var.get() != loop_var.get()) return false;
    found.loop = loop;
    found.outer_loops = walker.loops();
    found.parent = walker.parent();
    return true;
  };
  walker.walk(func->body);
  if (!found.loop)
    throw_error(primitive, ": no loop '", loop_var->name, "' in function '", function_name(func),
                "'");
  return found;
}

size_t loop_position(const PrimFunc& func, const std::vector<For>& loops, const Var& loop_var,
                     const std::string& block, std::string_view primitive) {
  for (size_t k = 0; k < loops.size(); ++k)
    if (loops[k]->loop_var.get() == loop_var.get()) return k;
  find_loop(func, loop_var, primitive);  // throws when there is no such loop
  throw_error(primitive, ": loop '", loop_var->name, "' is not an ancestor of block '", block, "'");
}

BlockRealize root_realize(const PrimFunc& func) {
  const auto* realize = as<BlockRealizeNode>(func->body);
  ANVIL_ICHECK(realize && realize->block->iter_vars.empty(), "function '", function_name(func),
               "' is not in scheduled form (no root block)");
  return BlockRealize(realize);
}

std::vector<BlockRealize> collect_block_realizes(const Stmt& s, bool nested) {
  std::vector<BlockRealize> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& stmt) {
    if (const auto* realize = as<BlockRealizeNode>(stmt)) {
      out.emplace_back(realize);
      if (!nested) return;
    }
    for_each_child(stmt, walk);
  };
  walk(s);
  return out;
}

std::vector<For> collect_loops(const Stmt& s) {
  std::vector<For> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& stmt) {
    if (const auto* loop = as<ForNode>(stmt)) out.emplace_back(loop);
    for_each_child(stmt, walk);
  };
  walk(s);
  return out;
}

// ---------------------------------------------------------------- replacement

namespace {

class Replacer : public Mutator {
 public:
  explicit Replacer(const StmtReplacements& replacements) : replacements_(replacements) {}

  Stmt mutate(const Stmt& s) override {
    if (!s) return s;
    auto it = replacements_.find(s.get());
    if (it != replacements_.end()) {
      ++hits_;
      return it->second;
    }
    return Mutator::mutate(s);
  }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (!body) return nullptr;  // a loop over nothing goes with its body
    if (body.get() == node->body.get()) return self;
    return with_body(For(node), body);
  }

  Stmt mutate_SeqStmt(const SeqStmtNode* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Stmt> kept;
    for (const Stmt& s : node->seq) {
      Stmt m = mutate(s);
      if (m.get() != s.get()) changed = true;
      if (m) kept.push_back(m);
    }
    if (!changed) return self;
    if (kept.empty()) return nullptr;
    return seq_stmt(std::move(kept));
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
    Stmt init = mutate(node->init), body = mutate(node->body);
    if (init.get() == node->init.get() && body.get() == node->body.get()) return self;
    if (!body) body = evaluate(0);
    return BlockNode::make(node->iter_vars, node->reads, node->writes, node->name, body, init,
                           node->alloc_buffers, node->annotations);
  }

  Stmt mutate_BlockRealize(const BlockRealizeNode* node, const Stmt& self) override {
    Stmt block = mutate(Stmt(node->block));
    if (!block) return nullptr;
    if (block.get() == node->block.get()) return self;
    const auto* new_block = as<BlockNode>(block);
    ANVIL_ICHECK(new_block, "block '", node->block->name, "' was replaced by a ",
                 stmt_kind_name(block->kind));
    return BlockRealizeNode::make(node->iter_values, node->predicate, Block(new_block));
  }

  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    Stmt then_case = non_null(mutate(node->then_case));
    Stmt else_case = mutate(node->else_case);
    if (then_case.get() == node->then_case.get() && else_case.get() == node->else_case.get())
      return self;
    return IfThenElseNode::make(node->condition, then_case, else_case);
  }

  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt& self) override {
    Stmt body = non_null(mutate(node->body));
    return body.get() == node->body.get() ? self
                                          : Stmt(LetStmtNode::make(node->var, node->value, body));
  }

  Stmt mutate_AssertStmt(const AssertStmtNode* node, const Stmt& self) override {
    Stmt body = non_null(mutate(node->body));
    if (body.get() == node->body.get()) return self;
    return AssertStmtNode::make(node->condition, node->message, body);
  }

  Stmt mutate_Allocate(const AllocateNode* node, const Stmt& self) override {
    Stmt body = non_null(mutate(node->body));
    return body.get() == node->body.get() ? self : Stmt(AllocateNode::make(node->buffer, body));
  }

  size_t hits() const { return hits_; }

 private:
  static Stmt non_null(Stmt s) { return s ? s : evaluate(0); }

  const StmtReplacements& replacements_;
  size_t hits_ = 0;
};

}  // namespace

Stmt replace_stmts(const Stmt& root, const StmtReplacements& replacements) {
  Replacer replacer(replacements);
  Stmt out = replacer.mutate(root);
  ANVIL_ICHECK(replacer.hits() == replacements.size(),
               "schedule: ", replacements.size() - replacer.hits(),
               " statement(s) to replace were not found");
  return out ? out : evaluate(0);
}

PrimFunc replace_stmts(const PrimFunc& func, const StmtReplacements& replacements) {
  return func->with_body(replace_stmts(func->body, replacements));
}

PrimFunc replace_stmt(const PrimFunc& func, const Stmt& target, Stmt replacement) {
  return replace_stmts(func, StmtReplacements{{target.get(), std::move(replacement)}});
}

Block with_body(const Block& block, Stmt body) {
  return BlockNode::make(block->iter_vars, block->reads, block->writes, block->name,
                         std::move(body), block->init, block->alloc_buffers, block->annotations);
}

Block without_init(const Block& block) {
  return BlockNode::make(block->iter_vars, block->reads, block->writes, block->name, block->body,
                         nullptr, block->alloc_buffers, block->annotations);
}

For with_body(const For& loop, Stmt body) {
  return ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, std::move(body),
                       loop->annotations);
}

For with_kind(const For& loop, ForKind kind) {
  return ForNode::make(loop->loop_var, loop->min, loop->extent, kind, loop->body,
                       loop->annotations);
}

For with_annotations(const For& loop, Annotations annotations) {
  return ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                       std::move(annotations));
}

// ---------------------------------------------------------------- names

NameSupply::NameSupply(const PrimFunc& func) {
  auto add_var = [&](const Var& v) {
    if (v) var_names_.insert(v->name);
  };
  for (const Var& p : func->params) add_var(p);
  for (const auto& [param, buffer] : func->buffer_map) {
    add_var(buffer->data);
    for (const PrimExpr& d : buffer->shape)
      if (const auto* v = as<VarNode>(d)) var_names_.insert(v->name);
  }
  pre_order_visit(
      func->body,
      [&](const PrimExpr& e) {
        if (const auto* v = as<VarNode>(e)) var_names_.insert(v->name);
      },
      [&](const Stmt& s) {
        if (const auto* loop = as<ForNode>(s)) add_var(loop->loop_var);
        if (const auto* let = as<LetStmtNode>(s)) add_var(let->var);
        if (const auto* block = as<BlockNode>(s)) {
          block_names_.insert(block->name);
          for (const IterVar& iv : block->iter_vars) add_var(iv.var);
        }
      });
}

std::string NameSupply::fresh(std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int suffix = 1; taken.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
  taken.insert(name);
  return name;
}

std::string NameSupply::fresh_block_name(const std::string& base) {
  return fresh(block_names_, base);
}

std::string NameSupply::fresh_var_name(const std::string& base) { return fresh(var_names_, base); }

// ---------------------------------------------------------------- expressions

VarRanges ranges_of(const std::vector<For>& loops) {
  VarRanges out;
  for (const For& loop : loops) out.emplace_back(loop->loop_var, Range{loop->min, loop->extent});
  return out;
}

namespace {

// Rebuilds every arithmetic node through the folding builders, so a
// substitution that produced x * 1 or 0 + y reads as x and y again.
class Refolder : public Mutator {
 public:
#define ANVIL_REFOLD(Kind, build)                                                              \
  PrimExpr mutate_##Kind(const Kind##Node* node, const PrimExpr& self) override {              \
    PrimExpr a = mutate(node->a), b = mutate(node->b);                                         \
    PrimExpr out = build;                                                                      \
    const auto* same = as<Kind##Node>(out);                                                    \
    if (same && same->a.get() == node->a.get() && same->b.get() == node->b.get()) return self; \
    return out;                                                                                \
  }
  ANVIL_REFOLD(Add, a + b)
  ANVIL_REFOLD(Sub, a - b)
  ANVIL_REFOLD(Mul, a* b)
  ANVIL_REFOLD(Div, (a.dtype().is_float() ? a / b : truncdiv(a, b)))
  ANVIL_REFOLD(Mod, truncmod(a, b))
  ANVIL_REFOLD(FloorDiv, floordiv(a, b))
  ANVIL_REFOLD(FloorMod, floormod(a, b))
  ANVIL_REFOLD(Min, min(a, b))
  ANVIL_REFOLD(Max, max(a, b))
  ANVIL_REFOLD(EQ, eq(a, b))
  ANVIL_REFOLD(NE, ne(a, b))
  ANVIL_REFOLD(LT, a < b)
  ANVIL_REFOLD(LE, a <= b)
  ANVIL_REFOLD(GT, a > b)
  ANVIL_REFOLD(GE, a >= b)
  ANVIL_REFOLD(And, logical_and(a, b))
  ANVIL_REFOLD(Or, logical_or(a, b))
#undef ANVIL_REFOLD
  PrimExpr mutate_Not(const NotNode* node, const PrimExpr& self) override {
    PrimExpr a = mutate(node->a);
    return a.get() == node->a.get() ? self : logical_not(a);
  }
  PrimExpr mutate_Select(const SelectNode* node, const PrimExpr& self) override {
    PrimExpr c = mutate(node->condition), t = mutate(node->true_value),
             f = mutate(node->false_value);
    if (c.get() == node->condition.get() && t.get() == node->true_value.get() &&
        f.get() == node->false_value.get() && !as_const_int(c))
      return self;
    return select(c, t, f);
  }
};

// Simplifies the bindings of every BlockRealize, with the ranges of the loops
// (and block iteration variables) around it known.
class BindingSimplifier : public Mutator {
 public:
  explicit BindingSimplifier(VarRanges ranges) : ranges_(std::move(ranges)) {}

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    ranges_.emplace_back(node->loop_var, Range{node->min, node->extent});
    Stmt out = Mutator::mutate_For(node, self);
    ranges_.pop_back();
    return out;
  }

  Stmt mutate_BlockRealize(const BlockRealizeNode* node, const Stmt& self) override {
    bool changed = false;
    std::vector<PrimExpr> values;
    for (const PrimExpr& v : node->iter_values) {
      values.push_back(simplify_expr(v, ranges_));
      if (values.back().get() != v.get()) changed = true;
    }
    PrimExpr predicate = simplify_predicate(node->predicate, ranges_);
    if (predicate.get() != node->predicate.get()) changed = true;
    size_t depth = ranges_.size();
    for (const IterVar& iv : node->block->iter_vars) ranges_.emplace_back(iv.var, iv.dom);
    Stmt block = mutate(Stmt(node->block));
    ranges_.resize(depth);
    if (block.get() != node->block.get()) changed = true;
    if (!changed) return self;
    return BlockRealizeNode::make(std::move(values), predicate, Block(as<BlockNode>(block)));
  }

 private:
  VarRanges ranges_;
};

bool same_exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_expr(a[i], b[i])) return false;
  return true;
}

}  // namespace

bool same_expr(const PrimExpr& a, const PrimExpr& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b || a->kind != b->kind || a.dtype() != b.dtype()) return false;
  switch (a->kind) {
    case ExprKind::IntImm:
      return as<IntImmNode>(a)->value == as<IntImmNode>(b)->value;
    case ExprKind::FloatImm:
      return as<FloatImmNode>(a)->value == as<FloatImmNode>(b)->value;
    case ExprKind::StringImm:
      return as<StringImmNode>(a)->value == as<StringImmNode>(b)->value;
    case ExprKind::Var:
      return false;
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                 \
  case ExprKind::Name: {                                       \
    const auto *x = as<Name##Node>(a), *y = as<Name##Node>(b); \
    return same_expr(x->a, y->a) && same_expr(x->b, y->b);     \
  }
#include "anvil/tir/node_kinds.def"
    case ExprKind::Not:
      return same_expr(as<NotNode>(a)->a, as<NotNode>(b)->a);
    case ExprKind::Select: {
      const auto *x = as<SelectNode>(a), *y = as<SelectNode>(b);
      return same_expr(x->condition, y->condition) && same_expr(x->true_value, y->true_value) &&
             same_expr(x->false_value, y->false_value);
    }
    case ExprKind::Cast:
      return same_expr(as<CastNode>(a)->value, as<CastNode>(b)->value);
    case ExprKind::BufferLoad: {
      const auto *x = as<BufferLoadNode>(a), *y = as<BufferLoadNode>(b);
      return x->buffer.get() == y->buffer.get() && same_exprs(x->indices, y->indices);
    }
    case ExprKind::Ramp: {
      const auto *x = as<RampNode>(a), *y = as<RampNode>(b);
      return x->lanes == y->lanes && same_expr(x->base, y->base) && same_expr(x->stride, y->stride);
    }
    case ExprKind::Broadcast: {
      const auto *x = as<BroadcastNode>(a), *y = as<BroadcastNode>(b);
      return x->lanes == y->lanes && same_expr(x->value, y->value);
    }
    case ExprKind::Call: {
      const auto *x = as<CallNode>(a), *y = as<CallNode>(b);
      return x->op == y->op && x->call_kind == y->call_kind && same_exprs(x->args, y->args);
    }
    case ExprKind::Let:
    case ExprKind::Reduce:
      return false;
  }
  return false;
}

PrimExpr simplify_expr(const PrimExpr& e, const VarRanges& ranges) {
  if (!e) return e;
  PrimExpr folded = Refolder().mutate(e);
  if (!folded.dtype().is_int() || folded.dtype().lanes != 1) return folded;
  Analyzer analyzer;
  for (const auto& [var, range] : ranges) analyzer.bind(var, range);
  PrimExpr out = analyzer.simplify(folded);
  return same_expr(out, folded) ? folded : out;
}

namespace {

// a < b with a and b simplified on their own: terms stay on the side they
// were written on, so a guard reads like the split that made it.
PrimExpr simplify_comparison_sides(const PrimExpr& e, const VarRanges& ranges) {
  switch (e.kind()) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                                                   \
  case ExprKind::Name: {                                                                         \
    if (!is_comparison(ExprKind::Name) || e.kind() == ExprKind::And || e.kind() == ExprKind::Or) \
      return e;                                                                                  \
    const auto* node = as<Name##Node>(e);                                                        \
    PrimExpr a = simplify_expr(node->a, ranges), b = simplify_expr(node->b, ranges);             \
    if (a.get() == node->a.get() && b.get() == node->b.get()) return e;                          \
    return Name##Node::make(a, b);                                                               \
  }
#include "anvil/tir/node_kinds.def"
    default:
      return e;
  }
}

}  // namespace

PrimExpr simplify_predicate(const PrimExpr& predicate, const VarRanges& ranges) {
  if (!predicate) return predicate;
  Analyzer analyzer;
  for (const auto& [var, range] : ranges) analyzer.bind(var, range);
  std::vector<PrimExpr> kept;
  bool dropped = false;
  for (const PrimExpr& term : split_conjunction(predicate)) {
    PrimExpr folded = Refolder().mutate(term);
    if (analyzer.can_prove(folded)) {
      dropped = true;
      continue;
    }
    folded = simplify_comparison_sides(folded, ranges);
    if (folded.get() != term.get()) dropped = true;
    kept.push_back(folded);
  }
  return dropped ? conjoin(kept) : predicate;
}

Stmt simplify_bindings(const Stmt& s, const std::vector<For>& outer_loops) {
  return BindingSimplifier(ranges_of(outer_loops)).mutate(s);
}

bool prove_equal(const PrimExpr& a, const PrimExpr& b, const VarRanges& ranges) {
  if (same_expr(a, b)) return true;
  if (a.dtype() != b.dtype() || !a.dtype().is_int()) return false;
  Analyzer analyzer;
  for (const auto& [var, range] : ranges) analyzer.bind(var, range);
  return analyzer.can_prove_equal(a, b);
}

std::vector<PrimExpr> split_conjunction(const PrimExpr& condition) {
  std::vector<PrimExpr> out;
  std::function<void(const PrimExpr&)> walk = [&](const PrimExpr& c) {
    if (const auto* conj = as<AndNode>(c)) {
      walk(conj->a);
      walk(conj->b);
    } else if (c && !is_one(c)) {
      out.push_back(c);
    }
  };
  walk(condition);
  return out;
}

PrimExpr conjoin(const std::vector<PrimExpr>& conditions) {
  PrimExpr out = const_true();
  for (const PrimExpr& c : conditions) out = logical_and(out, c);
  return out;
}

bool uses(const PrimExpr& e, const Var& var) {
  return e && uses_var(e, [&](const VarNode* v) { return v == var.get(); });
}

bool uses(const Stmt& s, const Var& var) {
  return s && uses_var(s, [&](const VarNode* v) { return v == var.get(); });
}

std::string quoted_names(const std::vector<Var>& vars) {
  std::string out;
  for (const Var& v : vars) {
    if (!out.empty()) out += ", ";
    out += "'" + v->name + "'";
  }
  return out;
}

}  // namespace anvil::tir::sched
