// split, fuse and reorder: primitives that change the loops above blocks but
// not the blocks, which see the change only through their bindings.
#include <algorithm>
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

namespace {

using sched::LoopLocation;

// body with cond added to the predicate of each block realized in it (not
// those nested in other blocks, which the outer predicate already guards).
Stmt guard_blocks(const Stmt& body, const PrimExpr& cond) {
  sched::StmtReplacements replacements;
  for (const BlockRealize& realize : sched::collect_block_realizes(body, /*nested=*/false)) {
    PrimExpr predicate = logical_and(realize->predicate, cond);
    replacements[realize.get()] =
        BlockRealizeNode::make(realize->iter_values, predicate, realize->block);
  }
  return sched::replace_stmts(body, replacements);
}

// The factor as the loop variable's type, checked to be a positive integer.
PrimExpr checked_factor(const PrimExpr& factor, size_t index, const For& loop) {
  const std::string& name = loop->loop_var->name;
  DataType t = factor.dtype();
  if (!(t.is_int() || t.is_uint()) || t.lanes != 1)
    throw_error("split: factor ", index, " of loop '", name, "' is not an integer (it is ",
                t.to_string(), ")");
  if (auto v = as_const_int(factor); v && *v <= 0)
    throw_error("split: factor ", index, " of loop '", name, "' is not positive (it is ", *v, ")");
  return cast(loop->loop_var->dtype, factor);
}

}  // namespace

std::vector<LoopRV> Schedule::split(const LoopRV& loop_rv, const std::vector<PrimExpr>& factors) {
  LoopLocation where = sched::find_loop(func_, loop_rv.var, "split");
  const For& loop = where.loop;
  const std::string& name = loop->loop_var->name;
  if (factors.size() < 2)
    throw_error("split: loop '", name, "' needs at least two factors, got ", factors.size());

  // Resolve the factors; the one left null covers the rest of the extent.
  std::vector<PrimExpr> resolved(factors.size());
  int inferred = -1;
  PrimExpr known_product = make_int(1, loop->loop_var->dtype);
  for (size_t k = 0; k < factors.size(); ++k) {
    if (!factors[k]) {
      if (inferred >= 0)
        throw_error("split: loop '", name, "' has more than one inferred (null) factor");
      inferred = int(k);
      continue;
    }
    resolved[k] = checked_factor(factors[k], k, loop);
    known_product = known_product * resolved[k];
  }
  if (inferred >= 0) resolved[inferred] = floordiv(loop->extent + known_product - 1, known_product);
  PrimExpr product = make_int(1, loop->loop_var->dtype);
  for (const PrimExpr& f : resolved) product = product * f;
  auto const_extent = as_const_int(loop->extent), const_product = as_const_int(product);
  if (const_extent && const_product && *const_product < *const_extent)
    throw_error("split: the factors of loop '", name, "' cover ", *const_product,
                " iterations, fewer than its extent ", *const_extent);

  // i becomes min + ((i_0 * f1 + i_1) * f2 + i_2) ...
  sched::NameSupply names(func_);
  std::vector<Var> new_vars;
  PrimExpr offset;
  for (size_t k = 0; k < resolved.size(); ++k) {
    Var v =
        VarNode::make(names.fresh_var_name(name + "_" + std::to_string(k)), loop->loop_var->dtype);
    new_vars.push_back(v);
    offset = k == 0 ? PrimExpr(v) : offset * resolved[k] + v;
  }
  Stmt body = substitute(loop->body, {{loop->loop_var.get(), loop->min + offset}});
  if (!sched::prove_equal(product, loop->extent, sched::ranges_of(where.outer_loops)))
    body = guard_blocks(body, offset < loop->extent);
  for (size_t k = resolved.size(); k-- > 0;)
    body = ForNode::make(new_vars[k], make_int(0, loop->loop_var->dtype), resolved[k],
                         ForKind::Serial, body);
  body = sched::simplify_bindings(body, where.outer_loops);
  func_ = sched::replace_stmt(func_, loop, body);

  std::vector<LoopRV> out;
  for (const Var& v : new_vars) out.push_back(LoopRV{v});
  return out;
}

