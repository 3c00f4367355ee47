// Lowered kernels in the packed calling convention, built by hand, that the C back end tests
// and the C-versus-LLVM tests run; and the plain C++ results they must reproduce.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "anvil/runtime/tensor.h"
#include "anvil/tir/tir.h"

namespace anvil::testing {

// One argument of a packed kernel: a tensor seen through a flat buffer (its DLTensor shape
// given by tensor_shape: Vars are bound from the tensor, constants are checked on entry), or a
// scalar (an int64 or float Var).
struct KernelParam {
  tir::Buffer buffer;
  std::vector<tir::PrimExpr> tensor_shape;
  tir::Var scalar;
};

KernelParam tensor_param(tir::Buffer flat_buffer, std::vector<tir::PrimExpr> tensor_shape);
KernelParam scalar_param(tir::Var var);

// The packed form make_packed_api produces: (args, arg_type_codes, num_args, ret_value,
// ret_type_code), argument count, type code and rank checks, then variable bindings from the
// arguments around body. Attrs global_symbol = name and calling_conv = "packed".
tir::PrimFunc make_packed_kernel(const std::string& name, const std::vector<KernelParam>& params,
                                 tir::Stmt body);

// add_scalar(A: f32[n], B: f32[n], s: f32): B = A + s.
tir::PrimFunc add_scalar_kernel();
// row_sum(A: f32[m, n], B: f32[m]): B[i] = sum_j A[i, j].
tir::PrimFunc row_sum_kernel();
// div_mod(A: i64[n], FD, FM, TD, TM: i64[n], FD32, FM32: i32[n], d: i64): floor and truncated
// quotients and remainders of A by d, in int64 and int32.
tir::PrimFunc div_mod_kernel();
// vector_affine(A: f32[n], B: f32[n]) with n % 4 == 0: four lanes at a time,
// B[i] = A[i] * 2 + i, through Ramp loads/stores and a vector Let.
tir::PrimFunc vector_affine_kernel();
// shift_lanes(A: i32[8]): A[1:5] = A[0:4] + 100 as one vector store (lanes read what others write).
tir::PrimFunc shift_lanes_kernel();
// parallel_scale(A: f32[m, n], B: f32[m, n], k: f32): B[i, j] = A[i, j] * k + i, rows in parallel.
tir::PrimFunc parallel_scale_kernel();
// parallel_sqrt(A: f32[n], B: f32[n]): B = sqrt(A) in parallel; fails on a negative element.
tir::PrimFunc parallel_sqrt_kernel();
// row_softmax(A: f32[m, n], B: f32[m, n]) through a workspace row buffer (n is symbolic) and a
// one-element stack accumulator.
tir::PrimFunc row_softmax_kernel();
// half_cast(A: f32[n], H: f16[n], S: f32[n], BF: bf16[n]): H = f16(A), S = f32(H * H) in f16,
// BF = bf16(A).
tir::PrimFunc half_cast_kernel();
// checked_scale(A: f32[n], B: f32[n], limit: i64): fails with "checked_scale: n exceeds the
// limit" inside a workspace allocation when n > limit, else B = 3 * A.
tir::PrimFunc checked_scale_kernel();
// math(A: f32[n], E, T, S, R, F: f32[n]): exp, tanh, sigmoid, round (ties to even) and
// fma(A, A, 1).
tir::PrimFunc math_kernel();
// select_mix(A: f32[n], B: f32[n], C: bool[n], D: i8[n]): B[i] = (A[i+1] if i + 1 < n else 0)
// + max(A[i], 0) * min(A[i], 1) through lets, C = A > 0, D = i8(i) * 100 (wrapping).
tir::PrimFunc select_mix_kernel();
// nested_parallel(A: f32[m, 8], B: f32[m, 8], limit: f32): per row i (parallel) and half j
// (parallel, nested), B[i, 4j:4j+4] = A[i, 4j:4j+4] + (0, 1, 2, 3), the offsets a vector bound
// outside both loops, staged through a per-task workspace buffer of m elements; fails with
// "nested_parallel: element above limit" when an element exceeds limit.
tir::PrimFunc nested_parallel_kernel();

// All of the above.
std::vector<tir::PrimFunc> all_test_kernels();

// Kernels made by the real pipeline: tensor expressions, schedule, tir::transform::lower.
// dense_relu(A: f32[33, 17], B: f32[17, 24], bias: f32[24], E: f32[33, 24]):
// E = max(A @ B + bias, 0), rows in parallel, the inner 8 output columns vectorized, the product
// in an intermediate buffer.
tir::PrimFunc lowered_dense_relu_kernel();
// scale_shift(X: f32[n], Y: f32[n]) for any n: Y = X * 0.5 - 1, in chunks of 4 lanes plus a
// guarded tail.
tir::PrimFunc lowered_scale_shift_kernel();

// A new tensor of dtype and shape holding values (whose C++ type has dtype's size).
template <typename T>
Tensor tensor_of(const std::vector<T>& values, DataType dtype, std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}

// A tensor's elements as T (of the element type's size).
template <typename T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> out(size_t(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace anvil::testing
