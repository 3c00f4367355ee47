// Reference kernels of the data-movement image ops: nn.pad and dyn.nn.pad,
// nn.depth_to_space, nn.space_to_depth and nn.batch_flatten (resize and grid
// sampling live in their own files). They only move elements, so they copy
// bytes and every dtype stays exact.
#include <cstring>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// A tensor of out_shape whose element i is element source[i] of src (a flat
// row-major index), or the scalar `fill` where source[i] is -1.
Tensor gather_elements(const Tensor& src, std::vector<int64_t> out_shape,
                       const std::vector<int64_t>& source, const Tensor* fill = nullptr) {
  Tensor in = nn::compact(src);
  Tensor out = Tensor::empty(std::move(out_shape), in.dtype());
  const auto size = size_t(in.dtype().bytes());
  const char* from = static_cast<const char*>(in.data());
  char* to = static_cast<char*>(out.data());
  const char* fill_bytes = nullptr;
  Tensor fill_compact;
  if (fill) {
    fill_compact = nn::compact(*fill);
    fill_bytes = static_cast<const char*>(fill_compact.data());
  }
  for (size_t i = 0; i < source.size(); ++i) {
    const char* element = source[i] < 0 ? fill_bytes : from + size_t(source[i]) * size;
    ANVIL_ICHECK(element != nullptr, "padding without a fill value");
    std::memcpy(to + i * size, element, size);
  }
  return out;
}

// The input coordinate that output coordinate `o` of an axis padded by
// `before` reads, for an input axis of size n; -1 selects the constant fill.
// Reflect mirrors about the edge elements and wrap repeats the axis, as often
// as needed (numpy's np.pad); a negative `before` crops.
int64_t pad_source(int64_t o, int64_t before, int64_t n, const std::string& mode) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  if (mode == "constant" || n == 0) return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (mode == "wrap") return (i % n + n) % n;
  if (n == 1) return 0;
  int64_t period = 2 * (n - 1);
  int64_t r = (i % period + period) % period;
  return r < n ? r : period - r;
}

// Pads data by before[k] and after[k] on axis k.
Tensor pad_tensor(const Tensor& data, const std::vector<int64_t>& before,
                  const std::vector<int64_t>& after, const std::string& mode, const Tensor& value) {
  std::vector<int64_t> in_shape = data.shape_vector(), out_shape = in_shape;
  for (size_t k = 0; k < in_shape.size(); ++k) {
    out_shape[k] = in_shape[k] + before[k] + after[k];
    if (out_shape[k] < 0)
      throw_error("padding ", before[k], " and ", after[k], " crops axis ", k, " of size ",
                  in_shape[k], " below zero");
  }
  // The source coordinate of every output coordinate, per axis.
  std::vector<std::vector<int64_t>> axis_source(in_shape.size());
  for (size_t k = 0; k < in_shape.size(); ++k)
    for (int64_t o = 0; o < out_shape[k]; ++o)
      axis_source[k].push_back(pad_source(o, before[k], in_shape[k], mode));
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  std::vector<int64_t> source(size_t(shape_numel(out_shape)));
  for (size_t flat = 0; flat < source.size(); ++flat) {
    std::vector<int64_t> coord = unravel(int64_t(flat), out_shape);
    int64_t index = 0;
    for (size_t k = 0; k < coord.size() && index >= 0; ++k) {
      int64_t s = axis_source[k][size_t(coord[k])];
      index = s < 0 ? -1 : index + s * in_strides[k];
    }
    source[flat] = index;
  }
  return gather_elements(data, out_shape, source, &value);
}

std::vector<Tensor> pad_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<PadAttrs>();
  std::vector<int64_t> before, after;
  for (size_t k = 0; k + 1 < a.pad_width.size(); k += 2) {
    before.push_back(a.pad_width[k]);
    after.push_back(a.pad_width[k + 1]);
  }
  return {pad_tensor(args.inputs[0], before, after, a.pad_mode, args.inputs[1])};
}

