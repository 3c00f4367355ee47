// The default schedule of a fused group. Every step is a schedule primitive, which checks
// its own legality; a step that is refused leaves the function as it was, so the schedule
// can only change speed, never results.
#include "lower/default_schedule.h"

#include <optional>
#include <unordered_set>

#include "anvil/ir/op.h"
#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"

namespace anvil::lower {
namespace {

using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;

// Parallel loops below this many output elements cost more to launch than they save.
constexpr int64_t kMinParallelElements = 4096;

bool has_reduce_vars(const tir::BlockNode& block) {
  for (const tir::IterVar& iv : block.iter_vars)
    if (iv.kind == tir::IterKind::Reduce) return true;
  return false;
}

tir::Var last_spatial_var(const tir::BlockNode& block) {
  tir::Var last;
  for (const tir::IterVar& iv : block.iter_vars)
    if (iv.kind == tir::IterKind::Spatial) last = iv.var;
  return last;
}

int spatial_count(const tir::BlockNode& block) {
  int n = 0;
  for (const tir::IterVar& iv : block.iter_vars) n += iv.kind == tir::IterKind::Spatial;
  return n;
}

// The vector width for an innermost loop of `extent` elements of `bits` each.
int64_t pick_vector_width(int64_t extent, int bits, int vector_bits) {
  int64_t lanes = std::max<int64_t>(1, vector_bits / std::max(bits, 8));
  if (extent <= 1) return 1;
  if (extent <= lanes) return extent;
  for (int64_t v = lanes; v >= 4; --v)
    if (extent % v == 0) return v;
  return 1;
}

std::unordered_set<const tir::BufferNode*> output_buffers(const tir::PrimFunc& func,
                                                          size_t num_outputs) {
  std::unordered_set<const tir::BufferNode*> outs;
  size_t n = func->buffer_map.size();
  for (size_t i = n - num_outputs; i < n; ++i) outs.insert(func->buffer_map[i].second.get());
  return outs;
}

bool writes_any(const tir::BlockNode& block,
                const std::unordered_set<const tir::BufferNode*>& buffers) {
  for (const tir::BufferRegion& region : block.writes)
    if (buffers.count(region.buffer.get())) return true;
  return false;
}

// True when a load of the block steps along var by anything but one element (or none) of its
// buffer: a gather when var's loop is vectorized. A layout transform into a blocked layout
// (NCHW to NCHW4c) reads its block's lanes a channel plane apart. The step is that of the
// load's row-major offset, simplified under the block's iteration ranges, so that a split
// index (floordiv(j, 16), floormod(j, 16)) reads as the contiguous j it is; var ranges over all
// but its last value, so that var + 1 stays in range.
bool gathers_along(const tir::BlockNode& block, const tir::Var& var) {
  tir::Analyzer analyzer;
  for (const tir::IterVar& iv : block.iter_vars) {
    std::optional<int64_t> extent = tir::as_const_int(iv.dom.extent);
    if (iv.var.get() == var.get() && extent && *extent > 1)
      analyzer.bind(iv.var, tir::Range::from_min_extent(iv.dom.min, tir::make_int(*extent - 1)));
    else
      analyzer.bind(iv.var, iv.dom);
  }
  bool gather = false;
  auto reads_var = [&](const tir::VarNode* v) { return v == var.get(); };
  tir::pre_order_visit(
      block.body,
      [&](const tir::PrimExpr& e) {
        const auto* load = tir::as<tir::BufferLoadNode>(e);
        if (!load || gather) return;
        // The row-major offset (a dim of unknown size makes it unknown: not a gather then).
        tir::PrimExpr offset = tir::make_int(0);
        const std::vector<tir::PrimExpr>& shape = load->buffer->shape;
        for (size_t d = 0; d < load->indices.size(); ++d) {
          if (d > 0) {
            if (d >= shape.size() || !tir::as_const_int(shape[d])) return;
            offset = offset * shape[d];
          }
          offset = offset + load->indices[d];
        }
        if (!tir::uses_var(offset, reads_var)) return;
        tir::PrimExpr next = tir::substitute(offset, {{var.get(), tir::PrimExpr(var) + 1}});
        tir::PrimExpr step = analyzer.simplify(next - offset);
        gather = !tir::is_const_int(step, 1) && !tir::is_const_int(step, 0);
      },
      [](const tir::Stmt&) {});
  return gather;
}

// The knobs of the generic schedule, applied alike to every block of a group. The defaults
// are the heuristic's own choices.
struct GenericKnobs {
  int64_t vectorize = 1;        // 0: scalar loops
  int64_t parallel_grain = 64;  // fuse leading loops up to this many iterations; 0: serial
  int64_t unroll = 1;           // unroll the loop above the vector by this factor
};
constexpr const char* kGenericStrategy = "generic";

std::vector<topi::KnobSpace> generic_knob_space() {
  return {{"vectorize", {0, 1}}, {"parallel_grain", {0, 16, 64, 256}}, {"unroll", {1, 2, 4}}};
}

// Parallel and vectorized loops for one block of the generic schedule.
void schedule_block_generic(Schedule& sch, const std::string& name, int vector_bits,
                            const GenericKnobs& knobs) {
  const tir::Block block = sch.get(sch.get_block(name));
  int num_spatial = spatial_count(*block);
  bool reduces = has_reduce_vars(*block);
  int bits = block->writes.empty() ? 32 : block->writes[0].buffer->dtype.bits;
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
  if (num_spatial == 0 || int(loops.size()) < num_spatial) return;
  std::vector<LoopRV> spatial(loops.begin(), loops.begin() + num_spatial);
  std::vector<LoopRV> reduce(loops.begin() + num_spatial, loops.end());

  // The work of the block: its output elements times the length of its reduction. A loop over
  // a size variable (a batch, a sequence) is taken to be long enough to be worth threads.
  int64_t total = 1;
  bool symbolic = false;
  for (const LoopRV& loop : spatial) {
    std::optional<int64_t> e = sch.loop_extent(loop);
    symbolic |= !e;
    total *= e.value_or(1);
  }
  for (const LoopRV& loop : reduce) total *= sch.loop_extent(loop).value_or(1);
  if (symbolic) total = std::max(total, kMinParallelElements);

  // Vectorize the innermost spatial loop; under a reduction it moves below the reduce loops
  // and the init is split off first, so the update is a vector multiply-accumulate.
  LoopRV inner = spatial.back();
  std::optional<LoopRV> outer_of_inner;
  const std::optional<int64_t> known = sch.loop_extent(inner);
  int64_t extent = known.value_or(0);
  int64_t width = extent > 0 && knobs.vectorize ? pick_vector_width(extent, bits, vector_bits) : 1;
  // An extent with no divisor of four or more lanes (197, 1000003), or a size variable, still
  // takes full vectors: the split leaves a guard, and partition_loops gives the full vectors a
  // guard-free loop of their own when the loop above the vector is serial (below a leading
  // parallel loop).
  const int64_t full_width = std::max<int64_t>(1, vector_bits / std::max(bits, 8));
  if (knobs.vectorize && width == 1 && (extent > full_width || !known) && num_spatial >= 2)
    width = full_width;
  // A short innermost loop that gathers (a transform into a blocked layout) is unrolled instead
  // of made a short vector of gathered lanes: the loop above it then reads each input row
  // contiguously and writes the blocks interleaved, which LLVM's loop vectorizer turns into
  // full-width loads and shuffles (an RGB image into NCHW4c uint8: 3.5x faster).
  bool gather_unrolled = false;
  if (!reduces && known && width == extent && extent < full_width && num_spatial >= 2 &&
      gathers_along(*block, last_spatial_var(*block)))
    gather_unrolled = sch.try_apply("unroll the gathering loop of " + name,
                                    [&](Schedule& s) { s.unroll(inner); });
  if (gather_unrolled) width = 1;
  if (width > 1) {
    sch.try_apply("vectorize " + name, [&](Schedule& s) {
      LoopRV vec = inner;
      if (!known || width < extent) {
        std::vector<LoopRV> parts = s.split(inner, {nullptr, tir::make_int(width)});
        outer_of_inner = parts[0];
        vec = parts[1];
      }
      if (reduces && !reduce.empty()) {
        std::vector<LoopRV> order = reduce;
        order.push_back(vec);
        s.reorder(order);
        BlockRV init = s.decompose_reduction(s.get_block(name), reduce.front());
        std::vector<LoopRV> init_loops = s.get_loops(init);
        if (!init_loops.empty()) {
          if (s.loop_extent(init_loops.back()) == width) s.vectorize(init_loops.back());
        }
      }
      s.vectorize(vec);
    });
  }

  // Parallel over the leading spatial loops (fused) when there is enough work.
  std::vector<LoopRV> leading(spatial.begin(), spatial.end() - 1);
  if (outer_of_inner && leading.empty()) leading.push_back(*outer_of_inner);
  // Fuse only as many leading loops as needed for a few tasks per thread.
  std::vector<LoopRV> to_fuse;
  if (total >= kMinParallelElements && knobs.parallel_grain > 0) {
    int64_t product = 1;
    for (const LoopRV& loop : leading) {
      to_fuse.push_back(loop);
      product *= sch.loop_extent(loop).value_or(16);
      if (product >= knobs.parallel_grain) break;
    }
  }
  // Unroll the serial loop right above the vector (the innermost loop when scalar), in
  // elementwise blocks only: under a reduction that loop is outside the reduction, and
  // unrolling it would copy the whole reduction.
  if (knobs.unroll > 1 && !reduces) {
    std::optional<LoopRV> above;
    if (outer_of_inner &&
        (to_fuse.empty() || to_fuse.back().var.get() != outer_of_inner->var.get()))
      above = outer_of_inner;
    else if (!outer_of_inner && width > 1 && leading.size() > to_fuse.size())
      above = leading.back();
    else if (width == 1)  // scalar: the innermost loop itself
      above = inner;
    if (above)
      sch.try_apply("unroll " + name, [&](Schedule& s) {
        std::vector<LoopRV> parts = s.split(*above, {nullptr, tir::make_int(knobs.unroll)});
        s.unroll(parts[1]);
      });
  }
  if (to_fuse.empty()) return;
  sch.try_apply("parallel " + name, [&](Schedule& s) {
    LoopRV fused = to_fuse.size() == 1 ? to_fuse[0] : s.fuse(to_fuse);
    s.parallel(fused);
  });
}

// The call of the group's anchor op (the op of highest pattern, if >= CommReduce).
const ir::CallNode* find_anchor(const ir::Function& fn) {
  const ir::CallNode* anchor = nullptr;
  int best = int(ir::OpPattern::CommReduce) - 1;
  std::unordered_set<const ir::ExprNode*> seen;
  std::function<void(const ir::Expr&)> visit = [&](const ir::Expr& e) {
    if (!e || !seen.insert(e.get()).second) return;
    if (const auto* call = ir::as<ir::CallNode>(e)) {
      for (const ir::Expr& arg : call->args) visit(arg);
      if (const ir::OpNode* op = call->op()) {
        int pattern = int(op->def->pattern);
        if (pattern != int(ir::OpPattern::Opaque) && pattern != int(ir::OpPattern::Tuple) &&
            pattern > best) {
          best = pattern;
          anchor = call;
        }
      }
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const ir::Expr& f : tuple->fields) visit(f);
    } else if (const auto* get = ir::as<ir::TupleGetItemNode>(e)) {
      visit(get->tuple);
    }
  };
  visit(fn->body);
  return anchor;
}

// The scheduled function with attrs added, and the steps its schedule refused.
tir::PrimFunc with_schedule_attrs(const Schedule& sch, const ir::DictAttrs& attrs) {
  const tir::PrimFunc& func = sch.func();
  ir::DictAttrs merged = func->func_attrs;
  for (const auto& [key, value] : attrs.entries) merged = merged.with(key, value);
  std::string refused;
  for (const std::string& step : sch.refused_steps())
    refused += (refused.empty() ? "" : "; ") + step;
  if (!refused.empty()) merged = merged.with(topi::kScheduleRefusedAttr, refused);
  return tir::PrimFuncNode::make(func->params, func->buffer_map, func->body, merged);
}

size_t count_outputs(const ir::Function& fn) {
  const ir::Type& type = fn->body->checked_type;
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) return tuple->fields.size();
  return 1;
}

