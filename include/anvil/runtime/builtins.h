// Runtime functions the VM calls by name for ops whose work has no data-parallel form: their
// output size depends on the data and each step depends on the one before. They live in the
// runtime library, so a saved VM executable that calls them loads anywhere anvil_runtime does.
// Each is registered as a global function (packed_func.h) with the VM's runtime-function
// convention: the input tensors, then a std::vector<Tensor>* that receives the outputs.
#pragma once

#include <utility>
#include <vector>

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

// topk, sort and argsort in O(n log k) per line: the first k positions along an axis of data
// in sorted order (NaN above every number, equal elements in index order, descending the
// reverse comparison with the same tie-break). k: one integer from 0 to the axis' length;
// options: five int64 values (axis, ascending 0/1, outputs: 1 values, 2 indices, 3 both, the
// indices' bits, 32 or 64, and 1 to take the whole axis whatever k says, as sort does).
// Returns the values (data's dtype) and / or the indices, each data's shape with k along the
// axis. Throws Error naming a bad argument.
std::vector<Tensor> ordered(const Tensor& data, const Tensor& k, const Tensor& options);
inline constexpr const char* kOrdered = "anvil.builtin.ordered";

// ONNX RoiAlign, as ONNX Runtime computes it. data: [N, C, H, W] float32 or float64; rois:
// [R, 4] (x1, y1, x2, y2) of data's dtype; batch_indices: [R] integers; params: six float64
// values (output_height, output_width, sampling_ratio, spatial_scale, max mode 0/1, half_pixel
// 0/1). Each output bin averages (or, in max mode, takes the largest of the bilinear samples'
// weighted corner values, as ONNX Runtime does) a grid of sampling_ratio^2 samples (adaptive
// when 0). Returns [R, C, output_height, output_width]. Throws Error naming a bad input.
Tensor roi_align(const Tensor& data, const Tensor& rois, const Tensor& batch_indices,
                 const Tensor& params);
inline constexpr const char* kRoiAlign = "anvil.builtin.roi_align";

// ONNX AffineGrid. theta: [N, 2, 3] (2-D) or [N, 3, 4] (3-D), float32 or float64; size: the
// int64 vector (N, C, H, W) or (N, C, D, H, W); align_corners: one integer. Each point of the
// normalized grid over [-1, 1] (pixel centers, or corners when align_corners) is mapped by
// theta: returns [N, H, W, 2] or [N, D, H, W, 3] of theta's dtype (x first). Throws Error
// naming what does not fit.
Tensor affine_grid(const Tensor& theta, const Tensor& size, const Tensor& align_corners);
inline constexpr const char* kAffineGrid = "anvil.builtin.affine_grid";

// ONNX Det: the determinant of each square matrix of x ([..., M, M], float32 or float64), of
// shape [...] and x's dtype; by LU decomposition with partial pivoting in double precision,
// so each elimination step depends on the previous one. An empty matrix (M = 0) has
// determinant 1. Throws Error naming what is wrong with x.
Tensor determinant(const Tensor& x);

// The global function name of determinant.
inline constexpr const char* kDeterminant = "anvil.builtin.determinant";

// ONNX STFT. signal: [batch, length, 1] (real) or [batch, length, 2] (complex), float32 or
// float64; frame_step: one integer; window: [frame_length] of signal's dtype, or no element for
// none (a rectangular window); frame_length: one integer, or -1 to take the window's length;
// onesided: one integer, non-zero for the frame_length / 2 + 1 bins of a real transform.
// Returns [batch, frames, bins, 2] (real, imaginary) of signal's dtype, frames =
// 1 + (length - frame_length) / frame_step. Throws Error naming the input that is wrong.
Tensor stft(const Tensor& signal, const Tensor& frame_step, const Tensor& window,
            const Tensor& frame_length, const Tensor& onesided);
inline constexpr const char* kStft = "anvil.builtin.stft";

// The weight of input position t in output position k of a DFT of `length` points (the complex
// matrix W of out = in x W, as (real, imaginary)): e^{-2 pi i t k / L} forward, e^{2 pi i t k / L}
// / L inverse, and for an inverse of a one-sided (Hermitian) spectrum numpy's irfft weights
// (frequencies with a mirror count twice). Zero for an input position past the transform.
std::pair<double, double> dft_weight(int64_t t, int64_t k, int64_t length, bool inverse,
                                     bool onesided);

// ONNX DFT along an axis known only at run time. input: [batch, ..., 1 or 2] float32 or
// float64; dft_length: one integer, or -1 for the default (the axis's length, or 2 (n - 1) for
// the inverse of a one-sided spectrum); axis: one integer (negative counts from the end; not
// the first or the last dim); flags: (inverse, onesided). Returns the transform, its last dim 2
// (complex) or, for the inverse of a one-sided spectrum, 1 (real).
Tensor dft(const Tensor& input, const Tensor& dft_length, const Tensor& axis, const Tensor& flags);
inline constexpr const char* kDft = "anvil.builtin.dft";

// ONNX MelWeightMatrix, as the ONNX reference computes it (triangular filters on mel-spaced
// points rounded down to DFT bins): [dft_length / 2 + 1, num_mel_bins] float32. The inputs are
// one value each: num_mel_bins, dft_length, sample_rate (integers), lower_edge_hertz and
// upper_edge_hertz (floats). Throws Error naming a value out of range.
Tensor mel_weight_matrix(const Tensor& num_mel_bins, const Tensor& dft_length,
                         const Tensor& sample_rate, const Tensor& lower_edge_hertz,
                         const Tensor& upper_edge_hertz);
inline constexpr const char* kMelWeightMatrix = "anvil.builtin.mel_weight_matrix";

// A tree ensemble (ONNX TreeEnsemble and TreeEnsembleRegressor): each row of x ([N, F],
// float32, float64 or float16) walks every tree from its root to a leaf; the leaves' weights
// are aggregated per target and post-transformed. The ensemble is tensors:
//   nodes: [nodes, 7] int64 rows of (feature, mode, true child, true child is a leaf, false
//     child, false child is a leaf, a missing (NaN) value goes to the true child); mode is
//     0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=, 6 member of a set; a child is a node or a leaf index;
//   splits: [nodes] float64, the value each node compares with;
//   membership: float64, the sets of the member nodes in node order, each ended by a NaN;
//   roots: [trees] int64, each tree's root node (a tree that is one leaf has a root whose
//     two children are that leaf);
//   leaf_offsets: [leaves + 1] int64, leaf i adds (target, weight) pairs offsets[i]..[i+1);
//   leaf_targets: int64 and leaf_weights: float64, those pairs;
//   base_values: [targets] float64, added to the aggregate (its length is the target count);
//   params: int64 (aggregate: 0 average, 1 sum, 2 min, 3 max; post transform: 0 none,
//     1 softmax, 2 logistic, 3 softmax with zeros kept, 4 probit).
// Returns [N, targets] of x's dtype. Throws Error naming the tensor that is malformed.
Tensor tree_ensemble(const Tensor& x, const Tensor& nodes, const Tensor& splits,
                     const Tensor& membership, const Tensor& roots, const Tensor& leaf_offsets,
                     const Tensor& leaf_targets, const Tensor& leaf_weights,
                     const Tensor& base_values, const Tensor& params);
inline constexpr const char* kTreeEnsemble = "anvil.builtin.tree_ensemble";

}  // namespace anvil::builtins
