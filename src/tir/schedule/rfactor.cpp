// rfactor: a reduction split along one of its loops into partial results, one per iteration of
// that loop, and a block that folds the partials into the output.
//
// Why: a reduction along a buffer's contiguous axis (the sum of a row, the mean of a channel
// plane) has no spatial loop whose lanes are contiguous, so it cannot be vectorized as it
// stands. Split the reduction loop by the vector width and factor out the inner part: the
// partial block keeps one accumulator per lane and steps them all with one vector load, and
// the fold adds the lanes at the end of the row. The combiner is reassociated, which is the
// schedule's explicit choice (code generation itself never reassociates).
//
// The block must be out[i] = combine(out[i], value) (under guards), with combine one of + * max
// min, and the loop must be bound to reduction variables only (any loop a split or fuse of
// them left). The partial buffer spans every spatial point; compact_buffer_allocation shrinks
// it to one row of lanes once the fold sits under the spatial loops (reverse_compute_at).
#include <optional>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/region_analysis.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

using namespace dataflow;

namespace {

constexpr const char* kPrimitive = "rfactor";

// The update of a reduction block: the store out[i] = combine(out[i], source), under guards.
struct ReductionUpdate {
  const BufferStoreNode* store = nullptr;
  ReduceKind combiner = ReduceKind::Sum;
  PrimExpr source;
};

std::optional<ReduceKind> combiner_of(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add:
      return ReduceKind::Sum;
    case ExprKind::Mul:
      return ReduceKind::Prod;
    case ExprKind::Max:
      return ReduceKind::Max;
    case ExprKind::Min:
      return ReduceKind::Min;
    default:
      return std::nullopt;
  }
}

bool same_indices(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sched::same_expr(a[i], b[i])) return false;
  return true;
}

std::optional<ReductionUpdate> match_update(const Stmt& body) {
  Stmt s = body;
  while (const auto* branch = as<IfThenElseNode>(s)) {
    if (branch->else_case) return std::nullopt;
    s = branch->then_case;
  }
  const auto* st = as<BufferStoreNode>(s);
  if (!st) return std::nullopt;
  const std::optional<ReduceKind> combiner = combiner_of(st->value->kind);
  const PrimExpr *a = nullptr, *b = nullptr;
  binary_operands(st->value.get(), a, b);
  if (!combiner || !a) return std::nullopt;
  // The accumulator may be either operand of the combiner (all four commute).
  for (const auto& [acc, source] : {std::pair{a, b}, std::pair{b, a}}) {
    const auto* load_node = as<BufferLoadNode>(*acc);
    if (!load_node || load_node->buffer.get() != st->buffer.get() ||
        !same_indices(load_node->indices, st->indices))
      continue;
    bool reads_out = false;
    pre_order_visit(*source, [&](const PrimExpr& e) {
      if (const auto* l = as<BufferLoadNode>(e)) reads_out |= l->buffer.get() == st->buffer.get();
    });
    if (reads_out) return std::nullopt;
    return ReductionUpdate{st, *combiner, *source};
  }
  return std::nullopt;
}

// body with its store (found by match_update) replaced, the guards around it kept.
Stmt replace_update(const Stmt& body, const Stmt& store) {
  if (const auto* branch = as<IfThenElseNode>(body))
    return IfThenElseNode::make(branch->condition, replace_update(branch->then_case, store));
  return store;
}

// A block with its reads and writes found from its body and init.
Block with_detected_regions(const Block& block) {
  return BlockNode::make(block->iter_vars, detect_reads(block), detect_writes(block), block->name,
                         block->body, block->init, block->alloc_buffers, block->annotations);
}

}  // namespace

