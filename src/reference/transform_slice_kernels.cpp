// Reference kernels of the transform family's joining and slicing ops:
// concatenate, split, strided_slice (and dyn.strided_slice),
// reverse_sequence and trilu.
#include <algorithm>
#include <limits>

#include "anvil/ir/attrs/transform.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

std::vector<Tensor> concatenate_kernel(const KernelArgs& args) {
  std::span<const Tensor> parts = args.inputs;
  ANVIL_ICHECK(!parts.empty(), "concatenate of nothing");
  std::vector<int64_t> out_shape = parts[0].shape_vector();
  size_t axis = size_t(checked_axis(args.attrs_as<ConcatenateAttrs>().axis,
                                    int64_t(out_shape.size()), "concatenate axis"));
  out_shape[axis] = 0;
  for (const Tensor& part : parts) {
    std::vector<int64_t> shape = part.shape_vector();
    bool same = shape.size() == out_shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = d == axis || shape[d] == out_shape[d];
    if (!same)
      throw_error("cannot concatenate shapes ", shape_to_string(parts[0].shape()), " and ",
                  shape_to_string(shape), " along axis ", axis);
    out_shape[axis] += shape[axis];
  }
  Tensor out = Tensor::empty(out_shape, parts[0].dtype());
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    std::vector<int64_t> shape = part.shape_vector();
    for (int64_t i = 0, n = part.numel(); i < n; ++i) {
      std::vector<int64_t> index = unravel(i, shape);
      index[axis] += offset;
      copy_element(out, ravel(index, out_shape), part, i);
    }
    offset += shape[axis];
  }
  return {out};
}

// The elements [begin, end) of data along axis.
Tensor slice_axis(const Tensor& data, size_t axis, int64_t begin, int64_t end) {
  std::vector<int64_t> shape = data.shape_vector();
  shape[axis] = end - begin;
  return remap(data, shape, [&](std::vector<int64_t> out) {
    out[axis] += begin;
    return out;
  });
}

std::vector<Tensor> split_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<SplitAttrs>();
  const Tensor& data = args.inputs[0];
  int64_t rank = data.ndim();
  size_t axis = size_t(checked_axis(attrs.axis, rank, "split axis"));
  int64_t whole = data.shape()[axis];
  std::vector<int64_t> points = attrs.indices;
  if (attrs.sections) {
    int64_t sections = *attrs.sections;
    if (sections <= 0 || whole % sections != 0)
      throw_error("split into ", sections, " sections does not divide dim ", whole);
    points.clear();
    for (int64_t i = 1; i < sections; ++i) points.push_back(i * (whole / sections));
  }
  std::vector<Tensor> parts;
  int64_t begin = 0;
  points.push_back(whole);
  for (int64_t point : points) {
    int64_t end = std::clamp(point, begin, whole);
    parts.push_back(slice_axis(data, axis, begin, end));
    begin = end;
  }
  return parts;
}

// Where one sliced axis starts, how far each step goes, and how many it takes.
struct AxisSlice {
  int64_t start = 0, step = 1, length = 0;
};

// x[begin:end:step] along a dim of size `dim`, with numpy/ONNX clamping.
AxisSlice clamp_slice(int64_t begin, int64_t end, int64_t step, int64_t dim) {
  if (step == 0) throw_error("slice step must not be 0");
  auto from_end = [dim](int64_t i) { return i < 0 ? i + dim : i; };
  AxisSlice s;
  s.step = step;
  if (step > 0) {
    int64_t b = std::clamp(from_end(begin), int64_t(0), dim);
    int64_t e = std::clamp(from_end(end), int64_t(0), dim);
    s.start = b;
    s.length = e > b ? (e - b - 1) / step + 1 : 0;
  } else {
    int64_t b = std::clamp(from_end(begin), int64_t(-1), dim - 1);
    int64_t e = std::clamp(from_end(end), int64_t(-1), dim - 1);
    // No dim is that large, and the step can then be negated safely.
    s.step = std::max(step, -std::numeric_limits<int64_t>::max());
    s.start = b;
    s.length = b > e ? (b - e - 1) / -s.step + 1 : 0;
  }
  return s;
}

