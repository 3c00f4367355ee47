// Op strategies: what one target does with one op, in one record (TVM's OpStrategy). A record
// names the layout the op wants and the op's role in the layout pass, the compute and schedule
// of the kernels it anchors, the knobs a tuner may search, the precisions it implements and its
// priority among the op's other records for the same target. Records are registered per
// (op, target key) by the family files of a target's folder (src/topi/x86/nn_conv.cpp, ...);
// the layout pass and the scheduler ask them and know no op.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/tir/schedule.h"
#include "anvil/topi/knobs.h"
#include "anvil/topi/topi.h"

namespace anvil::topi {

// What a schedule sees. The PrimFunc being scheduled computes one fused group; every
// injective producer has already been inlined. `anchor_block` computes the anchor op's
// output (the op whose schedule this is); `epilogue_blocks` are the blocks after it that
// consume it elementwise, in program order (the last one writes the group's output; empty
// when the anchor itself writes it).
struct ScheduleArgs {
  const ir::CallNode& anchor;
  std::string anchor_block;
  std::vector<std::string> epilogue_blocks;
  int vector_bits = 512;    // the target's SIMD width in bits (128, 256, 512)
  std::string target_kind;  // "llvm" or "c"
  bool amx_bf16 = false;    // AMX tiles with tdpbf16ps (the bf16 products' matrix unit)
  // Knob values chosen by a tuner for this group (null: the heuristic's); a knob it does not
  // name keeps the heuristic's value, a name or value outside the space is an Error.
  const ScheduleConfig* config = nullptr;
};

// Rewrites the fused group's schedule around its anchor (tiling, vectorizing, parallel
// loops, placing the epilogue blocks). Must leave the function in scheduled form. It declines
// a group it was not written for by throwing Error with the reason, which the kernel then
// carries (kScheduleDeclinedAttr) while the next strategy, or the generic schedule, runs.
using ScheduleFn = std::function<void(tir::Schedule&, const ScheduleArgs&)>;

// The knobs of a schedule and their values for the group (the function in the state the
// schedule receives it). Throws Error where the schedule would decline.
using KnobSpaceFn =
    std::function<std::vector<KnobSpace>(const tir::Schedule&, const ScheduleArgs&)>;

// The PrimFunc attrs in which scheduling records, per kernel, the strategy that scheduled it
// ("generic" for the default schedule) and, when a strategy of the anchor declined,
// "<strategy>: <reason>" (several joined by "; ").
inline constexpr const char* kScheduleAttr = "schedule";
inline constexpr const char* kScheduleDeclinedAttr = "schedule_declined";
// The PrimFunc attr listing the optional schedule steps that were refused in the kernel that
// ran (tir::Schedule::try_apply), "<step>: <reason>" joined by "; "; absent when none was.
inline constexpr const char* kScheduleRefusedAttr = "schedule_refused";
// The kernel attr the auto-scheduler leaves beside kScheduleAttr = "auto": the rule each block
// took and its parameters ("conv1d_ncw: multi-level tiling (vector x:16, reuse f:6, ...)"),
// separated by "; ".
inline constexpr const char* kScheduleRulesAttr = "schedule_rules";

// What a layout strategy sees: one call that AlterOpLayout may rewrite (typed, its arguments
// as written), the target's float32 vector lanes, and the driver's means to build the new call.
struct LayoutArgs {
  const ir::CallNode& call;
  const ir::Type& out_type;  // the call's inferred type
  int vector_lanes = 16;
  // Argument i after its producers were rewritten, in its own (original) layout.
  std::function<ir::Expr(size_t i)> arg;
  // The data (argument 0, a 4-D NCHW tensor) in NCHW{block}c: its producer's blocked form
  // when that has the block, else one layout_transform shared by every consumer.
  std::function<ir::Expr(int64_t block)> data_blocked;
  bool amx_bf16 = false;  // AMX tiles with tdpbf16ps: bf16 products block channels for them
};

// A layout strategy's rewrite of a call. out_block 0: expr replaces the call as it is (same
// shape and layout). Otherwise expr is the call's NCHW result in NCHW{out_block}c, holding
// stored_channels >= C channels (the extra ones zero), which the driver hands on to consumers
// that work in the blocked layout.
struct LayoutRewrite {
  ir::Expr expr;
  int64_t out_block = 0;
  int64_t stored_channels = 0;
};

// The data layout and weight packing an anchor wants (TVM's alter-layout hook). `check` tells
// from the call's types and attrs alone why the strategy does not apply (empty when it does),
// so the reason can be given again where the kernel is scheduled; `rewrite` builds the new call
// for a call that passed `check`, and may still decline by throwing Error with the reason (a
// weight that is not a constant).
struct LayoutPreference {
  std::function<std::string(const ir::CallNode& call, const ir::Type& out_type, int vector_lanes)>
      check;
  std::function<LayoutRewrite(const LayoutArgs&)> rewrite;
};

// How an op takes part in the layout pass.
enum class LayoutRole {
  Neutral,  // keeps its own layout: a blocked operand is transformed back for it
  Anchor,   // chooses a blocked layout and packs its weights (Strategy::layout)
  Follows,  // computes in its operand's blocked layout, by Strategy::follow
};

// How a follower is carried into a channel-blocked layout NCHW{b}c. The layout pass implements
// each rule once; a record names the one its op obeys.
enum class FollowRule {
  None,
  Elementwise,       // one operand, elementwise (any layout is its own)
  BroadcastBinary,   // two operands broadcast: a blocked one and a scalar or per-channel one
  BiasAdd,           // a per-channel vector added along the channel axis
  ScalarParameters,  // elementwise on argument 0 when every other argument is one value
  Pool,              // a 2-D pool whose compute reads the layout named in its "layout" attr
  Concatenate,       // concatenation along channels of equally blocked operands
  SpatialSlice,      // a slice of the spatial axes, channels whole
};

// One implementation of an op on a target.
struct Strategy {
  std::string name = {};  // "x86.conv2d_nchwc": the name profiles and the tensor IR show
  // Among the records of an op for one target key, higher priorities are tried first; a
  // record that declines hands the op to the next, and the generic schedule (the lowest of
  // all, which never declines) takes what none accepts.
  int priority = 0;
  // The element types of the op's data (argument 0) the strategy computes in.
  std::vector<DataType> precisions = {};
  LayoutRole layout_role = LayoutRole::Neutral;
  LayoutPreference layout = {};          // Anchor: the layout and weight packing it wants
  FollowRule follow = FollowRule::None;  // Follows: how it is carried into a blocked layout
  // The op's compute for the kernels this strategy schedules; null: the op's target-neutral
  // compute (find_compute).
  ComputeFn compute = nullptr;
  ScheduleFn schedule =
      nullptr;  // null: the strategy only places the op (layout), others schedule it
  KnobSpaceFn space = nullptr;  // null: a schedule without knobs
};

// True when the record names no precisions or the call's data (argument 0) has one of them:
// the passes do not ask a record of another element type (the bf16 convolution of a float32
// one).
bool computes_in(const Strategy& record, const ir::CallNode& call);

// Adds a record for op on the target key ("x86"); records of one key are kept by priority.
void register_strategy(std::string_view op_name, std::string_view target_key, Strategy strategy);

// The records of op under the first of `target_keys` that has any, highest priority first
// (empty when none has); registers every family on first use.
std::vector<const Strategy*> find_strategies(std::string_view op_name,
                                             std::span<const std::string> target_keys);

// The first of the op's records (find_strategies) in the given layout role, or nullptr.
const Strategy* find_strategy(std::string_view op_name, std::span<const std::string> target_keys,
                              LayoutRole role);

// The compute of op for kernels scheduled on target_keys: the first record's with a compute of
// its own, else the op's target-neutral compute (find_compute), else nullptr.
const ComputeFn* find_strategy_compute(std::string_view op_name,
                                       std::span<const std::string> target_keys);

}  // namespace anvil::topi
