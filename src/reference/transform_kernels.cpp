// Reference kernels of the transform family's shape-changing ops: reshape,
// transpose, squeeze, expand_dims, broadcast_to, flatten, tile, repeat,
// reverse and their dyn.* forms. Slicing and joining kernels are in
// transform_slice_kernels.cpp, layout_transform and einsum in
// transform_layout_kernels.cpp; cast is with the elementwise kernels.
#include <algorithm>
#include <optional>
#include <utility>

#include "anvil/ir/attrs/transform.h"
#include "reference/kernel_families.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// The concrete shape a reshape produces; see ReshapeAttrs for the meaning of
// 0, -1, -2, -3 and -4.
std::vector<int64_t> reshape_target(const std::vector<int64_t>& newshape, bool allowzero,
                                    const std::vector<int64_t>& in) {
  std::vector<int64_t> out;
  int64_t infer_at = -1;
  size_t src = 0;
  auto input_dim = [&](size_t at) {
    if (at >= in.size())
      throw_error("reshape target ", shape_to_string(newshape), " refers to a dim past the input ",
                  shape_to_string(in));
    return in[at];
  };
  for (size_t i = 0; i < newshape.size(); ++i) {
    int64_t v = newshape[i];
    if (v > 0 || (v == 0 && allowzero)) {
      out.push_back(v);
      ++src;
    } else if (v == 0) {
      out.push_back(input_dim(src++));
    } else if (v == -1) {
      if (infer_at >= 0) throw_error("reshape target ", shape_to_string(newshape), " has two -1");
      infer_at = int64_t(out.size());
      out.push_back(1);
      ++src;
    } else if (v == -2) {
      while (src < in.size()) out.push_back(in[src++]);
    } else if (v == -3) {
      int64_t a = input_dim(src), b = input_dim(src + 1);
      out.push_back(a * b);
      src += 2;
    } else if (v == -4 && i + 2 < newshape.size()) {
      int64_t whole = input_dim(src++);
      int64_t a = newshape[i + 1], b = newshape[i + 2];
      if (a == -1 && b > 0) a = whole / b;
      if (b == -1 && a > 0) b = whole / a;
      if (a <= 0 || b <= 0 || a * b != whole)
        throw_error("reshape target ", shape_to_string(newshape), " cannot split dim ", whole);
      out.push_back(a);
      out.push_back(b);
      i += 2;
    } else {
      throw_error("reshape target ", shape_to_string(newshape), " has an invalid entry ", v);
    }
  }
  int64_t total = shape_numel(in);
  if (infer_at >= 0) {
    int64_t known = 1;
    for (size_t j = 0; j < out.size(); ++j)
      if (int64_t(j) != infer_at) known *= out[j];
    if (known == 0 || total % known != 0)
      throw_error("reshape target ", shape_to_string(newshape), " cannot hold the ", total,
                  " elements of ", shape_to_string(in));
    out[size_t(infer_at)] = total / known;
  }
  if (shape_numel(out) != total)
    throw_error("cannot reshape ", shape_to_string(in), " (", total, " elements) to ",
                shape_to_string(out));
  return out;
}

std::vector<Tensor> reshape_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ReshapeAttrs>();
  const Tensor& data = args.inputs[0];
  return {
      reshaped_copy(data, reshape_target(attrs.newshape, attrs.allowzero, data.shape_vector()))};
}

std::vector<Tensor> dyn_reshape_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ReshapeAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> newshape = int_values(args.inputs[1]);
  return {reshaped_copy(data, reshape_target(newshape, attrs.allowzero, data.shape_vector()))};
}

