// Concatenation and slicing on x86: they take the generic schedule, and in the layout pass a
// concatenation along channels and a slice of the spatial axes stay in their operands' blocked
// layout.
#include "anvil/topi/strategy.h"
#include "topi/x86/families.h"

namespace anvil::topi::x86 {

void register_transform_slice_strategies() {
  register_strategy("concatenate", "x86",
                    {.name = "x86.follow_concatenate",
                     .layout_role = LayoutRole::Follows,
                     .follow = FollowRule::Concatenate});
  register_strategy("strided_slice", "x86",
                    {.name = "x86.follow_spatial_slice",
                     .layout_role = LayoutRole::Follows,
                     .follow = FollowRule::SpatialSlice});
}

}  // namespace anvil::topi::x86
