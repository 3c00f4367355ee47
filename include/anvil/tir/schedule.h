// Schedule primitives (TVM's tir.Schedule): rewrites of a PrimFunc in
// scheduled form that change the loop structure but never the results. Each
// primitive checks its legality first and throws anvil::Error naming the
// primitive, the block or loop, and why ("split: loop 'i' is not ...").
//
// Blocks are named by their (unique) name, loops by their loop variable: IR
// nodes are immutable and rebuilt on every change, but a loop keeps its
// variable, so both names stay valid across primitives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir {

struct BlockRV {
  std::string name;
};

struct LoopRV {
  Var var;
};

// A description of a micro-kernel for tensorize (TVM's TensorIntrin):
// `description` is a PrimFunc whose body is the loop nest to replace (one
// block, buffers given by match_buffer with symbolic strides/offsets where
// the real buffers differ); `implementation` has the same parameters and
// computes the same thing (typically Evaluate(call_extern(...)) with
// address_of loads). tensorize binds the parameters' buffers to the regions the
// matched nest touches and substitutes the implementation.
//
// from_identity: the implementation computes the whole reduction from its identity (a tile of
// accumulators zeroed in registers) rather than adding to the output's current values. Such
// an intrinsic also takes a block that still has its init, provided every reduction loop of
// the block is among the tensorized ones: the init is then subsumed, and no separate pass over
// the output writes the identity first.
struct TensorIntrin {
  PrimFunc description;
  PrimFunc implementation;
  bool from_identity = false;
};

// Registers intrin under name (replacing an earlier one).
void register_tensor_intrin(const std::string& name, TensorIntrin intrin);

class Schedule {
 public:
  // Verifies func (scheduled form) and takes it as the starting point.
  explicit Schedule(PrimFunc func);

  // The function as rewritten so far.
  const PrimFunc& func() const { return func_; }

  BlockRV get_block(const std::string& name) const;
  // The loops above block, outermost first.
  std::vector<LoopRV> get_loops(const BlockRV& block) const;
  // Blocks directly inside the root block (or below loop), in program order.
  std::vector<BlockRV> get_child_blocks(const BlockRV& block) const;
  // The IR a handle denotes in the function as rewritten so far (TVM's sch.get); throws
  // anvil::Error when the block or loop is gone.
  Block get(const BlockRV& block) const;
  For get(const LoopRV& loop) const;
  // The extent of loop when it is a constant, else nullopt.
  std::optional<int64_t> loop_extent(const LoopRV& loop) const;

  // Splits loop into len(factors) nested loops, outermost first; at most one
  // factor may be null (inferred as ceildiv). A non-dividing split guards the
  // block with a predicate.
  std::vector<LoopRV> split(const LoopRV& loop, const std::vector<PrimExpr>& factors);
  // Fuses perfectly nested loops (outermost first) into one.
  LoopRV fuse(const std::vector<LoopRV>& loops);
  // Reorders loops of one nest into the given order (they must be nested
  // without blocks between; loops not listed keep their positions).
  void reorder(const std::vector<LoopRV>& order);
  // Loop kinds. parallel: no reduction variable depends on the loop;
  // vectorize: constant extent, innermost-legal; unroll: any loop.
  void parallel(const LoopRV& loop);
  void vectorize(const LoopRV& loop);
  void unroll(const LoopRV& loop);
  // Adds (or replaces) an annotation on a loop.
  void annotate(const LoopRV& loop, const std::string& key, AnnotationValue value);

  // Inlines a spatial, single-write producer block into its consumers.
  void compute_inline(const BlockRV& block);
  // Inlines an injective consumer block into its single producer.
  void reverse_compute_inline(const BlockRV& block);
  // Moves a producer block under loop (of a consumer), computing only the
  // region the consumer needs there.
  void compute_at(const BlockRV& block, const LoopRV& loop);
  // Moves a consumer block under loop (of its producer).
  void reverse_compute_at(const BlockRV& block, const LoopRV& loop);
  // A new block copying the read_index-th read buffer of block into a buffer
  // of scope, which block then reads instead. Returns the copy block.
  BlockRV cache_read(const BlockRV& block, int read_index, const std::string& scope);
  // block writes a buffer of scope instead; a new block copies it to the
  // original. Returns the copy block.
  BlockRV cache_write(const BlockRV& block, int write_index, const std::string& scope);
  // Splits a reduction block's init into its own block placed before loop.
  // Returns the init block.
  BlockRV decompose_reduction(const BlockRV& block, const LoopRV& loop);
  // Factors a reduction along loop (bound to reduction variables only): a new block keeps one
  // partial result per iteration of loop in a buffer of its own, and the block, under new
  // loops after the nest, folds the partials into its output.
  // The combiner (+ * max min) is reassociated. Returns the partial block ("<name>_rf").
  BlockRV rfactor(const BlockRV& block, const LoopRV& loop);
  // Replaces the nest under loop with the registered intrinsic's implementation.
  void tensorize(const LoopRV& loop, const std::string& intrin_name);

  // Runs step (primitives on the schedule it is given) on a copy and keeps the copy only when
  // every primitive was accepted, so that an optional refinement never costs the rest of a
  // schedule. A refused step leaves the schedule as it was, is recorded as "<what>: <reason>"
  // in refused_steps(), and returns false.
  template <typename Step>
  bool try_apply(std::string_view what, Step&& step) {
    Schedule attempt = *this;
    try {
      step(attempt);
    } catch (const Error& e) {
      refused_.push_back(std::string(what) + ": " + e.what());
      return false;
    }
    *this = std::move(attempt);
    return true;
  }
  // The steps try_apply refused, in order.
  const std::vector<std::string>& refused_steps() const { return refused_; }

 private:
  PrimFunc func_;
  std::vector<std::string> refused_;
};

}  // namespace anvil::tir
