#include "tir/schedule/region_analysis.h"

#include <functional>
#include <limits>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"

namespace anvil::tir::dataflow {

namespace {

// Walks the scheduled form reporting every block realize and loop with its
// enclosing loops (up to the nearest block), that block and the top-level
// statement of that block's body holding it.
class SiteWalker {
 public:
  std::function<void(const BlockRealize&, const std::vector<For>&, const Block&, const Stmt&)>
      on_realize;
  std::function<void(const For&, const std::vector<For>&, const Block&)> on_loop;
  // When false, blocks nested in the walked scope are reported but not entered.
  bool enter_nested_blocks = true;

  void walk_function_body(const Stmt& body) {
    std::vector<For> loops;
    walk(body, loops, Block(), body);
  }

  void walk_scope(const Block& scope) {
    for (const Stmt& top : top_level_statements(scope->body)) {
      std::vector<For> loops;
      walk(top, loops, scope, top);
    }
  }

 private:
  void walk(const Stmt& s, std::vector<For>& loops, const Block& scope, const Stmt& top) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::For: {
        For loop(static_cast<const ForNode*>(s.get()));
        if (on_loop) on_loop(loop, loops, scope);
        loops.push_back(loop);
        walk(loop->body, loops, scope, top);
        loops.pop_back();
        break;
      }
      case StmtKind::SeqStmt:
        for (const Stmt& child : as<SeqStmtNode>(s)->seq) walk(child, loops, scope, top);
        break;
      case StmtKind::IfThenElse:
        walk(as<IfThenElseNode>(s)->then_case, loops, scope, top);
        walk(as<IfThenElseNode>(s)->else_case, loops, scope, top);
        break;
      case StmtKind::LetStmt:
        walk(as<LetStmtNode>(s)->body, loops, scope, top);
        break;
      case StmtKind::AssertStmt:
        walk(as<AssertStmtNode>(s)->body, loops, scope, top);
        break;
      case StmtKind::Allocate:
        walk(as<AllocateNode>(s)->body, loops, scope, top);
        break;
      case StmtKind::BlockRealize: {
        BlockRealize realize(static_cast<const BlockRealizeNode*>(s.get()));
        if (on_realize) on_realize(realize, loops, scope, top);
        if (enter_nested_blocks || !scope) walk_scope(realize->block);
        break;
      }
      default:
        break;
    }
  }
};

// Removes or replaces statements by identity (see replace_stmts).
class StmtReplacer : public Mutator {
 public:
  explicit StmtReplacer(const std::unordered_map<const StmtNode*, Stmt>& replacements)
      : replacements_(replacements) {}

  Stmt mutate(const Stmt& s) override {
    if (!s) return s;
    auto it = replacements_.find(s.get());
    if (it != replacements_.end()) return it->second;
    return Mutator::mutate(s);
  }
  PrimExpr mutate(const PrimExpr& e) override { return e; }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (!body) return nullptr;
    if (body.get() == node->body.get()) return self;
    return ForNode::make(node->loop_var, node->min, node->extent, node->for_kind, body,
                         node->annotations);
  }
  Stmt mutate_SeqStmt(const SeqStmtNode* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Stmt> seq = mutate_all(node->seq, changed);
    if (!changed) return self;
    std::vector<Stmt> kept;
    for (Stmt& s : seq)
      if (s) kept.push_back(std::move(s));
    if (kept.empty()) return nullptr;
    return seq_stmt(std::move(kept));
  }
  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    Stmt then_case = mutate(node->then_case), else_case = mutate(node->else_case);
    if (then_case.get() == node->then_case.get() && else_case.get() == node->else_case.get())
      return self;
    if (!then_case && !else_case) return nullptr;
    if (!then_case) return IfThenElseNode::make(logical_not(node->condition), else_case);
    return IfThenElseNode::make(node->condition, then_case, else_case);
  }
  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (!body) return nullptr;
    if (body.get() == node->body.get()) return self;
    return LetStmtNode::make(node->var, node->value, body);
  }
  Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (body.get() == node->body.get()) return self;
    if (!body) body = seq_stmt({});
    return BlockNode::make(node->iter_vars, node->reads, node->writes, node->name, body, node->init,
                           node->alloc_buffers, node->annotations);
  }
  Stmt mutate_BlockRealize(const BlockRealizeNode* node, const Stmt& self) override {
    Stmt block = mutate(Stmt(node->block));
    if (!block) return nullptr;
    if (block.get() == node->block.get()) return self;
    return BlockRealizeNode::make(node->iter_values, node->predicate,
                                  Block(static_cast<const BlockNode*>(block.get())));
  }

 private:
  const std::unordered_map<const StmtNode*, Stmt>& replacements_;
};

