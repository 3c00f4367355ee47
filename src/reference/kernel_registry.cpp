// Reference kernels hang off the op table rows under one key, so the op table
// stays the one place that lists operators.
#include <mutex>

#include "anvil/ir/op.h"
#include "anvil/reference/reference.h"
#include "reference/kernel_families.h"

namespace anvil::reference {
namespace {

constexpr const char* kKernelKey = "reference_kernel";

void register_all_families() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elemwise_kernels();
    register_activation_kernels();
    register_nn_conv_kernels();
    register_nn_conv_winograd_kernels();
    register_nn_dense_kernels();
    register_nn_pool_kernels();
    register_nn_image_kernels();
    register_nn_norm_kernels();
    register_reduce_kernels();
    register_transform_kernels();
    register_index_kernels();
    register_creation_kernels();
    register_qnn_kernels();
    register_vision_kernels();
    register_linalg_kernels();
    register_signal_kernels();
    register_ml_kernels();
  });
}

}  // namespace

void register_kernel(std::string_view op_name, ReferenceKernel kernel) {
  ir::OpTable::global().get_mutable(op_name).set_extra(kKernelKey, std::move(kernel));
}

const ReferenceKernel* find_kernel(std::string_view op_name) {
  register_all_families();
  const ir::OpDef* def = ir::OpTable::global().find(op_name);
  return def ? def->get_extra<ReferenceKernel>(kKernelKey) : nullptr;
}

std::vector<std::string> ops_without_kernel() {
  register_all_families();
  std::vector<std::string> missing;
  for (const ir::OpDef* def : ir::OpTable::global().list())
    if (!def->get_extra<ReferenceKernel>(kKernelKey)) missing.push_back(def->name);
  return missing;
}

}  // namespace anvil::reference
