// Computes of the index family's picking ops: take, gather, gather_nd and one_hot. The
// indices are read as data (any integer dtype) and turned into int64 coordinates the way the
// reference kernels resolve them.
#include <optional>

#include "anvil/ir/attrs/transform.h"
#include "topi/families.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace transform {
namespace {

// An index into a dim of size `dim` under take's modes: clip clamps into the dim, wrap takes
// it modulo the dim, fast (and gather, gather_nd) only lets negative indices count from the
// end and trusts the rest to be in range.
PrimExpr resolve_index(const PrimExpr& raw, const PrimExpr& dim, const std::string& mode) {
  PrimExpr index = as_index(raw);
  if (mode == "clip") {
    std::optional<int64_t> known = tir::as_const_int(dim);
    PrimExpr last = known ? tir::make_int(*known - 1) : dim - tir::make_int(1);
    return tir::min(tir::max(index, tir::make_int(0)), last);
  }
  if (mode == "wrap") return tir::floormod(index, dim);
  return tir::select(index < tir::make_int(0), index + dim, index);
}

PrimExpr resolve_index(const PrimExpr& raw, int64_t dim, const std::string& mode) {
  return resolve_index(raw, tir::make_int(dim), mode);
}

std::vector<te::Tensor> take(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::TakeAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& indices = args.inputs[1];
  std::string mode = attrs.mode;
  if (!attrs.axis) {
    // Into the flattened data; any dim of the data or the indices may be a size variable.
    const std::vector<PrimExpr>& in_shape = data.shape();
    const PrimExpr count = shape_product(in_shape);
    return {gather_compute(
        data, args.out_shape(),
        [=](const std::vector<PrimExpr>& out) {
          PrimExpr flat = resolve_index(indices.at(out), count, mode);
          return unravel(flat, in_shape);
        },
        tensor_name(args))};
  }
  // Along an axis, any dim may be a size variable (an embedding gathered for (batch, seq) ids).
  const std::vector<PrimExpr>& in_shape = data.shape();
  size_t axis = size_t(wrap_axis(*attrs.axis, int64_t(in_shape.size())));
  size_t index_rank = size_t(indices.ndim());
  size_t batch_dims =
      size_t(attrs.batch_dims < 0 ? attrs.batch_dims + int64_t(index_rank) : attrs.batch_dims);
  // out = data[:axis] + indices[batch_dims:] + data[axis + 1:]
  size_t picked = index_rank - batch_dims;
  PrimExpr dim = in_shape[axis];
  return {gather_compute(
      data, args.out_shape(),
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> at(out.begin(), out.begin() + ptrdiff_t(batch_dims));
        at.insert(at.end(), out.begin() + ptrdiff_t(axis), out.begin() + ptrdiff_t(axis + picked));
        std::vector<PrimExpr> from(out.begin(), out.begin() + ptrdiff_t(axis));
        from.push_back(resolve_index(indices.at(at), dim, mode));
        from.insert(from.end(), out.begin() + ptrdiff_t(axis + picked), out.end());
        return from;
      },
      tensor_name(args))};
}

// ONNX GatherElements.
std::vector<te::Tensor> gather(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& indices = args.inputs[1];
  size_t axis = size_t(wrap_axis(args.attrs_as<ir::GatherAttrs>().axis, int64_t(data.ndim())));
  PrimExpr dim = data.shape()[axis];  // any dim may be a size variable
  return {gather_compute(
      data, args.out_shape(),
      [=](std::vector<PrimExpr> out) {
        out[axis] = resolve_index(indices.at(out), dim, "fast");
        return out;
      },
      tensor_name(args))};
}

// TVM layout: indices (M, B..., Y...), result (B..., Y..., data dims from B + M).
std::vector<te::Tensor> gather_nd(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::GatherNDAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& indices = args.inputs[1];
  std::vector<int64_t> in_shape = static_shape(data);
  std::vector<int64_t> index_shape = static_shape(indices);
  size_t m = size_t(index_shape[0]);
  size_t batch = size_t(attrs.batch_dims);
  size_t tuple_rank = index_shape.size() - 1;  // B..., Y...
  return {gather_compute(
      data, static_out_shape(args),
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> from(out.begin(), out.begin() + ptrdiff_t(batch));
        for (size_t j = 0; j < m; ++j) {
          std::vector<PrimExpr> at{tir::make_int(int64_t(j))};
          at.insert(at.end(), out.begin(), out.begin() + ptrdiff_t(tuple_rank));
          from.push_back(resolve_index(indices.at(at), in_shape[batch + j], "fast"));
        }
        from.insert(from.end(), out.begin() + ptrdiff_t(tuple_rank), out.end());
        return from;
      },
      tensor_name(args))};
}

// Negative indices count back from depth (ONNX OneHot); out-of-range ones match no position.
std::vector<te::Tensor> one_hot(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::OneHotAttrs>();
  const te::Tensor& indices = args.inputs[0];
  DataType dtype = args.out_dtype();
  PrimExpr on = convert_like_reference(scalar_value(args.inputs[1]), dtype);
  PrimExpr off = convert_like_reference(scalar_value(args.inputs[2]), dtype);
  int64_t rank = indices.ndim();
  size_t axis = size_t(attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis);
  // The depth is the output's dim on the new axis: the attribute's, or the size variable
  // dyn.one_hot's shape function bound.
  PrimExpr depth = args.out_shape()[axis];
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    std::vector<PrimExpr> at = out;
    at.erase(at.begin() + ptrdiff_t(axis));
    PrimExpr index = as_index(indices.at(at));
    index = tir::select(index < tir::make_int(0), index + depth, index);
    return tir::select(tir::eq(index, out[axis]), on, off);
  })};
}

// dyn.one_hot: the indices' dims with the depth (at least 1) inserted at the new axis.
te::Tensor one_hot_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::OneHotAttrs>();
  std::vector<PrimExpr> dims = args.inputs[0].shape();
  int64_t rank = int64_t(dims.size());
  PrimExpr depth = as_index(scalar_value(args.inputs[3]));
  dims.insert(dims.begin() + (attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis), depth);
  return shape_function_result(dims, tir::make_int(1) <= depth, args);
}

}  // namespace

void register_sort_computes();  // index_sort.cpp: sort, argsort, topk

void register_index_gather_computes() {
  register_compute("take", take);
  register_compute("gather", gather);
  register_compute("gather_nd", gather_nd);
  register_compute("one_hot", one_hot);
  register_compute("dyn.one_hot", one_hot);
  register_shape_compute("dyn.one_hot", ShapeCompute{one_hot_dims, nullptr});
}

}  // namespace transform

void register_index_computes() {
  transform::register_index_gather_computes();
  transform::register_sort_computes();
  transform::register_index_creation_computes();
  transform::register_index_scatter_computes();
  transform::register_index_scan_computes();
}

}  // namespace anvil::topi
