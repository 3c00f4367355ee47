// Helpers for the nn family tests.
#pragma once

#include "relation_test_util.h"

namespace anvil::ir::testing {

// Fresh attrs of type T with the fields that fill sets.
template <typename T, typename Fill>
Attrs with(Fill fill) {
  Ref<T> attrs = make_attrs<T>();
  fill(*attrs);
  return attrs;
}

}  // namespace anvil::ir::testing
