// Attributes of the quantized dialect (qnn.*): the ops that carry integer
// tensors together with the scale and zero point that give them meaning.
#pragma once

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// qnn.quantize and qnn.dequantize. The granularity follows from the scale's
// shape: one value (per tensor), a vector along `axis` (per axis), or, with
// block_size > 0, a tensor of data's rank whose `axis` dim counts blocks of
// block_size elements (blocked).
struct QuantizeAttrs : AttrsBase<QuantizeAttrs> {
  static constexpr const char* kTypeKey = "qnn.QuantizeAttrs";
  int64_t axis = 1;
  int64_t block_size = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("block_size", block_size);
  }
};

}  // namespace anvil::ir
