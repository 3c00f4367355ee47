#include "topi/families.h"
#include "topi/nn_families.h"

namespace anvil::topi {

void register_nn_computes() {
  register_nn_conv_computes();
  register_nn_dense_computes();
  register_nn_pool_computes();
  register_nn_norm_computes();
  register_nn_image_computes();
}

}  // namespace anvil::topi
