// Computes of the nn_image family but for resizing and sampling (nn_resize.cpp): nn.pad and
// dyn.nn.pad, and the sub-pixel rearrangements nn.depth_to_space / nn.space_to_depth in any
// layout. Their index maps are built with the transform helpers (topi/transform_util.h).
#include <algorithm>
#include <optional>

#include "anvil/ir/attrs/nn.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace transform {
namespace {

// depth_to_space (to_space) and space_to_depth in the canonical NCHW order, read and written
// through the call's layout.
std::vector<te::Tensor> sub_pixel(const ComputeArgs& args, bool to_space) {
  const auto& attrs = args.attrs_as<ir::SubPixelAttrs>();
  const te::Tensor& data = args.inputs[0];
  Layout layout(attrs.layout);
  std::vector<int64_t> extent = layout.primal_extents(static_shape(data));
  int64_t in_channels = extent['C' - 'A'];
  int64_t b = attrs.block_size;
  bool crd = attrs.mode == "CRD";
  return {gather_compute(
      data, static_out_shape(args),
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> o = layout.to_primal(out);
        PrimExpr& n = o['N' - 'A'];
        PrimExpr& c = o['C' - 'A'];
        PrimExpr& h = o['H' - 'A'];
        PrimExpr& w = o['W' - 'A'];
        PrimExpr block = tir::make_int(b);
        std::vector<PrimExpr> in(26);
        in['N' - 'A'] = n;
        if (to_space) {
          PrimExpr i = tir::floormod(h, block), j = tir::floormod(w, block);
          in['H' - 'A'] = tir::floordiv(h, block);
          in['W' - 'A'] = tir::floordiv(w, block);
          // DCR reads the channels as (block row, block column, C'), CRD as (C', row, column).
          int64_t out_channels = in_channels / (b * b);
          in['C' - 'A'] =
              crd ? (c * block + i) * block + j : (i * block + j) * tir::make_int(out_channels) + c;
        } else {
          PrimExpr which = tir::floordiv(c, tir::make_int(in_channels));
          in['C' - 'A'] = tir::floormod(c, tir::make_int(in_channels));
          in['H' - 'A'] = h * block + tir::floordiv(which, block);
          in['W' - 'A'] = w * block + tir::floormod(which, block);
        }
        return layout.from_primal(in);
      },
      tensor_name(args))};
}

// The input coordinate an output coordinate of a padded axis reads (clamped into the axis:
// the constant mode selects the pad value outside it, but the load must stay in bounds).
// `before` and `n` may be size variables (dyn.nn.pad); then whether the axis has more than
// one element to mirror or repeat is tested at run time, and no divisor can be 0.
PrimExpr pad_source(const PrimExpr& o, const PrimExpr& before, const PrimExpr& n,
                    const std::string& mode) {
  PrimExpr i = tir::is_zero(before) ? o : o - before;
  std::optional<int64_t> size = tir::as_const_int(n);
  PrimExpr last = size ? tir::make_int(*size - 1) : n - 1;
  PrimExpr clamped = tir::min(tir::max(i, tir::make_int(0)), last);
  if ((mode != "reflect" && mode != "wrap") || (size && *size <= 1)) return clamped;
  PrimExpr repeated;
  if (mode == "reflect") {
    // Mirror about the edge elements, as often as needed (numpy's np.pad).
    PrimExpr period = size ? tir::make_int(2 * (*size - 1)) : tir::max(last * 2, tir::make_int(1));
    PrimExpr r = tir::floormod(i, period);
    repeated = tir::select(r < n, r, period - r);
  } else {
    // Repeat the axis, as often as needed (numpy's np.pad).
    repeated = tir::floormod(i, size ? n : tir::max(n, tir::make_int(1)));
  }
  return size ? repeated : tir::select(tir::make_int(1) < n, repeated, clamped);
}

std::vector<te::Tensor> pad(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::PadAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& pad_value = args.inputs[1];
  std::vector<int64_t> in_shape = static_shape(data);
  std::string mode = attrs.pad_mode;
  std::vector<int64_t> before;
  for (size_t k = 0; k < in_shape.size(); ++k) before.push_back(attrs.pad_width[2 * k]);
  bool empty_input = std::find(in_shape.begin(), in_shape.end(), 0) != in_shape.end();
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    // No input element to read anywhere (only constant mode allows an empty axis).
    if (empty_input) return convert_like_reference(scalar_value(pad_value), data.dtype());
    std::vector<PrimExpr> from;
    PrimExpr inside;  // constant mode: whether the element is one of the input's
    for (size_t k = 0; k < out.size(); ++k) {
      // An axis without padding reads its own index: no clamp, which would hide from the
      // vectorizer that a vector of it is contiguous.
      const bool unpadded = before[k] == 0 && attrs.pad_width[2 * k + 1] == 0;
      from.push_back(unpadded ? out[k]
                              : pad_source(out[k], tir::make_int(before[k]),
                                           tir::make_int(in_shape[k]), mode));
      if (mode != "constant" || unpadded) continue;
      PrimExpr i = out[k] - tir::make_int(before[k]);
      PrimExpr in_axis = tir::logical_and(i >= tir::make_int(0), i < tir::make_int(in_shape[k]));
      inside = inside ? tir::logical_and(inside, in_axis) : in_axis;
    }
    PrimExpr value = data.at(from);
    if (!inside) return value;
    return tir::select(inside, value,
                       convert_like_reference(scalar_value(pad_value), data.dtype()));
  })};
}

