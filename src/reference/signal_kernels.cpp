// Reference kernels of the signal family: the runtime library's functions
// (anvil/runtime/builtins.h), the same ones the VM calls; their tests compare them with ONNX
// Runtime (tests/cli/signal_test.cpp).
#include "anvil/runtime/builtins.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {

void register_signal_kernels() {
  register_kernel("signal.stft", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::stft(in[0], in[1], in[2], in[3], in[4])};
  });
  register_kernel("signal.dft", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::dft(in[0], in[1], in[2], in[3])};
  });
  register_kernel("signal.mel_weight_matrix", [](const KernelArgs& args) {
    const auto& in = args.inputs;
    return std::vector<Tensor>{builtins::mel_weight_matrix(in[0], in[1], in[2], in[3], in[4])};
  });
}

}  // namespace anvil::reference