bool is_point(const Interval& i) { return i.min && i.min.get() == i.max.get(); }

Interval point(const PrimExpr& e) { return {e, e}; }

PrimExpr min_or_null(const PrimExpr& a, const PrimExpr& b) { return a && b ? min(a, b) : nullptr; }
PrimExpr max_or_null(const PrimExpr& a, const PrimExpr& b) { return a && b ? max(a, b) : nullptr; }

class IntervalEvaluator {
 public:
  explicit IntervalEvaluator(const RelaxMap& relaxed) : relaxed_(relaxed) {}

  Interval eval(const PrimExpr& e) {
    if (!uses_var(e, [&](const VarNode* v) { return relaxed_.count(v) > 0; })) return point(e);
    switch (e.kind()) {
      case ExprKind::Var: {
        const Range& r = relaxed_.at(as<VarNode>(e));
        return {r.min, r.min + r.extent - 1};
      }
      case ExprKind::Add: {
        Interval a = eval(as<AddNode>(e)->a), b = eval(as<AddNode>(e)->b);
        return {a.min && b.min ? a.min + b.min : nullptr, a.max && b.max ? a.max + b.max : nullptr};
      }
      case ExprKind::Sub: {
        Interval a = eval(as<SubNode>(e)->a), b = eval(as<SubNode>(e)->b);
        return {a.min && b.max ? a.min - b.max : nullptr, a.max && b.min ? a.max - b.min : nullptr};
      }
      case ExprKind::Mul: {
        const auto* mul = as<MulNode>(e);
        if (auto c = as_const_int(mul->b)) return scale(eval(mul->a), *c);
        if (auto c = as_const_int(mul->a)) return scale(eval(mul->b), *c);
        return {};
      }
      case ExprKind::FloorDiv: {
        const auto* div = as<FloorDivNode>(e);
        auto c = as_const_int(div->b);
        if (!c || *c <= 0) return {};
        Interval a = eval(div->a);
        return {a.min ? floordiv(a.min, *c) : nullptr, a.max ? floordiv(a.max, *c) : nullptr};
      }
      case ExprKind::FloorMod: {
        auto c = as_const_int(as<FloorModNode>(e)->b);
        if (!c || *c <= 0) return {};
        return {make_int(0, e.dtype()), make_int(*c - 1, e.dtype())};
      }
      case ExprKind::Min: {
        Interval a = eval(as<MinNode>(e)->a), b = eval(as<MinNode>(e)->b);
        return {min_or_null(a.min, b.min),
                a.max && b.max ? min(a.max, b.max) : (a.max ? a.max : b.max)};
      }
      case ExprKind::Max: {
        Interval a = eval(as<MaxNode>(e)->a), b = eval(as<MaxNode>(e)->b);
        return {a.min && b.min ? max(a.min, b.min) : (a.min ? a.min : b.min),
                max_or_null(a.max, b.max)};
      }
      case ExprKind::Select: {
        Interval a = eval(as<SelectNode>(e)->true_value);
        Interval b = eval(as<SelectNode>(e)->false_value);
        return {min_or_null(a.min, b.min), max_or_null(a.max, b.max)};
      }
      case ExprKind::Cast: {
        const auto* c = as<CastNode>(e);
        if (!c->dtype.is_int() || !c->value.dtype().is_int()) return {};
        Interval a = eval(c->value);
        return {a.min ? cast(c->dtype, a.min) : nullptr, a.max ? cast(c->dtype, a.max) : nullptr};
      }
      default:
        return {};
    }
  }

