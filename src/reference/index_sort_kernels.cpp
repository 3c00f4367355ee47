// Reference kernels of the index family's ordering and scanning ops: topk,
// sort, argsort, nonzero, cumsum, cumprod and unique.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <type_traits>

#include "anvil/ir/attrs/transform.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// The elements of a tensor as sort keys: exact int64 for integer dtypes,
// double otherwise. NaN orders above every number (numpy's sort order).
struct SortKeys {
  bool exact;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  explicit SortKeys(const Tensor& t) : exact(is_integer_like(t.dtype())) {
    if (exact)
      ints = to_int64s(t);
    else
      reals = to_doubles(t);
  }
  bool less(int64_t a, int64_t b) const {
    if (exact) return ints[size_t(a)] < ints[size_t(b)];
    double x = reals[size_t(a)], y = reals[size_t(b)];
    if (std::isnan(x)) return false;
    return std::isnan(y) || x < y;
  }
};

// For each line along `axis` (the other dims fixed), the flat indices of its
// elements in sorted order; stable, so equal elements keep their index order.
struct SortedLines {
  std::vector<int64_t> shape;
  size_t axis;
  std::vector<std::vector<int64_t>> order;  // per line: positions along the axis
  std::vector<std::vector<int64_t>> flat;   // per line: flat index of each position
};

SortedLines sort_lines(const Tensor& data, int64_t axis_attr, bool ascending) {
  SortedLines lines;
  lines.shape = data.shape_vector();
  lines.axis = size_t(checked_axis(axis_attr, int64_t(lines.shape.size()), "sort axis"));
  SortKeys keys(data);
  int64_t dim = lines.shape[lines.axis];
  int64_t inner = shape_numel(std::span(lines.shape).subspan(lines.axis + 1));
  int64_t outer = shape_numel(std::span(lines.shape).first(lines.axis));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> flat;
      for (int64_t j = 0; j < dim; ++j) flat.push_back((o * dim + j) * inner + i);
      std::vector<int64_t> order(static_cast<size_t>(dim));
      std::iota(order.begin(), order.end(), int64_t(0));
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return ascending ? keys.less(flat[size_t(a)], flat[size_t(b)])
                         : keys.less(flat[size_t(b)], flat[size_t(a)]);
      });
      lines.order.push_back(std::move(order));
      lines.flat.push_back(std::move(flat));
    }
  }
  return lines;
}

// The first `k` sorted elements of every line: their values (byte copies of
// data's elements) and their positions along the axis.
std::pair<Tensor, Tensor> take_sorted(const Tensor& data, const SortedLines& lines, int64_t k,
                                      DataType index_dtype) {
  std::vector<int64_t> out_shape = lines.shape;
  out_shape[lines.axis] = k;
  int64_t inner = shape_numel(std::span(lines.shape).subspan(lines.axis + 1));
  std::vector<int64_t> source(size_t(shape_numel(out_shape)));
  std::vector<int64_t> positions(source.size());
  for (size_t line = 0; line < lines.order.size(); ++line) {
    int64_t o = int64_t(line) / inner, i = int64_t(line) % inner;
    for (int64_t j = 0; j < k; ++j) {
      size_t at = size_t((o * k + j) * inner + i);
      int64_t position = lines.order[line][size_t(j)];
      positions[at] = position;
      source[at] = lines.flat[line][size_t(position)];
    }
  }
  return {gather_elements(data, source, out_shape), from_int64s(positions, out_shape, index_dtype)};
}

std::vector<Tensor> topk(const KernelArgs& args, int64_t k) {
  const auto& attrs = args.attrs_as<TopKAttrs>();
  const Tensor& data = args.inputs[0];
  SortedLines lines = sort_lines(data, attrs.axis, attrs.is_ascend);
  int64_t dim = lines.shape[lines.axis];
  if (k < 1) k = dim;
  if (k > dim) throw_error("topk k = ", k, " is larger than the axis of size ", dim);
  auto [values, indices] = take_sorted(data, lines, k, attrs.dtype);
  if (attrs.ret_type == "values") return {values};
  if (attrs.ret_type == "indices") return {indices};
  return {values, indices};
}

std::vector<Tensor> topk_kernel(const KernelArgs& args) {
  return topk(args, args.attrs_as<TopKAttrs>().k);
}