// A group ready for its anchor's schedule: the producers inlined, the anchor block found.
struct PreparedGroup {
  Schedule sch;
  std::vector<BlockRV> remaining;  // the blocks left at the root, in order
  int anchor_index = 0;            // the anchor block: the last reduction, else the first
};

PreparedGroup prepare_group(const tir::PrimFunc& func, const ir::Function& fn) {
  PreparedGroup group{Schedule(func), {}, 0};
  Schedule& sch = group.sch;
  auto outputs = output_buffers(func, count_outputs(fn));
  // Inline every producer that is neither an output nor a reduction.
  for (const BlockRV& block : sch.get_child_blocks(sch.get_block("root"))) {
    const tir::Block node = sch.get(block);
    if (writes_any(*node, outputs) || has_reduce_vars(*node)) continue;
    sch.try_apply("inline " + block.name, [&](Schedule& s) { s.compute_inline(block); });
  }
  group.remaining = sch.get_child_blocks(sch.get_block("root"));
  for (size_t i = 0; i < group.remaining.size(); ++i)
    if (has_reduce_vars(*sch.get(group.remaining[i]))) group.anchor_index = int(i);
  return group;
}

topi::ScheduleArgs strategy_args(const PreparedGroup& group, const ir::CallNode& anchor,
                                 const LowerGroupOptions& options) {
  topi::ScheduleArgs args{anchor,
                          group.remaining[size_t(group.anchor_index)].name,
                          {},
                          options.vector_bits,
                          options.target_kind};
  for (size_t i = size_t(group.anchor_index) + 1; i < group.remaining.size(); ++i)
    args.epilogue_blocks.push_back(group.remaining[i].name);
  return args;
}