 private:
  static Interval scale(const Interval& a, int64_t c) {
    PrimExpr lo = a.min ? a.min * c : nullptr, hi = a.max ? a.max * c : nullptr;
    return c >= 0 ? Interval{lo, hi} : Interval{hi, lo};
  }

  const RelaxMap& relaxed_;
};

// Collects the accesses of one block, relaxing the loops inside it.
class AccessCollector : public Visitor {
 public:
  AccessCollector(const Block& block, bool collect_writes)
      : collect_writes_(collect_writes), simplifier_() {
    for (const Buffer& b : block->alloc_buffers) local_.insert(b.get());
    for (const IterVar& iv : block->iter_vars) simplifier_.bind(iv.var, iv.dom);
  }

  void visit_For(const ForNode* node) override {
    visit(node->min);
    visit(node->extent);
    loops_[node->loop_var.get()] = Range{node->min, node->extent};
    simplifier_.bind(node->loop_var, Range{node->min, node->extent});
    visit(node->body);
    loops_.erase(node->loop_var.get());
  }
  void visit_BufferLoad(const BufferLoadNode* node) override {
    Visitor::visit_BufferLoad(node);
    if (!collect_writes_) add(node->buffer, node->indices);
  }
  void visit_BufferStore(const BufferStoreNode* node) override {
    Visitor::visit_BufferStore(node);
    if (collect_writes_) add(node->buffer, node->indices);
  }

  std::vector<BufferRegion> regions;

 private:
  void add(const Buffer& buffer, const std::vector<PrimExpr>& indices) {
    if (local_.count(buffer.get())) return;
    std::vector<Range> region;
    for (size_t d = 0; d < indices.size(); ++d) {
      Interval i = eval_interval(indices[d], loops_);
      if (!i.bounded() || indices[d].dtype().lanes != 1) {
        region.push_back({make_int(0), buffer->shape[d]});
        continue;
      }
      PrimExpr lo = simplifier_.simplify(i.min);
      region.push_back({lo, is_point(i) ? make_int(1) : simplifier_.simplify(i.max - i.min + 1)});
    }
    for (BufferRegion& existing : regions) {
      if (existing.buffer.get() != buffer.get()) continue;
      existing.region = region_hull(buffer, existing.region, region, simplifier_);
      return;
    }
    regions.push_back({buffer, std::move(region)});
  }

  bool collect_writes_;
  IndexSimplifier simplifier_;
  std::unordered_set<const BufferNode*> local_;
  RelaxMap loops_;
};

std::vector<BufferRegion> detect(const Block& block, bool writes) {
  AccessCollector collector(block, writes);
  if (block->init) collector.visit(block->init);
  collector.visit(block->body);
  return std::move(collector.regions);
}

}  // namespace

std::vector<Stmt> top_level_statements(const Stmt& body) {
  if (const auto* seq = as<SeqStmtNode>(body)) return seq->seq;
  return {body};
}

BlockSite find_block(const PrimFunc& func, const std::string& name, const char* primitive) {
  std::optional<BlockSite> found;
  SiteWalker walker;
  walker.on_realize = [&](const BlockRealize& realize, const std::vector<For>& loops,
                          const Block& scope, const Stmt& top) {
    if (scope && realize->block->name == name) found = BlockSite{realize, loops, scope, top};
  };
  walker.walk_function_body(func->body);
  if (!found) throw_error(primitive, ": no block named '", name, "'");
  return *found;
}

LoopSite find_loop(const PrimFunc& func, const Var& var, const char* primitive) {
  if (!var) throw_error(primitive, ": null loop");
  std::optional<LoopSite> found;
  SiteWalker walker;
  walker.on_loop = [&](const For& loop, const std::vector<For>& outer, const Block& scope) {
    if (loop->loop_var.get() == var.get()) found = LoopSite{loop, outer, scope};
  };
  walker.walk_function_body(func->body);
  if (!found) throw_error(primitive, ": no loop over '", var->name, "' in the function");
  return *found;
}

