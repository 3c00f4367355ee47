// Binary elementwise ops on x86: they take the generic schedule, and in the layout pass they
// follow a blocked operand (the other one a scalar or a per-channel constant).
#include "anvil/topi/strategy.h"
#include "topi/x86/families.h"

namespace anvil::topi::x86 {

void register_elemwise_binary_strategies() {
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"})
    register_strategy(op, "x86",
                      {.name = "x86.follow_binary",
                       .layout_role = LayoutRole::Follows,
                       .follow = FollowRule::BroadcastBinary});
}

}  // namespace anvil::topi::x86
