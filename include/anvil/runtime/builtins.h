// Runtime functions the VM calls by name for ops whose work has no data-parallel form: their
// output size depends on the data and each step depends on the one before. They live in the
// runtime library, so a saved VM executable that calls them loads anywhere anvil_runtime does.
// Each is registered as a global function (packed_func.h) with the VM's runtime-function
// convention: the input tensors, then a std::vector<Tensor>* that receives the outputs.
#pragma once

#include "anvil/runtime/tensor.h"

namespace anvil::builtins {

// ONNX NonMaxSuppression on corner boxes, as ONNX Runtime computes it. boxes: [batch, boxes, 4]
// float32 holding two opposite corners (y1, x1, y2, x2, in either order); scores: [batch,
// classes, boxes] float32; then one-element tensors: max_output_boxes_per_class (int64),
// iou_threshold (float32) and score_threshold (float32; a box is a candidate when its score is
// greater). Per batch and class, candidates are taken by descending score (the lower index
// first among equal scores) and kept unless their IoU with a box already kept exceeds the
// threshold, up to max_output_boxes_per_class. Returns [selected, 3] int64 rows of (batch,
// class, box index). Throws Error naming the input that has a wrong shape or type.
Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores,
                           const Tensor& max_output_boxes_per_class, const Tensor& iou_threshold,
                           const Tensor& score_threshold);

// The global function name of non_max_suppression.
inline constexpr const char* kNonMaxSuppression = "anvil.builtin.non_max_suppression";

// ONNX Det: the determinant of each square matrix of x ([..., M, M], float32 or float64), of
// shape [...] and x's dtype; by LU decomposition with partial pivoting in double precision,
// so each elimination step depends on the previous one. An empty matrix (M = 0) has
// determinant 1. Throws Error naming what is wrong with x.
Tensor determinant(const Tensor& x);

// The global function name of determinant.
inline constexpr const char* kDeterminant = "anvil.builtin.determinant";

}  // namespace anvil::builtins