std::vector<Tensor> dyn_topk_kernel(const KernelArgs& args) {
  int64_t k = scalar_int(args.inputs[1], "topk k");
  if (k < 0) throw_error("topk k = ", k, " must not be negative");
  // k = 0 selects nothing here, unlike the attribute, where it means the whole axis.
  if (k == 0) {
    const auto& attrs = args.attrs_as<TopKAttrs>();
    std::vector<int64_t> shape = args.inputs[0].shape_vector();
    shape[size_t(checked_axis(attrs.axis, int64_t(shape.size()), "topk axis"))] = 0;
    Tensor values = Tensor::empty(shape, args.inputs[0].dtype());
    Tensor indices = Tensor::empty(shape, attrs.dtype);
    if (attrs.ret_type == "values") return {values};
    if (attrs.ret_type == "indices") return {indices};
    return {values, indices};
  }
  return topk(args, k);
}

std::vector<Tensor> sort_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<SortAttrs>();
  SortedLines lines = sort_lines(args.inputs[0], attrs.axis, attrs.is_ascend);
  return {take_sorted(args.inputs[0], lines, lines.shape[lines.axis], DataType::int64()).first};
}

std::vector<Tensor> argsort_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<ArgsortAttrs>();
  SortedLines lines = sort_lines(args.inputs[0], attrs.axis, attrs.is_ascend);
  return {take_sorted(args.inputs[0], lines, lines.shape[lines.axis], attrs.dtype).second};
}

std::vector<Tensor> nonzero_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  std::vector<int64_t> hits;
  for (int64_t i = 0, n = data.numel(); i < n; ++i)
    if (data.get_as_double(i) != 0) hits.push_back(i);
  int64_t count = int64_t(hits.size()), rank = int64_t(shape.size());
  std::vector<int64_t> coords(size_t(rank * count));
  for (int64_t h = 0; h < count; ++h) {
    std::vector<int64_t> index = unravel(hits[size_t(h)], shape);
    for (int64_t d = 0; d < rank; ++d) coords[size_t(d * count + h)] = index[size_t(d)];
  }
  return {from_int64s(coords, {rank, count}, DataType::int64())};
}

// ---------------------------------------------------------------- scans

template <typename T>
std::vector<T> scan(const std::vector<T>& in, const std::vector<int64_t>& shape, size_t axis,
                    const ScanopAttrs& attrs, bool product) {
  std::vector<T> out(in.size());
  int64_t dim = shape[axis];
  int64_t inner = shape_numel(std::span(shape).subspan(axis + 1));
  int64_t outer = shape_numel(std::span(shape).first(axis));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T acc = product ? T(1) : T(0);
      for (int64_t step = 0; step < dim; ++step) {
        int64_t j = attrs.reverse ? dim - 1 - step : step;
        size_t at = size_t((o * dim + j) * inner + i);
        if (attrs.exclusive) {
          out[at] = acc;
          acc = product ? acc * in[at] : acc + in[at];
        } else {
          acc = product ? acc * in[at] : acc + in[at];
          out[at] = acc;
        }
      }
    }
  }
  return out;
}

Tensor scan_tensor(const KernelArgs& args, std::optional<int64_t> axis_value, bool product) {
  const auto& attrs = args.attrs_as<ScanopAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<int64_t> shape = data.shape_vector();
  std::vector<int64_t> out_shape = shape;
  size_t axis = 0;
  if (axis_value) {
    axis = size_t(checked_axis(*axis_value, int64_t(shape.size()), "scan axis"));
  } else {
    shape = {data.numel()};
    out_shape = shape;
  }
  DataType dtype = args.out_dtype();
  if (is_integer_like(dtype))
    return from_int64s(scan(to_int64s(data), shape, axis, attrs, product), out_shape, dtype);
  return from_doubles(scan(to_doubles(data), shape, axis, attrs, product), out_shape, dtype);
}

std::vector<Tensor> cumsum_kernel(const KernelArgs& args) {
  return {scan_tensor(args, args.attrs_as<ScanopAttrs>().axis, false)};
}

std::vector<Tensor> cumprod_kernel(const KernelArgs& args) {
  return {scan_tensor(args, args.attrs_as<ScanopAttrs>().axis, true)};
}