std::vector<Tensor> reshape_like_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ReshapeLikeAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> in = data.shape_vector(), like = args.inputs[1].shape_vector();
  auto range = [](int64_t begin, std::optional<int64_t> end, size_t rank) {
    int64_t n = int64_t(rank), b = begin < 0 ? begin + n : begin, e = end.value_or(n);
    if (e < 0) e += n;
    if (b < 0 || e > n || b > e) throw_error("reshape_like range out of the dims");
    return std::pair<size_t, size_t>(size_t(b), size_t(e));
  };
  auto [lb, le] = range(attrs.lhs_begin, attrs.lhs_end, in.size());
  auto [rb, re] = range(attrs.rhs_begin, attrs.rhs_end, like.size());
  std::vector<int64_t> shape(in.begin(), in.begin() + std::ptrdiff_t(lb));
  shape.insert(shape.end(), like.begin() + std::ptrdiff_t(rb), like.begin() + std::ptrdiff_t(re));
  shape.insert(shape.end(), in.begin() + std::ptrdiff_t(le), in.end());
  if (shape_numel(shape) != data.numel())
    throw_error("cannot reshape ", shape_to_string(in), " (", data.numel(), " elements) to ",
                shape_to_string(shape));
  return {reshaped_copy(data, std::move(shape))};
}

std::vector<Tensor> transpose_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> in = data.shape_vector();
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> perm = args.attrs_as<TransposeAttrs>().axes;
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<int64_t> out_shape;
  for (int64_t& p : perm) {
    p = checked_axis(p, rank, "transpose axis");
    out_shape.push_back(in[size_t(p)]);
  }
  return {remap(data, out_shape, [&](const std::vector<int64_t>& out) {
    std::vector<int64_t> from(in.size());
    for (size_t i = 0; i < perm.size(); ++i) from[size_t(perm[i])] = out[i];
    return from;
  })};
}

// The input's shape without the listed unit dims (every unit dim when none are listed).
std::vector<int64_t> squeezed_shape(const std::vector<int64_t>& in, std::vector<int64_t> axes) {
  int64_t rank = int64_t(in.size());
  std::vector<bool> drop(in.size(), axes.empty());
  if (axes.empty())
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  for (int64_t axis : axes) {
    int64_t a = checked_axis(axis, rank, "squeeze axis");
    if (in[size_t(a)] != 1)
      throw_error("cannot squeeze axis ", a, " of shape ", shape_to_string(in),
                  ": its size is not 1");
    drop[size_t(a)] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

std::vector<Tensor> squeeze_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  return {
      reshaped_copy(data, squeezed_shape(data.shape_vector(), args.attrs_as<SqueezeAttrs>().axis))};
}

std::vector<Tensor> dyn_squeeze_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  return {reshaped_copy(data, squeezed_shape(data.shape_vector(), int_values(args.inputs[1])))};
}

std::vector<Tensor> expand_dims_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ExpandDimsAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  int64_t rank = int64_t(shape.size());
  int64_t pos = attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis;
  shape.insert(shape.begin() + pos, size_t(attrs.num_newaxis), 1);
  return {reshaped_copy(data, shape)};
}

// ONNX Unsqueeze: the axes are positions in the output.
std::vector<Tensor> dyn_expand_dims_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> in = data.shape_vector();
  std::vector<int64_t> axes = int_values(args.inputs[1]);
  int64_t out_rank = int64_t(in.size() + axes.size());
  std::vector<bool> is_new(size_t(out_rank), false);
  for (int64_t axis : axes) {
    int64_t a = checked_axis(axis, out_rank, "unsqueeze axis");
    if (is_new[size_t(a)]) throw_error("unsqueeze axis ", a, " is listed twice");
    is_new[size_t(a)] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(is_new[size_t(i)] ? 1 : in[next++]);
  return {reshaped_copy(data, out)};
}

Tensor broadcast_to(const Tensor& data, const std::vector<int64_t>& shape) {
  std::vector<int64_t> in = data.shape_vector();
  bool ok = in.size() <= shape.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    int64_t target = shape[shape.size() - in.size() + i];
    ok = in[i] == 1 || in[i] == target;
  }
  if (!ok)
    throw_error("cannot broadcast shape ", shape_to_string(in), " to ", shape_to_string(shape));
  std::vector<int64_t> source(size_t(shape_numel(shape)));
  for (size_t o = 0; o < source.size(); ++o) source[o] = broadcast_source(int64_t(o), shape, in);
  return gather_elements(data, source, shape);
}

