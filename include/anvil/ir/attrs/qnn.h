// Attributes of the quantized dialect (qnn.*): the ops that carry integer
// tensors together with the scale and zero point that give them meaning.
#pragma once

#include <cmath>

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

// qnn.add and qnn.mul: lhs + rhs and lhs * rhs of two per-tensor quantized 8-bit tensors,
// requantized to out_scale / out_zero_point. Computed as integer runtimes do (XNNPACK, ONNX
// Runtime's QLinearAdd and QLinearMul on x86) rather than as dequantize-op-quantize: the
// inputs rescaled straight into the output's units, see qnn_add_terms and qnn_mul_terms.
struct QnnBinaryAttrs : AttrsBase<QnnBinaryAttrs> {
  static constexpr const char* kTypeKey = "qnn.BinaryAttrs";
  double lhs_scale = 1;
  int64_t lhs_zero_point = 0;
  double rhs_scale = 1;
  int64_t rhs_zero_point = 0;
  double out_scale = 1;
  int64_t out_zero_point = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("lhs_scale", lhs_scale);
    v("lhs_zero_point", lhs_zero_point);
    v("rhs_scale", rhs_scale);
    v("rhs_zero_point", rhs_zero_point);
    v("out_scale", out_scale);
    v("out_zero_point", out_zero_point);
  }
};

// The float32 terms of qnn.add: out = saturate(round_half_even(fma(lhs, lhs_ratio,
// fma(rhs, rhs_ratio, offset)))), with the ratios the input scales over the output's and
// the offset out_zero_point - (lhs_ratio * lhs_zero_point + rhs_ratio * rhs_zero_point).
// The reference kernel and the compute both take them from here, so they agree bit for bit.
struct QnnAddTerms {
  float lhs_ratio, rhs_ratio, offset;
};
inline QnnAddTerms qnn_add_terms(const QnnBinaryAttrs& a) {
  const float out_scale = float(a.out_scale);
  const float lhs_ratio = float(a.lhs_scale) / out_scale;
  const float rhs_ratio = float(a.rhs_scale) / out_scale;
  // The two zero-point products summed with one fused multiply-add: ONNX Runtime's kernel
  // computes the offset so, and one rounding less or more moves results across a half.
  const float zero_points =
      std::fma(lhs_ratio, float(a.lhs_zero_point), rhs_ratio * float(a.rhs_zero_point));
  return {lhs_ratio, rhs_ratio, float(a.out_zero_point) - zero_points};
}

// The float32 terms of qnn.mul: out = saturate(round_half_even(float((lhs - lhs_zero_point) *
// (rhs - rhs_zero_point)) * ratio + out_zero_point)), the integer product exact and the
// multiply rounded before the add (never fused into one multiply-add), with ratio =
// lhs_scale * rhs_scale / out_scale in float32: ONNX Runtime's QLinearMul on x86.
struct QnnMulTerms {
  float ratio, offset;
};
inline QnnMulTerms qnn_mul_terms(const QnnBinaryAttrs& a) {
  const float ratio = float(a.lhs_scale) * float(a.rhs_scale) / float(a.out_scale);
  return {ratio, float(a.out_zero_point)};
}

}  // namespace anvil::ir