// dyn.nn.pad: pads holds the listed axes' befores, then their afters.
std::vector<Tensor> dyn_pad_kernel(const KernelArgs& args) {
  const auto& a = args.attrs_as<DynPadAttrs>();
  const Tensor& data = args.inputs[0];
  auto rank = int64_t(data.ndim());
  std::vector<int64_t> pads = to_int64s(args.inputs[1]), axes = to_int64s(args.inputs[3]);
  if (pads.size() != 2 * axes.size())
    throw_error("dyn.nn.pad: 'pads' has ", pads.size(), " values but ", axes.size(),
                " axes are padded (it needs a before and an after per axis)");
  std::vector<int64_t> before(size_t(rank), 0), after(size_t(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = wrap_axis(axes[i], rank);
    if (axis < 0 || axis >= rank)
      throw_error("dyn.nn.pad: axis ", axes[i], " is out of range for rank ", rank);
    before[size_t(axis)] = pads[i];
    after[size_t(axis)] = pads[axes.size() + i];
  }
  return {pad_tensor(data, before, after, a.pad_mode, args.inputs[2])};
}

// The sub-pixel ops in the canonical NCHW order: for each output element, the
// primal index of the input element it copies.
std::vector<Tensor> sub_pixel_kernel(const KernelArgs& args, bool to_space) {
  const auto& a = args.attrs_as<SubPixelAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> in = nn::primal_shape(a.layout, "NCHW", data.shape());
  const int64_t b = a.block_size;
  std::vector<int64_t> out =
      to_space ? std::vector<int64_t>{in[0], in[1] / (b * b), in[2] * b, in[3] * b}
               : std::vector<int64_t>{in[0], in[1] * b * b, in[2] / b, in[3] / b};
  std::vector<int64_t> source(size_t(shape_numel(out)));
  for (size_t flat = 0; flat < source.size(); ++flat) {
    std::vector<int64_t> o = unravel(int64_t(flat), out);
    int64_t n = o[0], c, h, w;
    if (to_space) {
      int64_t i = o[2] % b, j = o[3] % b;
      h = o[2] / b;
      w = o[3] / b;
      // DCR reads the channels as (block row, block column, C'), CRD as (C', row, column).
      c = a.mode == "CRD" ? o[1] * b * b + i * b + j : (i * b + j) * out[1] + o[1];
    } else {
      int64_t block = o[1] / in[1], i = block / b, j = block % b;
      c = o[1] % in[1];
      h = o[2] * b + i;
      w = o[3] * b + j;
    }
    source[flat] = ((n * in[1] + c) * in[2] + h) * in[3] + w;
  }
  if (a.layout != "NCHW") {
    // Translate primal indices to the stored positions of the layout.
    std::vector<int64_t> in_map = nn::layout_index_map(a.layout, "NCHW", in);
    std::vector<int64_t> out_map = nn::layout_index_map(a.layout, "NCHW", out);
    std::vector<int64_t> stored(source.size());
    for (size_t i = 0; i < source.size(); ++i)
      stored[size_t(out_map[i])] = in_map[size_t(source[i])];
    source = std::move(stored);
  }
  return {gather_elements(data, nn::layout_shape(a.layout, "NCHW", out), source)};
}

std::vector<Tensor> batch_flatten_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  int64_t batch = data.shape()[0];
  int64_t rest = shape_numel(data.shape().subspan(1));
  return {data.copy().view({batch, rest})};
}

}  // namespace

void register_nn_image_kernels() {
  register_kernel("nn.pad", pad_kernel);
  register_kernel("dyn.nn.pad", dyn_pad_kernel);
  register_kernel("nn.depth_to_space",
                  [](const KernelArgs& args) { return sub_pixel_kernel(args, true); });
  register_kernel("nn.space_to_depth",
                  [](const KernelArgs& args) { return sub_pixel_kernel(args, false); });
  register_kernel("nn.batch_flatten", batch_flatten_kernel);
  register_resize_kernels();
  register_grid_sample_kernels();
}

}  // namespace anvil::reference
