// Reference kernels of the ops that place elements: scatter_elements and
// scatter_nd write or reduce updates into a copy of data, one update at a
// time in order (so for "update", the last of duplicate indices wins, as in
// ONNX's reference); col2im sums blocks into images.
#include <algorithm>
#include <string>

#include "anvil/ir/attrs/transform.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// Applies updates to the elements of data, computing in T: int64 for
// integer dtypes (exact), double otherwise (exact for every float dtype).
template <typename T>
class Scatter {
 public:
  Scatter(std::vector<T> data, std::string mode)
      : out_(std::move(data)), mode_(std::move(mode)), count_(out_.size(), 0) {}

  void apply(int64_t position, T value) {
    T& slot = out_[size_t(position)];
    if (mode_ == "update")
      slot = value;
    else if (mode_ == "add" || mode_ == "mean")
      slot += value;
    else if (mode_ == "mul")
      slot *= value;
    else if (mode_ == "min")
      slot = std::min(slot, value);
    else if (mode_ == "max")
      slot = std::max(slot, value);
    else
      throw_error("unknown scatter reduction \"", mode_, "\"");
    ++count_[size_t(position)];
  }

  // "mean" averages the original element with every update it received.
  std::vector<T> result() {
    if (mode_ == "mean")
      for (size_t i = 0; i < out_.size(); ++i)
        if (count_[i] > 0) out_[i] /= T(count_[i] + 1);
    return std::move(out_);
  }

 private:
  std::vector<T> out_;
  std::string mode_;
  std::vector<int64_t> count_;
};

// Runs the scatter in the exact arithmetic for data's dtype; `target` maps
// the flat index of an update element to the flat index of data it goes to.
template <typename Target>
Tensor scatter(const Tensor& data, const Tensor& updates, const std::string& mode, Target target) {
  std::vector<int64_t> shape = data.shape_vector();
  if (is_integer_like(data.dtype())) {
    Scatter<int64_t> s(to_int64s(data), mode);
    std::vector<int64_t> values = to_int64s(updates);
    for (size_t u = 0; u < values.size(); ++u) s.apply(target(int64_t(u)), values[u]);
    return from_int64s(s.result(), shape, data.dtype());
  }
  Scatter<double> s(to_doubles(data), mode);
  std::vector<double> values = to_doubles(updates);
  for (size_t u = 0; u < values.size(); ++u) s.apply(target(int64_t(u)), values[u]);
  return from_doubles(s.result(), shape, data.dtype());
}

// An index into a dim; negative indices count from the end (ONNX).
int64_t checked_index(int64_t index, int64_t dim) {
  if (index < -dim || index >= dim)
    throw_error("scatter index ", index, " is out of range for a dim of size ", dim);
  return index < 0 ? index + dim : index;
}

std::vector<Tensor> scatter_elements_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ScatterElementsAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> indices = int_values(args.inputs[1]);
  const Tensor& updates = args.inputs[2];
  std::vector<int64_t> shape = data.shape_vector();
  std::vector<int64_t> upd_shape = updates.shape_vector();
  if (upd_shape != args.inputs[1].shape_vector())
    throw_error("scatter_elements indices ", shape_to_string(args.inputs[1].shape()),
                " and updates ", shape_to_string(upd_shape), " differ in shape");
  size_t axis = size_t(checked_axis(attrs.axis, int64_t(shape.size()), "scatter axis"));
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != axis && upd_shape[d] > shape[d])
      throw_error("scatter_elements updates ", shape_to_string(upd_shape),
                  " do not fit data of shape ", shape_to_string(shape));
  return {scatter(data, updates, attrs.reduction, [&](int64_t u) {
    std::vector<int64_t> index = unravel(u, upd_shape);
    index[axis] = checked_index(indices[size_t(u)], shape[axis]);
    return ravel(index, shape);
  })};
}

// TVM layout: indices (M, Y...), updates (Y..., data dims from M).
std::vector<Tensor> scatter_nd_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ScatterNDAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> indices = int_values(args.inputs[1]);
  std::vector<int64_t> idx_shape = args.inputs[1].shape_vector();
  const Tensor& updates = args.inputs[2];
  std::vector<int64_t> shape = data.shape_vector();
  size_t m = size_t(idx_shape.at(0));
  std::vector<int64_t> tuple_shape(idx_shape.begin() + 1, idx_shape.end());
  int64_t tuples = shape_numel(tuple_shape);
  std::vector<int64_t> expected = tuple_shape;
  expected.insert(expected.end(), shape.begin() + int64_t(m), shape.end());
  if (m > shape.size() || updates.shape_vector() != expected)
    throw_error("scatter_nd updates ", shape_to_string(updates.shape()), " must have shape ",
                shape_to_string(expected));
  return {scatter(data, updates, attrs.mode, [&](int64_t u) {
    std::vector<int64_t> index = unravel(u, expected);
    int64_t tuple = ravel(std::span(index).first(tuple_shape.size()), tuple_shape);
    std::vector<int64_t> to;
    for (size_t j = 0; j < m; ++j)
      to.push_back(checked_index(indices[size_t(int64_t(j) * tuples + tuple)], shape[j]));
    to.insert(to.end(), index.begin() + int64_t(tuple_shape.size()), index.end());
    return ravel(to, shape);
  })};
}