std::vector<BlockSite> child_blocks(const Block& scope) {
  std::vector<BlockSite> out;
  SiteWalker walker;
  walker.enter_nested_blocks = false;
  walker.on_realize = [&](const BlockRealize& realize, const std::vector<For>& loops,
                          const Block& s, const Stmt& top) {
    out.push_back({realize, loops, s, top});
  };
  walker.walk_scope(scope);
  return out;
}

bool contains_block(const Stmt& stmt, const BlockRealize& realize) {
  bool found = false;
  pre_order_visit(stmt, nullptr, [&](const Stmt& s) {
    if (s.get() == realize.get()) found = true;
  });
  return found;
}

bool block_writes(const Block& block, const Buffer& buffer) {
  for (const BufferRegion& r : block->writes)
    if (r.buffer.get() == buffer.get()) return true;
  return false;
}

bool block_reads(const Block& block, const Buffer& buffer) {
  for (const BufferRegion& r : block->reads)
    if (r.buffer.get() == buffer.get()) return true;
  return false;
}

bool is_param_buffer(const PrimFunc& func, const Buffer& buffer) {
  for (const auto& [param, b] : func->buffer_map)
    if (b.get() == buffer.get()) return true;
  return false;
}

bool uses_buffer(const Stmt& stmt, const Buffer& buffer) {
  class Finder : public Visitor {
   public:
    explicit Finder(const BufferNode* target) : target_(target) {}
    void visit_buffer(const Buffer& b) override {
      if (b.get() == target_) found = true;
    }
    bool found = false;

   private:
    const BufferNode* target_;
  };
  Finder finder(buffer.get());
  finder.visit(stmt);
  return finder.found;
}

Stmt replace_stmts(const Stmt& root,
                   const std::unordered_map<const StmtNode*, Stmt>& replacements) {
  return StmtReplacer(replacements).mutate(root);
}

PrimFunc replace_scope(const PrimFunc& func, const Block& old_scope, const Block& new_scope) {
  return func->with_body(replace_stmts(func->body, {{old_scope.get(), new_scope}}));
}

Block with_body(const Block& block, Stmt body) {
  return BlockNode::make(block->iter_vars, block->reads, block->writes, block->name,
                         std::move(body), block->init, block->alloc_buffers, block->annotations);
}

PrimFunc replace_scope_body(const PrimFunc& func, const Block& scope, std::vector<Stmt> body,
                            const Buffer& buffer) {
  std::vector<Buffer> allocs = scope->alloc_buffers;
  allocs.push_back(buffer);
  Block new_scope =
      BlockNode::make(scope->iter_vars, scope->reads, scope->writes, scope->name,
                      seq_stmt(std::move(body)), scope->init, allocs, scope->annotations);
  return replace_scope(func, scope, new_scope);
}

PrimFunc drop_unused_allocation(const PrimFunc& func, const Buffer& buffer) {
  class Dropper : public Mutator {
   public:
    explicit Dropper(const Buffer& target) : target_(target) {}
    using Mutator::mutate;
    PrimExpr mutate(const PrimExpr& e) override { return e; }
    Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
      Stmt result = Mutator::mutate_Block(node, self);
      const auto* block = as<BlockNode>(result);
      std::vector<Buffer> kept;
      for (const Buffer& b : block->alloc_buffers)
        if (b.get() != target_.get()) kept.push_back(b);
      if (kept.size() == block->alloc_buffers.size()) return result;
      if (uses_buffer(block->body, target_) || (block->init && uses_buffer(block->init, target_)))
        return result;
      return BlockNode::make(block->iter_vars, block->reads, block->writes, block->name,
                             block->body, block->init, std::move(kept), block->annotations);
    }

   private:
    const Buffer& target_;
  };
  return func->with_body(Dropper(buffer).mutate(func->body));
}

std::vector<BufferRegion> detect_reads(const Block& block) { return detect(block, false); }
std::vector<BufferRegion> detect_writes(const Block& block) { return detect(block, true); }

Interval eval_interval(const PrimExpr& e, const RelaxMap& relaxed) {
  return IntervalEvaluator(relaxed).eval(e);
}

void IndexSimplifier::bind(const Var& var, const Range& range) { analyzer_.bind(var, range); }

PrimExpr IndexSimplifier::simplify(const PrimExpr& e) { return analyzer_.simplify(e); }