LoopRV Schedule::fuse(const std::vector<LoopRV>& loop_rvs) {
  if (loop_rvs.empty()) throw_error("fuse: no loops given");
  std::vector<For> loops;
  LoopLocation outer = sched::find_loop(func_, loop_rvs[0].var, "fuse");
  loops.push_back(outer.loop);
  for (size_t k = 1; k < loop_rvs.size(); ++k) {
    For loop = sched::find_loop(func_, loop_rvs[k].var, "fuse").loop;
    for (const For& seen : loops)
      if (seen.get() == loop.get())
        throw_error("fuse: loop '", loop->loop_var->name, "' is listed twice");
    const For& prev = loops.back();
    if (prev->body.get() != loop.get())
      throw_error("fuse: loops '", prev->loop_var->name, "' and '", loop->loop_var->name,
                  "' are not perfectly nested (the body of '", prev->loop_var->name,
                  "' is not loop '", loop->loop_var->name, "')");
    for (const For& o : loops)
      if (sched::uses(loop->min, o->loop_var) || sched::uses(loop->extent, o->loop_var))
        throw_error("fuse: the range of loop '", loop->loop_var->name, "' depends on loop '",
                    o->loop_var->name, "'");
    loops.push_back(loop);
  }
  if (loops.size() == 1) return loop_rvs[0];

  std::string fused_name;
  for (const For& l : loops) fused_name += l->loop_var->name + "_";
  DataType t = outer.loop->loop_var->dtype;
  Var fused = VarNode::make(sched::NameSupply(func_).fresh_var_name(fused_name + "fused"), t);

  // Innermost loop varies fastest: l_k = floormod(floordiv(fused, inner extents), extent_k).
  // Below loops of extent 1 only (a batch of 1 fused with a symbolic row count), no floormod:
  // the fused value never reaches the extent, and a floormod by a size variable left in every
  // address keeps LLVM from telling a register tile's rows apart.
  VarMap map;
  PrimExpr inner = make_int(1, t);
  for (size_t k = loops.size(); k-- > 0;) {
    const For& l = loops[k];
    bool only_unit_loops_outside = true;
    for (size_t o = 0; o < k; ++o) only_unit_loops_outside &= is_one(loops[o]->extent);
    PrimExpr value;
    if (is_one(l->extent))
      value = make_int(0, t);
    else if (only_unit_loops_outside)
      value = floordiv(fused, inner);
    else
      value = floormod(floordiv(fused, inner), l->extent);
    map[l->loop_var.get()] = l->min + value;
    inner = inner * l->extent;
  }
  Stmt body = substitute(loops.back()->body, map);
  Stmt fused_loop = ForNode::make(fused, make_int(0, t), inner, ForKind::Serial, body);
  fused_loop = sched::simplify_bindings(fused_loop, outer.outer_loops);
  func_ = sched::replace_stmt(func_, outer.loop, fused_loop);
  return LoopRV{fused};
}

void Schedule::reorder(const std::vector<LoopRV>& order) {
  if (order.empty()) return;
  // Find every loop with its ancestors; the deepest one fixes the chain.
  std::vector<LoopLocation> found;
  for (const LoopRV& rv : order) {
    found.push_back(sched::find_loop(func_, rv.var, "reorder"));
    for (size_t k = 0; k + 1 < found.size(); ++k)
      if (found[k].loop.get() == found.back().loop.get())
        throw_error("reorder: loop '", rv.var->name, "' is listed twice");
  }
  const LoopLocation* deepest = &found[0];
  for (const LoopLocation& l : found)
    if (l.outer_loops.size() > deepest->outer_loops.size()) deepest = &l;
  std::vector<For> chain = deepest->outer_loops;
  chain.push_back(deepest->loop);

  std::unordered_map<const ForNode*, size_t> depth_of;
  for (size_t d = 0; d < chain.size(); ++d) depth_of[chain[d].get()] = d;
  size_t top = chain.size(), bottom = 0;
  for (const LoopLocation& l : found) {
    auto it = depth_of.find(l.loop.get());
    if (it == depth_of.end() || l.parent.get() != deepest->parent.get())
      throw_error("reorder: loops '", l.loop->loop_var->name, "' and '",
                  deepest->loop->loop_var->name,
                  "' are not in one loop nest (neither is inside the other)");
    top = std::min(top, it->second);
    bottom = std::max(bottom, it->second);
  }
  for (size_t d = top; d < bottom; ++d)
    if (chain[d]->body.get() != chain[d + 1].get())
      throw_error("reorder: loop '", chain[d]->loop_var->name,
                  "' has more than one loop as its body (a block or a sequence lies between "
                  "loops '",
                  chain[d]->loop_var->name, "' and '", chain[bottom]->loop_var->name, "')");

  // The listed loops take the listed order in the positions they occupy;
  // the others stay where they are.
  std::vector<size_t> positions;
  for (const LoopLocation& l : found) positions.push_back(depth_of[l.loop.get()]);
  std::sort(positions.begin(), positions.end());
  std::vector<For> new_chain(chain.begin() + top, chain.begin() + bottom + 1);
  for (size_t k = 0; k < found.size(); ++k) new_chain[positions[k] - top] = found[k].loop;

  // A loop's range may only use loops that stay outside it.
  for (size_t p = 0; p < new_chain.size(); ++p)
    for (size_t q = p + 1; q < new_chain.size(); ++q) {
      const For& outer = new_chain[p];
      const Var& inner_var = new_chain[q]->loop_var;
      if (sched::uses(outer->min, inner_var) || sched::uses(outer->extent, inner_var))
        throw_error("reorder: the range of loop '", outer->loop_var->name, "' depends on loop '",
                    inner_var->name, "', which would move outside it");
    }

  // Iterations bound to opaque block variables may not change order.
  for (const BlockRealize& realize :
       sched::collect_block_realizes(chain[bottom]->body, /*nested=*/false)) {
    const Block& block = realize->block;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind != IterKind::Opaque) continue;
      const PrimExpr& value = realize->iter_values[i];
      for (const LoopLocation& l : found)
        if (sched::uses(value, l.loop->loop_var))
          throw_error("reorder: loop '", l.loop->loop_var->name,
                      "' is bound to opaque iteration variable '", block->iter_vars[i].var->name,
                      "' of block '", block->name, "'");
    }
  }

  Stmt nest = chain[bottom]->body;
  for (size_t p = new_chain.size(); p-- > 0;) nest = sched::with_body(new_chain[p], nest);
  func_ = sched::replace_stmt(func_, chain[top], nest);
}

}  // namespace anvil::tir
