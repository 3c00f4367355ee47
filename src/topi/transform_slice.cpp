// Computes of the transform family's joining and slicing ops: concatenate, split,
// strided_slice, reverse_sequence and trilu.
#include <algorithm>
#include <limits>
#include <optional>

#include "anvil/ir/attrs/transform.h"
#include "topi/nn_util.h"
#include "topi/topi_util.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

// One output element per call of select, from the last part backwards. Every part's index
// is clamped into range: select evaluates both sides, so a load must stay in bounds even on
// the side that is not taken. A part whose extent along the axis is a size variable may be
// empty at run time, where no index is in range; then the parts are chosen by if_then_else,
// which evaluates only the side taken.
std::vector<te::Tensor> concatenate(const ComputeArgs& args) {
  std::vector<te::Tensor> parts(args.inputs.begin(), args.inputs.end());
  ANVIL_ICHECK(!parts.empty(), "concatenate of nothing");
  std::vector<PrimExpr> out_shape = args.out_shape();
  size_t axis =
      size_t(wrap_axis(args.attrs_as<ir::ConcatenateAttrs>().axis, int64_t(out_shape.size())));
  std::vector<PrimExpr> offsets, sizes;
  // The offset of the next part: the static extents so far plus the symbolic ones, if any.
  int64_t static_offset = 0;
  PrimExpr symbolic_offset;
  std::vector<te::Tensor> nonempty;
  bool symbolic = false;  // some part's extent is a size variable
  for (const te::Tensor& part : parts) {
    const PrimExpr& size = part.shape()[axis];
    std::optional<int64_t> known = tir::as_const_int(size);
    if (!known || *known > 0) {
      nonempty.push_back(part);
      offsets.push_back(symbolic_offset ? symbolic_offset + static_offset
                                        : tir::make_int(static_offset));
      sizes.push_back(size);
      symbolic |= !known;
    }
    if (known)
      static_offset += *known;
    else
      symbolic_offset = symbolic_offset ? symbolic_offset + size : size;
  }

  if (nonempty.empty())  // nothing to read: the output is empty too
    return {te::compute(
        out_shape,
        [dtype = parts[0].dtype()](const std::vector<tir::Var>&) {
          return tir::make_const(dtype, 0);
        },
        tensor_name(args))};
  return {te::compute(
      out_shape,
      [=](const std::vector<tir::Var>& vars) {
        std::vector<PrimExpr> out = as_exprs(vars);
        auto read = [&](size_t k) {
          std::vector<PrimExpr> from = out;
          PrimExpr local = out[axis] - offsets[k];
          if (nonempty.size() > 1 && !symbolic)
            local = tir::min(tir::max(local, tir::make_int(0)),
                             tir::make_int(*tir::as_const_int(sizes[k]) - 1));
          from[axis] = local;
          return nonempty[k].at(from);
        };
        PrimExpr value = read(nonempty.size() - 1);
        for (size_t k = nonempty.size() - 1; k-- > 0;) {
          PrimExpr before_next = out[axis] < offsets[k + 1];
          value = symbolic ? nn::if_then_else(before_next, read(k), value)
                           : tir::select(before_next, read(k), value);
        }
        return value;
      },
      tensor_name(args))};
}

std::vector<te::Tensor> split(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::SplitAttrs>();
  const te::Tensor& data = args.inputs[0];
  size_t axis = size_t(wrap_axis(attrs.axis, data.ndim()));
  std::vector<te::Tensor> outputs;
  // Only the split axis must be static; the others may be size variables.
  int64_t begin = 0;
  for (size_t i = 0; i < args.num_outputs(); ++i) {
    std::vector<PrimExpr> shape = args.out_shape(i);
    outputs.push_back(gather_compute(
        data, shape,
        [=](std::vector<PrimExpr> out) {
          out[axis] = out[axis] + tir::make_int(begin);
          return out;
        },
        tensor_name(args) + "_" + std::to_string(i)));
    begin += static_extent(shape[axis]);
  }
  return outputs;
}

// Where a sliced axis starts and how far each step goes.
struct AxisSlice {
  int64_t start = 0, step = 1;
};