// dyn.nn.pad: each axis's padding before it arrives as an extra of the shape function. An
// element is read only where it exists (if_then_else evaluates the side taken): outside the
// input in constant mode, and anywhere on an axis that is empty at run time, the element is
// the pad value, as the reference kernel has it.
std::vector<te::Tensor> dyn_pad(const ComputeArgs& args) {
  const std::string mode = args.attrs_as<ir::DynPadAttrs>().pad_mode;
  const te::Tensor& data = args.inputs[0];
  const size_t rank = data.ndim();
  if (args.extras.size() != rank)
    throw_error(args.op_name(), ": the pads are read at run time, which needs its shape function");
  std::vector<PrimExpr> before(args.extras.begin(), args.extras.end());
  std::vector<PrimExpr> in_shape = data.shape();
  PrimExpr fill = convert_like_reference(scalar_value(args.inputs[2]), data.dtype());
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    std::vector<PrimExpr> from;
    PrimExpr inside = tir::make_const(DataType::boolean(), 1);
    for (size_t k = 0; k < rank; ++k) {
      const PrimExpr& n = in_shape[k];
      from.push_back(pad_source(out[k], before[k], n, mode));
      PrimExpr i = out[k] - before[k];
      if (mode == "constant")
        inside = tir::logical_and(inside, tir::logical_and(i >= tir::make_int(0), i < n));
      else if (std::optional<int64_t> size = tir::as_const_int(n); !size || *size == 0)
        inside = tir::logical_and(inside, tir::make_int(0) < n);
    }
    return nn::if_then_else(inside, data.at(from), fill);
  })};
}

// The output dims (each input dim grown by its pads), then each dim's padding before it.
// pads holds the listed axes' befores, then their afters; an axis listed twice, out of range,
// or padded below zero is rejected (-1).
te::Tensor dyn_pad_dims(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& pads = args.inputs[1];
  const te::Tensor& axes = args.inputs[3];
  const int64_t rank = int64_t(data.ndim()), count = vector_length(axes);
  if (vector_length(pads) != 2 * count)
    throw_error(args.op_name(), ": 'pads' has ", vector_length(pads), " values for ", count,
                " axes");
  std::vector<PrimExpr> dims, befores;
  PrimExpr valid = tir::make_const(DataType::boolean(), 1), matched = tir::make_int(0);
  for (int64_t d = 0; d < rank; ++d) {
    PrimExpr before = tir::make_int(0), after = tir::make_int(0), hits = tir::make_int(0);
    for (int64_t j = 0; j < count; ++j) {
      PrimExpr here = axis_matches(axes, j, d, rank);
      before = before + tir::select(here, vector_element(pads, j), tir::make_int(0));
      after = after + tir::select(here, vector_element(pads, count + j), tir::make_int(0));
      hits = hits + tir::select(here, tir::make_int(1), tir::make_int(0));
    }
    PrimExpr dim = data.shape()[size_t(d)] + before + after;
    valid = tir::logical_and(valid,
                             tir::logical_and(hits <= tir::make_int(1), tir::make_int(0) <= dim));
    matched = matched + hits;
    dims.push_back(dim);
    befores.push_back(before);
  }
  valid = tir::logical_and(valid, tir::eq(matched, tir::make_int(count)));
  return shape_function_result(dims, valid, args, befores);
}

}  // namespace
}  // namespace transform

void register_nn_image_computes() {
  using namespace transform;
  register_compute("nn.depth_to_space",
                   [](const ComputeArgs& args) { return sub_pixel(args, true); });
  register_compute("nn.space_to_depth",
                   [](const ComputeArgs& args) { return sub_pixel(args, false); });
  register_compute("nn.pad", pad);
  register_compute("dyn.nn.pad", dyn_pad);
  register_shape_compute("dyn.nn.pad", ShapeCompute{dyn_pad_dims, data_rank});
  register_resize_computes();
}

}  // namespace anvil::topi
