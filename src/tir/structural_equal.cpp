// Structural equality and hashing of tensor IR. Variables and buffers are
// matched by where they are defined (params, buffer_map, loops, lets, block
// iteration variables, allocations), so two functions that differ only in
// names (or in the identity of their nodes) are equal. Both walks visit the
// tree in the same order, which keeps the hash consistent with equality.
#include "anvil/tir/structural_equal.h"

#include <bit>
#include <cmath>
#include <unordered_map>

#include "anvil/support/error.h"

namespace anvil::tir {

namespace {

uint64_t float_bits(double v) {
  if (std::isnan(v)) return 0x7ff8000000000000ull;
  return std::bit_cast<uint64_t>(v);
}

// ---------------------------------------------------------------- equality

class Comparer {
 public:
  // map_free: a variable or buffer first met outside any definition is
  // matched to its counterpart (a function's free size variables).
  explicit Comparer(bool map_free) : map_free_(map_free) {}

  bool func(const PrimFuncNode& a, const PrimFuncNode& b) {
    if (a.params.size() != b.params.size() || a.buffer_map.size() != b.buffer_map.size() ||
        !(a.func_attrs == b.func_attrs))
      return false;
    for (size_t i = 0; i < a.params.size(); ++i)
      if (!define(a.params[i].get(), b.params[i].get())) return false;
    for (size_t i = 0; i < a.buffer_map.size(); ++i) {
      if (!var(a.buffer_map[i].first.get(), b.buffer_map[i].first.get())) return false;
      if (!define_buffer(a.buffer_map[i].second.get(), b.buffer_map[i].second.get())) return false;
    }
    return stmt(a.body, b.body);
  }

  bool expr(const PrimExpr& a, const PrimExpr& b) {
    if (!a || !b) return !a && !b;
    if (!map_free_ && a.get() == b.get() && vars_.empty() && buffers_.empty()) return true;
    if (a->kind != b->kind || a->dtype != b->dtype) return false;
    switch (a->kind) {
      case ExprKind::IntImm:
        return as<IntImmNode>(a)->value == as<IntImmNode>(b)->value;
      case ExprKind::FloatImm:
        return float_bits(as<FloatImmNode>(a)->value) == float_bits(as<FloatImmNode>(b)->value);
      case ExprKind::StringImm:
        return as<StringImmNode>(a)->value == as<StringImmNode>(b)->value;
      case ExprKind::Var:
        return var(as<VarNode>(a), as<VarNode>(b));
      case ExprKind::Not:
        return expr(as<NotNode>(a)->a, as<NotNode>(b)->a);
      case ExprKind::Select: {
        const auto *x = as<SelectNode>(a), *y = as<SelectNode>(b);
        return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
               expr(x->false_value, y->false_value);
      }
      case ExprKind::Cast:
        return expr(as<CastNode>(a)->value, as<CastNode>(b)->value);
      case ExprKind::BufferLoad: {
        const auto *x = as<BufferLoadNode>(a), *y = as<BufferLoadNode>(b);
        return use_buffer(x->buffer.get(), y->buffer.get()) && exprs(x->indices, y->indices);
      }
      case ExprKind::Ramp: {
        const auto *x = as<RampNode>(a), *y = as<RampNode>(b);
        return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
      }
      case ExprKind::Broadcast: {
        const auto *x = as<BroadcastNode>(a), *y = as<BroadcastNode>(b);
        return x->lanes == y->lanes && expr(x->value, y->value);
      }
      case ExprKind::Let: {
        const auto *x = as<LetNode>(a), *y = as<LetNode>(b);
        return expr(x->value, y->value) && define(x->var.get(), y->var.get()) &&
               expr(x->body, y->body);
      }
      case ExprKind::Call: {
        const auto *x = as<CallNode>(a), *y = as<CallNode>(b);
        return x->op == y->op && x->call_kind == y->call_kind && exprs(x->args, y->args);
      }
      case ExprKind::Reduce: {
        const auto *x = as<ReduceNode>(a), *y = as<ReduceNode>(b);
        return x->combiner == y->combiner && iter_vars(x->axis, y->axis) &&
               expr(x->source, y->source) && expr(x->condition, y->condition);
      }
      default: {
        const PrimExpr *xa, *xb, *ya, *yb;
        binary_operands(a.get(), xa, xb);
        binary_operands(b.get(), ya, yb);
        ANVIL_ICHECK(xa && ya, "unknown expression kind ", expr_kind_name(a->kind));
        return expr(*xa, *ya) && expr(*xb, *yb);
      }
    }
  }

