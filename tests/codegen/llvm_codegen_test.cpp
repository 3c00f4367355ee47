// The LLVM back end on hand-built lowered functions in the packed calling convention, JIT
// compiled and compared with plain C++ results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/support/error.h"
#include "anvil/support/half.h"
#include "anvil/tir/transform.h"
#include "codegen/c_test_kernels.h"

namespace anvil::codegen {
namespace {

using namespace tir;  // NOLINT
using testing::make_packed_kernel;
using testing::scalar_param;
using testing::tensor_of;
using testing::tensor_param;
using testing::values_of;

Var int_var(const char* name) { return VarNode::make(name, DataType::int64()); }
Buffer flat(const char* name, DataType dtype, PrimExpr extent) {
  return BufferNode::make(name, dtype, {std::move(extent)});
}
PrimExpr f32(double v) { return make_const(DataType::float32(), v); }

PrimFunc with_noalias(const PrimFunc& func) {
  return PrimFuncNode::make(func->params, func->buffer_map, func->body,
                            func->func_attrs.with("tir.noalias", int64_t(1)));
}

std::vector<float> iota_floats(int64_t n, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i) * scale + offset;
  return v;
}

// C = A + B with n read from the tensors.
PrimFunc add_kernel() {
  Var n = int_var("n"), i = int_var("i");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n),
         c = flat("C", DataType::float32(), n);
  Stmt body = for_loop(i, 0, n, store(c, load(a, {i}) + load(b, {i}), {i}));
  return make_packed_kernel(
      "add", {tensor_param(a, {n}), tensor_param(b, {n}), tensor_param(c, {n})}, body);
}

TEST(LlvmCodegen, AddReadsTheExtentFromTheTensor) {
  Module module = jit_compile({with_noalias(add_kernel())});
  for (int64_t n : {1, 37, 1000}) {
    std::vector<float> a = iota_floats(n, 0.5f, -3), b = iota_floats(n, -0.25f, 7);
    Tensor ta = tensor_of(a, DataType::float32(), {n}), tb = tensor_of(b, DataType::float32(), {n});
    Tensor tc = Tensor::zeros({n}, DataType::float32());
    module.function("add")(ta, tb, tc);
    std::vector<float> c = values_of<float>(tc);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c[size_t(i)], a[size_t(i)] + b[size_t(i)]) << i;
  }
}

TEST(LlvmCodegen, AssertsSurfaceTheirMessage) {
  Module module = jit_compile({add_kernel()});
  Tensor a = Tensor::zeros({5}, DataType::float32()), c = Tensor::zeros({6}, DataType::float32());
  try {
    module.function("add")(a, a, c);
    FAIL() << "a shape mismatch must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("add: C.shape[0] must equal n"), std::string::npos)
        << e.what();
  }
  try {
    module.function("add")(a, a);
    FAIL() << "a missing argument must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("add: expected 3 arguments"), std::string::npos)
        << e.what();
  }
}

// y[i] = sum_j A[i, j] * x[j] + bias, a reduction in a register.
TEST(LlvmCodegen, MatrixVectorReduction) {
  Var m = int_var("m"), n = int_var("n"), i = int_var("i"), j = int_var("j");
  Var bias = VarNode::make("bias", DataType::float32());
  Buffer a = flat("A", DataType::float32(), m * n), x = flat("x", DataType::float32(), n),
         y = flat("y", DataType::float32(), m);
  Stmt body = for_loop(
      i, 0, m,
      seq_stmt(
          {store(y, bias, {i}),
           for_loop(j, 0, n, store(y, load(y, {i}) + load(a, {i * n + j}) * load(x, {j}), {i}))}));
  PrimFunc func = make_packed_kernel(
      "matvec",
      {tensor_param(a, {m, n}), tensor_param(x, {n}), tensor_param(y, {m}), scalar_param(bias)},
      body);
  Module module = jit_compile({with_noalias(func)});
  int64_t rows = 13, cols = 29;
  std::vector<float> va = iota_floats(rows * cols, 0.01f, -1), vx = iota_floats(cols, 0.3f, -2);
  Tensor ty = Tensor::zeros({rows}, DataType::float32());
  module.function("matvec")(tensor_of(va, DataType::float32(), {rows, cols}),
                            tensor_of(vx, DataType::float32(), {cols}), ty, 1.5);
  std::vector<float> got = values_of<float>(ty);
  for (int64_t r = 0; r < rows; ++r) {
    float expected = 1.5f;
    for (int64_t k = 0; k < cols; ++k) expected += va[size_t(r * cols + k)] * vx[size_t(k)];
    EXPECT_NEAR(got[size_t(r)], expected, 1e-4f * std::abs(expected) + 1e-5f) << r;
  }
}

