// The Schedule object: the function being rewritten and the lookups that
// turn block names and loop variables into the IR they denote.
#include "anvil/tir/schedule.h"

#include <set>

#include "anvil/support/error.h"
#include "anvil/tir/verifier.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

namespace {

bool is_root_realize(const Stmt& body) {
  const auto* realize = as<BlockRealizeNode>(body);
  return realize && realize->block->iter_vars.empty() && realize->iter_values.empty();
}

// Functions written without any block get the root block that scheduled form
// requires, so their loops can be scheduled like any other.
PrimFunc with_root_block(const PrimFunc& func) {
  if (is_root_realize(func->body)) return func;
  Block root = BlockNode::make({}, {}, {}, "root", func->body);
  return func->with_body(BlockRealizeNode::make({}, const_true(), root));
}

void check_unique_block_names(const PrimFunc& func) {
  std::set<std::string> seen;
  for (const BlockRealize& realize : sched::collect_block_realizes(func->body)) {
    const std::string& name = realize->block->name;
    if (!seen.insert(name).second) {
      std::string fname = func->global_symbol().empty() ? "main" : func->global_symbol();
      throw_error("Schedule: block name '", name, "' is used twice in function '", fname, "'");
    }
  }
}

}  // namespace

Schedule::Schedule(PrimFunc func) {
  if (!func) throw_error("Schedule: the function is null");
  func_ = with_root_block(func);
  check_unique_block_names(func_);
  verify(func_, IrForm::Scheduled);
}

BlockRV Schedule::get_block(const std::string& name) const {
  sched::find_block(func_, name, "get_block");
  return BlockRV{name};
}

std::vector<LoopRV> Schedule::get_loops(const BlockRV& block) const {
  sched::BlockLocation where = sched::find_block(func_, block.name, "get_loops");
  std::vector<LoopRV> out;
  for (const For& loop : where.loops) out.push_back(LoopRV{loop->loop_var});
  return out;
}

std::vector<BlockRV> Schedule::get_child_blocks(const BlockRV& block) const {
  sched::BlockLocation where = sched::find_block(func_, block.name, "get_child_blocks");
  std::vector<BlockRV> out;
  for (const BlockRealize& child :
       sched::collect_block_realizes(where.block->body, /*nested=*/false))
    out.push_back(BlockRV{child->block->name});
  return out;
}

Block Schedule::get(const BlockRV& block) const {
  return sched::find_block(func_, block.name, "get").block;
}

For Schedule::get(const LoopRV& loop) const {
  return sched::find_loop(func_, loop.var, "get").loop;
}

std::optional<int64_t> Schedule::loop_extent(const LoopRV& loop) const {
  return as_const_int(get(loop)->extent);
}

}  // namespace anvil::tir
