// Reference kernels of the vision family. NonMaxSuppression is the runtime library's function
// (anvil/runtime/builtins.h), the same one the VM calls: its tests compare both with ONNX
// Runtime (tests/cli/vision_test.cpp).
#include "anvil/runtime/builtins.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {

void register_vision_kernels() {
  register_kernel("vision.non_max_suppression", [](const KernelArgs& args) {
    std::vector<Tensor> in;
    for (const Tensor& t : args.inputs) in.push_back(t.is_contiguous() ? t : t.copy());
    return std::vector<Tensor>{builtins::non_max_suppression(in[0], in[1], in[2], in[3], in[4])};
  });
  register_kernel("vision.roi_align", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::roi_align(in[0], in[1], in[2], in[3])};
  });
  register_kernel("vision.affine_grid", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::affine_grid(in[0], in[1], in[2])};
  });
}

}  // namespace anvil::reference