// Vector loads and stores through Ramp indices: 16 lanes at a time, then a scalar tail;
// B[i] = A[i] * 3 + A[2 i] (the second a stride-2 gather), and a stride-3 scatter into C.
TEST(LlvmCodegen, RampLoadsStoresGathersAndScatters) {
  Var n = int_var("n"), o = int_var("o"), t = int_var("t");
  Buffer a = flat("A", DataType::float32(), n * 2), b = flat("B", DataType::float32(), n),
         c = flat("C", DataType::float32(), n * 3);
  PrimExpr lanes = ramp(o * 16, 1, 16);
  PrimExpr even = ramp(o * 32, 2, 16);
  Stmt vector_part = for_loop(
      o, 0, floordiv(n, 16),
      seq_stmt({store(b, load(a, {lanes}) * broadcast(f32(3), 16) + load(a, {even}), {lanes}),
                store(c, load(a, {lanes}), {ramp(o * 48, 3, 16)})}));
  PrimExpr tail = floordiv(n, 16) * 16 + t;
  Stmt tail_part =
      for_loop(t, 0, floormod(n, 16),
               seq_stmt({store(b, load(a, {tail}) * f32(3) + load(a, {tail * 2}), {tail}),
                         store(c, load(a, {tail}), {tail * 3})}));
  PrimFunc func = make_packed_kernel(
      "ramps",
      {tensor_param(a, {n, make_int(2)}), tensor_param(b, {n}), tensor_param(c, {n, make_int(3)})},
      seq_stmt({vector_part, tail_part}));
  Module module = jit_compile({func});
  for (int64_t len : {5, 16, 53}) {
    std::vector<float> va = iota_floats(2 * len, 1.0f, 0.5f);
    Tensor tb = Tensor::zeros({len}, DataType::float32());
    Tensor tc = Tensor::zeros({len, 3}, DataType::float32());
    module.function("ramps")(tensor_of(va, DataType::float32(), {len, 2}), tb, tc);
    std::vector<float> vb = values_of<float>(tb), vc = values_of<float>(tc);
    for (int64_t k = 0; k < len; ++k) {
      ASSERT_EQ(vb[size_t(k)], va[size_t(k)] * 3 + va[size_t(2 * k)]) << len << " " << k;
      ASSERT_EQ(vc[size_t(3 * k)], va[size_t(k)]) << len << " " << k;
      ASSERT_EQ(vc[size_t(3 * k + 1)], 0.0f);
    }
  }
}

