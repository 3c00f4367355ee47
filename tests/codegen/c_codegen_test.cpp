// The C back end: hand-built lowered kernels compiled with the system C compiler, loaded as a
// kernel library and compared with plain C++ computations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/ir/attrs.h"
#include "anvil/runtime/module.h"
#include "anvil/support/error.h"
#include "anvil/support/half.h"
#include "codegen/c_test_kernels.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using namespace tir;
using testing::tensor_of;
using testing::values_of;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every test kernel in one library, compiled once for the whole binary.
const Module& c_kernels() {
  static testing::ScratchDir dir;
  static Module module = [] {
    std::string path = (dir / "c_kernels.so").string();
    codegen::write_c_library(testing::all_test_kernels(), path);
    return Module::load_shared(path);
  }();
  return module;
}

// The kernels made by tir::transform::lower, in a library of their own.
const Module& c_lowered_kernels() {
  static testing::ScratchDir dir;
  static Module module = [] {
    std::string path = (dir / "c_lowered_kernels.so").string();
    codegen::write_c_library(
        {testing::lowered_dense_relu_kernel(), testing::lowered_scale_shift_kernel()}, path);
    return Module::load_shared(path);
  }();
  return module;
}

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

TEST(CCodegen, AddScalarReadsItsShapeFromTheTensor) {
  for (int64_t n : {1, 37}) {
    std::vector<float> a = random_floats(size_t(n), -10, 10, 1);
    Tensor ta = tensor_of(a, DataType::float32(), {n});
    Tensor tb = Tensor::zeros({n}, DataType::float32());
    c_kernels().function("add_scalar")(ta, tb, 1.25);
    std::vector<float> b = values_of<float>(tb);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(b[i], a[i] + 1.25f) << i;
  }
}

TEST(CCodegen, EntryChecksReportTheirMessages) {
  Tensor a = Tensor::zeros({4}, DataType::float32());
  Tensor b5 = Tensor::zeros({5}, DataType::float32());
  std::string message = error_of([&] { c_kernels().function("add_scalar")(a, a); });
  EXPECT_TRUE(contains(message, "add_scalar: expected 3 arguments")) << message;
  message = error_of([&] { c_kernels().function("add_scalar")(a, b5, 1.0); });
  EXPECT_TRUE(contains(message, "add_scalar: B.shape[0] must equal n")) << message;
  message = error_of([&] { c_kernels().function("add_scalar")(a, 3, 1.0); });
  EXPECT_TRUE(contains(message, "add_scalar: argument 1 must be a tensor")) << message;
}

TEST(CCodegen, RowSumReduction) {
  int64_t m = 5, n = 13;
  std::vector<float> a = random_floats(size_t(m * n), -1, 1, 2);
  Tensor tb = Tensor::zeros({m}, DataType::float32());
  c_kernels().function("row_sum")(tensor_of(a, DataType::float32(), {m, n}), tb);
  std::vector<float> b = values_of<float>(tb);
  for (int64_t i = 0; i < m; ++i) {
    float expected = 0;
    for (int64_t j = 0; j < n; ++j) expected += a[i * n + j];
    EXPECT_EQ(b[i], expected) << i;
  }
}

TEST(CCodegen, FloorAndTruncatedDivisionOfNegativeValues) {
  std::vector<int64_t> a = {-9, -7, -6, -4, -1, 0, 1, 3, 4, 7, 9, 2147483000};
  int64_t n = int64_t(a.size());
  for (int64_t d : {3, -4, 1, -1}) {
    std::vector<Tensor> outs;
    for (int k = 0; k < 4; ++k) outs.push_back(Tensor::zeros({n}, DataType::int64()));
    for (int k = 0; k < 2; ++k) outs.push_back(Tensor::zeros({n}, DataType::int32()));
    c_kernels().function("div_mod")(tensor_of(a, DataType::int64(), {n}), outs[0], outs[1], outs[2],
                                    outs[3], outs[4], outs[5], d);
    auto fd = values_of<int64_t>(outs[0]), fm = values_of<int64_t>(outs[1]);
    auto td = values_of<int64_t>(outs[2]), tm = values_of<int64_t>(outs[3]);
    auto fd32 = values_of<int32_t>(outs[4]), fm32 = values_of<int32_t>(outs[5]);
    for (size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(std::to_string(a[i]) + " by " + std::to_string(d));
      EXPECT_EQ(fd[i], floor_div(a[i], d));
      EXPECT_EQ(fm[i], floor_mod(a[i], d));
      EXPECT_EQ(td[i], a[i] / d);
      EXPECT_EQ(tm[i], a[i] % d);
      EXPECT_EQ(fd32[i], int32_t(floor_div(int32_t(a[i]), d)));
      EXPECT_EQ(fm32[i], int32_t(floor_mod(int32_t(a[i]), d)));
    }
  }
}

