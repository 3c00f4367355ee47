// Computes of the running scans (cumsum, cumprod, dyn.cumsum, dyn.cumprod), nonzero and col2im. The
// scans and col2im are a reduction per output element with a condition picking its inputs: the scan
// axis up to the element (quadratic in the axis length, fine for the short axes these ops see in
// models), and the block offsets whose sliding block covers the image position. nonzero finds each
// output element by a binary search in a running count of the nonzero elements, which is blocked so
// that it stays near linear in the data's size.
#include <optional>

#include "anvil/ir/attrs/transform.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

// out[..., j, ...] = combine of data[..., r, ...] for r before j (or after it, reversed),
// j itself included unless exclusive. Without an axis, over the flattened data. Each element
// is converted to the output dtype first, as the reference does. dyn.cumsum's axis is a value:
// its shape function writes the axis (normalized) and its length as extras, and the index of
// every dim picks the scan position where the dim is that axis.
std::vector<te::Tensor> scan(const ComputeArgs& args, tir::ReduceKind kind,
                             std::optional<int64_t> static_axis, bool run_time_axis = false) {
  const auto& attrs = args.attrs_as<ir::ScanopAttrs>();
  const te::Tensor& data = args.inputs[0];
  if (run_time_axis && args.extras.size() != 2)
    throw_error(args.op_name(), ": the axis is read at run time, which needs its shape function");
  // Along an axis, any dim may be a size variable; the flattened form needs a static shape.
  bool flattened = !run_time_axis && !static_axis;
  std::vector<int64_t> in_shape;
  if (flattened) in_shape = static_shape(data);
  std::vector<PrimExpr> out_shape = args.out_shape();
  DataType dtype = args.out_dtype();
  size_t axis = static_axis ? size_t(wrap_axis(*static_axis, int64_t(data.ndim()))) : 0;
  tir::IterVar r = te::reduce_axis(run_time_axis ? args.extras[1] : out_shape[axis], "r");
  PrimExpr rv = r.var;
  std::vector<PrimExpr> extras(args.extras.begin(), args.extras.end());
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    std::vector<PrimExpr> at = out;
    PrimExpr j;
    if (run_time_axis) {
      for (size_t d = 0; d < at.size(); ++d)
        at[d] = tir::select(tir::eq(extras[0], tir::make_int(int64_t(d))), rv, out[d]);
      j = pick(out, extras[0]);
    } else {
      at[axis] = rv;
      j = out[axis];
    }
    std::vector<PrimExpr> from = flattened ? unravel(at[0], in_shape) : at;
    PrimExpr in_range =
        attrs.reverse ? (attrs.exclusive ? rv > j : rv >= j) : (attrs.exclusive ? rv < j : rv <= j);
    PrimExpr source = convert_like_reference(data.at(from), dtype);
    return PrimExpr(tir::ReduceNode::make(kind, source, {r}, in_range));
  })};
}

// dyn.cumsum: the data's dims, then the axis (negative ones counted from the end) and its
// length; an axis out of range is rejected (-1 dims).
te::Tensor dyn_scan_dims(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const int64_t rank = int64_t(data.ndim());
  PrimExpr axis = as_index(scalar_value(args.inputs[1]));
  axis = tir::select(axis < tir::make_int(0), axis + tir::make_int(rank), axis);
  PrimExpr valid = tir::logical_and(tir::make_int(0) <= axis, axis < tir::make_int(rank));
  return shape_function_result(data.shape(), valid, args, {axis, pick(data.shape(), axis)});
}

// ---------------------------------------------------------------- nonzero

// Elements counted per block when finding the nonzero ones: the running count costs one
// block per element plus the square of the number of blocks.
constexpr int64_t kCountBlock = 128;

// Whether the element at flat position `flat` of data is nonzero (NaN is).
PrimExpr nonzero_at(const te::Tensor& data, const PrimExpr& flat) {
  PrimExpr x = data.at(unravel(flat, data.shape()));
  return tir::ne(x, tir::make_const(x.dtype(), 0));
}

// How many elements of data are nonzero, as a one-element tensor.
te::Tensor nonzero_count(const te::Tensor& data, const std::string& name) {
  const PrimExpr n = shape_product(data.shape());
  return te::compute(
      {tir::make_int(1)},
      [&](const std::vector<tir::Var>&) {
        tir::IterVar i = te::reduce_axis(n, "i");
        return tir::sum(tir::make_int(1), {i}, nonzero_at(data, i.var));
      },
      name + "_count");
}

