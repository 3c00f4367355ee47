// Reference kernels of the matrix products: nn.dense, nn.matmul,
// nn.batch_matmul, numpy-style matmul, and nn.bias_add. One strided matrix
// product serves them all (a transpose is only a swap of strides). Floats
// accumulate in double, integers (MatMulInteger) in int64.
#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "reference/kernel_families.h"
#include "reference/nn_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// A matrix inside a flat array: element (r, c) is data[r * row + c * col].
template <typename T>
struct MatrixView {
  const T* data;
  int64_t row, col;
  T at(int64_t r, int64_t c) const { return data[r * row + c * col]; }
  MatrixView transposed() const { return {data, col, row}; }
};

// The rows x columns matrix as a row-major copy. It is copied in 32 x 32
// tiles, so that a transposed view (a weight read down its columns) still
// touches few cache lines and pages at a time.
template <typename T>
std::vector<T> contiguous_rows(MatrixView<T> view, int64_t rows, int64_t columns) {
  constexpr int64_t kTile = 32;
  std::vector<T> copy(size_t(rows * columns));
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < columns; c0 += kTile)
      for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
        for (int64_t c = c0; c < std::min(columns, c0 + kTile); ++c)
          copy[size_t(r * columns + c)] = view.at(r, c);
  return copy;
}

// c (m x n, row-major) = a (m x k) times b (k x n), each output a plain dot
// product summed in order. The rows of a and the columns of b are first copied
// out contiguously (whatever their strides); four outputs of a row share each
// element of a, and the columns go in blocks that stay in cache while every
// row of a passes over them: a few times faster than the naive loop on large
// weights (ViT's 768 x 3072), with the same arithmetic.
template <typename T>
void matrix_product(MatrixView<T> a, MatrixView<T> b, T* c, int64_t m, int64_t n, int64_t k) {
  std::vector<T> rows = contiguous_rows(a, m, k), columns = contiguous_rows(b.transposed(), n, k);
  const int64_t block = std::max<int64_t>(4, (int64_t(1) << 15) / std::max<int64_t>(k, 1));
  for (int64_t j0 = 0; j0 < n; j0 += block) {
    const int64_t j1 = std::min(n, j0 + block);
    for (int64_t i = 0; i < m; ++i) {
      const T* x = rows.data() + i * k;
      int64_t j = j0;
      for (; j + 4 <= j1; j += 4) {
        const T* y0 = columns.data() + j * k;
        const T *y1 = y0 + k, *y2 = y1 + k, *y3 = y2 + k;
        T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int64_t p = 0; p < k; ++p) {
          s0 += x[p] * y0[p];
          s1 += x[p] * y1[p];
          s2 += x[p] * y2[p];
          s3 += x[p] * y3[p];
        }
        T* out = c + i * n + j;
        out[0] = s0;
        out[1] = s1;
        out[2] = s2;
        out[3] = s3;
      }
      for (; j < j1; ++j) {
        const T* y = columns.data() + j * k;
        T sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += x[p] * y[p];
        c[i * n + j] = sum;
      }
    }
  }
}

bool integer_inputs(const KernelArgs& args) {
  return nn::integer_math({args.inputs[0].dtype(), args.inputs[1].dtype()});
}

// nn.dense: data (..., K) times weight (N, K) transposed.
template <typename T>
std::vector<Tensor> dense_with(const KernelArgs& args) {
  std::vector<T> x = nn::values_as<T>(args.inputs[0]), w = nn::values_as<T>(args.inputs[1]);
  std::vector<int64_t> shape = args.inputs[0].shape_vector();
  int64_t k = shape.back(), units = args.inputs[1].shape()[0];
  int64_t rows = shape_numel(std::span(shape).first(shape.size() - 1));
  shape.back() = units;
  std::vector<T> y(size_t(rows * units));
  matrix_product<T>({x.data(), k, 1}, {w.data(), 1, k}, y.data(), rows, units, k);
  return {nn::tensor_of(y, shape, args.out_dtype())};
}

