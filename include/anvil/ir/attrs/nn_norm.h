// Attributes of the normalization family: batch/layer/group/instance norm,
// local response norm, softmax and its relatives, dropout, and the negative
// log-likelihood loss that follows a log_softmax. Names and defaults follow TVM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// nn.batch_norm: normalizes each channel of `axis` with the moving statistics.
struct BatchNormAttrs : AttrsBase<BatchNormAttrs> {
  static constexpr const char* kTypeKey = "nn.BatchNormAttrs";
  int64_t axis = 1;       // the channel axis
  double epsilon = 1e-5;  // added to the variance before the square root
  bool center = true;     // add beta
  bool scale = true;      // multiply by gamma

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("epsilon", epsilon);
    v("center", center);
    v("scale", scale);
  }
};

// nn.layer_norm: normalizes over `axis` for every other index.
struct LayerNormAttrs : AttrsBase<LayerNormAttrs> {
  static constexpr const char* kTypeKey = "nn.LayerNormAttrs";
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("epsilon", epsilon);
    v("center", center);
    v("scale", scale);
  }
};

// nn.group_norm: splits the channels of `axis` into num_groups groups and
// normalizes each group of each sample.
struct GroupNormAttrs : AttrsBase<GroupNormAttrs> {
  static constexpr const char* kTypeKey = "nn.GroupNormAttrs";
  int64_t num_groups = 0;  // must be set: a positive divisor of the channel count
  int64_t axis = 1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("num_groups", num_groups);
    v("axis", axis);
    v("epsilon", epsilon);
    v("center", center);
    v("scale", scale);
  }
};

// nn.instance_norm: normalizes each channel of each sample over the spatial axes.
struct InstanceNormAttrs : AttrsBase<InstanceNormAttrs> {
  static constexpr const char* kTypeKey = "nn.InstanceNormAttrs";
  int64_t axis = 1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("epsilon", epsilon);
    v("center", center);
    v("scale", scale);
  }
};

// nn.lrn: out = data / (bias + alpha / size * sum(data^2 over `size` channels))^beta.
struct LRNAttrs : AttrsBase<LRNAttrs> {
  static constexpr const char* kTypeKey = "nn.LRNAttrs";
  int64_t size = 5;  // channels in the window, centred on the output channel
  int64_t axis = 1;
  double bias = 2.0;
  double alpha = 1e-5;
  double beta = 0.75;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("size", size);
    v("axis", axis);
    v("bias", bias);
    v("alpha", alpha);
    v("beta", beta);
  }
};

// nn.softmax, nn.log_softmax and nn.hardmax.
struct SoftmaxAttrs : AttrsBase<SoftmaxAttrs> {
  static constexpr const char* kTypeKey = "nn.SoftmaxAttrs";
  int64_t axis = -1;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// nn.dropout: `rate` is the probability of zeroing an element (training only).
struct DropoutAttrs : AttrsBase<DropoutAttrs> {
  static constexpr const char* kTypeKey = "nn.DropoutAttrs";
  double rate = 0.5;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("rate", rate);
  }
};

// nn.nll_loss: the negative log-likelihood of the target classes, as ONNX's
// NegativeLogLikelihoodLoss and TVM's nn.nll_loss compute it.
struct NLLLossAttrs : AttrsBase<NLLLossAttrs> {
  static constexpr const char* kTypeKey = "nn.NLLLossAttrs";
  std::string reduction = "mean";  // "none", "sum", or "mean" (weighted by the class weights)
  // Targets equal to it contribute neither loss nor weight; None: every target counts.
  std::optional<int64_t> ignore_index;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("reduction", reduction);
    v("ignore_index", ignore_index);
  }
};

}  // namespace anvil::ir
