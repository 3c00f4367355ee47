// Shape functions and computes of the transform and creation ops whose shape operand arrives
// as a tensor at run time: dyn.reshape, dyn.squeeze, dyn.expand_dims, dyn.broadcast_to,
// dyn.tile, dyn.full, range and dyn.strided_slice. Each shape function (topi::ShapeCompute) reads
// the operand's values and the data's dims and writes the output dims; the compute then moves
// elements over output dims that are size variables. A shape function that finds its operands
// invalid (a reshape that changes the element count, a squeezed dim that is not 1, a negative
// repeat) writes -1 for every dim, which the VM rejects when it allocates the output.
#include <limits>

#include "anvil/ir/attrs/transform.h"
#include "topi/topi_util.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

PrimExpr all_of(const std::vector<PrimExpr>& flags) {
  PrimExpr all = tir::make_const(DataType::boolean(), 1);
  for (const PrimExpr& f : flags) all = tir::logical_and(all, f);
  return all;
}

// ONNX Reshape: 0 copies the input dim (unless allowzero), one -1 takes what is left.
te::Tensor reshape_dims(const ComputeArgs& args) {
  bool allowzero = args.attrs_as<ir::ReshapeAttrs>().allowzero;
  std::vector<PrimExpr> in = args.inputs[0].shape();
  const te::Tensor& target = args.inputs[1];
  int64_t k = vector_length(target);
  std::vector<PrimExpr> dims, wanted;
  PrimExpr known = tir::make_int(1), inferred = tir::make_int(0);
  std::vector<PrimExpr> checks;
  for (int64_t j = 0; j < k; ++j) {
    PrimExpr s = vector_element(target, j);
    PrimExpr copied = size_t(j) < in.size() ? in[size_t(j)] : tir::make_int(0);
    PrimExpr dim = allowzero ? s : tir::select(tir::eq(s, tir::make_int(0)), copied, s);
    wanted.push_back(dim);
    known = known * tir::select(tir::eq(s, tir::make_int(-1)), tir::make_int(1), dim);
    inferred =
        inferred + tir::select(tir::eq(s, tir::make_int(-1)), tir::make_int(1), tir::make_int(0));
    checks.push_back(tir::make_int(-1) <= s);
  }
  PrimExpr total = shape_product(in);
  for (int64_t j = 0; j < k; ++j) {
    PrimExpr s = vector_element(target, j);
    dims.push_back(tir::select(tir::eq(s, tir::make_int(-1)),
                               tir::floordiv(total, tir::max(known, tir::make_int(1))),
                               wanted[size_t(j)]));
  }
  checks.push_back(inferred <= tir::make_int(1));
  checks.push_back(tir::eq(shape_product(dims), total));
  return shape_function_result(dims, all_of(checks), args);
}

te::Tensor squeeze_dims(const ComputeArgs& args) {
  std::vector<PrimExpr> in = args.inputs[0].shape();
  int64_t rank = int64_t(in.size());
  std::vector<PrimExpr> dropped, checks;
  for (int64_t d = 0; d < rank; ++d) {
    dropped.push_back(axis_listed(args.inputs[1], d, rank));
    checks.push_back(tir::logical_or(tir::logical_not(dropped.back()),
                                     tir::eq(in[size_t(d)], tir::make_int(1))));
  }
  return shape_function_result(kept_dims(in, dropped, output_rank(args)), all_of(checks), args);
}

// ONNX Unsqueeze: the axes are positions in the output.
te::Tensor expand_dims_dims(const ComputeArgs& args) {
  std::vector<PrimExpr> in = args.inputs[0].shape();
  int64_t rank = int64_t(output_rank(args));
  std::vector<PrimExpr> is_new;
  PrimExpr count = tir::make_int(0);
  for (int64_t i = 0; i < rank; ++i) {
    is_new.push_back(axis_listed(args.inputs[1], i, rank));
    count = count + tir::select(is_new.back(), tir::make_int(1), tir::make_int(0));
  }
  // A repeated axis leaves fewer new dims than axes.
  PrimExpr valid = tir::eq(count, tir::make_int(vector_length(args.inputs[1])));
  // Output dim i is 1 where new, else the next input dim: the inverse of dropping the new ones.
  std::vector<PrimExpr> dims;
  PrimExpr next = tir::make_int(0);
  for (int64_t i = 0; i < rank; ++i) {
    dims.push_back(tir::select(is_new[size_t(i)], tir::make_int(1), pick(in, next)));
    next = next + tir::select(is_new[size_t(i)], tir::make_int(0), tir::make_int(1));
  }
  return shape_function_result(dims, valid, args);
}

// The input's dims right-aligned under `rank` output dims, leading 1s added.
std::vector<PrimExpr> aligned(const std::vector<PrimExpr>& in, size_t rank) {
  std::vector<PrimExpr> out(rank - in.size(), tir::make_int(1));
  out.insert(out.end(), in.begin(), in.end());
  return out;
}

