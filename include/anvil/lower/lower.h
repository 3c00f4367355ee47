// Lowering of fused groups: a primitive graph function (one group of FuseOps) becomes one
// PrimFunc in scheduled form, built from each op's TE compute (anvil/topi/topi.h) and
// scheduled by the anchor op's strategy records (anvil/topi/strategy.h) or the generic default.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/tir/tir.h"
#include "anvil/topi/knobs.h"

namespace anvil::lower {

// Knob values of a hand-written schedule by knob name.
using KnobConfig = topi::ScheduleConfig;

struct LowerGroupOptions {
  int vector_bits = 512;             // SIMD width of the target
  std::string target_kind = "llvm";  // "llvm" or "c"
  // The target keys whose strategy records (anvil/topi/strategy.h) compute and schedule the
  // group, most specific first; empty: the CPU's ("x86").
  std::vector<std::string> strategy_keys;
  bool amx_bf16 = false;  // the target has AMX tiles with tdpbf16ps
  bool schedule = true;   // false: leave the naive loop nests (for debugging)
  // The knob values to schedule a group with (a tuner's choice or a tuning record's), or null
  // for the heuristic's; called with the group and these options. A config the anchor's
  // strategy refuses makes it decline, which the kernel records (topi::kScheduleDeclinedAttr).
  std::function<const KnobConfig*(const ir::Function& group, const LowerGroupOptions& options)>
      config_for;
};

// What a tuner may choose for the group fn: the anchor op's schedule strategy and its knobs
// with their values (every combination valid). An empty strategy: the group takes the
// generic schedule (no knobs), `declined` then says why when a strategy declined.
struct GroupKnobSpace {
  std::string strategy;
  std::vector<topi::KnobSpace> knobs;
  std::string declined;
};
GroupKnobSpace group_knob_space(const ir::Function& fn, const LowerGroupOptions& options = {});

// The attr of a lowered kernel that lists, comma-separated and in order, the size variables it
// takes as int64 scalar arguments after its tensors (those no tensor has as a bare dim).
inline constexpr const char* kSizeVarArgsAttr = "anvil.size_var_args";

// Attrs of a primitive function that the VM compiler sets on the groups of ops with a shape
// function (topi::ShapeCompute), which are lowered alone:
// - kShapeFunctionAttr (int 1): lower the op's shape function instead of its compute; the
//   kernel writes the int64 vector of sizes.
// - kResultTypeAttr (the type as text): the op's output type with its unknown dims (?) named
//   by the size variables the shape function's sizes were bound to.
// - kExtraVarsAttr (comma-separated names): the size variables of the extra sizes, handed to
//   the compute as ComputeArgs::extras.
inline constexpr const char* kShapeFunctionAttr = "anvil.shape_function";
inline constexpr const char* kResultTypeAttr = "anvil.result_type";
inline constexpr const char* kExtraVarsAttr = "anvil.extra_vars";

// The PrimFunc computing fn, named `name` (global symbol). fn is a typed Function with static
// shapes whose body is calls of ops on its params, rank-0 constants, tuples and
// TupleGetItem. Parameters: one buffer per fn param, then one per output (one per tuple
// field when fn returns a tuple). Throws Error naming the op when an op has no compute.
tir::PrimFunc lower_primitive(const ir::Function& fn, const std::string& name,
                              const LowerGroupOptions& options = {});

// Why the kernel `scheduled` (lower_primitive's output for a group given a config of
// `strategy`) did not take that config: another schedule ran (the strategy declined it), or the
// strategy ran and set the knobs aside, as the generic schedule does with knobs outside its
// space; "" when the config was applied. The kernel's attrs topi::kScheduleAttr and
// topi::kScheduleDeclinedAttr say which.
std::string config_declined(const tir::PrimFunc& scheduled, const std::string& strategy);

// A readable kernel name for fn: "fused_" + the op names of its calls joined by "_" with dots
// replaced ("fused_nn_conv2d_add_nn_relu"), shortened past 80 characters.
std::string kernel_name_hint(const ir::Function& fn);

}  // namespace anvil::lower
