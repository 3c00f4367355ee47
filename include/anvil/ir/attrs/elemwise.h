// Attributes of the elementwise family.
#pragma once

#include <limits>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// clip: min(max(x, a_min), a_max). The open bounds are the defaults so that a
// one-sided clip prints only the bound it sets.
struct ClipAttrs : AttrsBase<ClipAttrs> {
  static constexpr const char* kTypeKey = "ClipAttrs";
  double a_min = -std::numeric_limits<double>::infinity();
  double a_max = std::numeric_limits<double>::infinity();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("a_min", a_min);
    v("a_max", a_max);
  }
};

}  // namespace anvil::ir