Tensor strided_slice(const Tensor& data, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                     std::vector<int64_t> axes, bool size_mode) {
  std::vector<int64_t> in = data.shape_vector();
  int64_t rank = int64_t(in.size());
  if (end.size() != begin.size() || strides.size() > begin.size() ||
      (!axes.empty() && axes.size() != begin.size()))
    throw_error("slice begin ", shape_to_string(begin), ", end ", shape_to_string(end),
                ", strides ", shape_to_string(strides), " and axes ", shape_to_string(axes),
                " differ in length");
  if (axes.empty())
    for (size_t i = 0; i < begin.size(); ++i) axes.push_back(int64_t(i));
  std::vector<AxisSlice> slices(in.size());
  for (size_t d = 0; d < in.size(); ++d) slices[d] = {0, 1, in[d]};
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < begin.size(); ++i) {
    size_t axis = size_t(checked_axis(axes[i], rank, "slice axis"));
    if (seen[axis]) throw_error("slice axis ", axis, " is listed twice");
    seen[axis] = true;
    int64_t dim = in[axis];
    if (size_mode) {
      int64_t start = begin[i] < 0 ? begin[i] + dim : begin[i];
      int64_t length = end[i] == -1 ? dim - start : end[i];
      if (start < 0 || length < 0 || start + length > dim)
        throw_error("slice of size ", end[i], " from ", begin[i], " does not fit dim ", dim);
      slices[axis] = {start, 1, length};
    } else {
      slices[axis] = clamp_slice(begin[i], end[i], i < strides.size() ? strides[i] : 1, dim);
    }
  }
  std::vector<int64_t> out_shape;
  for (const AxisSlice& s : slices) out_shape.push_back(s.length);
  return remap(data, out_shape, [&](std::vector<int64_t> out) {
    for (size_t d = 0; d < out.size(); ++d) out[d] = slices[d].start + out[d] * slices[d].step;
    return out;
  });
}

std::vector<Tensor> strided_slice_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<StridedSliceAttrs>();
  return {strided_slice(args.inputs[0], attrs.begin, attrs.end, attrs.strides, attrs.axes,
                        attrs.slice_mode == "size")};
}

std::vector<Tensor> dyn_strided_slice_kernel(const KernelArgs& args) {
  return {strided_slice(args.inputs[0], int_values(args.inputs[1]), int_values(args.inputs[2]),
                        int_values(args.inputs[3]), int_values(args.inputs[4]), false)};
}

std::vector<Tensor> reverse_sequence_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ReverseSequenceAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> lengths = int_values(args.inputs[1]);
  std::vector<int64_t> shape = data.shape_vector();
  int64_t rank = int64_t(shape.size());
  size_t seq_axis = size_t(checked_axis(attrs.seq_axis, rank, "seq_axis"));
  size_t batch_axis = size_t(checked_axis(attrs.batch_axis, rank, "batch_axis"));
  if (int64_t(lengths.size()) != shape[batch_axis])
    throw_error("reverse_sequence has ", lengths.size(), " lengths for a batch of ",
                shape[batch_axis]);
  return {remap(data, shape, [&](std::vector<int64_t> out) {
    int64_t length = std::clamp(lengths[size_t(out[batch_axis])], int64_t(0), shape[seq_axis]);
    if (out[seq_axis] < length) out[seq_axis] = length - 1 - out[seq_axis];
    return out;
  })};
}

std::vector<Tensor> trilu_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  int64_t k = scalar_int(args.inputs[1], "trilu k");
  bool upper = args.attrs_as<TriluAttrs>().upper;
  std::vector<int64_t> shape = data.shape_vector();
  Tensor out = Tensor::zeros(shape, data.dtype());
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  for (int64_t i = 0, n = data.numel(); i < n; ++i) {
    int64_t row = (i / cols) % rows, col = i % cols;
    bool keep = upper ? col - row >= k : col - row <= k;
    if (keep) copy_element(out, i, data, i);
  }
  return {out};
}

}  // namespace

void register_transform_slice_kernels() {
  register_kernel("concatenate", concatenate_kernel);
  register_kernel("split", split_kernel);
  register_kernel("strided_slice", strided_slice_kernel);
  register_kernel("dyn.strided_slice", dyn_strided_slice_kernel);
  register_kernel("reverse_sequence", reverse_sequence_kernel);
  register_kernel("trilu", trilu_kernel);
}

}  // namespace anvil::reference
