#include "anvil/autosched/block_util.h"

namespace anvil::autosched {

bool has_reduce_vars(const tir::BlockNode& block) {
  for (const tir::IterVar& iv : block.iter_vars)
    if (iv.kind == tir::IterKind::Reduce) return true;
  return false;
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

}  // namespace anvil::autosched
