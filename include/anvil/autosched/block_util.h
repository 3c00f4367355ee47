// Small facts about blocks and functions that the auto-scheduler's rules and lowering share.
#pragma once

#include <cstdint>
#include <unordered_set>

#include "anvil/tir/tir.h"

namespace anvil::autosched {

// Parallel loops below this many output elements cost more to launch than they save.
constexpr int64_t kMinParallelElements = 4096;

bool has_reduce_vars(const tir::BlockNode& block);
// The buffers of the function's last num_outputs parameters.
std::unordered_set<const tir::BufferNode*> output_buffers(const tir::PrimFunc& func,
                                                          size_t num_outputs);
bool writes_any(const tir::BlockNode& block,
                const std::unordered_set<const tir::BufferNode*>& buffers);

}  // namespace anvil::autosched