te::Tensor broadcast_to_dims(const ComputeArgs& args) {
  std::vector<PrimExpr> in = args.inputs[0].shape();
  const te::Tensor& target = args.inputs[1];
  size_t rank = size_t(vector_length(target));
  std::vector<PrimExpr> from = aligned(in, rank), dims, checks;
  for (size_t j = 0; j < rank; ++j) {
    PrimExpr s = vector_element(target, int64_t(j));
    dims.push_back(s);
    checks.push_back(tir::logical_or(tir::eq(from[j], tir::make_int(1)), tir::eq(from[j], s)));
  }
  return shape_function_result(dims, all_of(checks), args);
}

te::Tensor tile_dims(const ComputeArgs& args) {
  std::vector<PrimExpr> in = args.inputs[0].shape();
  const te::Tensor& reps = args.inputs[1];
  size_t rank = output_rank(args);
  std::vector<PrimExpr> from = aligned(in, rank), dims, checks;
  int64_t given = vector_length(reps);
  for (size_t i = 0; i < rank; ++i) {
    int64_t j = int64_t(i) - (int64_t(rank) - given);
    PrimExpr r = j >= 0 ? vector_element(reps, j) : tir::make_int(1);
    dims.push_back(from[i] * r);
    checks.push_back(tir::make_int(0) <= r);
  }
  return shape_function_result(dims, all_of(checks), args);
}

te::Tensor full_dims(const ComputeArgs& args) {
  const te::Tensor& shape = args.inputs[1];
  std::vector<PrimExpr> dims, checks;
  for (int64_t j = 0; j < vector_length(shape); ++j) {
    dims.push_back(vector_element(shape, j));
    checks.push_back(tir::make_int(0) <= dims.back());
  }
  return shape_function_result(dims, all_of(checks), args);
}

std::vector<te::Tensor> dyn_full(const ComputeArgs& args) {
  PrimExpr value = convert_like_reference(scalar_value(args.inputs[0]), args.out_dtype());
  return {map_output(args, 0, [value](const std::vector<PrimExpr>&) { return value; })};
}

bool is_integer(DataType dtype) { return dtype.is_int() || dtype.is_uint(); }

// ONNX Range: max(ceil((limit - start) / delta), 0) elements, exact in integers; a zero or
// non-finite delta is rejected (-1).
te::Tensor range_dims(const ComputeArgs& args) {
  PrimExpr start = scalar_value(args.inputs[0]), limit = scalar_value(args.inputs[1]),
           delta = scalar_value(args.inputs[2]);
  PrimExpr count;
  if (is_integer(start.dtype())) {
    PrimExpr s = tir::cast(DataType::int64(), start), l = tir::cast(DataType::int64(), limit),
             d = tir::cast(DataType::int64(), delta);
    PrimExpr span = tir::select(tir::make_int(0) < d, l - s, s - l);
    PrimExpr step = tir::select(tir::make_int(0) < d, d, tir::make_int(0) - d);
    PrimExpr safe = tir::max(step, tir::make_int(1));
    count = tir::select(tir::eq(d, tir::make_int(0)), tir::make_int(-1),
                        tir::select(tir::make_int(0) < span, tir::floordiv(span + safe - 1, safe),
                                    tir::make_int(0)));
  } else {
    DataType f64 = DataType::float64();
    PrimExpr s = tir::cast(f64, start), l = tir::cast(f64, limit), d = tir::cast(f64, delta);
    PrimExpr steps = tir::call_intrin(f64, "ceil", {(l - s) / d});
    PrimExpr finite = tir::logical_and(is_finite(steps), tir::ne(d, tir::make_const(f64, 0)));
    count = tir::select(finite,
                        tir::select(tir::make_const(f64, 0) < steps,
                                    tir::cast(DataType::int64(), steps), tir::make_int(0)),
                        tir::make_int(-1));
  }
  return int64_vector({count}, tensor_name(args) + "_dims");
}

std::vector<te::Tensor> range(const ComputeArgs& args) {
  PrimExpr start = scalar_value(args.inputs[0]), delta = scalar_value(args.inputs[2]);
  DataType dtype = args.out_dtype();
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) -> PrimExpr {
    if (is_integer(dtype))
      return tir::cast(dtype, tir::cast(DataType::int64(), start) +
                                  out[0] * tir::cast(DataType::int64(), delta));
    DataType f64 = DataType::float64();
    return tir::cast(dtype, tir::cast(f64, start) + tir::cast(f64, out[0]) * tir::cast(f64, delta));
  })};
}

// numpy/ONNX slicing of one dim: begin and end counted from the end when negative, clamped
// into the dim; the start, step and length of the slice.
struct DimSlice {
  PrimExpr start, step, length;
};

