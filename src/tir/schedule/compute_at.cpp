// compute_at and reverse_compute_at: move a block's loop nest under a loop of
// another block's nest, shrunk to the part of its iteration space that the
// other blocks need (or provide) during one iteration of that loop.
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/region_analysis.h"

namespace anvil::tir {

using namespace dataflow;

namespace {

bool loop_is_ancestor(const BlockSite& site, const For& loop) {
  for (const For& l : site.loops)
    if (l.get() == loop.get()) return true;
  return false;
}

bool reads_buffer(const Block& block, const Buffer& buffer) {
  if (block_reads(block, buffer)) return true;
  for (const BufferRegion& r : detect_reads(block))
    if (r.buffer.get() == buffer.get()) return true;
  return false;
}

// The loops of site strictly inside loop, free to take any value while loop
// and its ancestors are fixed.
RelaxMap loops_inside(const BlockSite& site, const For& loop) {
  RelaxMap relaxed;
  bool inside = false;
  for (const For& l : site.loops) {
    if (inside) relaxed[l->loop_var.get()] = Range{l->min, l->extent};
    if (l.get() == loop.get()) inside = true;
  }
  return relaxed;
}

// Per buffer, the hull of what blocks access (reads or writes) during one
// iteration of loop, in loop's variable and those of the loops around it.
std::vector<BufferRegion> accessed_under_loop(const std::vector<BlockSite>& blocks, const For& loop,
                                              const std::unordered_set<const BufferNode*>& wanted,
                                              bool reads, IndexSimplifier& simplifier) {
  std::vector<BufferRegion> out;
  for (const BlockSite& site : blocks) {
    RelaxMap relaxed = loops_inside(site, loop);
    const Block& block = site.realize->block;
    for (const BufferRegion& access : reads ? detect_reads(block) : detect_writes(block)) {
      if (!wanted.count(access.buffer.get())) continue;
      std::vector<Range> region = relax_region(access, site.realize, relaxed, simplifier);
      bool merged = false;
      for (BufferRegion& existing : out) {
        if (existing.buffer.get() != access.buffer.get()) continue;
        existing.region = region_hull(access.buffer, existing.region, region, simplifier);
        merged = true;
      }
      if (!merged) out.push_back({access.buffer, std::move(region)});
    }
  }
  return out;
}

// v or v + c for an iteration variable v of block.
std::optional<std::pair<size_t, int64_t>> iter_var_plus_const(const Block& block,
                                                              const PrimExpr& e) {
  const VarNode* var = as<VarNode>(e);
  int64_t offset = 0;
  if (const auto* add = as<AddNode>(e)) {
    auto c = as_const_int(add->b);
    if (!c) return std::nullopt;
    var = as<VarNode>(add->a);
    offset = *c;
  } else if (const auto* sub = as<SubNode>(e)) {
    auto c = as_const_int(sub->b);
    if (!c) return std::nullopt;
    var = as<VarNode>(sub->a);
    offset = -*c;
  }
  if (!var) return std::nullopt;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    if (block->iter_vars[i].var.get() == var) return std::make_pair(i, offset);
  return std::nullopt;
}

bool covers_whole_dim(const Range& r, const PrimExpr& dim, IndexSimplifier& simplifier) {
  auto lo = simplifier.const_difference(make_int(0), r.min);
  auto ext = simplifier.const_difference(dim, r.extent);
  return lo && *lo == 0 && ext && *ext == 0;
}

struct MoveSpec {
  const char* primitive;
  bool reverse;  // reverse_compute_at: the block must not run ahead of its inputs
};

// The range of each iteration variable of block for its accesses to reach
// exactly `region` (null where unconstrained: the whole domain).
std::vector<std::optional<Range>> iteration_ranges(const MoveSpec& spec, const Block& block,
                                                   const std::vector<BufferRegion>& accesses,
                                                   const std::vector<BufferRegion>& region,
                                                   const LoopSite& loop,
                                                   IndexSimplifier& simplifier) {
  std::vector<std::optional<Range>> ranges(block->iter_vars.size());
  for (const BufferRegion& access : accesses) {
    const BufferRegion* target = nullptr;
    for (const BufferRegion& r : region)
      if (r.buffer.get() == access.buffer.get()) target = &r;
    if (!target) continue;
    for (size_t d = 0; d < access.region.size(); ++d) {
      const Range& want = target->region[d];
      auto term = iter_var_plus_const(block, access.region[d].min);
      bool simple = term && is_one(access.region[d].extent) && (!spec.reverse || term->second == 0);
      if (!simple) {
        if (spec.reverse && !covers_whole_dim(want, access.buffer->shape[d], simplifier))
          throw_error(spec.primitive, ": cannot bound block '", block->name, "' by the part of '",
                      access.buffer->name, "' produced under loop '", loop.loop->loop_var->name,
                      "'");
        continue;
      }
      Range shifted{simplifier.simplify(want.min - term->second), want.extent};
      std::optional<Range>& slot = ranges[term->first];
      if (!slot) {
        slot = shifted;
      } else if (spec.reverse) {
        auto lo = simplifier.const_difference(slot->min, shifted.min);
        auto ext = simplifier.const_difference(slot->extent, shifted.extent);
        if (!lo || *lo != 0 || !ext || *ext != 0)
          throw_error(spec.primitive, ": block '", block->name,
                      "' reads its inputs at different regions of iteration variable '",
                      block->iter_vars[term->first].var->name, "'");
      } else {
        slot = region_hull(access.buffer, {*slot}, {shifted}, simplifier)[0];
      }
    }
  }
  return ranges;
}

// The name of the loop that drove iteration variable i before the move.
std::string loop_name_for(const BlockSite& site, size_t i) {
  if (const auto* v = as<VarNode>(site.realize->iter_values[i]))
    for (const For& loop : site.loops)
      if (loop->loop_var.get() == v) return v->name;
  return site.realize->block->iter_vars[i].var->name;
}

// block's realize under fresh loops covering ranges, guarded to stay inside
// its iteration domain.
Stmt build_nest(const PrimFunc& func, const BlockSite& site,
                const std::vector<std::optional<Range>>& ranges, IndexSimplifier& simplifier) {
  const Block& block = site.realize->block;
  // The block's old loops go away with it, so their names are free again.
  std::unordered_set<std::string> names =
      variable_names(func->with_body(replace_stmts(func->body, {{site.realize.get(), nullptr}})));
  for (const IterVar& iv : block->iter_vars) names.insert(iv.var->name);
  std::vector<For> loops;  // only loop_var/min/extent are used until the nest is built
  std::vector<PrimExpr> values;
  PrimExpr predicate = const_true();
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    PrimExpr lo = ranges[i] ? ranges[i]->min : iv.dom.min;
    PrimExpr extent = ranges[i] ? ranges[i]->extent : iv.dom.extent;
    extent = simplifier.simplify(extent);
    if (is_one(extent)) {
      values.push_back(lo);
    } else {
      PrimExpr loop_extent = extent;
      if (!as_const_int(extent)) {
        auto bound = simplifier.const_upper_bound(extent);
        if (bound) {
          loop_extent = make_int(*bound);
        } else {
          lo = iv.dom.min;
          loop_extent = extent = iv.dom.extent;
        }
      }
      Var loop_var = VarNode::make(fresh_name(names, loop_name_for(site, i)));
      simplifier.bind(loop_var, Range{make_int(0), loop_extent});
      if (loop_extent.get() != extent.get()) predicate = logical_and(predicate, loop_var < extent);
      loops.push_back(
          ForNode::make(loop_var, make_int(0), loop_extent, ForKind::Serial, seq_stmt({})));
      values.push_back(simplifier.simplify(lo + loop_var));
    }
    const PrimExpr& value = values.back();
    if (!simplifier.can_prove(value >= iv.dom.min))
      predicate = logical_and(predicate, value >= iv.dom.min);
    if (!simplifier.can_prove(value < iv.dom.min + iv.dom.extent))
      predicate = logical_and(predicate, value < iv.dom.min + iv.dom.extent);
  }
  Stmt nest = BlockRealizeNode::make(std::move(values), simplifier.simplify(predicate), block);
  for (size_t i = loops.size(); i-- > 0;)
    nest =
        ForNode::make(loops[i]->loop_var, loops[i]->min, loops[i]->extent, ForKind::Serial, nest);
  return nest;
}

// reverse_compute_at bounds the consumer by the hull of what the producers write during one
// iteration of loop. That is sound only when the producers write the whole hull: a producer
// whose outputs under the loop are strided (rows r * 2 + c of a dilated Winograd tile, the
// class c fixed) leaves holes that the consumer would read before they are written. Each
// producer writes one point per iteration of the loops inside loop that drive its spatial
// iteration variables, so it fills a hull of constant volume V only if those loops run at
// least V times.
void check_dense(const MoveSpec& spec, const std::vector<BlockSite>& producers,
                 const LoopSite& loop, const std::vector<BufferRegion>& region,
                 IndexSimplifier& simplifier) {
  for (const BlockSite& producer : producers) {
    const Block& b = producer.realize->block;
    std::unordered_set<const VarNode*> spatial_vars;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
      if (b->iter_vars[i].kind == IterKind::Spatial)
        uses_var(producer.realize->iter_values[i], [&](const VarNode* v) {
          spatial_vars.insert(v);
          return false;
        });
    int64_t points = 1;
    bool inside = false;
    for (const For& l : producer.loops) {
      if (inside && spatial_vars.count(l->loop_var.get())) {
        std::optional<int64_t> extent = as_const_int(l->extent);
        if (!extent) return;  // symbolic: nothing to compare
        points *= *extent;
      }
      if (l.get() == loop.loop.get()) inside = true;
    }
    for (const BufferRegion& written : region) {
      if (!block_writes(b, written.buffer)) continue;
      int64_t volume = 1;
      for (const Range& r : written.region) {
        std::optional<int64_t> extent = as_const_int(simplifier.simplify(r.extent));
        if (!extent) return;
        volume *= *extent;
      }
      if (points < volume)
        throw_error(spec.primitive, ": block '", b->name, "' writes ", points, " of the ", volume,
                    " elements of the part of '", written.buffer->name, "' it covers under loop '",
                    loop.loop->loop_var->name, "' (a strided region)");
    }
  }
}

void move_block(PrimFunc& func, const MoveSpec& spec, const BlockRV& block_rv,
                const LoopRV& loop_rv) {
  BlockSite site = find_block(func, block_rv.name, spec.primitive);
  LoopSite loop = find_loop(func, loop_rv.var, spec.primitive);
  const Block& block = site.realize->block;
  const std::string& loop_name = loop.loop->loop_var->name;
  if (loop.scope.get() != site.scope.get())
    throw_error(spec.primitive, ": loop '", loop_name, "' is not in the scope of block '",
                block->name, "'");
  if (loop_is_ancestor(site, loop.loop))
    throw_error(spec.primitive, ": block '", block->name, "' is already under loop '", loop_name,
                "'");

  if (!spec.reverse) {
    for (const BufferRegion& w : block->writes)
      if (is_param_buffer(func, w.buffer))
        throw_error(spec.primitive, ": block '", block->name, "' writes output buffer '",
                    w.buffer->name, "'");
  }

  std::vector<BlockSite> blocks = child_blocks(site.scope);
  std::unordered_map<const StmtNode*, int> order = block_order(site.scope);
  int first_under = -1, last_under = -1;
  for (const BlockSite& other : blocks) {
    if (!contains_block(loop.loop, other.realize)) continue;
    int position = order.at(other.realize.get());
    if (first_under < 0) first_under = position;
    last_under = position;
  }
  int position = order.at(site.realize.get());

  // The blocks on the other side of the dataflow edge: consumers for
  // compute_at, producers for reverse_compute_at. All must be under loop.
  std::unordered_set<const BufferNode*> linked;
  std::vector<BlockSite> partners;
  for (const BlockSite& other : blocks) {
    if (other.realize.get() == site.realize.get()) continue;
    const Block& b = other.realize->block;
    bool is_partner = false;
    if (!spec.reverse) {
      for (const BufferRegion& w : block->writes)
        if (reads_buffer(b, w.buffer)) is_partner = true, linked.insert(w.buffer.get());
    } else {
      for (const BufferRegion& w : b->writes)
        if (reads_buffer(block, w.buffer)) is_partner = true, linked.insert(w.buffer.get());
    }
    if (!is_partner) continue;
    if (!contains_block(loop.loop, other.realize))
      throw_error(spec.primitive, ": ", spec.reverse ? "producer" : "consumer", " block '", b->name,
                  "' of block '", block->name, "' is not under loop '", loop_name, "'");
    partners.push_back(other);
  }
  if (partners.empty())
    throw_error(spec.primitive, ": block '", block->name, "' has no ",
                spec.reverse ? "producer" : "consumer", " block under loop '", loop_name, "'");

  if (!spec.reverse) {
    if (position > first_under)
      throw_error(spec.primitive, ": block '", block->name, "' comes after loop '", loop_name, "'");
    // Its own inputs must be ready before the loop starts.
    for (const BlockSite& other : blocks) {
      if (other.realize.get() == site.realize.get()) continue;
      for (const BufferRegion& w : other.realize->block->writes) {
        if (!reads_buffer(block, w.buffer)) continue;
        if (contains_block(loop.loop, other.realize) || order.at(other.realize.get()) > position)
          throw_error(spec.primitive, ": block '", other.realize->block->name, "' producing '",
                      w.buffer->name, "' for block '", block->name, "' would run after it");
      }
    }
  } else {
    // A reduction's output is final only once its reduction loops finish, so
    // the loop must not be one of them (nor inside one).
    std::unordered_set<const VarNode*> fixed{loop.loop->loop_var.get()};
    for (const For& l : loop.outer_loops) fixed.insert(l->loop_var.get());
    for (const BlockSite& producer : partners) {
      const Block& b = producer.realize->block;
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i].kind == IterKind::Spatial) continue;
        if (uses_var(producer.realize->iter_values[i],
                     [&](const VarNode* v) { return fixed.count(v) > 0; }))
          throw_error(spec.primitive, ": loop '", loop_name, "' iterates over reduction of block '",
                      b->name, "'");
      }
    }
    if (position < last_under)
      throw_error(spec.primitive, ": block '", block->name, "' comes before loop '", loop_name,
                  "'");
    for (const BlockSite& other : blocks) {
      if (!contains_block(loop.loop, other.realize)) continue;
      for (const BufferRegion& w : block->writes)
        if (reads_buffer(other.realize->block, w.buffer))
          throw_error(spec.primitive, ": block '", other.realize->block->name, "' under loop '",
                      loop_name, "' reads '", w.buffer->name, "' written by block '", block->name,
                      "'");
    }
  }

  IndexSimplifier simplifier;
  for (const For& l : loop.outer_loops) simplifier.bind(l->loop_var, Range{l->min, l->extent});
  simplifier.bind(loop.loop->loop_var, Range{loop.loop->min, loop.loop->extent});
  std::vector<BufferRegion> region =
      accessed_under_loop(partners, loop.loop, linked, !spec.reverse, simplifier);
  if (spec.reverse) check_dense(spec, partners, loop, region, simplifier);
  std::vector<BufferRegion> own_accesses;
  for (const BufferRegion& a : spec.reverse ? detect_reads(block) : detect_writes(block))
    if (linked.count(a.buffer.get())) own_accesses.push_back(a);
  std::vector<std::optional<Range>> ranges =
      iteration_ranges(spec, block, own_accesses, region, loop, simplifier);
  Stmt nest = build_nest(func, site, ranges, simplifier);

  const For& target = loop.loop;
  Stmt body = spec.reverse ? seq_stmt({target->body, nest}) : seq_stmt({nest, target->body});
  Stmt new_loop = ForNode::make(target->loop_var, target->min, target->extent, target->for_kind,
                                body, target->annotations);
  func = func->with_body(
      replace_stmts(func->body, {{site.realize.get(), nullptr}, {target.get(), new_loop}}));
}

}  // namespace

void Schedule::compute_at(const BlockRV& block, const LoopRV& loop) {
  move_block(func_, MoveSpec{"compute_at", false}, block, loop);
}

void Schedule::reverse_compute_at(const BlockRV& block, const LoopRV& loop) {
  move_block(func_, MoveSpec{"reverse_compute_at", true}, block, loop);
}

}  // namespace anvil::tir