TEST(CCodegen, VectorRampLoadsAndStores) {
  int64_t n = 16;
  std::vector<float> a = random_floats(size_t(n), -5, 5, 3);
  Tensor tb = Tensor::zeros({n}, DataType::float32());
  c_kernels().function("vector_affine")(tensor_of(a, DataType::float32(), {n}), tb);
  std::vector<float> b = values_of<float>(tb);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(b[i], a[i] * 2 + float(i)) << i;

  Tensor odd = Tensor::zeros({6}, DataType::float32());
  std::string message = error_of([&] { c_kernels().function("vector_affine")(odd, odd); });
  EXPECT_TRUE(contains(message, "vector_affine: n must be a multiple of 4")) << message;
}

TEST(CCodegen, VectorStoreReadsAllLanesBeforeWriting) {
  std::vector<int32_t> a = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor ta = tensor_of(a, DataType::int32(), {8});
  c_kernels().function("shift_lanes")(ta);
  EXPECT_EQ(values_of<int32_t>(ta), (std::vector<int32_t>{0, 100, 101, 102, 103, 5, 6, 7}));

  Tensor wrong = Tensor::zeros({7}, DataType::int32());
  std::string message = error_of([&] { c_kernels().function("shift_lanes")(wrong); });
  EXPECT_TRUE(contains(message, "shift_lanes: A.shape[0] must be 8")) << message;
}

TEST(CCodegen, ParallelLoopCapturesScalarsAndBuffers) {
  int64_t m = 37, n = 19;
  std::vector<float> a = random_floats(size_t(m * n), -3, 3, 4);
  Tensor tb = Tensor::zeros({m, n}, DataType::float32());
  c_kernels().function("parallel_scale")(tensor_of(a, DataType::float32(), {m, n}), tb, 0.5);
  std::vector<float> b = values_of<float>(tb);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(b[i * n + j], a[i * n + j] * 0.5f + float(i)) << i << ", " << j;
}

TEST(CCodegen, FailureInsideAParallelTaskReachesTheCaller) {
  std::vector<float> a = {4, 9, 16, 25, 36, 49, 64, 81};
  Tensor tb = Tensor::zeros({8}, DataType::float32());
  c_kernels().function("parallel_sqrt")(tensor_of(a, DataType::float32(), {8}), tb);
  EXPECT_EQ(values_of<float>(tb), (std::vector<float>{2, 3, 4, 5, 6, 7, 8, 9}));
  a[5] = -1;
  std::string message = error_of(
      [&] { c_kernels().function("parallel_sqrt")(tensor_of(a, DataType::float32(), {8}), tb); });
  EXPECT_TRUE(contains(message, "parallel_sqrt: negative element")) << message;
}

TEST(CCodegen, NestedParallelLoopsCaptureVectorsAndAllocate) {
  int64_t m = 9;  // staging has m elements: a symbolic size, so it comes from the workspace
  std::vector<float> a = random_floats(size_t(m * 8), -1, 1, 10);
  Tensor tb = Tensor::zeros({m, 8}, DataType::float32());
  c_kernels().function("nested_parallel")(tensor_of(a, DataType::float32(), {m, 8}), tb, 5.0);
  std::vector<float> b = values_of<float>(tb);
  for (int64_t i = 0; i < m * 8; ++i) EXPECT_EQ(b[i], a[i] + float(i % 4)) << i;
  a[8 * 4 + 4] = 6;
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::string message = error_of([&] {
      c_kernels().function("nested_parallel")(tensor_of(a, DataType::float32(), {m, 8}), tb, 5.0);
    });
    EXPECT_TRUE(contains(message, "nested_parallel: element above limit")) << message;
  }
}

