// Computes of the matrix products: nn.dense (out[i, j] = sum_k x[i, k] * w[j, k], TVM's
// T_dense), nn.matmul with its transpose flags, nn.batch_matmul (a batch of 1 broadcasts)
// and numpy-style matmul (broadcast batch dims, 1-D operands as vectors). Each is one
// reduction block; operands are cast to the output dtype before the multiply, so int8
// inputs accumulate in int32 when out_dtype asks for it.
#include "anvil/ir/attrs/nn.h"
#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"
#include "topi/topi_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

PrimExpr product(DataType dtype, PrimExpr a, PrimExpr b) {
  return tir::cast(dtype, std::move(a)) * tir::cast(dtype, std::move(b));
}

std::vector<te::Tensor> dense_compute(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& weight = args.inputs[1];
  const DataType dtype = args.out_dtype();
  tir::IterVar k = te::reduce_axis(weight.shape()[1], "k");
  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> x_index = nn::var_exprs(idx);
    x_index.back() = k.var;
    return tir::sum(product(dtype, data.at(x_index), weight(idx.back(), k.var)), {k});
  };
  return {te::compute(args.out_shape(), body, "T_dense")};
}

// data (..., K) times the packed weight (N / b, K, b): out[..., n] = sum_k data[..., k] *
// weight[n / b, k, n % b]. A schedule that splits n by b turns the division into the block loop.
std::vector<te::Tensor> dense_pack_compute(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& weight = args.inputs[1];
  const DataType dtype = args.out_dtype();
  tir::IterVar k = te::reduce_axis(weight.shape()[1], "k");
  PrimExpr block = weight.shape()[2];
  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> x_index = nn::var_exprs(idx);
    x_index.back() = k.var;
    PrimExpr n = idx.back();
    PrimExpr w = weight(tir::floordiv(n, block), k.var, tir::floormod(n, block));
    return tir::sum(product(dtype, data.at(x_index), w), {k});
  };
  return {te::compute(args.out_shape(), body, "T_dense_pack")};
}

// tensor_a (..., M, K) or with transpose_a (..., K, M), a 1-D tensor_a being one row, times
// tensor_b (K, N) or with transpose_b (N, K).
std::vector<te::Tensor> matmul_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::MatmulAttrs>();
  const te::Tensor& tensor_a = args.inputs[0];
  const te::Tensor& tensor_b = args.inputs[1];
  const DataType dtype = args.out_dtype();
  const bool transpose_a = a.transpose_a, transpose_b = a.transpose_b;
  const size_t rank = size_t(tensor_a.ndim());
  PrimExpr k_extent = transpose_a ? tensor_a.shape()[rank - 2] : tensor_a.shape()[rank - 1];
  tir::IterVar k = te::reduce_axis(k_extent, "k");
  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> a_index = nn::var_exprs(idx);
    const PrimExpr n = a_index.back();
    if (rank == 1) {
      a_index = {k.var};
    } else if (transpose_a) {
      a_index[rank - 1] = a_index[rank - 2];
      a_index[rank - 2] = k.var;
    } else {
      a_index[rank - 1] = k.var;
    }
    PrimExpr b = transpose_b ? tensor_b(n, k.var) : tensor_b(k.var, n);
    return tir::sum(product(dtype, tensor_a.at(a_index), b), {k});
  };
  return {te::compute(args.out_shape(), body, "T_matmul")};
}

// x (B, M, K) or (B, K, M) times y (B, N, K) or (B, K, N); a batch of 1 serves every batch.
std::vector<te::Tensor> batch_matmul_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::BatchMatmulAttrs>();
  const te::Tensor& x = args.inputs[0];
  const te::Tensor& y = args.inputs[1];
  const DataType dtype = args.out_dtype();
  const bool transpose_a = a.transpose_a, transpose_b = a.transpose_b;
  // Every dim may be a size variable, the reduction too (attention's probabilities times
  // values sum over the sequence).
  const std::vector<PrimExpr>& x_shape = x.shape();
  const PrimExpr batch = args.out_shape()[0], x_batch = x_shape[0], y_batch = y.shape()[0];
  tir::IterVar k = te::reduce_axis(transpose_a ? x_shape[1] : x_shape[2], "k");
  auto body = [=](const std::vector<tir::Var>& idx) {
    PrimExpr b = idx[0], m = idx[1], n = idx[2];
    PrimExpr xb = broadcast_axis_index(x_batch, b, batch);
    PrimExpr yb = broadcast_axis_index(y_batch, b, batch);
    PrimExpr lhs = transpose_a ? x(xb, k.var, m) : x(xb, m, k.var);
    PrimExpr rhs = transpose_b ? y(yb, n, k.var) : y(yb, k.var, n);
    return tir::sum(product(dtype, lhs, rhs), {k});
  };
  return {te::compute(args.out_shape(), body, "T_batch_matmul", {"b", "i", "j"})};
}

// numpy.matmul: a 1-D a is a row and a 1-D b a column, their added axes dropped from the
// output; the leading axes broadcast.
std::vector<te::Tensor> numpy_matmul_compute(const ComputeArgs& args) {
  const te::Tensor& a = args.inputs[0];
  const te::Tensor& b = args.inputs[1];
  const DataType dtype = args.out_dtype();
  // Every dim may be a size variable (a dim of 1 broadcasts), the reduction too.
  const std::vector<PrimExpr>& a_shape = a.shape();
  const std::vector<PrimExpr>& b_shape = b.shape();
  const std::vector<PrimExpr> out_shape = args.out_shape();
  const bool a_vector = a_shape.size() == 1, b_vector = b_shape.size() == 1;
  const std::vector<PrimExpr> a_batch(a_shape.begin(), a_shape.end() - (a_vector ? 1 : 2));
  const std::vector<PrimExpr> b_batch(b_shape.begin(), b_shape.end() - (b_vector ? 1 : 2));
  const size_t batch_rank = out_shape.size() - (a_vector ? 0 : 1) - (b_vector ? 0 : 1);
  const std::vector<PrimExpr> out_batch(out_shape.begin(), out_shape.begin() + batch_rank);
  tir::IterVar k = te::reduce_axis(a_shape.back(), "k");
  auto body = [=](const std::vector<tir::Var>& idx) {
    std::vector<PrimExpr> batch(idx.begin(), idx.begin() + batch_rank);
    std::vector<PrimExpr> a_index = broadcast_index(a_batch, batch, out_batch);
    std::vector<PrimExpr> b_index = broadcast_index(b_batch, batch, out_batch);
    if (!a_vector) a_index.push_back(idx[batch_rank]);
    a_index.push_back(k.var);
    b_index.push_back(k.var);
    if (!b_vector) b_index.push_back(idx.back());
    return tir::sum(product(dtype, a.at(a_index), b.at(b_index)), {k});
  };
  return {te::compute(args.out_shape(), body, "T_matmul")};
}

}  // namespace

void register_nn_dense_computes() {
  register_compute("nn.dense", dense_compute);
  register_compute("nn.matmul", matmul_compute);
  register_compute("nn.contrib_dense_pack", dense_pack_compute);
  register_compute("nn.batch_matmul", batch_matmul_compute);
  register_compute("matmul", numpy_matmul_compute);
}

}  // namespace anvil::topi