  bool stmt(const Stmt& a, const Stmt& b) {
    if (!a || !b) return !a && !b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case StmtKind::LetStmt: {
        const auto *x = as<LetStmtNode>(a), *y = as<LetStmtNode>(b);
        return expr(x->value, y->value) && define(x->var.get(), y->var.get()) &&
               stmt(x->body, y->body);
      }
      case StmtKind::AssertStmt: {
        const auto *x = as<AssertStmtNode>(a), *y = as<AssertStmtNode>(b);
        return x->message == y->message && expr(x->condition, y->condition) &&
               stmt(x->body, y->body);
      }
      case StmtKind::BufferStore: {
        const auto *x = as<BufferStoreNode>(a), *y = as<BufferStoreNode>(b);
        return use_buffer(x->buffer.get(), y->buffer.get()) && expr(x->value, y->value) &&
               exprs(x->indices, y->indices);
      }
      case StmtKind::Allocate: {
        const auto *x = as<AllocateNode>(a), *y = as<AllocateNode>(b);
        return define_buffer(x->buffer.get(), y->buffer.get()) && stmt(x->body, y->body);
      }
      case StmtKind::For: {
        const auto *x = as<ForNode>(a), *y = as<ForNode>(b);
        return x->for_kind == y->for_kind && x->annotations == y->annotations &&
               expr(x->min, y->min) && expr(x->extent, y->extent) &&
               define(x->loop_var.get(), y->loop_var.get()) && stmt(x->body, y->body);
      }
      case StmtKind::IfThenElse: {
        const auto *x = as<IfThenElseNode>(a), *y = as<IfThenElseNode>(b);
        return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) &&
               stmt(x->else_case, y->else_case);
      }
      case StmtKind::SeqStmt: {
        const auto *x = as<SeqStmtNode>(a), *y = as<SeqStmtNode>(b);
        if (x->seq.size() != y->seq.size()) return false;
        for (size_t i = 0; i < x->seq.size(); ++i)
          if (!stmt(x->seq[i], y->seq[i])) return false;
        return true;
      }
      case StmtKind::Evaluate:
        return expr(as<EvaluateNode>(a)->value, as<EvaluateNode>(b)->value);
      case StmtKind::Block:
        return block(as<BlockNode>(a), as<BlockNode>(b));
      case StmtKind::BlockRealize: {
        const auto *x = as<BlockRealizeNode>(a), *y = as<BlockRealizeNode>(b);
        return exprs(x->iter_values, y->iter_values) && expr(x->predicate, y->predicate) &&
               block(x->block.get(), y->block.get());
      }
    }
    return false;
  }

 private:
  bool exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!expr(a[i], b[i])) return false;
    return true;
  }

  bool iter_vars(const std::vector<IterVar>& a, const std::vector<IterVar>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].kind != b[i].kind || !expr(a[i].dom.min, b[i].dom.min) ||
          !expr(a[i].dom.extent, b[i].dom.extent) || !define(a[i].var.get(), b[i].var.get()))
        return false;
    }
    return true;
  }

  bool regions(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!use_buffer(a[i].buffer.get(), b[i].buffer.get()) ||
          a[i].region.size() != b[i].region.size())
        return false;
      for (size_t k = 0; k < a[i].region.size(); ++k)
        if (!expr(a[i].region[k].min, b[i].region[k].min) ||
            !expr(a[i].region[k].extent, b[i].region[k].extent))
          return false;
    }
    return true;
  }

  bool block(const BlockNode* a, const BlockNode* b) {
    if (a->name != b->name || a->annotations != b->annotations ||
        a->alloc_buffers.size() != b->alloc_buffers.size() ||
        !iter_vars(a->iter_vars, b->iter_vars))
      return false;
    for (size_t i = 0; i < a->alloc_buffers.size(); ++i)
      if (!define_buffer(a->alloc_buffers[i].get(), b->alloc_buffers[i].get())) return false;
    return regions(a->reads, b->reads) && regions(a->writes, b->writes) && stmt(a->init, b->init) &&
           stmt(a->body, b->body);
  }

  void bind(const VarNode* a, const VarNode* b) {
    vars_[a] = b;
    vars_reverse_[b] = a;
  }

  bool define(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype) return false;
    bind(a, b);
    return true;
  }

  bool var(const VarNode* a, const VarNode* b) {
    if (auto it = vars_.find(a); it != vars_.end()) return it->second == b;
    if (vars_reverse_.count(b) || a->dtype != b->dtype) return false;
    if (a != b && !map_free_) return false;
    bind(a, b);
    return true;
  }

  bool buffer_fields(const BufferNode* a, const BufferNode* b, bool defining) {
    if (a->dtype != b->dtype || a->scope != b->scope || a->data_alignment != b->data_alignment ||
        !exprs(a->shape, b->shape) || !exprs(a->strides, b->strides) ||
        !expr(a->elem_offset, b->elem_offset))
      return false;
    const VarNode* da = a->data.get();
    const VarNode* db = b->data.get();
    if (defining && !vars_.count(da) && !vars_reverse_.count(db)) return define(da, db);
    return var(da, db);
  }

  bool define_buffer(const BufferNode* a, const BufferNode* b) {
    if (!buffer_fields(a, b, true)) return false;
    buffers_[a] = b;
    buffers_reverse_[b] = a;
    return true;
  }

  bool use_buffer(const BufferNode* a, const BufferNode* b) {
    if (auto it = buffers_.find(a); it != buffers_.end()) return it->second == b;
    if (buffers_reverse_.count(b)) return false;
    // A view (a flattened buffer sharing a data pointer) is defined where first used; its data
    // pointer is a use, so free buffers of statements must be the same.
    if (!buffer_fields(a, b, false)) return false;
    buffers_[a] = b;
    buffers_reverse_[b] = a;
    return true;
  }

  bool map_free_;
  std::unordered_map<const VarNode*, const VarNode*> vars_, vars_reverse_;
  std::unordered_map<const BufferNode*, const BufferNode*> buffers_, buffers_reverse_;
};

