// Attributes of the transform, index and creation families. Field names and
// meanings follow TVM's Relay attrs; where TVM's field is an Optional, an
// empty vector or std::nullopt here means "not given". Index dtypes default to
// int64, the type ONNX uses for every index and shape tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

// ---------------------------------------------------------------- transform

// reshape. Entries of newshape: a positive size; 0 copies the input dim at the
// same position (a literal 0 when allowzero); -1 is inferred from the element
// count; TVM's -2 copies all remaining dims, -3 merges the next two input
// dims, -4 splits one input dim into the two entries that follow it.
struct ReshapeAttrs : AttrsBase<ReshapeAttrs> {
  static constexpr const char* kTypeKey = "ReshapeAttrs";
  std::vector<int64_t> newshape;
  bool allowzero = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("newshape", newshape);
    v("allowzero", allowzero);
  }
};

// reshape_like (TVM's): data's dims [lhs_begin, lhs_end) replaced by shape_like's dims
// [rhs_begin, rhs_end); an end left out is the rank, negative values count from the end.
struct ReshapeLikeAttrs : AttrsBase<ReshapeLikeAttrs> {
  static constexpr const char* kTypeKey = "ReshapeLikeAttrs";
  int64_t lhs_begin = 0;
  std::optional<int64_t> lhs_end;
  int64_t rhs_begin = 0;
  std::optional<int64_t> rhs_end;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("lhs_begin", lhs_begin);
    v("lhs_end", lhs_end);
    v("rhs_begin", rhs_begin);
    v("rhs_end", rhs_end);
  }
};

// transpose: output dim i is input dim axes[i]; empty axes reverse the dims.
struct TransposeAttrs : AttrsBase<TransposeAttrs> {
  static constexpr const char* kTypeKey = "TransposeAttrs";
  std::vector<int64_t> axes;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axes", axes);
  }
};

// concatenate: joins the tensors of its one tuple argument along axis.
struct ConcatenateAttrs : AttrsBase<ConcatenateAttrs> {
  static constexpr const char* kTypeKey = "ConcatenateAttrs";
  int64_t axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// split into a tuple. TVM's indices_or_sections is an int or a list; the two
// cases are two fields here: sections (equal parts), else indices (the
// ascending split points; no indices and no sections give the whole tensor).
struct SplitAttrs : AttrsBase<SplitAttrs> {
  static constexpr const char* kTypeKey = "SplitAttrs";
  std::optional<int64_t> sections;
  std::vector<int64_t> indices;
  int64_t axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("sections", sections);
    v("indices", indices);
    v("axis", axis);
  }
};

// strided_slice with numpy/ONNX clamping. begin/end/strides apply to axes
// (empty: axes 0, 1, ...); missing strides are 1 and may be negative. In
// slice_mode "size", end holds sizes (-1: to the end) and strides are ignored.
struct StridedSliceAttrs : AttrsBase<StridedSliceAttrs> {
  static constexpr const char* kTypeKey = "StridedSliceAttrs";
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;
  std::string slice_mode = "end";
  std::vector<int64_t> axes;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("begin", begin);
    v("end", end);
    v("strides", strides);
    v("slice_mode", slice_mode);
    v("axes", axes);
  }
};

// squeeze: removes the listed unit dims; empty axis removes every static 1.
struct SqueezeAttrs : AttrsBase<SqueezeAttrs> {
  static constexpr const char* kTypeKey = "SqueezeAttrs";
  std::vector<int64_t> axis;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// expand_dims: inserts num_newaxis unit dims at axis, in [-rank - 1, rank].
struct ExpandDimsAttrs : AttrsBase<ExpandDimsAttrs> {
  static constexpr const char* kTypeKey = "ExpandDimsAttrs";
  int64_t axis = 0;
  int64_t num_newaxis = 1;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("num_newaxis", num_newaxis);
  }
};

// broadcast_to: numpy broadcast of the input to exactly shape.
struct BroadcastToAttrs : AttrsBase<BroadcastToAttrs> {
  static constexpr const char* kTypeKey = "BroadcastToAttrs";
  std::vector<int64_t> shape;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("shape", shape);
  }
};

// flatten (ONNX Flatten): a 2-D result, dims before axis times dims from axis.
struct FlattenAttrs : AttrsBase<FlattenAttrs> {
  static constexpr const char* kTypeKey = "FlattenAttrs";
  int64_t axis = 1;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// tile (numpy): the shorter of reps and the shape is padded with leading 1s.
struct TileAttrs : AttrsBase<TileAttrs> {
  static constexpr const char* kTypeKey = "TileAttrs";
  std::vector<int64_t> reps;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("reps", reps);
  }
};

