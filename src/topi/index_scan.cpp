// Computes of the running scans (cumsum, cumprod) and col2im, each written as a reduction
// per output element with a condition picking its inputs: the scan axis up to the element
// (quadratic in the axis length, fine for the short axes these ops see in models), and the
// block offsets whose sliding block covers the image position.
#include "anvil/ir/attrs/transform.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

// out[..., j, ...] = combine of data[..., r, ...] for r before j (or after it, reversed),
// j itself included unless exclusive. Without an axis, over the flattened data. Each element
// is converted to the output dtype first, as the reference does.
std::vector<te::Tensor> scan(const ComputeArgs& args, tir::ReduceKind kind) {
  const auto& attrs = args.attrs_as<ir::ScanopAttrs>();
  const te::Tensor& data = args.inputs[0];
  // Along an axis, any dim may be a size variable; the flattened form needs a static shape.
  bool flattened = !attrs.axis;
  std::vector<int64_t> in_shape;
  if (flattened) in_shape = static_shape(data);
  std::vector<PrimExpr> out_shape = args.out_shape();
  DataType dtype = args.out_dtype();
  size_t axis = attrs.axis ? size_t(wrap_axis(*attrs.axis, int64_t(data.ndim()))) : 0;
  tir::IterVar r = te::reduce_axis(out_shape[axis], "r");
  PrimExpr rv = r.var;
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    std::vector<PrimExpr> at = out;
    at[axis] = rv;
    std::vector<PrimExpr> from = flattened ? unravel(at[0], in_shape) : at;
    PrimExpr j = out[axis];
    PrimExpr in_range =
        attrs.reverse ? (attrs.exclusive ? rv > j : rv >= j) : (attrs.exclusive ? rv < j : rv <= j);
    PrimExpr source = convert_like_reference(data.at(from), dtype);
    return PrimExpr(tir::ReduceNode::make(kind, source, {r}, in_range));
  })};
}

int64_t attr_or(const std::vector<int64_t>& values, size_t i, int64_t fallback) {
  return values.empty() ? fallback : values[i];
}

// out[n, c, p...] sums data[n, c * block + k, l] over the block offsets k whose block
// position l (p = l * stride - pad + k * dilation) exists.
std::vector<te::Tensor> col2im(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::Col2ImAttrs>();
  const te::Tensor& data = args.inputs[0];
  size_t rank = attrs.image_shape.size();
  std::vector<int64_t> block = attrs.block_shape, blocks;
  int64_t block_size = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t pad = attr_or(attrs.pads, d, 0) + attr_or(attrs.pads, d + rank, 0);
    int64_t span = attr_or(attrs.dilations, d, 1) * (block[d] - 1) + 1;
    blocks.push_back((attrs.image_shape[d] + pad - span) / attr_or(attrs.strides, d, 1) + 1);
    block_size *= block[d];
  }
  std::vector<tir::IterVar> axes;
  std::vector<PrimExpr> k;
  for (size_t d = 0; d < rank; ++d) {
    axes.push_back(te::reduce_axis(tir::make_int(block[d]), "k" + std::to_string(d)));
    k.push_back(axes.back().var);
  }
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    PrimExpr inside = tir::const_true();
    std::vector<PrimExpr> position;
    for (size_t d = 0; d < rank; ++d) {
      int64_t stride = attr_or(attrs.strides, d, 1);
      PrimExpr t = out[2 + d] + tir::make_int(attr_or(attrs.pads, d, 0)) -
                   k[d] * tir::make_int(attr_or(attrs.dilations, d, 1));
      PrimExpr l = tir::floordiv(t, tir::make_int(stride));
      inside = tir::logical_and(inside, t >= tir::make_int(0));
      if (stride != 1)
        inside = tir::logical_and(
            inside, tir::eq(tir::floormod(t, tir::make_int(stride)), tir::make_int(0)));
      inside = tir::logical_and(inside, l < tir::make_int(blocks[d]));
      // Kept in bounds for the elements the condition leaves out.
      position.push_back(tir::min(tir::max(l, tir::make_int(0)), tir::make_int(blocks[d] - 1)));
    }
    PrimExpr channel = out[1] * tir::make_int(block_size) + ravel(k, block);
    PrimExpr value = data.at({out[0], channel, ravel(position, blocks)});
    return tir::sum(value, axes, inside);
  })};
}

}  // namespace

void register_index_scan_computes() {
  register_compute("cumsum",
                   [](const ComputeArgs& args) { return scan(args, tir::ReduceKind::Sum); });
  register_compute("cumprod",
                   [](const ComputeArgs& args) { return scan(args, tir::ReduceKind::Prod); });
  register_compute("col2im", col2im);
}

}  // namespace anvil::topi::transform
