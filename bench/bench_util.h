// Small helpers the layer benchmarks share.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/runtime/tensor.h"

namespace anvil::bench {

// A float32 tensor type of a static shape.
inline ir::Type tensor_type(const std::vector<int64_t>& shape) {
  return ir::TensorTypeNode::make(ir::to_dims(shape), DataType::float32());
}

// A float32 tensor of values uniform in [-1, 1).
inline Tensor random_tensor(const std::vector<int64_t>& shape, std::mt19937& rng) {
  Tensor t = Tensor::zeros(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  float* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

}  // namespace anvil::bench