// ---------------------------------------------------------------- col2im

// Sums each sliding block of data (N, C * prod(block), L) into its place in
// images (N, C, image...); block elements that land in the padding are dropped.
template <typename T>
std::vector<T> fold_blocks(const std::vector<T>& data, int64_t batch, int64_t channels,
                           const std::vector<int64_t>& image, const std::vector<int64_t>& block,
                           const std::vector<int64_t>& blocks, const Col2ImAttrs& attrs) {
  size_t rank = image.size();
  int64_t block_size = shape_numel(block), block_count = shape_numel(blocks);
  int64_t image_size = shape_numel(image);
  std::vector<T> out(size_t(batch * channels * image_size), T(0));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < block_size; ++k) {
        std::vector<int64_t> offset = unravel(k, block);
        for (int64_t l = 0; l < block_count; ++l) {
          std::vector<int64_t> at = unravel(l, blocks);
          bool inside = true;
          for (size_t i = 0; i < rank; ++i) {
            int64_t stride = attrs.strides.empty() ? 1 : attrs.strides[i];
            int64_t dilation = attrs.dilations.empty() ? 1 : attrs.dilations[i];
            int64_t pad = attrs.pads.empty() ? 0 : attrs.pads[i];
            at[i] = at[i] * stride - pad + offset[i] * dilation;
            inside = inside && at[i] >= 0 && at[i] < image[i];
          }
          if (!inside) continue;
          int64_t from = ((n * channels + c) * block_size + k) * block_count + l;
          out[size_t((n * channels + c) * image_size + ravel(at, image))] += data[size_t(from)];
        }
      }
    }
  }
  return out;
}

Tensor col2im(const Tensor& data, const std::vector<int64_t>& image,
              const std::vector<int64_t>& block, const Col2ImAttrs& attrs) {
  size_t rank = image.size();
  if (rank == 0 || block.size() != rank)
    throw_error("col2im image shape ", shape_to_string(image), " and block shape ",
                shape_to_string(block), " must be non-empty and of equal length");
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < rank; ++i) {
    int64_t stride = attrs.strides.empty() ? 1 : attrs.strides[i];
    int64_t dilation = attrs.dilations.empty() ? 1 : attrs.dilations[i];
    int64_t pad = attrs.pads.empty() ? 0 : attrs.pads[i] + attrs.pads[i + rank];
    int64_t span = dilation * (block[i] - 1) + 1;
    if (block[i] < 1 || image[i] + pad < span)
      throw_error("col2im block shape ", shape_to_string(block), " does not fit image shape ",
                  shape_to_string(image));
    blocks.push_back((image[i] + pad - span) / stride + 1);
  }
  std::vector<int64_t> in = data.shape_vector();
  int64_t block_size = shape_numel(block);
  if (in.size() != 3 || in[1] % block_size != 0 || in[2] != shape_numel(blocks))
    throw_error("col2im input of shape ", shape_to_string(in), " does not hold blocks of ",
                shape_to_string(block), " at ", shape_to_string(blocks), " positions");
  std::vector<int64_t> out_shape{in[0], in[1] / block_size};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  if (is_integer_like(data.dtype()))
    return from_int64s(
        fold_blocks(to_int64s(data), in[0], in[1] / block_size, image, block, blocks, attrs),
        out_shape, data.dtype());
  return from_doubles(
      fold_blocks(to_doubles(data), in[0], in[1] / block_size, image, block, blocks, attrs),
      out_shape, data.dtype());
}

std::vector<Tensor> col2im_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<Col2ImAttrs>();
  return {col2im(args.inputs[0], attrs.image_shape, attrs.block_shape, attrs)};
}

std::vector<Tensor> dyn_col2im_kernel(const KernelArgs& args) {
  return {col2im(args.inputs[0], int_values(args.inputs[1]), int_values(args.inputs[2]),
                 args.attrs_as<Col2ImAttrs>())};
}

}  // namespace

void register_index_scatter_kernels() {
  register_kernel("scatter_elements", scatter_elements_kernel);
  register_kernel("scatter_nd", scatter_nd_kernel);
  register_kernel("col2im", col2im_kernel);
  register_kernel("dyn.col2im", dyn_col2im_kernel);
}

}  // namespace anvil::reference