std::vector<Tensor> broadcast_to_kernel(const KernelArgs& args) {
  return {broadcast_to(args.inputs[0], args.attrs_as<BroadcastToAttrs>().shape)};
}

std::vector<Tensor> dyn_broadcast_to_kernel(const KernelArgs& args) {
  return {broadcast_to(args.inputs[0], int_values(args.inputs[1]))};
}

std::vector<Tensor> flatten_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> in = data.shape_vector();
  int64_t rank = int64_t(in.size());
  int64_t axis = args.attrs_as<FlattenAttrs>().axis;
  if (axis < 0) axis += rank;
  int64_t outer = shape_numel(std::span(in).first(size_t(axis)));
  int64_t inner = shape_numel(std::span(in).subspan(size_t(axis)));
  return {reshaped_copy(data, {outer, inner})};
}

// numpy tile: the shorter of the shape and reps gets leading 1s.
Tensor tile(const Tensor& data, std::vector<int64_t> reps) {
  std::vector<int64_t> in = data.shape_vector();
  for (int64_t r : reps)
    if (r < 0) throw_error("tile repeats ", shape_to_string(reps), " has a negative count");
  if (reps.size() < in.size()) reps.insert(reps.begin(), in.size() - reps.size(), 1);
  std::vector<int64_t> padded = in;
  padded.insert(padded.begin(), reps.size() - in.size(), 1);
  std::vector<int64_t> out_shape;
  for (size_t i = 0; i < reps.size(); ++i) out_shape.push_back(padded[i] * reps[i]);
  size_t offset = reps.size() - in.size();
  return remap(data, out_shape, [&](const std::vector<int64_t>& out) {
    std::vector<int64_t> from(in.size());
    for (size_t i = 0; i < in.size(); ++i) from[i] = out[i + offset] % in[i];
    return from;
  });
}

std::vector<Tensor> tile_kernel(const KernelArgs& args) {
  return {tile(args.inputs[0], args.attrs_as<TileAttrs>().reps)};
}

std::vector<Tensor> dyn_tile_kernel(const KernelArgs& args) {
  return {tile(args.inputs[0], int_values(args.inputs[1]))};
}

std::vector<Tensor> repeat_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<RepeatAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  size_t axis = size_t(checked_axis(attrs.axis, int64_t(shape.size()), "repeat axis"));
  shape[axis] *= attrs.repeats;
  return {remap(data, shape, [&](std::vector<int64_t> out) {
    out[axis] /= attrs.repeats;
    return out;
  })};
}

std::vector<Tensor> reverse_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  size_t axis = size_t(
      checked_axis(args.attrs_as<ReverseAttrs>().axis, int64_t(shape.size()), "reverse axis"));
  return {remap(data, shape, [&](std::vector<int64_t> out) {
    out[axis] = shape[axis] - 1 - out[axis];
    return out;
  })};
}

}  // namespace

void register_transform_shape_kernels() {
  register_kernel("reshape", reshape_kernel);
  register_kernel("dyn.reshape", dyn_reshape_kernel);
  register_kernel("reshape_like", reshape_like_kernel);
  register_kernel("transpose", transpose_kernel);
  register_kernel("squeeze", squeeze_kernel);
  register_kernel("dyn.squeeze", dyn_squeeze_kernel);
  register_kernel("expand_dims", expand_dims_kernel);
  register_kernel("dyn.expand_dims", dyn_expand_dims_kernel);
  register_kernel("broadcast_to", broadcast_to_kernel);
  register_kernel("dyn.broadcast_to", dyn_broadcast_to_kernel);
  register_kernel("flatten", flatten_kernel);
  register_kernel("tile", tile_kernel);
  register_kernel("dyn.tile", dyn_tile_kernel);
  register_kernel("repeat", repeat_kernel);
  register_kernel("reverse", reverse_kernel);
}

void register_transform_kernels() {
  register_transform_shape_kernels();
  register_transform_slice_kernels();
  register_transform_layout_kernels();
}

}  // namespace anvil::reference