// ---------------------------------------------------------------- hashing

class Hasher {
 public:
  size_t func(const PrimFuncNode& f) {
    mix(f.params.size());
    mix(f.buffer_map.size());
    for (const auto& [key, value] : f.func_attrs.entries) {
      mix(std::hash<std::string>()(key));
      mix(value.index());
    }
    for (const Var& p : f.params) define(p.get());
    for (const auto& [param, buffer] : f.buffer_map) {
      var(param.get());
      define_buffer(buffer.get());
    }
    stmt(f.body);
    return h_;
  }

 private:
  void mix(uint64_t v) { h_ ^= v + 0x9e3779b97f4a7c15ull + (h_ << 6) + (h_ >> 2); }
  void mix_string(const std::string& s) { mix(std::hash<std::string>()(s)); }
  void mix_dtype(DataType t) { mix(uint64_t(t.code) << 32 | uint64_t(t.bits) << 16 | t.lanes); }

  void define(const VarNode* v) {
    mix_dtype(v->dtype);
    var_ids_[v] = next_id_++;
  }
  void var(const VarNode* v) {
    auto it = var_ids_.find(v);
    if (it == var_ids_.end()) it = var_ids_.emplace(v, next_id_++).first;
    mix(it->second);
  }

  void define_buffer(const BufferNode* b) {
    mix_dtype(b->dtype);
    mix_string(b->scope);
    mix(uint64_t(b->data_alignment));
    exprs(b->shape);
    exprs(b->strides);
    expr(b->elem_offset);
    if (!var_ids_.count(b->data.get()))
      define(b->data.get());
    else
      var(b->data.get());
    buffer_ids_[b] = next_id_++;
  }
  void use_buffer(const BufferNode* b) {
    if (!buffer_ids_.count(b)) define_buffer(b);
    mix(buffer_ids_[b]);
  }

  void exprs(const std::vector<PrimExpr>& list) {
    mix(list.size());
    for (const PrimExpr& e : list) expr(e);
  }

  void iter_vars(const std::vector<IterVar>& list) {
    mix(list.size());
    for (const IterVar& iv : list) {
      mix(uint64_t(iv.kind));
      expr(iv.dom.min);
      expr(iv.dom.extent);
      define(iv.var.get());
    }
  }

  void annotations(const Annotations& map) {
    for (const auto& [key, value] : map) {
      mix_string(key);
      if (const auto* i = std::get_if<int64_t>(&value))
        mix(uint64_t(*i));
      else
        mix_string(std::get<std::string>(value));
    }
  }