TEST(CCodegen, AllocationsOnTheStackAndFromTheWorkspace) {
  int64_t m = 3, n = 1000;  // the row buffer (symbolic extent) comes from the workspace
  std::vector<float> a = random_floats(size_t(m * n), -2, 2, 5);
  Tensor tb = Tensor::zeros({m, n}, DataType::float32());
  for (int repeat = 0; repeat < 2; ++repeat)
    c_kernels().function("row_softmax")(tensor_of(a, DataType::float32(), {m, n}), tb);
  std::vector<float> b = values_of<float>(tb);
  for (int64_t i = 0; i < m; ++i) {
    float total = 0;
    for (int64_t j = 0; j < n; ++j) total += std::exp(a[i * n + j]);
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(b[i * n + j], std::exp(a[i * n + j]) / total, 1e-7) << i << ", " << j;
  }
}

TEST(CCodegen, AssertInsideAWorkspaceAllocation) {
  std::vector<float> a = {1, 2, 3};
  Tensor tb = Tensor::zeros({3}, DataType::float32());
  c_kernels().function("checked_scale")(tensor_of(a, DataType::float32(), {3}), tb, 3);
  EXPECT_EQ(values_of<float>(tb), (std::vector<float>{3, 6, 9}));
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::string message = error_of([&] {
      c_kernels().function("checked_scale")(tensor_of(a, DataType::float32(), {3}), tb, 2);
    });
    EXPECT_TRUE(contains(message, "checked_scale: n exceeds the limit")) << message;
    EXPECT_TRUE(contains(message, "kernel 'checked_scale'")) << message;
  }
}

TEST(CCodegen, HalfAndBfloat16Casts) {
  std::vector<float> a = {
      0.0f,     -0.0f, 1.0f,     -2.5f, 0.1f,     65504.0f,       65520.0f,
      70000.0f, 1e-5f, -6.1e-5f, 1e-8f, 3.14159f, 1.00048828125f, 1.0009765625f + 0.00048828125f,
      255.9f,   -1e30f};
  int64_t n = int64_t(a.size());
  Tensor th = Tensor::zeros({n}, DataType::float16());
  Tensor ts = Tensor::zeros({n}, DataType::float32());
  Tensor tbf = Tensor::zeros({n}, DataType::bfloat16());
  c_kernels().function("half_cast")(tensor_of(a, DataType::float32(), {n}), th, ts, tbf);
  auto h = values_of<uint16_t>(th);
  auto s = values_of<float>(ts);
  auto bf = values_of<uint16_t>(tbf);
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(a[i]);
    EXPECT_EQ(h[i], float_to_half(a[i]));
    float hv = half_to_float(float_to_half(a[i]));
    float square = half_to_float(float_to_half(hv * hv));
    if (std::isnan(square))
      EXPECT_TRUE(std::isnan(s[i]));
    else
      EXPECT_EQ(s[i], square);
    EXPECT_EQ(bf[i], float_to_bfloat16(a[i]));
  }
}

TEST(CCodegen, MathIntrinsics) {
  std::vector<float> a = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.0f, 3.7f, -4.2f, 0.3f};
  int64_t n = int64_t(a.size());
  std::vector<Tensor> outs;
  for (int k = 0; k < 5; ++k) outs.push_back(Tensor::zeros({n}, DataType::float32()));
  c_kernels().function("math")(tensor_of(a, DataType::float32(), {n}), outs[0], outs[1], outs[2],
                               outs[3], outs[4]);
  auto e = values_of<float>(outs[0]), t = values_of<float>(outs[1]), s = values_of<float>(outs[2]);
  auto r = values_of<float>(outs[3]), f = values_of<float>(outs[4]);
  std::vector<float> rounded = {-2, -2, -0.0f, 0, 2, 2, 0, 4, -4, 0};  // ties to even
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(a[i]);
    EXPECT_FLOAT_EQ(e[i], std::exp(a[i]));
    EXPECT_FLOAT_EQ(t[i], std::tanh(a[i]));
    EXPECT_FLOAT_EQ(s[i], 1.0f / (1.0f + std::exp(-a[i])));
    EXPECT_EQ(r[i], rounded[i]);
    EXPECT_EQ(f[i], std::fma(a[i], a[i], 1.0f));
  }
}

