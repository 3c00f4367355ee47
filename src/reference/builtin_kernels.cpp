#include "reference/kernel_families.h"

namespace anvil::reference {

// call_tir and call_dps_packed are evaluated by the interpreter itself, since
// they need the module and the runtime registry rather than just tensors.
void register_builtin_kernels() {}

}  // namespace anvil::reference