// The anchor op's strategy records that schedule kernels, highest priority first.
std::vector<const topi::Strategy*> scheduling_strategies(const std::string& op,
                                                         const LowerGroupOptions& options) {
  std::vector<const topi::Strategy*> found;
  for (const topi::Strategy* s : topi::find_strategies(op, options.strategy_keys))
    if (s->schedule) found.push_back(s);
  return found;
}

}  // namespace

GroupKnobSpace group_knob_space(const ir::Function& fn, const LowerGroupOptions& options) {
  GroupKnobSpace result;
  const ir::CallNode* anchor = find_anchor(fn);
  const std::vector<const topi::Strategy*> strategies =
      anchor ? scheduling_strategies(anchor->op()->name, options)
             : std::vector<const topi::Strategy*>{};
  // The records by priority, as schedule_group tries them: the first whose space accepts the
  // group is the one that will schedule it.
  std::optional<PreparedGroup> group;
  for (const topi::Strategy* strategy : strategies) {
    if (!strategy->space) return result;  // a strategy without knobs
    if (!group) {
      LowerGroupOptions naive = options;
      naive.schedule = false;
      group = prepare_group(lower_primitive(fn, "kernel", naive), fn);
    }
    try {
      result.knobs = strategy->space(group->sch, strategy_args(*group, *anchor, options));
      result.strategy = strategy->name;
      return result;
    } catch (const Error& e) {
      result.declined += (result.declined.empty() ? "" : "; ") + strategy->name + ": " + e.what();
    }
  }
  // The generic schedule runs: its knobs.
  result.strategy = kGenericStrategy;
  result.knobs = generic_knob_space();
  return result;
}