TEST(CCodegen, GuardedLoadsSelectsBoolsAndWrappingInt8) {
  std::vector<float> a = {-1.5f, 0.25f, 2.0f, -0.5f, 3.0f};
  int64_t n = int64_t(a.size());
  Tensor tb = Tensor::zeros({n}, DataType::float32());
  Tensor tc = Tensor::zeros({n}, DataType::boolean());
  Tensor td = Tensor::zeros({n}, DataType::int8());
  c_kernels().function("select_mix")(tensor_of(a, DataType::float32(), {n}), tb, tc, td);
  auto b = values_of<float>(tb);
  auto c = values_of<uint8_t>(tc);
  auto d = values_of<int8_t>(td);
  for (int64_t i = 0; i < n; ++i) {
    float next = i + 1 < n ? a[i + 1] : 0.0f;
    float mixed = std::max(a[i], 0.0f) * std::min(a[i], 1.0f);
    EXPECT_EQ(b[i], next + mixed) << i;
    EXPECT_EQ(c[i], a[i] > 0 ? 1 : 0) << i;
    EXPECT_EQ(d[i], int8_t(uint8_t(i * 100))) << i;
  }
}

// ---- kernels from the lowering pipeline

TEST(CCodegen, LoweredDenseReluWithParallelAndVectorLoops) {
  std::vector<float> a = random_floats(33 * 17, -1, 1, 6), b = random_floats(17 * 24, -1, 1, 7);
  std::vector<float> bias = random_floats(24, -0.5f, 0.5f, 8);
  Tensor te = Tensor::zeros({33, 24}, DataType::float32());
  c_lowered_kernels().function("dense_relu")(tensor_of(a, DataType::float32(), {33, 17}),
                                             tensor_of(b, DataType::float32(), {17, 24}),
                                             tensor_of(bias, DataType::float32(), {24}), te);
  std::vector<float> e = values_of<float>(te);
  for (int i = 0; i < 33; ++i) {
    for (int j = 0; j < 24; ++j) {
      float acc = 0;
      for (int k = 0; k < 17; ++k) acc += a[i * 17 + k] * b[k * 24 + j];
      ASSERT_NEAR(e[i * 24 + j], std::max(acc + bias[j], 0.0f), 1e-5) << i << ", " << j;
    }
  }
  Tensor wrong = Tensor::zeros({33, 16}, DataType::float32());
  EXPECT_THROW(
      c_lowered_kernels().function("dense_relu")(tensor_of(a, DataType::float32(), {33, 17}), wrong,
                                                 tensor_of(bias, DataType::float32(), {24}), te),
      Error);
}

TEST(CCodegen, LoweredScaleShiftWithSymbolicExtent) {
  for (int64_t n : {0, 1, 7, 16}) {
    std::vector<float> x = random_floats(size_t(n), -8, 8, 9);
    Tensor ty = Tensor::zeros({n}, DataType::float32());
    c_lowered_kernels().function("scale_shift")(tensor_of(x, DataType::float32(), {n}), ty);
    std::vector<float> y = values_of<float>(ty);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] * 0.5f - 1) << n << ": " << i;
  }
}

// ---- names, extern calls, plain functions

TEST(CCodegen, IdentifiersThatCollideWithCAreRenamed) {
  DataType f32 = DataType::float32();
  Var count = VarNode::make("for"), lane = VarNode::make("lane"), scale = VarNode::make("exp", f32);
  Var tmp = VarNode::make("anvil_tmp", f32), twice = VarNode::make("2x", f32);
  Buffer in = BufferNode::make("int", f32, {count}), out = BufferNode::make("static", f32, {count});
  Stmt body =
      for_loop(lane, make_int(0), count,
               LetStmtNode::make(
                   tmp, load(in, {lane}) * scale,
                   LetStmtNode::make(
                       twice, tmp + tmp,
                       store(out, twice + call_intrin(f32, "exp", {make_const(f32, 0)}), {lane}))));
  PrimFunc f = testing::make_packed_kernel(
      "int",
      {testing::tensor_param(in, {count}), testing::tensor_param(out, {count}),
       testing::scalar_param(scale)},
      body);
  testing::ScratchDir dir;
  codegen::write_c_library({f}, (dir / "names.so").string());
  Module m = Module::load_shared((dir / "names.so").string());
  Tensor a = tensor_of(std::vector<float>{1, 2, 3}, f32, {3});
  Tensor b = Tensor::zeros({3}, f32);
  m.function("int")(a, b, 2.0);
  EXPECT_EQ(values_of<float>(b), (std::vector<float>{5, 9, 13}));
}