// The inclusive running count of nonzero elements over the flattened data: each block's
// count, the counts of the blocks before it, then the elements before within the block. A
// read that the condition leaves out is clamped into the data.
te::Tensor running_nonzero_count(const te::Tensor& data, const std::string& name) {
  const PrimExpr n = shape_product(data.shape());
  const PrimExpr block = tir::make_int(kCountBlock);
  const PrimExpr blocks = tir::floordiv(n + (kCountBlock - 1), block);
  te::Tensor per_block = te::compute(
      {blocks},
      [&](const std::vector<tir::Var>& b) {
        tir::IterVar t = te::reduce_axis(block, "t");
        PrimExpr flat = b[0] * block + t.var;
        PrimExpr in_data = flat < n;
        return tir::sum(tir::make_int(1), {t},
                        tir::logical_and(in_data, nonzero_at(data, tir::min(flat, n - 1))));
      },
      name + "_block_count");
  te::Tensor blocks_before = te::compute(
      {blocks},
      [&](const std::vector<tir::Var>& b) {
        tir::IterVar c = te::reduce_axis(blocks, "c");
        return tir::sum(per_block.at({c.var}), {c}, c.var < b[0]);
      },
      name + "_blocks_before");
  te::Tensor within = te::compute(
      {n},
      [&](const std::vector<tir::Var>& i) {
        tir::IterVar t = te::reduce_axis(block, "t");
        PrimExpr start = i[0] - tir::floormod(i[0], block);
        PrimExpr flat = start + t.var;
        return tir::sum(tir::make_int(1), {t},
                        tir::logical_and(flat <= i[0], nonzero_at(data, tir::min(flat, i[0]))));
      },
      name + "_within_block");
  return te::compute(
      {n},
      [&](const std::vector<tir::Var>& i) {
        return within.at({i[0]}) + blocks_before.at({tir::floordiv(i[0], block)});
      },
      name + "_running_count");
}

// The first position p of the nondecreasing vector `values` (of `length` elements) whose
// value is at least `target`, by a binary search over the bits of p from the highest:
// `bits` of them (enough for length), one let per bit.
PrimExpr lower_bound(const te::Tensor& values, const PrimExpr& length, const PrimExpr& target,
                     int bits) {
  std::vector<tir::Var> steps;
  std::vector<PrimExpr> definitions;
  PrimExpr position = tir::make_int(0);
  for (int bit = bits - 1; bit >= 0; --bit) {
    PrimExpr candidate = position + tir::make_int(int64_t(1) << bit);
    PrimExpr below = values.at({tir::min(candidate, length) - 1}) < target;
    steps.push_back(tir::VarNode::make("p" + std::to_string(bit), tir::kIndexType));
    definitions.push_back(
        tir::select(tir::logical_and(candidate <= length, below), candidate, position));
    position = steps.back();
  }
  for (size_t k = steps.size(); k-- > 0;) position = tir::let(steps[k], definitions[k], position);
  return position;
}

// nonzero: output (rank, count); column h holds the coordinates of the h-th nonzero element,
// found in the running count. count is the output's dim, which the shape function wrote.
std::vector<te::Tensor> nonzero(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const std::string name = tensor_name(args);
  const PrimExpr n = shape_product(data.shape());
  te::Tensor running = running_nonzero_count(data, name);
  int bits = 48;  // 2^48 elements is beyond any tensor a symbolic dim stands for
  if (std::optional<int64_t> size = tir::as_const_int(n))
    for (bits = 1; (int64_t(1) << bits) <= *size; ++bits) {
    }
  const std::vector<PrimExpr> shape = data.shape();
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    PrimExpr flat = lower_bound(running, n, out[1] + 1, bits);
    return pick(unravel(flat, shape), out[0]);
  })};
}

te::Tensor nonzero_dims(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  te::Tensor count = nonzero_count(data, tensor_name(args));
  return int64_vector({tir::make_int(int64_t(data.ndim())), count.at({tir::make_int(0)})},
                      tensor_name(args) + "_dims");
}

int64_t attr_or(const std::vector<int64_t>& values, size_t i, int64_t fallback) {
  return values.empty() ? fallback : values[i];
}

// The number of block positions along each image dim: (image + pads - span) / stride + 1,
// with span = dilation * (block - 1) + 1.
std::vector<PrimExpr> block_positions(const ir::Col2ImAttrs& attrs,
                                      const std::vector<PrimExpr>& image,
                                      const std::vector<PrimExpr>& block) {
  const size_t rank = image.size();
  std::vector<PrimExpr> blocks;
  for (size_t d = 0; d < rank; ++d) {
    int64_t pad = attr_or(attrs.pads, d, 0) + attr_or(attrs.pads, d + rank, 0);
    PrimExpr span = (block[d] - 1) * attr_or(attrs.dilations, d, 1) + 1;
    blocks.push_back(
        tir::floordiv(image[d] + pad - span, tir::make_int(attr_or(attrs.strides, d, 1))) + 1);
  }
  return blocks;
}

// out[n, c, p...] sums data[n, c * block + k, l] over the block offsets k whose block
// position l (p = l * stride - pad + k * dilation) exists. The image and block dims are
// constants (col2im) or size variables (dyn.col2im).
te::Tensor fold_blocks(const ComputeArgs& args, const std::vector<PrimExpr>& image,
                       const std::vector<PrimExpr>& block) {
  const auto& attrs = args.attrs_as<ir::Col2ImAttrs>();
  const te::Tensor& data = args.inputs[0];
  const size_t rank = image.size();
  const std::vector<PrimExpr> blocks = block_positions(attrs, image, block);
  PrimExpr block_size = tir::make_int(1);
  for (const PrimExpr& b : block) block_size = block_size * b;
  std::vector<tir::IterVar> axes;
  std::vector<PrimExpr> k;
  for (size_t d = 0; d < rank; ++d) {
    axes.push_back(te::reduce_axis(block[d], "k" + std::to_string(d)));
    k.push_back(axes.back().var);
  }
  return map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
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
      inside = tir::logical_and(inside, l < blocks[d]);
      // Kept in bounds for the elements the condition leaves out.
      position.push_back(tir::min(tir::max(l, tir::make_int(0)), blocks[d] - 1));
    }
    PrimExpr channel = out[1] * block_size + ravel(k, block);
    PrimExpr value = data.at({out[0], channel, ravel(position, blocks)});
    return tir::sum(value, axes, inside);
  });
}