  void expr(const PrimExpr& e) {
    if (!e) return mix(0x51);
    mix(uint64_t(e->kind) + 1);
    mix_dtype(e.dtype());
    switch (e->kind) {
      case ExprKind::IntImm:
        return mix(uint64_t(as<IntImmNode>(e)->value));
      case ExprKind::FloatImm:
        return mix(float_bits(as<FloatImmNode>(e)->value));
      case ExprKind::StringImm:
        return mix_string(as<StringImmNode>(e)->value);
      case ExprKind::Var:
        return var(as<VarNode>(e));
      case ExprKind::Not:
        return expr(as<NotNode>(e)->a);
      case ExprKind::Select: {
        const auto* n = as<SelectNode>(e);
        expr(n->condition);
        expr(n->true_value);
        return expr(n->false_value);
      }
      case ExprKind::Cast:
        return expr(as<CastNode>(e)->value);
      case ExprKind::BufferLoad: {
        const auto* n = as<BufferLoadNode>(e);
        use_buffer(n->buffer.get());
        return exprs(n->indices);
      }
      case ExprKind::Ramp: {
        const auto* n = as<RampNode>(e);
        mix(uint64_t(n->lanes));
        expr(n->base);
        return expr(n->stride);
      }
      case ExprKind::Broadcast:
        mix(uint64_t(as<BroadcastNode>(e)->lanes));
        return expr(as<BroadcastNode>(e)->value);
      case ExprKind::Let: {
        const auto* n = as<LetNode>(e);
        expr(n->value);
        define(n->var.get());
        return expr(n->body);
      }
      case ExprKind::Call: {
        const auto* n = as<CallNode>(e);
        mix_string(n->op);
        mix(uint64_t(n->call_kind));
        return exprs(n->args);
      }
      case ExprKind::Reduce: {
        const auto* n = as<ReduceNode>(e);
        mix(uint64_t(n->combiner));
        iter_vars(n->axis);
        expr(n->source);
        return expr(n->condition);
      }
      default: {
        const PrimExpr *a, *b;
        binary_operands(e.get(), a, b);
        ANVIL_ICHECK(a, "unknown expression kind ", expr_kind_name(e->kind));
        expr(*a);
        return expr(*b);
      }
    }
  }

  void regions(const std::vector<BufferRegion>& list) {
    mix(list.size());
    for (const BufferRegion& r : list) {
      use_buffer(r.buffer.get());
      mix(r.region.size());
      for (const Range& range : r.region) {
        expr(range.min);
        expr(range.extent);
      }
    }
  }

  void block(const BlockNode* b) {
    mix_string(b->name);
    annotations(b->annotations);
    mix(b->alloc_buffers.size());
    iter_vars(b->iter_vars);
    for (const Buffer& buffer : b->alloc_buffers) define_buffer(buffer.get());
    regions(b->reads);
    regions(b->writes);
    stmt(b->init);
    stmt(b->body);
  }

  void stmt(const Stmt& s) {
    if (!s) return mix(0x57);
    mix(uint64_t(s->kind) + 100);
    switch (s->kind) {
      case StmtKind::LetStmt: {
        const auto* n = as<LetStmtNode>(s);
        expr(n->value);
        define(n->var.get());
        return stmt(n->body);
      }
      case StmtKind::AssertStmt: {
        const auto* n = as<AssertStmtNode>(s);
        mix_string(n->message);
        expr(n->condition);
        return stmt(n->body);
      }
      case StmtKind::BufferStore: {
        const auto* n = as<BufferStoreNode>(s);
        use_buffer(n->buffer.get());
        expr(n->value);
        return exprs(n->indices);
      }
      case StmtKind::Allocate: {
        const auto* n = as<AllocateNode>(s);
        define_buffer(n->buffer.get());
        return stmt(n->body);
      }
      case StmtKind::For: {
        const auto* n = as<ForNode>(s);
        mix(uint64_t(n->for_kind));
        annotations(n->annotations);
        expr(n->min);
        expr(n->extent);
        define(n->loop_var.get());
        return stmt(n->body);
      }
      case StmtKind::IfThenElse: {
        const auto* n = as<IfThenElseNode>(s);
        expr(n->condition);
        stmt(n->then_case);
        return stmt(n->else_case);
      }
      case StmtKind::SeqStmt:
        mix(as<SeqStmtNode>(s)->seq.size());
        for (const Stmt& x : as<SeqStmtNode>(s)->seq) stmt(x);
        return;
      case StmtKind::Evaluate:
        return expr(as<EvaluateNode>(s)->value);
      case StmtKind::Block:
        return block(as<BlockNode>(s));
      case StmtKind::BlockRealize: {
        const auto* n = as<BlockRealizeNode>(s);
        exprs(n->iter_values);
        expr(n->predicate);
        return block(n->block.get());
      }
    }
  }

  uint64_t h_ = 0x243f6a8885a308d3ull;
  uint64_t next_id_ = 1;
  std::unordered_map<const VarNode*, uint64_t> var_ids_;
  std::unordered_map<const BufferNode*, uint64_t> buffer_ids_;
};

}  // namespace

bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  if (!a || !b) return !a && !b;
  return Comparer(true).func(*a, *b);
}

bool structural_equal(const Stmt& a, const Stmt& b) { return Comparer(false).stmt(a, b); }

bool structural_equal(const PrimExpr& a, const PrimExpr& b) { return Comparer(false).expr(a, b); }

size_t structural_hash(const PrimFunc& func) {
  ANVIL_ICHECK(func, "hashing a null PrimFunc");
  return Hasher().func(*func);
}

}  // namespace anvil::tir
