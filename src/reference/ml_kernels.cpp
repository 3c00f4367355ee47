// Reference kernels of the classical machine-learning family. The tree ensemble is the runtime
// library's function (anvil/runtime/builtins.h), the same one the VM calls; its tests compare
// it with ONNX Runtime and the ONNX reference (tests/cli/ml_test.cpp).
#include "anvil/runtime/builtins.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {

void register_ml_kernels() {
  register_kernel("ml.tree_ensemble", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::tree_ensemble(in[0], in[1], in[2], in[3], in[4], in[5],
                                                       in[6], in[7], in[8], in[9])};
  });
}

}  // namespace anvil::reference
