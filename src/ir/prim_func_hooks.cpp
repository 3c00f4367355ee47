#include "anvil/ir/prim_func_hooks.h"

namespace anvil::ir {

namespace {
PrimFuncHooks& hooks_storage() {
  static PrimFuncHooks hooks;
  return hooks;
}
}  // namespace

const PrimFuncHooks& prim_func_hooks() { return hooks_storage(); }

void set_prim_func_hooks(PrimFuncHooks hooks) { hooks_storage() = std::move(hooks); }

}  // namespace anvil::ir
