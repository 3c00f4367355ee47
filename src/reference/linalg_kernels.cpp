// Reference kernels of the linear-algebra family. Det is the runtime library's function
// (anvil/runtime/builtins.h), the same one the VM calls; its tests compare it with ONNX
// Runtime (tests/cli/linalg_test.cpp).
#include "anvil/runtime/builtins.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {

void register_linalg_kernels() {
  register_kernel("linalg.det", [](const KernelArgs& args) {
    return std::vector<Tensor>{builtins::determinant(args.inputs[0])};
  });
}

}  // namespace anvil::reference
