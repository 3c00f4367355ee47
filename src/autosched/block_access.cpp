#include "autosched/block_access.h"

#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"

namespace anvil::autosched {
namespace {

// The row-major offset of an access (symbolic row lengths stay symbolic).
tir::PrimExpr row_major_offset(const tir::Buffer& buffer,
                               const std::vector<tir::PrimExpr>& indices) {
  tir::PrimExpr offset = tir::make_int(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (d > 0) offset = offset * (d < buffer->shape.size() ? buffer->shape[d] : tir::make_int(1));
    offset = offset + indices[d];
  }
  return offset;
}

Access analyze(const tir::BlockNode& block, tir::Analyzer& analyzer, const tir::Buffer& buffer,
               const std::vector<tir::PrimExpr>& indices, bool is_write) {
  Access access{buffer.get(), is_write, true, {}};
  for (size_t d = 1; d < indices.size(); ++d)
    access.static_rows &= d < buffer->shape.size() && tir::as_const_int(buffer->shape[d]);
  const tir::PrimExpr offset = row_major_offset(buffer, indices);
  for (const tir::IterVar& iv : block.iter_vars) {
    const tir::VarNode* var = iv.var.get();
    if (!tir::uses_var(offset, [&](const tir::VarNode* v) { return v == var; })) {
      access.steps.push_back(0);
      continue;
    }
    tir::PrimExpr next = tir::substitute(offset, {{var, tir::PrimExpr(iv.var) + 1}});
    access.steps.push_back(tir::as_const_int(analyzer.simplify(next - offset)));
  }
  return access;
}

}  // namespace

std::vector<Access> block_accesses(const tir::BlockNode& block, bool through_guards) {
  tir::Stmt body = block.body;
  while (through_guards && tir::as<tir::IfThenElseNode>(body) &&
         !tir::as<tir::IfThenElseNode>(body)->else_case)
    body = tir::as<tir::IfThenElseNode>(body)->then_case;
  const auto* store = tir::as<tir::BufferStoreNode>(body);
  if (!store) return {};
  // Each var ranges over all but its last value, so that var + 1 stays in range.
  tir::Analyzer analyzer;
  for (const tir::IterVar& iv : block.iter_vars) {
    std::optional<int64_t> extent = tir::as_const_int(iv.dom.extent);
    if (extent && *extent > 1)
      analyzer.bind(iv.var, tir::Range::from_min_extent(iv.dom.min, tir::make_int(*extent - 1)));
    else
      analyzer.bind(iv.var, iv.dom);
  }
  std::vector<Access> accesses = {analyze(block, analyzer, store->buffer, store->indices, true)};
  tir::pre_order_visit(store->value, [&](const tir::PrimExpr& e) {
    if (const auto* load = tir::as<tir::BufferLoadNode>(e))
      accesses.push_back(analyze(block, analyzer, load->buffer, load->indices, false));
  });
  return accesses;
}

bool has_guarded_value(const tir::BlockNode& block) {
  const auto* store = tir::as<tir::BufferStoreNode>(block.body);
  if (!store) return false;
  bool guarded = false;
  tir::pre_order_visit(store->value, [&](const tir::PrimExpr& e) {
    if (tir::as<tir::SelectNode>(e)) guarded = true;
    if (const auto* call = tir::as<tir::CallNode>(e)) guarded |= call->op == "if_then_else";
  });
  return guarded;
}

}  // namespace anvil::autosched