TEST(CCodegen, LetExpressionSharedBetweenStatements) {
  DataType f32 = DataType::float32();
  Var n = VarNode::make("n"), i = VarNode::make("i"), x = VarNode::make("x", f32);
  Buffer a = BufferNode::make("A", f32, {n}), b = BufferNode::make("B", f32, {n});
  Buffer c = BufferNode::make("C", f32, {n});
  // One Let node, hoisted before the first store and substituted under the lazy branch.
  PrimExpr square = let(x, load(a, {i}), x * x);
  PrimExpr guarded =
      call_intrin(f32, "if_then_else", {i > make_int(0), square, make_const(f32, -1)});
  Stmt body =
      for_loop(i, make_int(0), n, seq_stmt({store(b, square, {i}), store(c, guarded, {i})}));
  PrimFunc f = testing::make_packed_kernel(
      "shared_let",
      {testing::tensor_param(a, {n}), testing::tensor_param(b, {n}), testing::tensor_param(c, {n})},
      body);
  testing::ScratchDir dir;
  codegen::write_c_library({f}, (dir / "let.so").string());
  Module m = Module::load_shared((dir / "let.so").string());
  Tensor tb = Tensor::zeros({3}, f32), tc = Tensor::zeros({3}, f32);
  m.function("shared_let")(tensor_of(std::vector<float>{2, 3, 4}, f32, {3}), tb, tc);
  EXPECT_EQ(values_of<float>(tb), (std::vector<float>{4, 9, 16}));
  EXPECT_EQ(values_of<float>(tc), (std::vector<float>{-1, 9, 16}));
}

TEST(CCodegen, ExternCallsToAPlainFunctionThroughAddressOf) {
  DataType f32 = DataType::float32();
  // scale_span(p, n, k): p[0:n] *= k, a plain C function taking the address of a row.
  Var p = VarNode::make("p", DataType::handle()), n = VarNode::make("n"),
      k = VarNode::make("k", f32);
  Buffer span = BufferNode::make("span", f32, {n});
  Var j = VarNode::make("j");
  PrimFunc plain = PrimFuncNode::make(
      {p, n, k}, {{p, span}}, for_loop(j, make_int(0), n, store(span, load(span, {j}) * k, {j})),
      ir::DictAttrs{}.with("global_symbol", std::string("scale_span")));
  // scale_rows(A: f32[m, n]): row i scaled by i + 1, when likely(i >= 0).
  Var rows = VarNode::make("m"), cols = VarNode::make("n"), i = VarNode::make("i");
  Buffer a = BufferNode::make("A", f32, {rows * cols});
  PrimExpr row_start = call_intrin(DataType::handle(), "address_of", {load(a, {i * cols})});
  Stmt call = evaluate(call_extern(DataType::int32(), "scale_span",
                                   {row_start, cols, cast(f32, i) + make_const(f32, 1)}));
  Stmt body = for_loop(
      i, make_int(0), rows,
      IfThenElseNode::make(call_intrin(DataType::boolean(), "likely", {i >= make_int(0)}), call));
  PrimFunc packed =
      testing::make_packed_kernel("scale_rows", {testing::tensor_param(a, {rows, cols})}, body);

  testing::ScratchDir dir;
  codegen::write_c_library({plain, packed}, (dir / "rows.so").string());
  Module m = Module::load_shared((dir / "rows.so").string());
  EXPECT_EQ(m.function_names(), std::vector<std::string>{"scale_rows"});
  Tensor t = tensor_of(std::vector<float>{1, 2, 3, 4, 5, 6}, f32, {2, 3});
  m.function("scale_rows")(t);
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{1, 2, 3, 8, 10, 12}));
}

// ---- the source itself

TEST(CCodegen, SourceCompilesUnderStrictWarnings) {
  testing::ScratchDir dir;
  std::vector<PrimFunc> kernels = testing::all_test_kernels();
  kernels.push_back(testing::lowered_dense_relu_kernel());
  kernels.push_back(testing::lowered_scale_shift_kernel());
  std::string source = codegen::emit_c(kernels);
  testing::write_file(dir / "k.c", source);
  for (const char* compiler : {"/usr/bin/cc", "/usr/bin/clang"}) {
    if (!std::filesystem::exists(compiler)) continue;
    testing::CommandResult result = testing::run_command(
        {compiler, "-std=c99", "-pedantic-errors", "-Wall", "-Wextra", "-Werror", "-Wshadow",
         "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wcast-qual", "-Wundef", "-Wvla", "-O2",
         "-fPIC", "-c", "-o", (dir / "k.o").string(), (dir / "k.c").string()});
    EXPECT_EQ(result.exit_code, 0) << compiler << ":\n" << result.err << result.out;
  }
}