// x[begin:end:step] along a dim of size `dim`, clamped as numpy and ONNX do (and as the
// reference kernel does); the length comes from the output type.
AxisSlice clamp_slice(int64_t begin, int64_t step, int64_t dim) {
  int64_t b = begin < 0 ? begin + dim : begin;
  if (step > 0) return {std::clamp(b, int64_t(0), dim), step};
  return {std::clamp(b, int64_t(-1), dim - 1),
          std::max(step, -std::numeric_limits<int64_t>::max())};
}

std::vector<te::Tensor> strided_slice(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::StridedSliceAttrs>();
  const te::Tensor& data = args.inputs[0];
  const std::vector<PrimExpr>& in_shape = data.shape();
  int64_t rank = int64_t(in_shape.size());
  // Per axis: where the slice starts (an index expression) and its step. Axes not sliced may be
  // size variables; a sliced one of symbolic size takes a forward slice from a non-negative
  // begin (start = min(begin, dim)), anything else needs its size (static_extent declines).
  std::vector<PrimExpr> starts(in_shape.size(), tir::make_int(0));
  std::vector<int64_t> steps(in_shape.size(), 1);
  for (size_t i = 0; i < attrs.begin.size(); ++i) {
    size_t axis = size_t(attrs.axes.empty() ? int64_t(i) : wrap_axis(attrs.axes[i], rank));
    int64_t step = attrs.slice_mode == "size" || i >= attrs.strides.size() ? 1 : attrs.strides[i];
    std::optional<int64_t> known = tir::as_const_int(in_shape[axis]);
    if (!known && attrs.begin[i] >= 0 && step > 0) {
      starts[axis] = attrs.slice_mode == "size"
                         ? tir::make_int(attrs.begin[i])
                         : tir::min(tir::make_int(attrs.begin[i]), in_shape[axis]);
      steps[axis] = step;
      continue;
    }
    int64_t dim = static_extent(in_shape[axis]);
    if (attrs.slice_mode == "size") {
      starts[axis] = tir::make_int(attrs.begin[i] < 0 ? attrs.begin[i] + dim : attrs.begin[i]);
    } else {
      AxisSlice slice = clamp_slice(attrs.begin[i], step, dim);
      starts[axis] = tir::make_int(slice.start);
      steps[axis] = slice.step;
    }
  }
  return {gather_compute(
      data, args.out_shape(),
      [starts, steps](std::vector<PrimExpr> out) {
        for (size_t d = 0; d < out.size(); ++d) {
          if (steps[d] != 1) out[d] = out[d] * tir::make_int(steps[d]);
          if (!tir::is_zero(starts[d])) out[d] = out[d] + starts[d];
        }
        return out;
      },
      tensor_name(args))};
}

// Any dim may be symbolic (a recurrent layer's sequence of run-time length).
std::vector<te::Tensor> reverse_sequence(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ReverseSequenceAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& lengths = args.inputs[1];
  int64_t rank = int64_t(data.ndim());
  size_t seq_axis = size_t(wrap_axis(attrs.seq_axis, rank));
  size_t batch_axis = size_t(wrap_axis(attrs.batch_axis, rank));
  PrimExpr seq_size = args.out_shape()[seq_axis];
  return {map_output(args, 0, [=](std::vector<PrimExpr> out) {
    PrimExpr length =
        tir::min(tir::max(as_index(lengths(out[batch_axis])), tir::make_int(0)), seq_size);
    PrimExpr s = out[seq_axis];
    out[seq_axis] = tir::select(s < length, length - tir::make_int(1) - s, s);
    return data.at(out);
  })};
}

std::vector<te::Tensor> trilu(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  PrimExpr k = as_index(scalar_value(args.inputs[1]));
  bool upper = args.attrs_as<ir::TriluAttrs>().upper;
  DataType dtype = data.dtype();
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    size_t rank = out.size();
    PrimExpr diagonal = out[rank - 1] - out[rank - 2];
    PrimExpr keep = upper ? diagonal >= k : diagonal <= k;
    return tir::select(keep, data.at(out), tir::make_const(dtype, 0));
  })};
}

}  // namespace

void register_transform_slice_computes() {
  register_compute("concatenate", concatenate);
  register_compute("split", split);
  register_compute("strided_slice", strided_slice);
  register_compute("reverse_sequence", reverse_sequence);
  register_compute("trilu", trilu);
}

}  // namespace anvil::topi::transform
