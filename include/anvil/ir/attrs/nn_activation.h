// Attributes of the activation family. TVM's names and defaults where TVM has
// the op; the ops TVM builds from primitives (elu, selu, gelu, ...) take the
// defaults of their ONNX and PyTorch definitions.
#pragma once

#include <cstdint>
#include <string>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// nn.leaky_relu: x > 0 ? x : alpha * x.
struct LeakyReluAttrs : AttrsBase<LeakyReluAttrs> {
  static constexpr const char* kTypeKey = "nn.LeakyReluAttrs";
  double alpha = 0.25;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("alpha", alpha);
  }
};

// nn.prelu: x > 0 ? x : alpha[c] * x, with c the index along `axis`.
struct PReluAttrs : AttrsBase<PReluAttrs> {
  static constexpr const char* kTypeKey = "nn.PReluAttrs";
  int64_t axis = 1;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// nn.elu: x > 0 ? x : alpha * (exp(x) - 1).
struct EluAttrs : AttrsBase<EluAttrs> {
  static constexpr const char* kTypeKey = "nn.EluAttrs";
  double alpha = 1.0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("alpha", alpha);
  }
};

// nn.selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)); defaults as in ONNX.
struct SeluAttrs : AttrsBase<SeluAttrs> {
  static constexpr const char* kTypeKey = "nn.SeluAttrs";
  double alpha = 1.67326319217681884765625;
  double gamma = 1.05070102214813232421875;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("alpha", alpha);
    v("gamma", gamma);
  }
};

// nn.gelu: x * Phi(x); approximate is "none" (erf form) or "tanh".
struct GeluAttrs : AttrsBase<GeluAttrs> {
  static constexpr const char* kTypeKey = "nn.GeluAttrs";
  std::string approximate = "none";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("approximate", approximate);
  }
};

// nn.softplus: log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
struct SoftplusAttrs : AttrsBase<SoftplusAttrs> {
  static constexpr const char* kTypeKey = "nn.SoftplusAttrs";
  double beta = 1.0;
  double threshold = 20.0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("beta", beta);
    v("threshold", threshold);
  }
};

// nn.hard_sigmoid: max(0, min(1, alpha * x + beta)); defaults as in ONNX.
struct HardSigmoidAttrs : AttrsBase<HardSigmoidAttrs> {
  static constexpr const char* kTypeKey = "nn.HardSigmoidAttrs";
  double alpha = 0.2;
  double beta = 0.5;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("alpha", alpha);
    v("beta", beta);
  }
};

}  // namespace anvil::ir
