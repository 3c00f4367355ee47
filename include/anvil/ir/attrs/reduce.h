// Attributes of the reduction family. As in TVM, `axis` lists the reduced
// axes (negative ones count from the end); an empty list means every axis,
// which is what TVM's axis=None and axis=[] both mean. With exclude, the
// listed axes are kept and all the others reduced.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// sum, mean, max, min, prod, all, any, logsumexp, l1_norm, l2_norm, sum_square.
struct ReduceAttrs : AttrsBase<ReduceAttrs> {
  static constexpr const char* kTypeKey = "ReduceAttrs";
  std::vector<int64_t> axis;  // empty: all axes
  bool keepdims = false;      // keep reduced axes as dims of size 1
  bool exclude = false;       // reduce the axes not listed

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("keepdims", keepdims);
    v("exclude", exclude);
  }
};

// argmax, argmin. The result is int64 (ONNX's ArgMax type; TVM uses int32):
// the index along the reduced axis, or with several reduced axes the
// row-major index into the reduced sub-array.
struct ArgReduceAttrs : AttrsBase<ArgReduceAttrs> {
  static constexpr const char* kTypeKey = "ArgReduceAttrs";
  std::vector<int64_t> axis;
  bool keepdims = false;
  bool exclude = false;
  bool select_last_index = false;  // on ties, the last index instead of the first

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("keepdims", keepdims);
    v("exclude", exclude);
    v("select_last_index", select_last_index);
  }
};

// variance, std: take the data and its mean (reduced with keepdims, as TVM does).
struct VarianceAttrs : AttrsBase<VarianceAttrs> {
  static constexpr const char* kTypeKey = "VarianceAttrs";
  std::vector<int64_t> axis;
  bool keepdims = false;
  bool exclude = false;
  bool unbiased = false;  // divide by N - 1 instead of N

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("keepdims", keepdims);
    v("exclude", exclude);
    v("unbiased", unbiased);
  }
};

}  // namespace anvil::ir