std::vector<Tensor> dense_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? dense_with<int64_t>(args) : dense_with<double>(args);
}

// nn.matmul: tensor_a (..., M, K) (or (..., K, M)) times a 2-D tensor_b (K, N) (or (N, K)).
template <typename T>
std::vector<Tensor> matmul_with(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<MatmulAttrs>();
  std::vector<T> a = nn::values_as<T>(args.inputs[0]), b = nn::values_as<T>(args.inputs[1]);
  std::vector<int64_t> shape = args.inputs[0].shape_vector();
  std::span<const int64_t> b_shape = args.inputs[1].shape();
  size_t last = shape.size() - 1;
  // A 1-D tensor_a is a single row.
  int64_t m = shape.size() == 1 ? 1 : attrs.transpose_a ? shape[last] : shape[last - 1];
  int64_t k = attrs.transpose_a ? shape[last - 1] : shape[last];
  int64_t n = attrs.transpose_b ? b_shape[0] : b_shape[1];
  int64_t batches = shape.size() <= 2 ? 1 : shape_numel(std::span(shape).first(shape.size() - 2));
  MatrixView<T> b_view =
      attrs.transpose_b ? MatrixView<T>{b.data(), 1, k} : MatrixView<T>{b.data(), n, 1};
  std::vector<T> y(size_t(batches * m * n));
  if (!attrs.transpose_a) {
    // The batches stack into one tall matrix against the one b.
    matrix_product<T>({a.data(), k, 1}, b_view, y.data(), batches * m, n, k);
  } else {
    for (int64_t i = 0; i < batches; ++i)
      matrix_product<T>({a.data() + i * m * k, 1, m}, b_view, y.data() + i * m * n, m, n, k);
  }
  if (attrs.transpose_a) shape[last - 1] = shape[last];
  shape[last] = n;
  return {nn::tensor_of(y, shape, args.out_dtype())};
}

std::vector<Tensor> nn_matmul_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? matmul_with<int64_t>(args) : matmul_with<double>(args);
}

// nn.contrib_dense_pack: data (..., K) times a weight (N / b, K, b) packed in column blocks.
template <typename T>
std::vector<Tensor> dense_pack_with(const KernelArgs& args) {
  std::vector<T> x = nn::values_as<T>(args.inputs[0]), packed = nn::values_as<T>(args.inputs[1]);
  std::vector<int64_t> shape = args.inputs[0].shape_vector();
  std::span<const int64_t> ws = args.inputs[1].shape();
  const int64_t blocks = ws[0], k = ws[1], block = ws[2], n = blocks * block;
  // Unpacked to the (K, N) matrix it stands for.
  std::vector<T> w(size_t(k * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t r = 0; r < k; ++r)
      w[size_t(r * n + j)] = packed[size_t((j / block) * k * block + r * block + j % block)];
  int64_t rows = x.size() / size_t(std::max<int64_t>(k, 1));
  std::vector<T> y(size_t(rows * n));
  matrix_product<T>({x.data(), k, 1}, {w.data(), n, 1}, y.data(), rows, n, k);
  shape.back() = n;
  return {nn::tensor_of(y, shape, args.out_dtype())};
}

std::vector<Tensor> dense_pack_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? dense_pack_with<int64_t>(args) : dense_pack_with<double>(args);
}

