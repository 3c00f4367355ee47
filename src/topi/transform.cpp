// Computes of the transform family's shape-changing ops: reshape and its relatives (squeeze,
// expand_dims, flatten, nn.batch_flatten), transpose, broadcast_to, tile, repeat, reverse.
// Each output element reads one input element; the compute is the index map.
#include "anvil/ir/attrs/transform.h"

#include "topi/families.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace transform {
// reshape (and reshape_like), squeeze, expand_dims, flatten and nn.batch_flatten keep the
// row-major element order, so the output's shape (from the type) is all they need; their dyn.
// forms too.
std::vector<te::Tensor> reshape_like(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  std::vector<PrimExpr> in_shape = data.shape();
  std::vector<PrimExpr> out_shape = args.out_shape();
  return {gather_compute(
      data, out_shape,
      [=](const std::vector<PrimExpr>& out) { return reshape_source(out, out_shape, in_shape); },
      tensor_name(args))};
}

// A unit input dim reads index 0; a symbolic one is tested at run time, a static one that is
// not 1 equals the output dim (checked by the type relation or dyn.broadcast_to's shape
// function).
std::vector<te::Tensor> broadcast_to(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  std::vector<PrimExpr> in_shape = data.shape();
  std::vector<PrimExpr> out_shape = args.out_shape();
  size_t offset = out_shape.size() - in_shape.size();
  return {gather_compute(
      data, out_shape,
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> from;
        for (size_t i = 0; i < in_shape.size(); ++i) {
          const PrimExpr& o = out[offset + i];
          if (tir::is_one(in_shape[i]))
            from.push_back(tir::make_int(0));
          else if (tir::as_const_int(in_shape[i]))
            from.push_back(o);
          else
            from.push_back(
                tir::select(tir::eq(in_shape[i], tir::make_int(1)), tir::make_int(0), o));
        }
        return from;
      },
      tensor_name(args))};
}

// numpy tile: the shorter of the shape and reps gets leading 1s, so the input's dims line up
// with the last dims of the output; a dim that is repeated wraps around the input's. The
// output's dims come from the type (static reps) or dyn.tile's shape function.
std::vector<te::Tensor> tile(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  std::vector<PrimExpr> in_shape = data.shape();
  std::vector<PrimExpr> out_shape = args.out_shape();
  size_t offset = out_shape.size() - in_shape.size();
  return {gather_compute(
      data, out_shape,
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> from;
        for (size_t i = 0; i < in_shape.size(); ++i) {
          const PrimExpr& o = out[offset + i];
          if (tir::is_one(in_shape[i]))
            from.push_back(tir::make_int(0));
          else if (same_extent(out_shape[offset + i], in_shape[i]))
            from.push_back(o);
          else
            from.push_back(tir::floormod(o, in_shape[i]));
        }
        return from;
      },
      tensor_name(args))};
}

namespace {

std::vector<te::Tensor> transpose(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  int64_t rank = data.ndim();
  std::vector<int64_t> perm = args.attrs_as<ir::TransposeAttrs>().axes;
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  for (int64_t& p : perm) p = wrap_axis(p, rank);
  return {gather_compute(
      data, args.out_shape(),
      [perm](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> from(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) from[size_t(perm[i])] = out[i];
        return from;
      },
      tensor_name(args))};
}

std::vector<te::Tensor> repeat(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::RepeatAttrs>();
  const te::Tensor& data = args.inputs[0];
  size_t axis = size_t(wrap_axis(attrs.axis, data.ndim()));
  int64_t repeats = attrs.repeats;
  return {gather_compute(
      data, args.out_shape(),
      [=](std::vector<PrimExpr> out) {
        out[axis] = tir::floordiv(out[axis], tir::make_int(repeats));
        return out;
      },
      tensor_name(args))};
}

// Any dim may be symbolic, the reversed one included.
std::vector<te::Tensor> reverse(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  size_t axis = size_t(wrap_axis(args.attrs_as<ir::ReverseAttrs>().axis, data.ndim()));
  PrimExpr last = args.out_shape()[axis] - tir::make_int(1);
  return {map_output(args, 0, [=](std::vector<PrimExpr> out) {
    out[axis] = last - out[axis];
    return data.at(out);
  })};
}

}  // namespace

void register_transform_shape_computes() {
  for (const char* op :
       {"reshape", "reshape_like", "squeeze", "expand_dims", "flatten", "nn.batch_flatten"})
    register_compute(op, reshape_like);
  register_compute("transpose", transpose);
  register_compute("broadcast_to", broadcast_to);
  register_compute("tile", tile);
  register_compute("repeat", repeat);
  register_compute("reverse", reverse);
}

}  // namespace transform

void register_transform_computes() {
  transform::register_transform_shape_computes();
  transform::register_transform_slice_computes();
  transform::register_transform_layout_computes();
  transform::register_transform_dynamic_computes();
}

}  // namespace anvil::topi
