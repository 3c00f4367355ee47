// Operator lowering (TVM's TOPI): for each operator of the op table, a tensor-expression
// compute that builds its outputs from te placeholders, and optionally a hand-written
// schedule for the fused kernel it anchors. Both live beside the op table as per-op entries,
// registered by the family files in src/topi/.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/te/te.h"
#include "anvil/tir/schedule.h"
#include "anvil/topi/knobs.h"

namespace anvil::topi {

// The tensor-IR variables of a group's symbolic dims: one int64 Var per size variable name
// (batch, seq), shared by every tensor of the group, so that the kernel binds each once from
// its arguments and checks every other use (make_packed_api).
class DimVars {
 public:
  // The dim as an index expression; throws Error for an unknown dim (?), which no kernel can
  // be compiled for.
  tir::PrimExpr to_expr(const ir::Dim& dim);
  std::vector<tir::PrimExpr> to_exprs(const std::vector<ir::Dim>& dims);
  const std::map<std::string, tir::Var>& vars() const { return vars_; }

 private:
  std::map<std::string, tir::Var> vars_;
};

// What a compute sees: the call (its attrs), one te tensor per argument of the call (an
// omitted optional input is a null te::Tensor), the call's inferred output type and the
// variables of its symbolic dims (null when every shape is static). A compute that needs a
// dim to be static says so with an Error (see static_extent), and the group is then not
// compiled for dynamic shapes.
struct ComputeArgs {
  const ir::CallNode& call;
  std::span<const te::Tensor> inputs;
  const ir::Type& out_type;
  DimVars* dim_vars = nullptr;
  // The sizes a shape function computed beyond the output dims (ShapeCompute::num_extras),
  // as the size variables the kernel receives them in; empty otherwise.
  std::span<const tir::PrimExpr> extras = {};

  // The call's attrs as T (the op's defaults when the call has none).
  template <typename T>
  const T& attrs_as() const {
    const T* typed = dynamic_cast<const T*>(attrs_node());
    ANVIL_ICHECK(typed != nullptr, op_name(), " expects attrs ", T::kTypeKey);
    return *typed;
  }
  const ir::AttrsNode* attrs_node() const;
  // Number of outputs: 1 for a tensor type, the field count for a tuple type.
  size_t num_outputs() const;
  // The shape of output i (a field of a tuple output) as index expressions.
  std::vector<tir::PrimExpr> out_shape(size_t i = 0) const;
  // The dtype of output i.
  DataType out_dtype(size_t i = 0) const;
  // The op's name, for tensor names and messages.
  const std::string& op_name() const;
};

// Builds an op's outputs: one tensor, or one per field of a tuple output, in order.
using ComputeFn = std::function<std::vector<te::Tensor>(const ComputeArgs&)>;

// Attaches the compute of an op to its row of the op table (replacing an earlier one).
void register_compute(std::string_view op_name, ComputeFn compute);

// The compute of an op, or nullptr; registers every family on first use.
const ComputeFn* find_compute(std::string_view op_name);

// An op whose output dims depend on values known only at run time (a shape operand given as
// a tensor, the data of nonzero): the VM runs its shape function, a small kernel that writes
// the output dims (every output's dims in order, tuple fields flattened) followed by
// `num_extras` further sizes into an int64 vector, binds them to fresh size variables
// (load_shape), allocates the outputs, then runs the op's compute with the outputs' dims as
// those variables and the extras in ComputeArgs::extras. The compute of the shape function
// sees the call's inferred type, whose unknown dims are ? (its rank must be known).
struct ShapeCompute {
  std::function<te::Tensor(const ComputeArgs&)> dims;
  std::function<size_t(const ir::CallNode&)> num_extras;  // null: none
};

// Attaches a shape function to an op (replacing an earlier one).
void register_shape_compute(std::string_view op_name, ShapeCompute shape);

// The shape function of an op, or nullptr; registers every family on first use.
const ShapeCompute* find_shape_compute(std::string_view op_name);

// Names of the ops in the op table that have no compute, sorted.
std::vector<std::string> ops_without_compute();

// What an anchor schedule sees. The PrimFunc being scheduled computes one fused group; every
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
  // Knob values chosen by a tuner for this group (null: the heuristic's); a knob it does not
  // name keeps the heuristic's value, a name or value outside the space is an Error.
  const ScheduleConfig* config = nullptr;
};

// Rewrites the fused group's schedule around its anchor (tiling, vectorizing, parallel
// loops, placing the epilogue blocks). Must leave the function in scheduled form. It declines
// a group it was not written for by throwing Error with the reason, which the kernel then
// carries (kScheduleDeclinedAttr) while the generic schedule runs instead.
using ScheduleFn = std::function<void(tir::Schedule&, const ScheduleArgs&)>;

// A hand-written schedule of an anchor op for one target family, under the name that
// profiles and the tensor IR show for the kernels it schedules ("x86.conv2d_nchwc").
struct ScheduleStrategy {
  std::string name;
  ScheduleFn schedule;
  // The knobs of the schedule and their values for the group (the function in the state the
  // schedule receives it); null for a schedule without knobs. Throws Error where the schedule
  // would decline.
  std::function<std::vector<KnobSpace>(const tir::Schedule&, const ScheduleArgs&)> space;
};

// The PrimFunc attrs in which scheduling records, per kernel, the strategy that scheduled it
// ("generic" for the default schedule) and, when the anchor's strategy declined,
// "<strategy>: <reason>".
inline constexpr const char* kScheduleAttr = "schedule";
inline constexpr const char* kScheduleDeclinedAttr = "schedule_declined";

// Attaches a hand-written schedule to an op for the llvm/c targets on x86.
void register_schedule(
    std::string_view op_name, std::string strategy_name, ScheduleFn schedule,
    std::function<std::vector<KnobSpace>(const tir::Schedule&, const ScheduleArgs&)> space =
        nullptr);

// The hand-written schedule strategy of an op, or nullptr.
const ScheduleStrategy* find_schedule(std::string_view op_name);

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

// The data layout and weight packing an op's strategy wants on a target (TVM's alter-layout
// hook), under the strategy's name ("x86.conv2d_nchwc"). `check` tells from the call's types
// and attrs alone why the strategy does not apply (empty when it does), so the reason can be
// given again where the kernel is scheduled; `rewrite` builds the new call for a call that
// passed `check`, and may still decline by throwing Error with the reason (a weight that is
// not a constant).
struct LayoutStrategy {
  std::string name;
  std::function<std::string(const ir::CallNode& call, const ir::Type& out_type, int vector_lanes)>
      check;
  std::function<LayoutRewrite(const LayoutArgs&)> rewrite;
};

// Attaches a layout strategy to an op for the llvm/c targets on x86.
void register_layout(std::string_view op_name, LayoutStrategy strategy);

// The layout strategy of an op, or nullptr.
const LayoutStrategy* find_layout(std::string_view op_name);

}  // namespace anvil::topi