TEST(CCodegen, SourceDeclaresTheLibraryTable) {
  std::string source = codegen::emit_c({testing::add_scalar_kernel(), testing::row_sum_kernel()});
  EXPECT_TRUE(contains(source, "const int32_t anvil_library_abi_version = 1;")) << source;
  EXPECT_TRUE(contains(source, "{\"add_scalar\", add_scalar},")) << source;
  EXPECT_TRUE(contains(source, "{\"row_sum\", row_sum},")) << source;
  EXPECT_TRUE(contains(source, "anvil_library_num_functions = 2;")) << source;
  EXPECT_FALSE(contains(source, "#include <anvil")) << source;
}

TEST(CCodegen, SymbolsThatAreNotIdentifiersKeepTheirTableName) {
  PrimFunc f = testing::add_scalar_kernel();
  PrimFunc renamed = PrimFuncNode::make(f->params, f->buffer_map, f->body,
                                        f->func_attrs.with("global_symbol", "fused.add-1"));
  testing::ScratchDir dir;
  std::string path = (dir / "renamed.so").string();
  codegen::write_c_library({renamed}, path);
  Module m = Module::load_shared(path);
  Tensor a = tensor_of(std::vector<float>{1, 2}, DataType::float32(), {2});
  Tensor b = Tensor::zeros({2}, DataType::float32());
  m.function("fused.add-1")(a, b, 0.5);
  EXPECT_EQ(values_of<float>(b), (std::vector<float>{1.5f, 2.5f}));
}

// ---- errors

TEST(CCodegen, RejectsFunctionsOutsideTheLoweredForm) {
  PrimFunc f = testing::add_scalar_kernel();
  PrimFunc unnamed = PrimFuncNode::make(f->params, f->buffer_map, f->body, {});
  EXPECT_TRUE(contains(error_of([&] { codegen::emit_c({unnamed}); }), "global_symbol"));

  std::string twice = error_of([&] { codegen::emit_c({f, f}); });
  EXPECT_TRUE(contains(twice, "two functions are named 'add_scalar'")) << twice;

  Buffer a = BufferNode::make("A", DataType::float32(), {make_int(4), make_int(4)});
  Var i = VarNode::make("i");
  Stmt two_d =
      for_loop(i, make_int(0), make_int(4), store(a, make_const(DataType::float32(), 1), {i, i}));
  PrimFunc unflattened = testing::make_packed_kernel(
      "unflattened", {testing::tensor_param(a, {make_int(4), make_int(4)})}, two_d);
  std::string message = error_of([&] { codegen::emit_c({unflattened}); });
  EXPECT_TRUE(contains(message, "'unflattened' is not flattened: buffer 'A'")) << message;

  Var stray = VarNode::make("stray");
  Buffer flat = BufferNode::make("F", DataType::float32(), {make_int(4)});
  PrimFunc unbound =
      testing::make_packed_kernel("unbound", {testing::tensor_param(flat, {make_int(4)})},
                                  store(flat, make_const(DataType::float32(), 1), {stray}));
  message = error_of([&] { codegen::emit_c({unbound}); });
  EXPECT_TRUE(contains(message, "'unbound' reads variable 'stray' where it is not defined"))
      << message;

  Block block = BlockNode::make({}, {}, {}, "root", evaluate(make_int(0)));
  PrimFunc blocked =
      testing::make_packed_kernel("blocked", {}, BlockRealizeNode::make({}, const_true(), block));
  message = error_of([&] { codegen::emit_c({blocked}); });
  EXPECT_TRUE(contains(message, "'blocked' is not lowered")) << message;
}

TEST(CCodegen, CompilerFailuresNameTheCompiler) {
  testing::ScratchDir dir;
  std::string path = (dir / "k.so").string();
  std::vector<PrimFunc> funcs = {testing::add_scalar_kernel()};
  std::string message =
      error_of([&] { codegen::write_c_library(funcs, path, "anvil-no-such-compiler"); });
  EXPECT_TRUE(contains(message, "cannot run the C compiler 'anvil-no-such-compiler'")) << message;
  message = error_of(
      [&] { codegen::write_c_library(funcs, path, "cc -include anvil_missing_header.h"); });
  EXPECT_TRUE(contains(message, "'cc -include anvil_missing_header.h' failed")) << message;
  EXPECT_TRUE(contains(message, "anvil_missing_header.h")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace anvil