// repeat: each element repeated `repeats` times along axis.
struct RepeatAttrs : AttrsBase<RepeatAttrs> {
  static constexpr const char* kTypeKey = "RepeatAttrs";
  int64_t repeats = 1;
  int64_t axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("repeats", repeats);
    v("axis", axis);
  }
};

// reverse: the elements along axis in reverse order.
struct ReverseAttrs : AttrsBase<ReverseAttrs> {
  static constexpr const char* kTypeKey = "ReverseAttrs";
  int64_t axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// reverse_sequence: per batch entry, the first seq_lengths[b] elements along
// seq_axis reversed.
struct ReverseSequenceAttrs : AttrsBase<ReverseSequenceAttrs> {
  static constexpr const char* kTypeKey = "ReverseSequenceAttrs";
  int64_t seq_axis = 1;
  int64_t batch_axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("seq_axis", seq_axis);
    v("batch_axis", batch_axis);
  }
};

// cast to dtype.
struct CastAttrs : AttrsBase<CastAttrs> {
  static constexpr const char* kTypeKey = "CastAttrs";
  DataType dtype = DataType::float32();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("dtype", dtype);
  }
};

// layout_transform between layouts such as "NCHW" and "NCHW16c": upper-case
// letters are whole axes, "16c" is a block of 16 of axis C.
struct LayoutTransformAttrs : AttrsBase<LayoutTransformAttrs> {
  static constexpr const char* kTypeKey = "LayoutTransformAttrs";
  std::string src_layout;
  std::string dst_layout;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("src_layout", src_layout);
    v("dst_layout", dst_layout);
  }
};

// trilu(data, k): keeps the upper (or lower) triangle above (below) diagonal k.
struct TriluAttrs : AttrsBase<TriluAttrs> {
  static constexpr const char* kTypeKey = "TriluAttrs";
  bool upper = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("upper", upper);
  }
};

// einsum over the tensors of its one tuple argument ("ij,jk->ik", numpy rules).
struct EinsumAttrs : AttrsBase<EinsumAttrs> {
  static constexpr const char* kTypeKey = "EinsumAttrs";
  std::string equation;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("equation", equation);
  }
};

// ---------------------------------------------------------------- index

// take(data, indices): with axis, picks along it (batch_dims leading dims of
// data and indices match); without, indexes the flattened data. mode is "clip",
// "wrap" or "fast" (indices assumed in range).
struct TakeAttrs : AttrsBase<TakeAttrs> {
  static constexpr const char* kTypeKey = "TakeAttrs";
  int64_t batch_dims = 0;
  std::optional<int64_t> axis;
  std::string mode = "clip";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("batch_dims", batch_dims);
    v("axis", axis);
    v("mode", mode);
  }
};

// gather (ONNX GatherElements): out[i][j] = data[indices[i][j]][j] for axis 0.
struct GatherAttrs : AttrsBase<GatherAttrs> {
  static constexpr const char* kTypeKey = "GatherAttrs";
  int64_t axis = 0;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// gather_nd in TVM's layout: indices are (M, Y...), the index tuple on the
// first axis (ONNX puts it last); the result is (Y..., data dims after
// batch_dims + M). index_rank gives M when indices' first dim is symbolic.
struct GatherNDAttrs : AttrsBase<GatherNDAttrs> {
  static constexpr const char* kTypeKey = "GatherNDAttrs";
  int64_t batch_dims = 0;
  std::optional<int64_t> index_rank;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("batch_dims", batch_dims);
    v("index_rank", index_rank);
  }
};

// scatter_elements(data, indices, updates); reduction is "update", "add",
// "mul", "mean", "min" or "max".
struct ScatterElementsAttrs : AttrsBase<ScatterElementsAttrs> {
  static constexpr const char* kTypeKey = "ScatterElementsAttrs";
  int64_t axis = 0;
  std::string reduction = "update";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("reduction", reduction);
  }
};

// scatter_nd(data, indices, updates) in TVM's layout: indices (M, Y...),
// updates (Y..., data dims from M); mode is "update", "add", "mul", "min" or "max".
struct ScatterNDAttrs : AttrsBase<ScatterNDAttrs> {
  static constexpr const char* kTypeKey = "ScatterNDAttrs";
  std::string mode = "update";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("mode", mode);
  }
};

// one_hot(indices, on_value, off_value): a new axis of size depth; dtype
// defaults to on_value's. Negative indices count back from depth (as ONNX
// OneHot); indices outside [-depth, depth) give a row of off_value.
// dyn.one_hot ignores depth and takes it as a tensor argument.
struct OneHotAttrs : AttrsBase<OneHotAttrs> {
  static constexpr const char* kTypeKey = "OneHotAttrs";
  int64_t depth = 1;
  int64_t axis = -1;
  std::optional<DataType> dtype;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("depth", depth);
    v("axis", axis);
    v("dtype", dtype);
  }
};

