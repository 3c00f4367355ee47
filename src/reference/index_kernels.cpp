// Reference kernels of the index family's picking ops: take, gather,
// gather_nd and one_hot. Scatters are in index_scatter_kernels.cpp, sorting,
// nonzero, scans and unique in index_sort_kernels.cpp.
#include <algorithm>

#include "anvil/ir/attrs/transform.h"
#include "reference/kernel_families.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// An index into a dim of size `dim` under take's modes; negative indices
// count from the end in "fast" mode, as ONNX's do.
int64_t resolve_index(int64_t index, int64_t dim, const std::string& mode) {
  if (mode == "clip") return std::clamp(index, int64_t(0), dim - 1);
  if (mode == "wrap") return ((index % dim) + dim) % dim;
  if (index < -dim || index >= dim)
    throw_error("index ", index, " is out of range for a dim of size ", dim);
  return index < 0 ? index + dim : index;
}

std::vector<Tensor> take_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<TakeAttrs>();
  const Tensor& data = args.inputs[0];
  const Tensor& indices_tensor = args.inputs[1];
  std::vector<int64_t> indices = int_values(indices_tensor);
  std::vector<int64_t> idx_shape = indices_tensor.shape_vector();
  if (!attrs.axis) {
    int64_t n = data.numel();
    if (n == 0 && !indices.empty()) throw_error("take from an empty tensor");
    std::vector<int64_t> source;
    for (int64_t i : indices) source.push_back(resolve_index(i, n, attrs.mode));
    return {gather_elements(data, source, idx_shape)};
  }
  std::vector<int64_t> in = data.shape_vector();
  int64_t rank = int64_t(in.size());
  size_t axis = size_t(checked_axis(*attrs.axis, rank, "take axis"));
  size_t batch_dims = size_t(attrs.batch_dims < 0 ? attrs.batch_dims + int64_t(idx_shape.size())
                                                  : attrs.batch_dims);
  // out = data[:axis] + indices[batch_dims:] + data[axis + 1:]
  std::vector<int64_t> out_shape(in.begin(), in.begin() + int64_t(axis));
  out_shape.insert(out_shape.end(), idx_shape.begin() + int64_t(batch_dims), idx_shape.end());
  out_shape.insert(out_shape.end(), in.begin() + int64_t(axis) + 1, in.end());
  size_t idx_rank = idx_shape.size() - batch_dims;
  int64_t dim = in[axis];
  if (dim == 0 && shape_numel(out_shape) > 0) throw_error("take from an empty axis");
  return {remap(data, out_shape, [&](const std::vector<int64_t>& out) {
    std::vector<int64_t> idx(out.begin(), out.begin() + int64_t(batch_dims));
    idx.insert(idx.end(), out.begin() + int64_t(axis), out.begin() + int64_t(axis + idx_rank));
    std::vector<int64_t> from(out.begin(), out.begin() + int64_t(axis));
    from.push_back(resolve_index(indices[size_t(ravel(idx, idx_shape))], dim, attrs.mode));
    from.insert(from.end(), out.begin() + int64_t(axis + idx_rank), out.end());
    return from;
  })};
}

// ONNX GatherElements; negative indices count from the end.
std::vector<Tensor> gather_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices_tensor = args.inputs[1];
  std::vector<int64_t> indices = int_values(indices_tensor);
  std::vector<int64_t> in = data.shape_vector();
  size_t axis =
      size_t(checked_axis(args.attrs_as<GatherAttrs>().axis, int64_t(in.size()), "gather axis"));
  std::vector<int64_t> out_shape = indices_tensor.shape_vector();
  return {remap(data, out_shape, [&](std::vector<int64_t> out) {
    int64_t flat = ravel(out, out_shape);
    out[axis] = resolve_index(indices[size_t(flat)], in[axis], "fast");
    return out;
  })};
}