BlockRV Schedule::rfactor(const BlockRV& block_rv, const LoopRV& loop_rv) {
  BlockSite site = find_block(func_, block_rv.name, kPrimitive);
  const BlockRealize& realize = site.realize;
  const Block& block = realize->block;
  if (!block->init)
    throw_error(kPrimitive, ": block '", block->name,
                "' has no init, so it is not a reduction block");
  std::optional<ReductionUpdate> update = match_update(block->body);
  if (!update || block->writes.size() != 1)
    throw_error(kPrimitive, ": block '", block->name,
                "' is not one store out[i] = combine(out[i], value) with combine one of + * max "
                "min");
  if (!loop_rv.var) throw_error(kPrimitive, ": the loop is not set");
  const size_t pos = sched::loop_position(func_, site.loops, loop_rv.var, block->name, kPrimitive);
  const For& loop = site.loops[pos];

  // The loops the reduction variables are bound to. Each becomes a variable of the partial
  // block, bound to the loop itself: the factored loop a spatial one (the lane), the others
  // reductions; the reduction variables become their bindings in those variables. For one
  // spatial point and lane the partial block then folds exactly the points the loop nest
  // gives that lane.
  for (const IterVar& iv : block->iter_vars)
    if (iv.kind == IterKind::Opaque)
      throw_error(kPrimitive, ": block '", block->name, "' has opaque iteration variable '",
                  iv.var->name, "'");
  std::vector<size_t> reduce_loops;
  for (size_t k = 0; k < site.loops.size(); ++k) {
    const Var& v = site.loops[k]->loop_var;
    bool by_reduce = false, by_spatial = false;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (!sched::uses(realize->iter_values[i], v)) continue;
      (block->iter_vars[i].kind == IterKind::Reduce ? by_reduce : by_spatial) = true;
    }
    if (by_spatial && (by_reduce || k == pos))
      throw_error(kPrimitive, ": loop '", v->name, "' is bound to a spatial variable of block '",
                  block->name, "'");
    if (k == pos && !by_reduce)
      throw_error(kPrimitive, ": loop '", v->name, "' is bound to no reduction variable of block '",
                  block->name, "'");
    if (!by_reduce) continue;
    for (const For& other : site.loops)
      if (sched::uses(site.loops[k]->extent, other->loop_var) ||
          sched::uses(site.loops[k]->min, other->loop_var))
        throw_error(kPrimitive, ": the range of loop '", v->name, "' depends on loop '",
                    other->loop_var->name, "'");
    reduce_loops.push_back(k);
  }

  sched::NameSupply names(func_);
  const Buffer& out = update->store->buffer;

  // The partial buffer: one value per spatial point and per iteration of the loop.
  std::vector<PrimExpr> rf_shape;
  for (const IterVar& iv : block->iter_vars)
    if (iv.kind == IterKind::Spatial) rf_shape.push_back(iv.dom.extent);
  rf_shape.push_back(loop->extent);
  Buffer rf = BufferNode::make(unique_name(func_, out->name + "_rf"), out->dtype, rf_shape);

  std::vector<IterVar> rf_iter_vars;
  std::vector<PrimExpr> rf_values, rf_index;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind != IterKind::Spatial) continue;
    rf_iter_vars.push_back(iv);
    rf_values.push_back(realize->iter_values[i]);
    rf_index.push_back(iv.var - iv.dom.min);
  }
  VarMap loop_to_var;
  Var lane_var;
  for (size_t k : reduce_loops) {
    const For& l = site.loops[k];
    Var v = VarNode::make(names.fresh_var_name("v" + l->loop_var->name), l->loop_var->dtype);
    loop_to_var[l->loop_var.get()] = v;
    rf_iter_vars.push_back(
        IterVar{v, Range{l->min, l->extent}, k == pos ? IterKind::Spatial : IterKind::Reduce});
    rf_values.push_back(l->loop_var);
    if (k == pos) lane_var = v;
  }
  rf_index.push_back(lane_var - loop->min);
  VarMap reduce_to_loops;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    if (block->iter_vars[i].kind == IterKind::Reduce)
      reduce_to_loops[block->iter_vars[i].var.get()] =
          substitute(realize->iter_values[i], loop_to_var);
  Stmt rf_update =
      store(rf, reduce_combine(update->combiner, load(rf, rf_index), update->source), rf_index);
  Stmt rf_body = substitute(replace_update(block->body, rf_update), reduce_to_loops);
  Stmt rf_init = store(rf, reduce_identity(update->combiner, out->dtype), rf_index);
  const std::string rf_name = names.fresh_block_name(block->name + "_rf");
  Block rf_block =
      with_detected_regions(BlockNode::make(rf_iter_vars, {}, {}, rf_name, rf_body, rf_init));
  Stmt rf_realize = BlockRealizeNode::make(rf_values, realize->predicate, rf_block);

  // The fold: the original block's name and init, over the spatial points and the lanes.
  VarMap to_fold;
  std::vector<IterVar> fold_iter_vars;
  std::vector<Var> fold_loops;
  std::vector<PrimExpr> fold_rf_index;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::Spatial) continue;
    Var v = VarNode::make(names.fresh_var_name(iv.var->name), iv.var->dtype);
    fold_iter_vars.push_back(IterVar{v, iv.dom, IterKind::Spatial});
    fold_loops.push_back(VarNode::make(names.fresh_var_name(iv.var->name + "_fold")));
    fold_rf_index.push_back(v - iv.dom.min);
    to_fold[iv.var.get()] = v;
  }
  Var fold_lane = VarNode::make(names.fresh_var_name(lane_var->name));
  fold_iter_vars.push_back(IterVar{fold_lane, Range{make_int(0), loop->extent}, IterKind::Reduce});
  fold_loops.push_back(VarNode::make(names.fresh_var_name(loop->loop_var->name + "_fold")));
  fold_rf_index.push_back(fold_lane);
  std::vector<PrimExpr> out_index;
  for (const PrimExpr& i : update->store->indices) out_index.push_back(substitute(i, to_fold));
  Stmt fold_body =
      store(out, reduce_combine(update->combiner, load(out, out_index), load(rf, fold_rf_index)),
            out_index);
  Block fold_block = with_detected_regions(BlockNode::make(
      fold_iter_vars, {}, {}, block->name, fold_body, substitute(block->init, to_fold)));
  std::vector<PrimExpr> fold_values;
  for (size_t d = 0; d < fold_loops.size(); ++d)
    fold_values.push_back(fold_loops[d] + fold_iter_vars[d].dom.min);
  Stmt fold_nest = BlockRealizeNode::make(fold_values, const_true(), fold_block);
  for (size_t d = fold_loops.size(); d-- > 0;)
    fold_nest = for_loop(fold_loops[d], make_int(0), fold_iter_vars[d].dom.extent, fold_nest);

  // The scope: the partial block in place of the block, the fold right after its nest, the
  // partial buffer allocated there.
  std::vector<Stmt> statements;
  for (const Stmt& s : top_level_statements(site.scope->body)) {
    if (s.get() != site.top_level.get()) {
      statements.push_back(s);
      continue;
    }
    statements.push_back(replace_stmts(s, {{realize.get(), rf_realize}}));
    statements.push_back(fold_nest);
  }
  func_ = replace_scope_body(func_, site.scope, std::move(statements), rf);
  return BlockRV{rf_name};
}

}  // namespace anvil::tir