std::vector<te::Tensor> col2im(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::Col2ImAttrs>();
  std::vector<PrimExpr> image, block;
  for (size_t d = 0; d < attrs.image_shape.size(); ++d) {
    image.push_back(tir::make_int(attrs.image_shape[d]));
    block.push_back(tir::make_int(attrs.block_shape[d]));
  }
  return {fold_blocks(args, image, block)};
}

// dyn.col2im: the image dims are the output's, and the block dims the shape function's extras.
std::vector<te::Tensor> dyn_col2im(const ComputeArgs& args) {
  std::vector<PrimExpr> out = args.out_shape();
  std::vector<PrimExpr> image(out.begin() + 2, out.end());
  if (args.extras.size() != image.size())
    throw_error(args.op_name(),
                ": the block shape is read at run time, which needs its shape "
                "function");
  return {fold_blocks(args, image, std::vector<PrimExpr>(args.extras.begin(), args.extras.end()))};
}

// The number of image dims of a dyn.col2im call: the length of its image_shape operand.
size_t col2im_rank(const ir::CallNode& call) {
  const auto* image = ir::as<ir::TensorTypeNode>(call.args.at(1)->checked_type);
  std::optional<int64_t> length;
  if (image && image->shape && image->shape->size() == 1) length = (*image->shape)[0].as_int();
  ANVIL_ICHECK(length, "dyn.col2im: image_shape of unknown length");
  return size_t(*length);
}

// The output dims (batch, channels / block size, image...), then the block dims. Blocks that
// do not fit the image, or data whose dims do not hold them, are rejected (-1).
te::Tensor dyn_col2im_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::Col2ImAttrs>();
  const te::Tensor& data = args.inputs[0];
  const int64_t rank = vector_length(args.inputs[1]);
  std::vector<PrimExpr> image, block;
  PrimExpr valid = tir::const_true(), block_size = tir::make_int(1), count = tir::make_int(1);
  for (int64_t d = 0; d < rank; ++d) {
    image.push_back(vector_element(args.inputs[1], d));
    block.push_back(vector_element(args.inputs[2], d));
    valid = tir::logical_and(valid, tir::logical_and(block.back() >= tir::make_int(1),
                                                     image.back() >= tir::make_int(0)));
    block_size = block_size * block.back();
  }
  for (const PrimExpr& b : block_positions(attrs, image, block)) {
    valid = tir::logical_and(valid, b >= tir::make_int(1));
    count = count * b;
  }
  const PrimExpr channels = data.shape()[1];
  // The block size is tested before it divides.
  const PrimExpr safe_size = tir::max(block_size, tir::make_int(1));
  valid = tir::logical_and(valid, tir::eq(tir::floormod(channels, safe_size), tir::make_int(0)));
  valid = tir::logical_and(valid, tir::eq(count, data.shape()[2]));
  std::vector<PrimExpr> dims = {data.shape()[0], tir::floordiv(channels, safe_size)};
  dims.insert(dims.end(), image.begin(), image.end());
  return shape_function_result(dims, valid, args, block);
}

}  // namespace

void register_index_scan_computes() {
  auto scan_of = [](tir::ReduceKind kind) {
    return [kind](const ComputeArgs& args) {
      return scan(args, kind, args.attrs_as<ir::ScanopAttrs>().axis);
    };
  };
  register_compute("cumsum", scan_of(tir::ReduceKind::Sum));
  register_compute("cumprod", scan_of(tir::ReduceKind::Prod));
  register_compute("dyn.cumsum", [](const ComputeArgs& args) {
    return scan(args, tir::ReduceKind::Sum, std::nullopt, /*run_time_axis=*/true);
  });
  register_compute("dyn.cumprod", [](const ComputeArgs& args) {
    return scan(args, tir::ReduceKind::Prod, std::nullopt, /*run_time_axis=*/true);
  });
  for (const char* op : {"dyn.cumsum", "dyn.cumprod"})
    register_shape_compute(
        op, ShapeCompute{dyn_scan_dims, [](const ir::CallNode&) { return size_t(2); }});
  register_compute("col2im", col2im);
  register_compute("dyn.col2im", dyn_col2im);
  register_shape_compute("dyn.col2im", ShapeCompute{dyn_col2im_dims, col2im_rank});
  register_compute("nonzero", nonzero);
  register_shape_compute("nonzero", ShapeCompute{nonzero_dims, nullptr});
}

}  // namespace anvil::topi::transform