DimSlice clamp_slice(PrimExpr begin, PrimExpr end, PrimExpr step, PrimExpr dim) {
  auto zero = tir::make_int(0), one = tir::make_int(1);
  auto from_end = [&](PrimExpr i) { return tir::select(i < zero, i + dim, i); };
  auto clamp = [](PrimExpr v, PrimExpr lo, PrimExpr hi) { return tir::min(tir::max(v, lo), hi); };
  PrimExpr forward = zero < step;
  PrimExpr lo = tir::select(forward, zero, tir::make_int(-1));
  PrimExpr hi = tir::select(forward, dim, dim - 1);
  PrimExpr b = clamp(from_end(begin), lo, hi), e = clamp(from_end(end), lo, hi);
  // No dim is as large as the most negative step, which can then be negated safely.
  PrimExpr magnitude = tir::select(
      forward, step, zero - tir::max(step, tir::make_int(-std::numeric_limits<int64_t>::max())));
  PrimExpr span = tir::select(forward, e - b, b - e);
  PrimExpr safe = tir::max(magnitude, one);
  PrimExpr length = tir::select(zero < span, tir::floordiv(span - 1, safe) + 1, zero);
  return {b, tir::select(forward, step, zero - magnitude), length};
}

// Per data dim, the slice the listed axes give it (the whole dim where none does); `valid`
// is false for a zero step or an axis listed twice or out of range.
std::vector<DimSlice> dim_slices(const ComputeArgs& args, PrimExpr& valid) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor &begin = args.inputs[1], &end = args.inputs[2], &strides = args.inputs[3],
                   &axes = args.inputs[4];
  int64_t rank = int64_t(data.ndim()), count = vector_length(begin);
  bool default_axes = vector_length(axes) == 0;
  std::vector<DimSlice> slices;
  std::vector<PrimExpr> checks;
  PrimExpr matched = tir::make_int(0);
  for (int64_t d = 0; d < rank; ++d) {
    PrimExpr dim = data.shape()[size_t(d)];
    DimSlice slice{tir::make_int(0), tir::make_int(1), dim};
    PrimExpr hits = tir::make_int(0);
    for (int64_t j = 0; j < count; ++j) {
      PrimExpr here = default_axes ? tir::make_const(DataType::boolean(), j == d ? 1 : 0)
                                   : axis_matches(axes, j, d, rank);
      PrimExpr step = vector_length(strides) > j ? vector_element(strides, j) : tir::make_int(1);
      DimSlice s = clamp_slice(vector_element(begin, j), vector_element(end, j), step, dim);
      slice = {tir::select(here, s.start, slice.start), tir::select(here, s.step, slice.step),
               tir::select(here, s.length, slice.length)};
      hits = hits + tir::select(here, tir::make_int(1), tir::make_int(0));
      checks.push_back(tir::logical_or(tir::logical_not(here), tir::ne(step, tir::make_int(0))));
    }
    checks.push_back(hits <= tir::make_int(1));
    matched = matched + hits;
    slices.push_back(slice);
  }
  checks.push_back(tir::eq(matched, tir::make_int(count)));
  valid = all_of(checks);
  return slices;
}

// The output dims, then each dim's start and step (the extras the compute reads them from).
te::Tensor strided_slice_dims(const ComputeArgs& args) {
  PrimExpr valid;
  std::vector<DimSlice> slices = dim_slices(args, valid);
  std::vector<PrimExpr> dims, extras;
  for (const DimSlice& s : slices) dims.push_back(s.length);
  for (const DimSlice& s : slices) extras.push_back(s.start);
  for (const DimSlice& s : slices) extras.push_back(s.step);
  return shape_function_result(dims, valid, args, extras);
}

std::vector<te::Tensor> strided_slice(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  size_t rank = data.ndim();
  if (args.extras.size() != 2 * rank)
    throw_error(args.op_name(), ": the slice is read at run time, which needs its shape function");
  std::vector<PrimExpr> extras(args.extras.begin(), args.extras.end());
  return {gather_compute(
      data, args.out_shape(),
      [=](const std::vector<PrimExpr>& out) {
        std::vector<PrimExpr> from;
        for (size_t d = 0; d < rank; ++d) from.push_back(extras[d] + out[d] * extras[rank + d]);
        return from;
      },
      tensor_name(args))};
}

void register_dynamic(const char* op, ComputeFn compute,
                      std::function<te::Tensor(const ComputeArgs&)> dims,
                      std::function<size_t(const ir::CallNode&)> num_extras = nullptr) {
  register_compute(op, std::move(compute));
  register_shape_compute(op, ShapeCompute{std::move(dims), std::move(num_extras)});
}

size_t two_per_data_dim(const ir::CallNode& call) { return 2 * data_rank(call); }

}  // namespace

void register_transform_dynamic_computes() {
  register_dynamic("dyn.reshape", reshape_like, reshape_dims);
  register_dynamic("dyn.squeeze", reshape_like, squeeze_dims);
  register_dynamic("dyn.expand_dims", reshape_like, expand_dims_dims);
  register_dynamic("dyn.broadcast_to", broadcast_to, broadcast_to_dims);
  register_dynamic("dyn.tile", tile, tile_dims);
  register_dynamic("dyn.full", dyn_full, full_dims);
  register_dynamic("range", range, range_dims);
  register_dynamic("dyn.strided_slice", strided_slice, strided_slice_dims, two_per_data_dim);
}

}  // namespace anvil::topi::transform