std::string config_declined(const tir::PrimFunc& scheduled, const std::string& strategy) {
  auto text = [&](const char* key) {
    const ir::AttrValue* value = scheduled->func_attrs.find(key);
    const std::string* s = value ? std::get_if<std::string>(value) : nullptr;
    return s ? *s : std::string();
  };
  const std::string ran = text(topi::kScheduleAttr), why = text(topi::kScheduleDeclinedAttr);
  if (ran == strategy && why.rfind(strategy + ":", 0) != 0) return "";
  return strategy + " declined the knobs" + (why.empty() ? std::string() : ": " + why);
}

tir::PrimFunc schedule_group(const tir::PrimFunc& func, const ir::Function& fn,
                             const LowerGroupOptions& options) {
  PreparedGroup group = prepare_group(func, fn);
  Schedule& sch = group.sch;
  const std::vector<BlockRV>& remaining = group.remaining;

  // The anchor's strategy, when it has one and accepts the group; the generic schedule
  // otherwise. Either way the kernel records which one ran, and why a strategy declined.
  ir::DictAttrs attrs;
  if (const ir::CallNode* anchor = find_anchor(fn)) {
    const std::string& op = anchor->op()->name;
    std::string declined;
    auto decline = [&](const std::string& strategy, const std::string& reason) {
      declined += (declined.empty() ? "" : "; ") + strategy + ": " + reason;
    };
    const std::vector<const topi::Strategy*> strategies = scheduling_strategies(op, options);
    for (const topi::Strategy* strategy : strategies) {
      topi::ScheduleArgs args = strategy_args(group, *anchor, options);
      args.config = options.config_for ? options.config_for(fn, options) : nullptr;
      Schedule attempt = sch;
      try {
        strategy->schedule(attempt, args);
        ir::DictAttrs ran = ir::DictAttrs().with(topi::kScheduleAttr, strategy->name);
        if (!declined.empty()) ran = ran.with(topi::kScheduleDeclinedAttr, declined);
        return with_schedule_attrs(attempt, ran);
      } catch (const Error& e) {
        decline(strategy->name, e.what());
      }
    }
    if (strategies.empty())
      if (const topi::Strategy* layout =
              topi::find_strategy(op, options.strategy_keys, topi::LayoutRole::Anchor)) {
        // An op whose strategy starts with a layout (a convolution to be blocked) reaches the
        // scheduler in its own form only when that strategy declined it: say why again here.
        std::string reason =
            layout->layout.check(*anchor, anchor->checked_type, options.vector_bits / 32);
        if (reason.empty())
          reason = "not rewritten to its layout (AlterOpLayout runs at -O3, on constant weights)";
        decline(layout->name, reason);
      }
    if (!declined.empty()) attrs = attrs.with(topi::kScheduleDeclinedAttr, declined);
  }
  GenericKnobs knobs;
  if (const KnobConfig* config = options.config_for ? options.config_for(fn, options) : nullptr) {
    const std::string why = topi::config_mismatch(generic_knob_space(), *config, kGenericStrategy);
    if (why.empty()) {
      auto value = [&](const char* knob, int64_t fallback) {
        auto it = config->find(knob);
        return it == config->end() ? fallback : it->second;
      };
      knobs = {value("vectorize", knobs.vectorize), value("parallel_grain", knobs.parallel_grain),
               value("unroll", knobs.unroll)};
    } else if (!attrs.find(topi::kScheduleDeclinedAttr)) {
      // Knobs outside the generic space: the heuristic's choices, and the kernel says why.
      // (After a strategy declined, its own knobs reach here too; its reason is kept.)
      attrs = attrs.with(topi::kScheduleDeclinedAttr, std::string(kGenericStrategy) + ": " + why);
    }
  }
  for (const BlockRV& block : remaining)
    schedule_block_generic(sch, block.name, options.vector_bits, knobs);
  return with_schedule_attrs(sch, attrs.with(topi::kScheduleAttr, std::string("generic")));
}

}  // namespace anvil::lower