// topk: k < 1 selects the whole axis. ret_type "both" returns (values,
// indices), else "values" or "indices" alone; dtype is the indices' type.
// dyn.topk ignores k and takes it as a tensor argument.
struct TopKAttrs : AttrsBase<TopKAttrs> {
  static constexpr const char* kTypeKey = "TopKAttrs";
  int64_t k = 1;
  int64_t axis = -1;
  std::string ret_type = "both";
  bool is_ascend = false;
  DataType dtype = DataType::int64();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("k", k);
    v("axis", axis);
    v("ret_type", ret_type);
    v("is_ascend", is_ascend);
    v("dtype", dtype);
  }
};

// sort along axis.
struct SortAttrs : AttrsBase<SortAttrs> {
  static constexpr const char* kTypeKey = "SortAttrs";
  int64_t axis = -1;
  bool is_ascend = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("is_ascend", is_ascend);
  }
};

// argsort along axis; dtype is the indices' type.
struct ArgsortAttrs : AttrsBase<ArgsortAttrs> {
  static constexpr const char* kTypeKey = "ArgsortAttrs";
  int64_t axis = -1;
  bool is_ascend = true;
  DataType dtype = DataType::int64();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("is_ascend", is_ascend);
    v("dtype", dtype);
  }
};

// cumsum, cumprod. No axis: over the flattened data. dtype defaults to the
// data's. exclusive leaves out the element itself; reverse scans from the end
// (ONNX CumSum's reverse). dyn.cumsum ignores axis and takes it as a tensor.
struct ScanopAttrs : AttrsBase<ScanopAttrs> {
  static constexpr const char* kTypeKey = "ScanopAttrs";
  std::optional<int64_t> axis;
  std::optional<DataType> dtype;
  bool exclusive = false;
  bool reverse = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
    v("dtype", dtype);
    v("exclusive", exclusive);
    v("reverse", reverse);
  }
};

// unique (ONNX Unique): the distinct elements (with axis: the distinct slices
// along it), sorted ascending or in order of first occurrence, returned with
// the index of each one's first occurrence, the inverse mapping and counts.
struct UniqueAttrs : AttrsBase<UniqueAttrs> {
  static constexpr const char* kTypeKey = "UniqueAttrs";
  bool sorted = true;
  std::optional<int64_t> axis;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("sorted", sorted);
    v("axis", axis);
  }
};

// col2im (ONNX Col2Im, PyTorch's fold): data (N, C * prod(block_shape), L)
// holds, for each of the L sliding-block positions, a block of each channel;
// the blocks are summed back into images (N, C, image_shape...). pads are
// every axis' begin then every end; empty dilations, pads and strides mean
// 1, 0 and 1. dyn.col2im ignores image_shape and block_shape and takes them
// as tensor arguments.
struct Col2ImAttrs : AttrsBase<Col2ImAttrs> {
  static constexpr const char* kTypeKey = "Col2ImAttrs";
  std::vector<int64_t> image_shape;
  std::vector<int64_t> block_shape;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("image_shape", image_shape);
    v("block_shape", block_shape);
    v("dilations", dilations);
    v("pads", pads);
    v("strides", strides);
  }
};

// ---------------------------------------------------------------- creation

// arange: start, start + step, ... below stop (above it for a negative step).
struct ArangeAttrs : AttrsBase<ArangeAttrs> {
  static constexpr const char* kTypeKey = "ArangeAttrs";
  double start = 0.0;
  double stop = 0.0;
  double step = 1.0;
  DataType dtype = DataType::float32();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("start", start);
    v("stop", stop);
    v("step", step);
    v("dtype", dtype);
  }
};

// full, zeros, ones: a tensor of shape. dtype defaults to fill_value's (full)
// or float32 (zeros, ones). dyn.full ignores shape and takes it as a tensor.
struct InitOpAttrs : AttrsBase<InitOpAttrs> {
  static constexpr const char* kTypeKey = "InitOpAttrs";
  std::vector<int64_t> shape;
  std::optional<DataType> dtype;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("shape", shape);
    v("dtype", dtype);
  }
};

// shape_of: the input's shape as a 1-D tensor of dtype.
struct ShapeOfAttrs : AttrsBase<ShapeOfAttrs> {
  static constexpr const char* kTypeKey = "ShapeOfAttrs";
  DataType dtype = DataType::int64();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("dtype", dtype);
  }
};

// ndarray_size: the input's element count as a scalar of dtype.
struct NdarraySizeAttrs : AttrsBase<NdarraySizeAttrs> {
  static constexpr const char* kTypeKey = "NdarraySizeAttrs";
  DataType dtype = DataType::int64();

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("dtype", dtype);
  }
};

}  // namespace anvil::ir