TEST(LlvmCodegen, IntegerDivisionSemantics) {
  Var n = int_var("n"), i = int_var("i"), d = int_var("d");
  Buffer a = flat("A", DataType::int64(), n);
  std::vector<Buffer> outs;
  for (const char* name : {"FD", "FM", "TD", "TM", "FD8", "FM8", "FD7", "FM7"})
    outs.push_back(flat(name, DataType::int64(), n));
  PrimExpr x = load(a, {i});
  Stmt body =
      for_loop(i, 0, n,
               seq_stmt({store(outs[0], floordiv(x, d), {i}), store(outs[1], floormod(x, d), {i}),
                         store(outs[2], truncdiv(x, d), {i}), store(outs[3], truncmod(x, d), {i}),
                         store(outs[4], floordiv(x, make_int(8)), {i}),
                         store(outs[5], floormod(x, make_int(8)), {i}),
                         store(outs[6], floordiv(x, make_int(7)), {i}),
                         store(outs[7], floormod(x, make_int(7)), {i})}));
  std::vector<testing::KernelParam> params = {tensor_param(a, {n})};
  for (const Buffer& out : outs) params.push_back(tensor_param(out, {n}));
  params.push_back(scalar_param(d));
  Module module = jit_compile({make_packed_kernel("divs", params, body)});
  std::vector<int64_t> values;
  for (int64_t v = -20; v <= 20; ++v) values.push_back(v);
  int64_t len = int64_t(values.size());
  auto floor_div = [](int64_t p, int64_t q) {
    int64_t r = p / q;
    return (p % q != 0 && ((p < 0) != (q < 0))) ? r - 1 : r;
  };
  for (int64_t divisor : {3, -3, 8, -5}) {
    std::vector<Tensor> tensors = {tensor_of(values, DataType::int64(), {len})};
    for (size_t k = 0; k < outs.size(); ++k)
      tensors.push_back(Tensor::zeros({len}, DataType::int64()));
    std::vector<Value> args(tensors.begin(), tensors.end());
    args.push_back(divisor);
    module.function("divs").call(args);
    for (int64_t k = 0; k < len; ++k) {
      int64_t v = values[size_t(k)];
      auto at = [&](int out) { return values_of<int64_t>(tensors[size_t(out) + 1])[size_t(k)]; };
      EXPECT_EQ(at(0), floor_div(v, divisor)) << v << " / " << divisor;
      EXPECT_EQ(at(1), v - floor_div(v, divisor) * divisor) << v << " % " << divisor;
      EXPECT_EQ(at(2), v / divisor);
      EXPECT_EQ(at(3), v % divisor);
      EXPECT_EQ(at(4), floor_div(v, 8));
      EXPECT_EQ(at(5), v - floor_div(v, 8) * 8);
      EXPECT_EQ(at(6), floor_div(v, 7));
      EXPECT_EQ(at(7), v - floor_div(v, 7) * 7);
    }
  }
}

