// The x86 target's strategy records: every family of this folder, registered once with the
// other families of src/topi (registry.cpp).
#include "topi/families.h"
#include "topi/x86/families.h"

namespace anvil::topi {

void register_x86_strategies() {
  x86::register_elemwise_binary_strategies();
  x86::register_nn_conv_strategies();
  x86::register_nn_conv_winograd_strategies();
  x86::register_nn_dense_strategies();
  x86::register_nn_pool_strategies();
  x86::register_qnn_strategies();
  x86::register_qnn_conv_strategies();
  x86::register_transform_slice_strategies();
  // After the float32 records: an op's first record stays its float32 one.
  x86::register_nn_bf16_strategies();
}

}  // namespace anvil::topi
