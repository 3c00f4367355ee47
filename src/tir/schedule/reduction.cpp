// decompose_reduction: the init of a reduction block becomes a block of its
// own, run by a copy of the spatial loops just before the reduction's loops,
// so the update block is a plain accumulation that later primitives
// (tensorize, vectorize of the spatial loops) can treat uniformly.
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

namespace {

constexpr const char* kPrimitive = "decompose_reduction";

// The first reduction variable of block whose value uses var, or null.
const IterVar* reduce_var_using(const BlockRealize& realize, const Var& var) {
  const Block& block = realize->block;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    if (block->iter_vars[i].kind == IterKind::Reduce && sched::uses(realize->iter_values[i], var))
      return &block->iter_vars[i];
  return nullptr;
}

}  // namespace

BlockRV Schedule::decompose_reduction(const BlockRV& block_rv, const LoopRV& loop_rv) {
  sched::BlockLocation where = sched::find_block(func_, block_rv.name, kPrimitive);
  const Block& block = where.block;
  const BlockRealize& realize = where.realize;
  if (!block->init)
    throw_error(kPrimitive, ": block '", block->name,
                "' has no init, so it is not a reduction block");
  if (!loop_rv.var) throw_error(kPrimitive, ": the loop is not set");
  size_t pos = sched::loop_position(func_, where.loops, loop_rv.var, where.block->name, kPrimitive);
  for (const IterVar& iv : block->iter_vars)
    if (iv.kind == IterKind::Opaque)
      throw_error(kPrimitive, ": block '", block->name, "' has opaque iteration variable '",
                  iv.var->name, "', so its init cannot be separated");
  for (size_t k = 0; k < pos; ++k)
    if (const IterVar* iv = reduce_var_using(realize, where.loops[k]->loop_var))
      throw_error(kPrimitive, ": loop '", where.loops[k]->loop_var->name, "' above loop '",
                  loop_rv.var->name, "' is bound to reduction variable '", iv->var->name,
                  "' of block '", block->name,
                  "'; the init must be placed above every reduction loop");

  // The init block: the spatial iteration variables only, same bindings.
  sched::NameSupply names(func_);
  VarMap var_map;
  std::vector<IterVar> init_iter_vars;
  std::vector<PrimExpr> init_values;
  std::vector<Var> reduce_vars;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind == IterKind::Reduce) {
      reduce_vars.push_back(iv.var);
      continue;
    }
    Var fresh = VarNode::make(names.fresh_var_name(iv.var->name + "_init"), iv.var->dtype);
    var_map[iv.var.get()] = fresh;
    init_iter_vars.push_back(IterVar{fresh, iv.dom, IterKind::Spatial});
    init_values.push_back(realize->iter_values[i]);
  }
  for (const Var& rv : reduce_vars) {
    bool in_writes = false;
    for (const BufferRegion& w : block->writes)
      for (const Range& r : w.region)
        in_writes = in_writes || sched::uses(r.min, rv) || sched::uses(r.extent, rv);
    if (sched::uses(block->init, rv) || in_writes)
      throw_error(kPrimitive, ": the init or the written region of block '", block->name,
                  "' depends on reduction variable '", rv->name, "'");
  }
  std::vector<BufferRegion> init_writes;
  for (const BufferRegion& w : block->writes) {
    BufferRegion region{w.buffer, {}};
    for (const Range& r : w.region)
      region.region.push_back(Range{substitute(r.min, var_map), substitute(r.extent, var_map)});
    init_writes.push_back(region);
  }
  std::string init_name = names.fresh_block_name(block->name + "_init");
  Block init_block =
      BlockNode::make(init_iter_vars, {}, init_writes, init_name, substitute(block->init, var_map));

  // Loops from `loop` down are copied when the init's bindings use them;
  // predicate terms over the loops left behind (reduction loops) are dropped.
  std::unordered_set<const VarNode*> copied, dropped;
  for (size_t k = pos; k < where.loops.size(); ++k) {
    const Var& v = where.loops[k]->loop_var;
    bool used = false;
    for (const PrimExpr& value : init_values) used = used || sched::uses(value, v);
    (used ? copied : dropped).insert(v.get());
  }
  std::vector<PrimExpr> kept_terms;
  for (const PrimExpr& term : sched::split_conjunction(realize->predicate))
    if (!uses_var(term, [&](const VarNode* v) { return dropped.count(v) > 0; }))
      kept_terms.push_back(term);
  Stmt nest = BlockRealizeNode::make(init_values, sched::conjoin(kept_terms), init_block);
  VarMap loop_map;
  for (size_t k = where.loops.size(); k-- > pos;) {
    const For& loop = where.loops[k];
    if (!copied.count(loop->loop_var.get())) continue;
    Var fresh =
        VarNode::make(names.fresh_var_name(loop->loop_var->name + "_init"), loop->loop_var->dtype);
    loop_map[loop->loop_var.get()] = fresh;
    if (uses_var(loop->min, [&](const VarNode* v) { return dropped.count(v) > 0; }) ||
        uses_var(loop->extent, [&](const VarNode* v) { return dropped.count(v) > 0; }))
      throw_error(kPrimitive, ": the range of loop '", loop->loop_var->name,
                  "' depends on a reduction loop, so it cannot be copied for the init");
    nest = ForNode::make(fresh, loop->min, loop->extent, loop->for_kind, nest, loop->annotations);
  }
  nest = substitute(nest, loop_map);

  const For& outer = where.loops[pos];
  Stmt update = sched::replace_stmts(Stmt(outer), {{block.get(), sched::without_init(block)}});
  func_ = sched::replace_stmt(func_, outer, seq_stmt({nest, update}));
  return BlockRV{init_name};
}

}  // namespace anvil::tir