TEST(LlvmCodegen, CastsBetweenWidths) {
  Var n = int_var("n"), i = int_var("i");
  Buffer a = flat("A", DataType::float32(), n);
  Buffer to_i8 = flat("I8", DataType::int8(), n), to_u16 = flat("U16", DataType::uint16(), n),
         to_f16 = flat("F16", DataType::float16(), n),
         to_bf16 = flat("BF16", DataType::bfloat16(), n),
         back = flat("Back", DataType::float64(), n),
         to_bool = flat("Bool", DataType::boolean(), n);
  PrimExpr x = load(a, {i});
  Stmt body =
      for_loop(i, 0, n,
               seq_stmt({store(to_i8, cast(DataType::int8(), x), {i}),
                         store(to_u16, cast(DataType::uint16(), cast(DataType::int32(), x)), {i}),
                         store(to_f16, cast(DataType::float16(), x), {i}),
                         store(to_bf16, cast(DataType::bfloat16(), x), {i}),
                         store(back,
                               cast(DataType::float64(), cast(DataType::float16(), x)) +
                                   cast(DataType::float64(), cast(DataType::bfloat16(), x)),
                               {i}),
                         store(to_bool, x > f32(0), {i})}));
  PrimFunc func =
      make_packed_kernel("casts",
                         {tensor_param(a, {n}), tensor_param(to_i8, {n}), tensor_param(to_u16, {n}),
                          tensor_param(to_f16, {n}), tensor_param(to_bf16, {n}),
                          tensor_param(back, {n}), tensor_param(to_bool, {n})},
                         body);
  Module module = jit_compile({func});
  std::vector<float> values = {0.0f,     -0.0f,    1.5f,  -2.75f,      100.4f, -100.6f,
                               3.14159f, 65504.0f, 1e-3f, 1.00390625f, -7.0f,  0.33333f};
  int64_t len = int64_t(values.size());
  Tensor i8 = Tensor::zeros({len}, DataType::int8()),
         u16 = Tensor::zeros({len}, DataType::uint16()),
         f16 = Tensor::zeros({len}, DataType::float16()),
         bf16 = Tensor::zeros({len}, DataType::bfloat16()),
         back_t = Tensor::zeros({len}, DataType::float64()),
         bools = Tensor::zeros({len}, DataType::boolean());
  module.function("casts")(tensor_of(values, DataType::float32(), {len}), i8, u16, f16, bf16,
                           back_t, bools);
  for (int64_t k = 0; k < len; ++k) {
    float v = values[size_t(k)];
    size_t s = size_t(k);
    if (std::abs(v) < 127) {
      EXPECT_EQ(values_of<int8_t>(i8)[s], int8_t(v)) << v;
    }
    EXPECT_EQ(values_of<uint16_t>(u16)[s], uint16_t(int32_t(v))) << v;
    EXPECT_EQ(values_of<uint16_t>(f16)[s], float_to_half(v)) << v;
    EXPECT_EQ(values_of<uint16_t>(bf16)[s], float_to_bfloat16(v)) << v;
    double expected =
        double(half_to_float(float_to_half(v))) + double(bfloat16_to_float(float_to_bfloat16(v)));
    EXPECT_EQ(values_of<double>(back_t)[s], expected) << v;
    EXPECT_EQ(values_of<uint8_t>(bools)[s], v > 0 ? 1 : 0) << v;
  }
}

// Selects, min/max, if/else and a local allocation: B[i] = clamp(A[i], -1, 1) staged through a
// 16-element stack buffer, plus a sign computed with branches.
TEST(LlvmCodegen, AllocateSelectAndBranches) {
  Var n = int_var("n"), o = int_var("o"), k = int_var("k");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n),
         s = flat("S", DataType::int32(), n);
  Buffer tile = BufferNode::make("tile", DataType::float32(), {make_int(16)}, "local");
  PrimExpr idx = o * 16 + k;
  Stmt fill = for_loop(k, 0, 16, store(tile, max(min(load(a, {idx}), f32(1)), f32(-1)), {k}));
  Stmt drain =
      for_loop(k, 0, 16,
               IfThenElseNode::make(
                   load(tile, {k}) > f32(0), store(s, make_int(1, DataType::int32()), {idx}),
                   store(s,
                         select(load(tile, {k}) < f32(0), make_int(-1, DataType::int32()),
                                make_int(0, DataType::int32())),
                         {idx})));
  Stmt copy = for_loop(k, 0, 16, store(b, load(tile, {k}), {idx}));
  Stmt body =
      for_loop(o, 0, floordiv(n, 16), AllocateNode::make(tile, seq_stmt({fill, drain, copy})));
  PrimFunc func = make_packed_kernel(
      "clamp", {tensor_param(a, {n}), tensor_param(b, {n}), tensor_param(s, {n})}, body);
  Module module = jit_compile({func});
  int64_t len = 48;
  std::vector<float> va = iota_floats(len, 0.1f, -2.4f);
  va[20] = 0;
  Tensor tb = Tensor::zeros({len}, DataType::float32()),
         ts = Tensor::zeros({len}, DataType::int32());
  module.function("clamp")(tensor_of(va, DataType::float32(), {len}), tb, ts);
  for (int64_t q = 0; q < len; ++q) {
    float v = va[size_t(q)];
    EXPECT_EQ(values_of<float>(tb)[size_t(q)], std::max(std::min(v, 1.0f), -1.0f)) << q;
    EXPECT_EQ(values_of<int32_t>(ts)[size_t(q)], v > 0 ? 1 : (v < 0 ? -1 : 0)) << q;
  }
}