// TVM layout: indices (M, B..., Y...), result (B..., Y..., data dims from B + M).
std::vector<Tensor> gather_nd_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<GatherNDAttrs>();
  const Tensor& data = args.inputs[0];
  const Tensor& indices_tensor = args.inputs[1];
  std::vector<int64_t> indices = int_values(indices_tensor);
  std::vector<int64_t> in = data.shape_vector();
  std::vector<int64_t> idx_shape = indices_tensor.shape_vector();
  size_t m = size_t(idx_shape.at(0));
  size_t batch = size_t(attrs.batch_dims);
  if (batch + m > in.size())
    throw_error("gather_nd indexes ", m, " dims after ", batch, " batch dims of shape ",
                shape_to_string(in));
  std::vector<int64_t> tuple_shape(idx_shape.begin() + 1, idx_shape.end());  // B..., Y...
  int64_t tuples = shape_numel(tuple_shape);
  std::vector<int64_t> out_shape = tuple_shape;
  out_shape.insert(out_shape.end(), in.begin() + int64_t(batch + m), in.end());
  return {remap(data, out_shape, [&](const std::vector<int64_t>& out) {
    std::vector<int64_t> t(out.begin(), out.begin() + int64_t(tuple_shape.size()));
    int64_t tuple = ravel(t, tuple_shape);
    std::vector<int64_t> from(out.begin(), out.begin() + int64_t(batch));
    for (size_t j = 0; j < m; ++j)
      from.push_back(
          resolve_index(indices[size_t(int64_t(j) * tuples + tuple)], in[batch + j], "fast"));
    from.insert(from.end(), out.begin() + int64_t(tuple_shape.size()), out.end());
    return from;
  })};
}

Tensor one_hot(const KernelArgs& args, int64_t depth) {
  const auto& attrs = args.attrs_as<OneHotAttrs>();
  const Tensor& indices_tensor = args.inputs[0];
  std::vector<int64_t> indices = int_values(indices_tensor);
  if (depth < 1) throw_error("one_hot depth ", depth, " must be >= 1");
  std::vector<int64_t> in = indices_tensor.shape_vector();
  int64_t rank = int64_t(in.size());
  size_t axis = size_t(attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis);
  std::vector<int64_t> out_shape = in;
  out_shape.insert(out_shape.begin() + int64_t(axis), depth);
  DataType dtype = args.out_dtype();
  // on_value and off_value converted once to the output dtype; elements are byte copies of them.
  Tensor choices =
      is_integer_like(dtype)
          ? from_int64s({to_int64s(args.inputs[2])[0], to_int64s(args.inputs[1])[0]}, {2}, dtype)
          : from_doubles({to_doubles(args.inputs[2])[0], to_doubles(args.inputs[1])[0]}, {2},
                         dtype);
  return remap(choices, out_shape, [&](std::vector<int64_t> out) {
    int64_t j = out[axis];
    out.erase(out.begin() + int64_t(axis));
    int64_t index = indices[size_t(ravel(out, in))];
    if (index < 0) index += depth;
    return std::vector<int64_t>{index == j ? 1 : 0};
  });
}

std::vector<Tensor> one_hot_kernel(const KernelArgs& args) {
  return {one_hot(args, args.attrs_as<OneHotAttrs>().depth)};
}

std::vector<Tensor> dyn_one_hot_kernel(const KernelArgs& args) {
  return {one_hot(args, scalar_int(args.inputs[3], "one_hot depth"))};
}

}  // namespace

void register_index_gather_kernels() {
  register_kernel("take", take_kernel);
  register_kernel("gather", gather_kernel);
  register_kernel("gather_nd", gather_nd_kernel);
  register_kernel("one_hot", one_hot_kernel);
  register_kernel("dyn.one_hot", dyn_one_hot_kernel);
}

void register_index_kernels() {
  register_index_gather_kernels();
  register_index_scatter_kernels();
  register_index_sort_kernels();
}

}  // namespace anvil::reference
