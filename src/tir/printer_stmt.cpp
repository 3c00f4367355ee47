// Statements of the tensor IR text: loops (T.grid for perfect serial nests),
// blocks with their axes, regions and init, and the scoping statements
// (LetStmt, AssertStmt, Allocate) that print as a plain line when they end
// their sequence and as a `with` block otherwise.
#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/structural_equal.h"
#include "tir/text_lexer.h"
#include "tir/text_printer.h"

namespace anvil::tir::text {

namespace {

// min is a zero of extent's type, so the text can give the extent alone.
bool starts_at_zero(const Range& range) {
  return is_zero(range.min) && as<IntImmNode>(range.min) &&
         range.min.dtype() == range.extent.dtype();
}

bool is_unit_extent(const Range& range) {
  return as<IntImmNode>(range.extent) && is_one(range.extent) &&
         range.extent.dtype() == range.min.dtype();
}

const char* iter_kind_name(IterKind kind) {
  switch (kind) {
    case IterKind::Spatial:
      return "spatial";
    case IterKind::Reduce:
      return "reduce";
    case IterKind::Opaque:
      return "opaque";
  }
  return "?";
}

bool is_grid_loop(const ForNode* loop) {
  return loop->for_kind == ForKind::Serial && loop->annotations.empty() &&
         starts_at_zero(Range{loop->min, loop->extent});
}

}  // namespace

void TirPrinter::line(int indent, const std::string& text) {
  out_.append(size_t(indent) * 4, ' ');
  out_ += text;
  out_ += '\n';
}

std::string TirPrinter::range_stop(const Range& range) {
  const auto* min = as<IntImmNode>(range.min);
  const auto* extent = as<IntImmNode>(range.extent);
  if (min && extent && min->dtype == extent->dtype)
    return expr(
        IntImmNode::make(min->dtype, int64_t(uint64_t(min->value) + uint64_t(extent->value))));
  return expr_at(range.min, kPrecAdd) + " + " + expr_at(range.extent, kPrecAdd + 1);
}

std::string TirPrinter::dom_text(const Range& range) {
  if (starts_at_zero(range)) return expr(range.extent);
  return "(" + expr(range.min) + ", " + range_stop(range) + ")";
}

std::string TirPrinter::region_text(const BufferRegion& region) {
  std::string text = buffer_name(region.buffer.get()) + "[";
  if (region.region.empty()) text += "()";
  for (size_t i = 0; i < region.region.size(); ++i) {
    const Range& r = region.region[i];
    if (i) text += ", ";
    if (is_unit_extent(r))
      text += expr(r.min);
    else
      text += expr(r.min) + ":" + (starts_at_zero(r) ? expr(r.extent) : range_stop(r));
  }
  return text + "]";
}

std::string TirPrinter::annotations_text(const Annotations& annotations) {
  std::string text = "{";
  for (const auto& [key, value] : annotations) {
    if (text.size() > 1) text += ", ";
    text += quote_string(key) + ": ";
    if (const auto* i = std::get_if<int64_t>(&value))
      text += std::to_string(*i);
    else
      text += quote_string(std::get<std::string>(value));
  }
  return text + "}";
}

std::string TirPrinter::buffer_args(const BufferNode* buffer, bool with_data) {
  auto tuple = [&](const std::vector<PrimExpr>& items) {
    std::string text = "(";
    for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + expr(items[i]);
    return text + (items.size() == 1 ? ",)" : ")");
  };
  std::string text = tuple(buffer->shape) + ", " + quote_string(buffer->dtype.to_string());
  if (with_data) text += ", data=" + var_name(buffer->data.get());
  if (!buffer->strides.empty()) text += ", strides=" + tuple(buffer->strides);
  if (!(as<IntImmNode>(buffer->elem_offset) && is_zero(buffer->elem_offset) &&
        buffer->elem_offset.dtype() == kIndexType))
    text += ", elem_offset=" + expr(buffer->elem_offset);
  if (buffer->scope != "global") text += ", scope=" + quote_string(buffer->scope);
  if (buffer->data_alignment != 64) text += ", align=" + std::to_string(buffer->data_alignment);
  return text;
}

// ---------------------------------------------------------------- buffer views

void TirPrinter::declare_view(const BufferNode* buffer, int indent) {
  if (buffer_names_.count(buffer) || declared_buffers_.count(buffer)) return;
  declared_buffers_.insert(buffer);
  for (const PrimExpr& d : buffer->shape) declare_views_in(d, indent);
  for (const PrimExpr& s : buffer->strides) declare_views_in(s, indent);
  declare_views_in(buffer->elem_offset, indent);
  bool owns_data = !var_names_.count(buffer->data.get());
  std::string args = buffer_args(buffer, !owns_data);
  line(indent, define_buffer(buffer) + " = T.Buffer(" + args + ")");
}

void TirPrinter::declare_views_in(const PrimExpr& e, int indent) {
  if (!e) return;
  pre_order_visit(e, [&](const PrimExpr& x) {
    if (const auto* load = as<BufferLoadNode>(x)) declare_view(load->buffer.get(), indent);
  });
}

// Declares the buffers that s's own line (not its nested statements) uses.
void TirPrinter::declare_views(const Stmt& s, int indent) {
  auto in = [&](const PrimExpr& e) { declare_views_in(e, indent); };
  auto block_header = [&](const BlockNode* block) {
    for (const IterVar& iv : block->iter_vars) {
      in(iv.dom.min);
      in(iv.dom.extent);
    }
    std::unordered_set<const BufferNode*> own(block->alloc_buffers.size());
    for (const Buffer& b : block->alloc_buffers) {
      own.insert(b.get());
      for (const PrimExpr& d : b->shape) in(d);
    }
    for (const auto* regions : {&block->reads, &block->writes}) {
      for (const BufferRegion& r : *regions) {
        if (!own.count(r.buffer.get())) declare_view(r.buffer.get(), indent);
        for (const Range& range : r.region) {
          in(range.min);
          in(range.extent);
        }
      }
    }
  };
  switch (s->kind) {
    case StmtKind::LetStmt:
      return in(as<LetStmtNode>(s)->value);
    case StmtKind::AssertStmt:
      return in(as<AssertStmtNode>(s)->condition);
    case StmtKind::BufferStore: {
      const auto* n = as<BufferStoreNode>(s);
      declare_view(n->buffer.get(), indent);
      in(n->value);
      for (const PrimExpr& i : n->indices) in(i);
      return;
    }
    case StmtKind::Allocate: {
      const auto* n = as<AllocateNode>(s);
      for (const PrimExpr& d : n->buffer->shape) in(d);
      return;
    }
    case StmtKind::For:
      in(as<ForNode>(s)->min);
      return in(as<ForNode>(s)->extent);
    case StmtKind::IfThenElse:
      return in(as<IfThenElseNode>(s)->condition);
    case StmtKind::Evaluate:
      return in(as<EvaluateNode>(s)->value);
    case StmtKind::Block:
      return block_header(as<BlockNode>(s));
    case StmtKind::BlockRealize: {
      const auto* n = as<BlockRealizeNode>(s);
      for (const PrimExpr& v : n->iter_values) in(v);
      in(n->predicate);
      return block_header(n->block.get());
    }
    case StmtKind::SeqStmt:
      return;
  }
}

// ---------------------------------------------------------------- statements

void TirPrinter::stmt(const Stmt& s, int indent) {
  ANVIL_ICHECK(s, "printing a null statement");
  if (const auto* seq = as<SeqStmtNode>(s)) {
    for (size_t i = 0; i < seq->seq.size(); ++i)
      seq_item(seq->seq[i], indent, i + 1 == seq->seq.size());
    return;
  }
  seq_item(s, indent, true);
}

void TirPrinter::body(const Stmt& s, int indent) { stmt(s, indent); }

void TirPrinter::seq_item(const Stmt& s, int indent, bool last) {
  ANVIL_ICHECK(s, "printing a null statement");
  if (function_mode_) declare_views(s, indent);
  switch (s->kind) {
    case StmtKind::SeqStmt: {
      const auto* seq = as<SeqStmtNode>(s);
      for (size_t i = 0; i < seq->seq.size(); ++i)
        seq_item(seq->seq[i], indent, last && i + 1 == seq->seq.size());
      return;
    }
    case StmtKind::LetStmt: {
      const auto* n = as<LetStmtNode>(s);
      std::string value = expr(n->value);
      std::string name = define_var(n->var.get());
      if (last) {
        line(indent, name + ": " + dtype_ref(n->var->dtype) + " = " + value);
        return stmt(n->body, indent);
      }
      line(indent, "with T.LetStmt(" + value + ") as " + name + ":");
      return stmt(n->body, indent + 1);
    }
    case StmtKind::AssertStmt: {
      const auto* n = as<AssertStmtNode>(s);
      std::string args = expr(n->condition) + ", " + quote_string(n->message);
      if (last) {
        line(indent, "assert " + args);
        return stmt(n->body, indent);
      }
      line(indent, "with T.Assert(" + args + "):");
      return stmt(n->body, indent + 1);
    }
    case StmtKind::BufferStore: {
      const auto* n = as<BufferStoreNode>(s);
      std::string text = buffer_name(n->buffer.get()) + "[";
      if (n->indices.empty()) text += "()";
      for (size_t i = 0; i < n->indices.size(); ++i) text += (i ? ", " : "") + expr(n->indices[i]);
      return line(indent, text + "] = " + expr(n->value));
    }
    case StmtKind::Allocate: {
      const auto* n = as<AllocateNode>(s);
      bool owns_data = !var_names_.count(n->buffer->data.get());
      std::string args = buffer_args(n->buffer.get(), !owns_data);
      std::string name = define_buffer(n->buffer.get());
      if (last) {
        line(indent, name + " = T.decl_buffer(" + args + ")");
        return stmt(n->body, indent);
      }
      line(indent, "with T.decl_buffer(" + args + ") as " + name + ":");
      return stmt(n->body, indent + 1);
    }
    case StmtKind::For:
      return for_loop(as<ForNode>(s), indent);
    case StmtKind::IfThenElse: {
      const auto* n = as<IfThenElseNode>(s);
      line(indent, "if " + expr(n->condition) + ":");
      body(n->then_case, indent + 1);
      if (n->else_case) {
        line(indent, "else:");
        body(n->else_case, indent + 1);
      }
      return;
    }
    case StmtKind::Evaluate:
      return line(indent, "T.evaluate(" + expr(as<EvaluateNode>(s)->value) + ")");
    case StmtKind::Block:
      return block_realize(nullptr, as<BlockNode>(s), indent);
    case StmtKind::BlockRealize: {
      const auto* n = as<BlockRealizeNode>(s);
      return block_realize(n, n->block.get(), indent);
    }
  }
}

void TirPrinter::for_loop(const ForNode* loop, int indent) {
  std::vector<const ForNode*> group{loop};
  if (is_grid_loop(loop)) {
    while (const auto* inner = as<ForNode>(group.back()->body)) {
      if (!is_grid_loop(inner)) break;
      bool uses_group = uses_var(inner->extent, [&](const VarNode* v) {
        for (const ForNode* g : group)
          if (g->loop_var.get() == v) return true;
        return false;
      });
      if (uses_group) break;
      group.push_back(inner);
    }
  }
  if (group.size() >= 2) {
    std::string extents;
    for (const ForNode* g : group) {
      if (function_mode_ && g != loop) declare_views_in(g->extent, indent);
      extents += (extents.empty() ? "" : ", ") + expr(g->extent);
    }
    std::string names;
    for (const ForNode* g : group)
      names += (names.empty() ? "" : ", ") + define_var(g->loop_var.get());
    line(indent, "for " + names + " in T.grid(" + extents + "):");
  } else {
    Range range{loop->min, loop->extent};
    std::string args =
        starts_at_zero(range) ? expr(loop->extent) : expr(loop->min) + ", " + range_stop(range);
    std::string iter;
    if (loop->for_kind == ForKind::Serial && loop->annotations.empty()) {
      iter = "range(" + args + ")";
    } else {
      iter = std::string("T.") + for_kind_name(loop->for_kind) + "(" + args;
      if (!loop->annotations.empty())
        iter += ", annotations=" + annotations_text(loop->annotations);
      iter += ")";
    }
    line(indent, "for " + define_var(loop->loop_var.get()) + " in " + iter + ":");
  }
  open_loops_.insert(open_loops_.end(), group.begin(), group.end());
  body(group.back()->body, indent + 1);
  open_loops_.resize(open_loops_.size() - group.size());
}

void TirPrinter::block_axes(const BlockRealizeNode* realize, const BlockNode* block, int indent) {
  auto remap_loop = [&](size_t i) -> bool {
    if (!realize) return false;
    const IterVar& iv = block->iter_vars[i];
    const auto* value = as<VarNode>(realize->iter_values[i]);
    if (!value || iv.kind == IterKind::Opaque || iv.var->dtype != value->dtype) return false;
    for (auto it = open_loops_.rbegin(); it != open_loops_.rend(); ++it) {
      if ((*it)->loop_var.get() != value) continue;
      return structural_equal(iv.dom.min, (*it)->min) &&
             structural_equal(iv.dom.extent, (*it)->extent);
    }
    return false;
  };
  size_t n = block->iter_vars.size();
  for (size_t i = 0; i < n;) {
    size_t run = i;
    while (run < n && remap_loop(run)) ++run;
    if (run - i >= 2) {
      std::string kinds, values, names;
      for (size_t k = i; k < run; ++k) {
        kinds += block->iter_vars[k].kind == IterKind::Spatial ? "S" : "R";
        values += (k > i ? ", " : "") + expr(realize->iter_values[k]);
      }
      for (size_t k = i; k < run; ++k)
        names += (k > i ? ", " : "") + define_var(block->iter_vars[k].var.get());
      line(indent, names + " = T.axis.remap(\"" + kinds + "\", [" + values + "])");
      i = run;
      continue;
    }
    const IterVar& iv = block->iter_vars[i];
    std::string args = dom_text(iv.dom);
    if (realize) args += ", " + expr(realize->iter_values[i]);
    line(indent,
         define_var(iv.var.get()) + " = T.axis." + iter_kind_name(iv.kind) + "(" + args + ")");
    ++i;
  }
}

void TirPrinter::block_realize(const BlockRealizeNode* realize, const BlockNode* block,
                               int indent) {
  line(indent,
       "with T.block(" + quote_string(block->name) + (realize ? "" : ", no_realize=True") + "):");
  int in = indent + 1;
  block_axes(realize, block, in);
  if (realize && !(is_one(realize->predicate) && realize->predicate.dtype() == DataType::boolean()))
    line(in, "T.where(" + expr(realize->predicate) + ")");
  for (const Buffer& b : block->alloc_buffers) {
    bool owns_data = !var_names_.count(b->data.get());
    std::string args = buffer_args(b.get(), !owns_data);
    line(in, define_buffer(b.get()) + " = T.alloc_buffer(" + args + ")");
  }
  auto regions = [&](const std::vector<BufferRegion>& list) {
    std::string text;
    for (const BufferRegion& r : list) text += (text.empty() ? "" : ", ") + region_text(r);
    return text;
  };
  line(in, "T.reads(" + regions(block->reads) + ")");
  line(in, "T.writes(" + regions(block->writes) + ")");
  if (!block->annotations.empty())
    line(in, "T.block_attr(" + annotations_text(block->annotations) + ")");
  if (block->init) {
    line(in, "with T.init():");
    body(block->init, in + 1);
  }
  body(block->body, in);
}

}  // namespace anvil::tir::text