// A workspace allocation of symbolic size (n elements) used as scratch, with an extern libc call.
TEST(LlvmCodegen, WorkspaceAllocationAndExternCall) {
  Var n = int_var("n"), i = int_var("i");
  Buffer a = flat("A", DataType::int32(), n), b = flat("B", DataType::int32(), n);
  Buffer scratch = BufferNode::make("scratch", DataType::int32(), {n}, "global");
  Stmt body = AllocateNode::make(
      scratch,
      seq_stmt(
          {for_loop(i, 0, n,
                    store(scratch, call_extern(DataType::int32(), "abs", {load(a, {i})}), {i})),
           for_loop(i, 0, n, store(b, load(scratch, {n - 1 - i}), {i}))}));
  Module module = jit_compile(
      {make_packed_kernel("reverse_abs", {tensor_param(a, {n}), tensor_param(b, {n})}, body)});
  int64_t len = 100000;  // beyond the stack limit either way: the size is symbolic
  std::vector<int32_t> va(static_cast<size_t>(len));
  for (int64_t q = 0; q < len; ++q) va[size_t(q)] = int32_t(q % 7 == 0 ? -q : q);
  Tensor tb = Tensor::zeros({len}, DataType::int32());
  for (int repeat = 0; repeat < 2; ++repeat) {
    module.function("reverse_abs")(tensor_of(va, DataType::int32(), {len}), tb);
    std::vector<int32_t> got = values_of<int32_t>(tb);
    for (int64_t q = 0; q < len; ++q) ASSERT_EQ(got[size_t(q)], std::abs(va[size_t(len - 1 - q)]));
  }
}

TEST(LlvmCodegen, UnloweredInputIsAnError) {
  Var i = int_var("i");
  Buffer a = flat("A", DataType::float32(), make_int(4));
  Stmt body = for_loop(i, 0, 4, store(a, f32(1), {i, i}));
  PrimFunc func = make_packed_kernel("two_d", {tensor_param(a, {make_int(4)})}, body);
  try {
    jit_compile({func});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not flattened"), std::string::npos) << e.what();
  }
  PrimFunc nameless = PrimFuncNode::make(func->params, {}, func->body, {});
  EXPECT_THROW(jit_compile({nameless}), Error);
}

// A vectorized multiply-add loop compiles to fused multiply-adds on 512-bit registers.
TEST(LlvmCodegen, VectorMultiplyAddUsesZmmFma) {
  Var n = int_var("n"), o = int_var("o");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n),
         c = flat("C", DataType::float32(), n);
  PrimExpr lanes = ramp(o * 16, 1, 16);
  Stmt body = for_loop(o, 0, floordiv(n, 16),
                       store(c, load(c, {lanes}) + load(a, {lanes}) * load(b, {lanes}), {lanes}));
  PrimFunc func = with_noalias(make_packed_kernel(
      "fma_loop", {tensor_param(a, {n}), tensor_param(b, {n}), tensor_param(c, {n})}, body));
  std::string assembly = emit_assembly({func}, Target::parse("llvm -mcpu=znver4"));
  EXPECT_NE(assembly.find("vfmadd"), std::string::npos);
  EXPECT_NE(assembly.find("zmm"), std::string::npos);
  std::string ir = emit_llvm_ir({func}, Target::parse("llvm -mcpu=znver4"));
  EXPECT_NE(ir.find("define i32 @fma_loop(ptr noalias"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@anvil_library_functions"), std::string::npos);
  // Without AVX-512 the same loop uses 256-bit registers only.
  std::string avx2 = emit_assembly({func}, Target::parse("llvm -mcpu=haswell"));
  EXPECT_NE(avx2.find("vfmadd"), std::string::npos);
  EXPECT_EQ(avx2.find("zmm"), std::string::npos);
}

}  // namespace
}  // namespace anvil::codegen
