// The ordering ops on the VM: topk, sort and argsort in O(n log k) per line (a partial sort of
// the line's indices), where the tensor-IR computes count ranks in O(n^2), which the long lines
// of detection heads (a score per anchor and class) make slow. The order is the computes': NaN
// above every number, equal elements (all NaNs alike) in index order; descending is the reverse
// comparison with the same index tie-break.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "runtime/builtin_registration.h"

namespace anvil::builtins {

namespace {

// The index order of one line: the first k of positions sorted by their keys.
template <typename Key>
void order_line(const std::vector<Key>& keys, bool ascending, int64_t k,
                std::vector<int64_t>& positions) {
  positions.resize(keys.size());
  std::iota(positions.begin(), positions.end(), int64_t(0));
  auto is_nan = [](Key v) {
    if constexpr (std::is_floating_point_v<Key>) return std::isnan(v);
    return false;
  };
  auto first = [&](int64_t a, int64_t b) {
    const Key x = keys[size_t(a)], y = keys[size_t(b)];
    const bool nx = is_nan(x), ny = is_nan(y);
    // Ascending: numbers before NaN, smaller first. Descending: NaN first, larger first.
    bool before, after;
    if (ascending) {
      before = !nx && (ny || x < y);
      after = !ny && (nx || y < x);
    } else {
      before = !ny && (nx || y < x);
      after = !nx && (ny || x < y);
    }
    if (before != after) return before;
    return a < b;
  };
  std::partial_sort(positions.begin(), positions.begin() + k, positions.end(), first);
  positions.resize(size_t(k));
}

// Integers compare as int64 (uint64 as its bit pattern, as the computes do), read whole.
template <typename Key>
Key key_of(const Tensor& t, int64_t i) {
  if constexpr (std::is_floating_point_v<Key>) {
    return t.get_as_double(i);
  } else {
    if (t.dtype().bits == 64) return static_cast<const int64_t*>(t.data())[i];
    return int64_t(t.get_as_double(i));
  }
}

int64_t scalar_int(const Tensor& t, int64_t i) { return int64_t(t.get_as_double(i)); }

template <typename Key>
void order_all(const Tensor& data, int64_t axis, int64_t k, bool ascending, Tensor* values,
               Tensor* indices) {
  const std::vector<int64_t> shape = data.shape_vector();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[size_t(axis)];
  std::vector<Key> keys(static_cast<size_t>(n));
  std::vector<int64_t> positions;
  // Whole bytes are copied as they are (no int64 rounds through a double).
  const int64_t bytes = data.dtype().bits % 8 == 0 ? data.dtype().bits / 8 : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) keys[size_t(j)] = key_of<Key>(data, (o * n + j) * inner + i);
      order_line(keys, ascending, k, positions);
      for (int64_t p = 0; p < k; ++p) {
        const int64_t from = (o * n + positions[size_t(p)]) * inner + i;
        const int64_t to = (o * k + p) * inner + i;
        if (values && bytes > 0)
          std::memcpy(static_cast<char*>(values->data()) + to * bytes,
                      static_cast<const char*>(data.data()) + from * bytes, size_t(bytes));
        else if (values)
          values->set_from_double(to, data.get_as_double(from));
        if (indices) indices->set_from_double(to, double(positions[size_t(p)]));
      }
    }
}

}  // namespace

std::vector<Tensor> ordered(const Tensor& data_in, const Tensor& k, const Tensor& options) {
  if (!data_in.defined() || data_in.ndim() == 0)
    throw_error("ordered: data must have at least one dim");
  const Tensor data = data_in.is_contiguous() ? data_in : data_in.copy();
  if (options.dtype() != DataType::int64() || options.numel() != 5)
    throw_error("ordered: options must be five int64 values, got ", options.numel());
  const int64_t rank = data.ndim();
  int64_t axis = scalar_int(options, 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    throw_error("ordered: axis ", scalar_int(options, 0), " is out of range for rank ", rank);
  const bool ascending = scalar_int(options, 1) != 0;
  const int64_t outputs = scalar_int(options, 2);
  const int64_t index_bits = scalar_int(options, 3);
  if (outputs < 1 || outputs > 3) throw_error("ordered: output selector ", outputs, " is not 1-3");
  if (index_bits != 32 && index_bits != 64)
    throw_error("ordered: index bits ", index_bits, " is not 32 or 64");
  const int64_t n = data.shape()[size_t(axis)];
  if (k.numel() != 1) throw_error("ordered: k must hold one value, got ", k.numel());
  // sort and argsort take the whole line; topk's k must fit it.
  const bool whole = scalar_int(options, 4) != 0;
  const int64_t count = whole ? n : scalar_int(k, 0);
  if (count < 0 || count > n)
    throw_error("ordered: k = ", count, " does not fit the axis' length ", n);
  std::vector<int64_t> shape = data.shape_vector();
  shape[size_t(axis)] = count;
  Tensor values, indices;
  if (outputs & 1) values = Tensor::empty(shape, data.dtype());
  if (outputs & 2)
    indices = Tensor::empty(shape, index_bits == 32 ? DataType::int32() : DataType::int64());
  Tensor* v = values.defined() ? &values : nullptr;
  Tensor* i = indices.defined() ? &indices : nullptr;
  const DataType dtype = data.dtype();
  if (dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat())
    order_all<double>(data, axis, count, ascending, v, i);
  else
    order_all<int64_t>(data, axis, count, ascending, v, i);
  std::vector<Tensor> result;
  if (v) result.push_back(values);
  if (i) result.push_back(indices);
  return result;
}

namespace {

const bool kRegistered = [] {
  register_global(kOrdered,
                  PackedFunc(
                      [](const PackedArgs& args) -> Value {
                        if (args.size() != 4)
                          throw_error(kOrdered, " takes 3 tensors, got ", args.size() - 1);
                        auto* outputs = args.get<std::vector<Tensor>*>(3);
                        *outputs =
                            ordered(args.get<Tensor>(0), args.get<Tensor>(1), args.get<Tensor>(2));
                        return Value();
                      },
                      kOrdered));
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