// nn.batch_matmul: x (B, M, K) times y (B, N, K) transposed by default; a batch of 1 broadcasts.
template <typename T>
std::vector<Tensor> batch_matmul_with(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<BatchMatmulAttrs>();
  std::vector<T> x = nn::values_as<T>(args.inputs[0]), y = nn::values_as<T>(args.inputs[1]);
  std::span<const int64_t> xs = args.inputs[0].shape(), ys = args.inputs[1].shape();
  int64_t m = attrs.transpose_a ? xs[2] : xs[1], k = attrs.transpose_a ? xs[1] : xs[2];
  int64_t n = attrs.transpose_b ? ys[1] : ys[2];
  int64_t batches = std::max(xs[0], ys[0]);
  std::vector<T> out(size_t(batches * m * n));
  for (int64_t i = 0; i < batches; ++i) {
    const T* x_data = x.data() + (xs[0] == 1 ? 0 : i) * m * k;
    const T* y_data = y.data() + (ys[0] == 1 ? 0 : i) * k * n;
    MatrixView<T> a = attrs.transpose_a ? MatrixView<T>{x_data, 1, m} : MatrixView<T>{x_data, k, 1};
    MatrixView<T> b = attrs.transpose_b ? MatrixView<T>{y_data, 1, k} : MatrixView<T>{y_data, n, 1};
    matrix_product(a, b, out.data() + i * m * n, m, n, k);
  }
  return {nn::tensor_of(out, {batches, m, n}, args.out_dtype())};
}

std::vector<Tensor> batch_matmul_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? batch_matmul_with<int64_t>(args) : batch_matmul_with<double>(args);
}

// numpy.matmul: a 1-D a is a row, a 1-D b a column (their added axes are
// dropped from the result); the other leading axes broadcast.
template <typename T>
std::vector<Tensor> numpy_matmul_with(const KernelArgs& args) {
  std::vector<T> a = nn::values_as<T>(args.inputs[0]), b = nn::values_as<T>(args.inputs[1]);
  std::vector<int64_t> as = args.inputs[0].shape_vector(), bs = args.inputs[1].shape_vector();
  bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
  if (a_vector) as.insert(as.begin(), 1);
  if (b_vector) bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> batch = broadcast_shape(a_batch, b_batch);
  int64_t batches = shape_numel(batch);
  std::vector<T> out(size_t(batches * m * n));
  if (shape_numel(b_batch) == 1) {
    // One b for every batch of a: the batches stack into one tall matrix.
    matrix_product<T>({a.data(), k, 1}, {b.data(), n, 1}, out.data(), batches * m, n, k);
  } else {
    for (int64_t i = 0; i < batches; ++i) {
      int64_t ai = broadcast_source(i, batch, a_batch), bi = broadcast_source(i, batch, b_batch);
      matrix_product<T>({a.data() + ai * m * k, k, 1}, {b.data() + bi * k * n, n, 1},
                        out.data() + i * m * n, m, n, k);
    }
  }
  std::vector<int64_t> shape = batch;
  if (!a_vector) shape.push_back(m);
  if (!b_vector) shape.push_back(n);
  return {nn::tensor_of(out, shape, args.out_dtype())};
}

std::vector<Tensor> numpy_matmul_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? numpy_matmul_with<int64_t>(args) : numpy_matmul_with<double>(args);
}

template <typename T>
std::vector<Tensor> bias_add_with(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<BiasAddAttrs>();
  std::vector<T> x = nn::values_as<T>(args.inputs[0]), bias = nn::values_as<T>(args.inputs[1]);
  std::vector<int64_t> shape = args.inputs[0].shape_vector();
  int64_t axis = wrap_axis(attrs.axis, int64_t(shape.size()));
  int64_t inner = shape_numel(std::span(shape).subspan(size_t(axis) + 1));
  int64_t channels = shape[size_t(axis)];
  for (size_t i = 0; i < x.size(); ++i) x[i] += bias[size_t(int64_t(i) / inner % channels)];
  return {nn::tensor_of(x, shape, args.out_dtype())};
}

std::vector<Tensor> bias_add_kernel(const KernelArgs& args) {
  return integer_inputs(args) ? bias_add_with<int64_t>(args) : bias_add_with<double>(args);
}

}  // namespace

void register_nn_dense_kernels() {
  register_kernel("nn.dense", dense_kernel);
  register_kernel("nn.matmul", nn_matmul_kernel);
  register_kernel("nn.contrib_dense_pack", dense_pack_kernel);
  register_kernel("nn.batch_matmul", batch_matmul_kernel);
  register_kernel("matmul", numpy_matmul_kernel);
  register_kernel("nn.bias_add", bias_add_kernel);
}

}  // namespace anvil::reference