bool IndexSimplifier::can_prove(const PrimExpr& cond) { return analyzer_.can_prove(cond); }

std::optional<int64_t> IndexSimplifier::const_difference(const PrimExpr& a, const PrimExpr& b) {
  return as_const_int(analyzer_.simplify(b - a));
}

std::optional<int64_t> IndexSimplifier::const_upper_bound(const PrimExpr& e) {
  IntBound bound = analyzer_.const_int_bound(e);
  if (bound.max_value == std::numeric_limits<int64_t>::max()) return std::nullopt;
  return bound.max_value;
}

std::vector<Range> region_hull(const Buffer& buffer, const std::vector<Range>& a,
                               const std::vector<Range>& b, IndexSimplifier& simplifier) {
  std::vector<Range> out;
  for (size_t d = 0; d < a.size(); ++d) {
    PrimExpr a_end = a[d].min + a[d].extent, b_end = b[d].min + b[d].extent;
    auto min_gap = simplifier.const_difference(a[d].min, b[d].min);
    auto end_gap = simplifier.const_difference(a_end, b_end);
    if (!min_gap || !end_gap) {
      out.push_back({make_int(0), buffer->shape[d]});
      continue;
    }
    PrimExpr lo = *min_gap >= 0 ? a[d].min : b[d].min;
    PrimExpr end = *end_gap >= 0 ? b_end : a_end;
    out.push_back({lo, simplifier.simplify(end - lo)});
  }
  return out;
}

std::vector<Range> relax_region(const BufferRegion& access, const BlockRealize& realize,
                                const RelaxMap& relaxed, IndexSimplifier& simplifier) {
  VarMap bindings;
  const Block& block = realize->block;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    bindings[block->iter_vars[i].var.get()] = realize->iter_values[i];
  std::vector<Range> out;
  for (size_t d = 0; d < access.region.size(); ++d) {
    PrimExpr lo_expr = substitute(access.region[d].min, bindings);
    PrimExpr hi_expr = lo_expr + substitute(access.region[d].extent, bindings) - 1;
    Interval lo = eval_interval(lo_expr, relaxed), hi = eval_interval(hi_expr, relaxed);
    if (!lo.min || !hi.max) {
      out.push_back({make_int(0), access.buffer->shape[d]});
      continue;
    }
    PrimExpr min_value = simplifier.simplify(lo.min);
    out.push_back({min_value, simplifier.simplify(hi.max - min_value + 1)});
  }
  return out;
}

std::string unique_name(const PrimFunc& func, const std::string& base) {
  std::unordered_set<std::string> taken;
  for (const auto& [param, buffer] : func->buffer_map) taken.insert(buffer->name);
  class NameCollector : public Visitor {
   public:
    explicit NameCollector(std::unordered_set<std::string>& names) : names_(names) {}
    void visit_Block(const BlockNode* node) override {
      names_.insert(node->name);
      for (const Buffer& b : node->alloc_buffers) names_.insert(b->name);
      Visitor::visit_Block(node);
    }
    void visit_buffer(const Buffer& b) override { names_.insert(b->name); }

   private:
    std::unordered_set<std::string>& names_;
  };
  NameCollector collector(taken);
  collector.visit(func->body);
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!taken.count(candidate)) return candidate;
  }
}

std::unordered_set<std::string> variable_names(const PrimFunc& func) {
  std::unordered_set<std::string> names;
  pre_order_visit(func->body, nullptr, [&](const Stmt& s) {
    if (const auto* loop = as<ForNode>(s)) names.insert(loop->loop_var->name);
    if (const auto* block = as<BlockNode>(s))
      for (const IterVar& iv : block->iter_vars) names.insert(iv.var->name);
  });
  return names;
}

std::string fresh_name(std::unordered_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

std::unordered_map<const StmtNode*, int> block_order(const Block& scope) {
  std::unordered_map<const StmtNode*, int> order;
  pre_order_visit(scope->body, nullptr, [&](const Stmt& s) {
    if (s->kind == StmtKind::BlockRealize) order.emplace(s.get(), int(order.size()));
  });
  return order;
}

}  // namespace anvil::tir::dataflow
