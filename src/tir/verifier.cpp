// Well-formedness of PrimFuncs: scoping of variables and buffers, unique
// block names, matching block bindings and buffer ranks, and the extra rules
// of the lowered form.
#include "anvil/tir/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"

namespace anvil::tir {

namespace {

struct Violation {
  std::string message;
};

class Checker {
 public:
  Checker(const PrimFuncNode& func, IrForm form) : func_(func), form_(form) {}

  void run() {
    for (const Var& p : func_.params) define(p.get());
    for (const auto& [param, buffer] : func_.buffer_map) {
      auto define_vars_in = [&](const PrimExpr& e) {
        if (!e) return;
        pre_order_visit(e, [&](const PrimExpr& x) {
          if (const auto* v = as<VarNode>(x); v && !defined(v)) define(v);
        });
      };
      for (const PrimExpr& d : buffer->shape) define_vars_in(d);
      for (const PrimExpr& s : buffer->strides) define_vars_in(s);
      define_vars_in(buffer->elem_offset);
      define_buffer(buffer.get());
    }
    stmt(func_.body);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string name = func_.global_symbol();
    throw Violation{str_cat("tir verifier: ", name.empty() ? "PrimFunc" : "@" + name, ": ", what)};
  }

  bool defined(const VarNode* v) const {
    auto it = defined_.find(v);
    return it != defined_.end() && it->second > 0;
  }
  void define(const VarNode* v) { ++defined_[v]; }
  void undefine(const VarNode* v) { --defined_[v]; }
  void define_buffer(const BufferNode* b) {
    ++buffers_[b];
    define(b->data.get());
  }
  void undefine_buffer(const BufferNode* b) {
    --buffers_[b];
    undefine(b->data.get());
  }

  void buffer_access(const Buffer& buffer, size_t num_indices, const char* what) {
    auto it = buffers_.find(buffer.get());
    bool known = it != buffers_.end() && it->second > 0;
    if (!known && !defined(buffer->data.get()))
      fail(str_cat(what, " of buffer '", buffer->name,
                   "', which is neither a parameter nor allocated in scope"));
    if (!known) {
      // A view: its shape must make sense where it is used.
      for (const PrimExpr& d : buffer->shape) expr(d);
      for (const PrimExpr& s : buffer->strides) expr(s);
      expr(buffer->elem_offset);
    }
    if (num_indices != buffer->shape.size())
      fail(str_cat(what, " of buffer '", buffer->name, "' with ", num_indices,
                   " indices, but it has ", buffer->shape.size(), " dimensions"));
    if (form_ == IrForm::Lowered && num_indices != 1)
      fail(str_cat(what, " of buffer '", buffer->name, "' is ", num_indices,
                   "-dimensional in the lowered form"));
  }

  void expr(const PrimExpr& e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Var: {
        const auto* v = as<VarNode>(e);
        if (!defined(v)) fail("variable '" + v->name + "' is used outside its definition's scope");
        return;
      }
      case ExprKind::BufferLoad: {
        const auto* n = as<BufferLoadNode>(e);
        buffer_access(n->buffer, n->indices.size(), "load");
        for (const PrimExpr& i : n->indices) expr(i);
        return;
      }
      case ExprKind::Let: {
        const auto* n = as<LetNode>(e);
        expr(n->value);
        define(n->var.get());
        expr(n->body);
        undefine(n->var.get());
        return;
      }
      case ExprKind::Reduce: {
        const auto* n = as<ReduceNode>(e);
        if (form_ == IrForm::Lowered) fail("a Reduce expression in the lowered form");
        for (const IterVar& iv : n->axis) {
          expr(iv.dom.min);
          expr(iv.dom.extent);
          define(iv.var.get());
        }
        expr(n->source);
        expr(n->condition);
        for (const IterVar& iv : n->axis) undefine(iv.var.get());
        return;
      }
      default:
        break;
    }
    // Other kinds have only sub-expressions; walk them one level down.
    struct Children : Visitor {
      Checker* self;
      explicit Children(Checker* s) : self(s) {}
      void visit(const PrimExpr& x) override { self->expr(x); }
    } children(this);
    children.Visitor::visit(e);
  }

