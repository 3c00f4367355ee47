// The default schedule of a fused group. Every step is a schedule primitive, which checks
// its own legality; a step that is refused leaves the function as it was, so the schedule
// can only change speed, never results.
#include "lower/default_schedule.h"

#include <optional>
#include <unordered_set>

#include "anvil/autosched/auto_schedule.h"
#include "anvil/autosched/block_util.h"
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

constexpr const char* kGenericStrategy = "generic";
constexpr const char* kAutoStrategy = "auto";
using autosched::has_reduce_vars;
using autosched::output_buffers;
using autosched::writes_any;

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

autosched::AutoScheduleOptions auto_options(const ir::Function& fn,
                                            const LowerGroupOptions& options,
                                            const KnobConfig* config) {
  return {autosched::HostModel::for_target(options.vector_bits), count_outputs(fn), config};
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
                          options.target_kind,
                          options.amx_bf16};
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
  // The auto-scheduler runs when some block has data reuse or reduces: its knobs.
  {
    LowerGroupOptions naive = options;
    naive.schedule = false;
    const tir::Schedule sch(lower_primitive(fn, "kernel", naive));
    std::vector<topi::KnobSpace> space =
        autosched::auto_schedule_space(sch, auto_options(fn, options, nullptr));
    if (!space.empty()) {
      result.strategy = kAutoStrategy;
      result.knobs = std::move(space);
      return result;
    }
  }
  // The generic schedule runs: its knobs.
  result.strategy = kGenericStrategy;
  result.knobs = autosched::parallel_vectorize_space();
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

  // The anchor's strategy, when it has one and accepts the group; else the auto-scheduler, when
  // some block has data reuse or reduces; else the generic schedule (elementwise groups). Either
  // way the kernel records which one ran, and why each one before it declined.
  const KnobConfig* config = options.config_for ? options.config_for(fn, options) : nullptr;
  std::string declined;
  auto decline = [&](const std::string& strategy, const std::string& reason) {
    declined += (declined.empty() ? "" : "; ") + strategy + ": " + reason;
  };
  auto ran = [&](const std::string& strategy) {
    ir::DictAttrs attrs;
    if (!declined.empty()) attrs = attrs.with(topi::kScheduleDeclinedAttr, declined);
    return attrs.with(topi::kScheduleAttr, strategy);
  };
  if (const ir::CallNode* anchor = find_anchor(fn)) {
    const std::string& op = anchor->op()->name;
    const std::vector<const topi::Strategy*> strategies = scheduling_strategies(op, options);
    for (const topi::Strategy* strategy : strategies) {
      topi::ScheduleArgs args = strategy_args(group, *anchor, options);
      args.config = config;
      Schedule attempt = sch;
      try {
        strategy->schedule(attempt, args);
        return with_schedule_attrs(attempt, ran(strategy->name));
      } catch (const Error& e) {
        decline(strategy->name, e.what());
      }
    }
    if (strategies.empty())
      for (const topi::Strategy* layout : topi::find_strategies(op, options.strategy_keys)) {
        if (layout->layout_role != topi::LayoutRole::Anchor || !topi::computes_in(*layout, *anchor))
          continue;
        // An op whose strategy starts with a layout (a convolution to be blocked) reaches the
        // scheduler in its own form only when that strategy declined it: say why again here.
        std::string reason =
            layout->layout.check(*anchor, anchor->checked_type, options.vector_bits / 32);
        if (reason.empty())
          reason = "not rewritten to its layout (AlterOpLayout runs at -O3, on constant weights)";
        decline(layout->name, reason);
        break;
      }
  }
  // The auto-scheduler starts from the function as lowering made it: it inlines by its own
  // rules (guarded producers of the tiled block stay stages).
  {
    Schedule fresh(func);
    try {
      autosched::AutoScheduleResult result =
          autosched::auto_schedule(fresh, auto_options(fn, options, config));
      if (result.scheduled) {
        std::string rules;
        for (const std::string& rule : result.rules) rules += (rules.empty() ? "" : "; ") + rule;
        return with_schedule_attrs(fresh, ran(kAutoStrategy).with(topi::kScheduleRulesAttr, rules));
      }
    } catch (const Error& e) {
      decline(kAutoStrategy, e.what());
    }
  }
  autosched::ParallelVectorizeKnobs knobs;
  if (config) {
    const std::string why =
        topi::config_mismatch(autosched::parallel_vectorize_space(), *config, kGenericStrategy);
    if (why.empty()) {
      auto value = [&](const char* knob, int64_t fallback) {
        auto it = config->find(knob);
        return it == config->end() ? fallback : it->second;
      };
      knobs = {value("vectorize", knobs.vectorize), value("parallel_grain", knobs.parallel_grain),
               value("unroll", knobs.unroll)};
    } else if (declined.empty()) {
      // Knobs outside the generic space: the heuristic's choices, and the kernel says why.
      // (After a strategy declined, its own knobs reach here too; its reason is kept.)
      decline(kGenericStrategy, why);
    }
  }
  for (const BlockRV& block : remaining)
    autosched::parallel_vectorize(sch, block.name, options.vector_bits, knobs);
  return with_schedule_attrs(sch, ran(kGenericStrategy));
}

}  // namespace anvil::lower