std::vector<Tensor> dyn_cumsum_kernel(const KernelArgs& args) {
  return {scan_tensor(args, scalar_int(args.inputs[1], "cumsum axis"), false)};
}

std::vector<Tensor> dyn_cumprod_kernel(const KernelArgs& args) {
  return {scan_tensor(args, scalar_int(args.inputs[1], "cumprod axis"), true)};
}

// ---------------------------------------------------------------- unique

// Lexicographic order of slices; NaN sorts above every number and equals
// itself, so all NaNs count as one value (numpy's unique does the same).
struct SliceLess {
  template <typename T>
  bool operator()(const std::vector<T>& a, const std::vector<T>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](T x, T y) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x)) return false;
        if (std::isnan(y)) return true;
      }
      return x < y;
    });
  }
};

// Unique over slices along an axis (each element one slice without an axis);
// slices compare lexicographically by their elements in row-major order.
template <typename T>
std::vector<Tensor> unique_slices(const Tensor& data, const std::vector<T>& values,
                                  const UniqueAttrs& attrs) {
  std::vector<int64_t> shape = data.shape_vector();
  bool has_axis = attrs.axis.has_value();
  size_t axis =
      has_axis ? size_t(checked_axis(*attrs.axis, int64_t(shape.size()), "unique axis")) : 0;
  if (!has_axis) shape = {data.numel()};
  int64_t dim = shape[axis];
  int64_t inner = shape_numel(std::span(shape).subspan(axis + 1));
  int64_t outer = shape_numel(std::span(shape).first(axis));
  std::vector<std::vector<T>> slices(static_cast<size_t>(dim));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < inner; ++i)
        slices[size_t(j)].push_back(values[size_t((o * dim + j) * inner + i)]);

  std::map<std::vector<T>, int64_t, SliceLess> first_seen;  // slice -> its first position
  std::vector<int64_t> firsts;                              // in order of first occurrence
  for (int64_t j = 0; j < dim; ++j)
    if (first_seen.emplace(slices[size_t(j)], j).second) firsts.push_back(j);
  if (attrs.sorted)
    std::stable_sort(firsts.begin(), firsts.end(), [&](int64_t a, int64_t b) {
      return SliceLess()(slices[size_t(a)], slices[size_t(b)]);
    });
  std::map<std::vector<T>, int64_t, SliceLess> rank_of;  // slice -> its place in the output
  for (size_t u = 0; u < firsts.size(); ++u) rank_of[slices[size_t(firsts[u])]] = int64_t(u);
  std::vector<int64_t> inverse, counts(firsts.size(), 0);
  for (int64_t j = 0; j < dim; ++j) {
    int64_t u = rank_of.at(slices[size_t(j)]);
    inverse.push_back(u);
    ++counts[size_t(u)];
  }
  int64_t n = int64_t(firsts.size());
  std::vector<int64_t> out_shape = shape;
  out_shape[axis] = n;
  Tensor flat_data = has_axis ? data : reshaped_copy(data, shape);
  Tensor unique_values = remap(flat_data, out_shape, [&](std::vector<int64_t> out) {
    out[axis] = firsts[size_t(out[axis])];
    return out;
  });
  DataType i64 = DataType::int64();
  return {unique_values, from_int64s(firsts, {n}, i64), from_int64s(inverse, {dim}, i64),
          from_int64s(counts, {n}, i64)};
}

std::vector<Tensor> unique_kernel(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const auto& attrs = args.attrs_as<UniqueAttrs>();
  if (is_integer_like(data.dtype())) return unique_slices(data, to_int64s(data), attrs);
  return unique_slices(data, to_doubles(data), attrs);
}

}  // namespace

void register_index_sort_kernels() {
  register_kernel("topk", topk_kernel);
  register_kernel("dyn.topk", dyn_topk_kernel);
  register_kernel("sort", sort_kernel);
  register_kernel("argsort", argsort_kernel);
  register_kernel("nonzero", nonzero_kernel);
  register_kernel("cumsum", cumsum_kernel);
  register_kernel("cumprod", cumprod_kernel);
  register_kernel("dyn.cumsum", dyn_cumsum_kernel);
  register_kernel("dyn.cumprod", dyn_cumprod_kernel);
  register_kernel("unique", unique_kernel);
}

}  // namespace anvil::reference