  void block(const BlockNode* block, const BlockRealizeNode* realize) {
    if (form_ == IrForm::Lowered) fail("block '" + block->name + "' in the lowered form");
    if (!block_names_.insert(block->name).second)
      fail("two blocks are named '" + block->name + "'");
    if (realize) {
      if (realize->iter_values.size() != block->iter_vars.size())
        fail("block '" + block->name + "' is bound to the wrong number of values");
      for (size_t i = 0; i < realize->iter_values.size(); ++i) {
        expr(realize->iter_values[i]);
        if (realize->iter_values[i].dtype() != block->iter_vars[i].var->dtype)
          fail(str_cat("block '", block->name, "' binds ", block->iter_vars[i].var->name,
                       " of type ", block->iter_vars[i].var->dtype.to_string(),
                       " to a value of type ", realize->iter_values[i].dtype().to_string()));
      }
      expr(realize->predicate);
      if (realize->predicate.dtype() != DataType::boolean())
        fail("block '" + block->name + "' has a predicate that is not a bool");
    }
    for (const IterVar& iv : block->iter_vars) {
      expr(iv.dom.min);
      expr(iv.dom.extent);
    }
    for (const IterVar& iv : block->iter_vars) define(iv.var.get());
    for (const Buffer& b : block->alloc_buffers) {
      for (const PrimExpr& d : b->shape) expr(d);
      define_buffer(b.get());
    }
    for (const auto* list : {&block->reads, &block->writes}) {
      for (const BufferRegion& r : *list) {
        buffer_access(r.buffer, r.region.size(), "region");
        for (const Range& range : r.region) {
          expr(range.min);
          expr(range.extent);
        }
      }
    }
    stmt(block->init);
    stmt(block->body);
    for (const Buffer& b : block->alloc_buffers) undefine_buffer(b.get());
    for (const IterVar& iv : block->iter_vars) undefine(iv.var.get());
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::LetStmt: {
        const auto* n = as<LetStmtNode>(s);
        expr(n->value);
        define(n->var.get());
        stmt(n->body);
        undefine(n->var.get());
        return;
      }
      case StmtKind::AssertStmt:
        expr(as<AssertStmtNode>(s)->condition);
        return stmt(as<AssertStmtNode>(s)->body);
      case StmtKind::BufferStore: {
        const auto* n = as<BufferStoreNode>(s);
        buffer_access(n->buffer, n->indices.size(), "store");
        expr(n->value);
        for (const PrimExpr& i : n->indices) expr(i);
        return;
      }
      case StmtKind::Allocate: {
        const auto* n = as<AllocateNode>(s);
        for (const PrimExpr& d : n->buffer->shape) expr(d);
        define_buffer(n->buffer.get());
        stmt(n->body);
        undefine_buffer(n->buffer.get());
        return;
      }
      case StmtKind::For: {
        const auto* n = as<ForNode>(s);
        expr(n->min);
        expr(n->extent);
        define(n->loop_var.get());
        stmt(n->body);
        undefine(n->loop_var.get());
        return;
      }
      case StmtKind::IfThenElse: {
        const auto* n = as<IfThenElseNode>(s);
        expr(n->condition);
        stmt(n->then_case);
        return stmt(n->else_case);
      }
      case StmtKind::SeqStmt:
        for (const Stmt& x : as<SeqStmtNode>(s)->seq) stmt(x);
        return;
      case StmtKind::Evaluate:
        return expr(as<EvaluateNode>(s)->value);
      case StmtKind::Block:
        return block(as<BlockNode>(s), nullptr);
      case StmtKind::BlockRealize: {
        const auto* n = as<BlockRealizeNode>(s);
        return block(n->block.get(), n);
      }
    }
  }

  const PrimFuncNode& func_;
  IrForm form_;
  std::unordered_map<const VarNode*, int> defined_;
  std::unordered_map<const BufferNode*, int> buffers_;
  std::unordered_set<std::string> block_names_;
};

}  // namespace

std::string find_ir_violation(const PrimFunc& func, IrForm form) {
  ANVIL_ICHECK(func, "verifying a null PrimFunc");
  try {
    Checker(*func, form).run();
  } catch (const Violation& v) {
    return v.message;
  }
  return "";
}

void verify(const PrimFunc& func, IrForm form) {
  std::string violation = find_ir_violation(func, form);
  ANVIL_ICHECK(violation.empty(), violation);
}

}  // namespace anvil::tir
