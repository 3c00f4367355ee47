// Kernel libraries written by the LLVM back end: write_shared_library, then
// Module::load_shared, must give the JIT's results; link failures name the compiler.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/support/error.h"
#include "codegen/c_test_kernels.h"
#include "support/test_util.h"

namespace anvil::codegen {
namespace {

using namespace tir;  // NOLINT
using testing::make_packed_kernel;
using testing::scalar_param;
using testing::tensor_of;
using testing::tensor_param;
using testing::values_of;

// Y[i] = tanh(X[i]) * s, and its sum into Z[0], in a library with two kernels.
std::vector<PrimFunc> library_kernels() {
  Var n = VarNode::make("n", DataType::int64()), i = VarNode::make("i", DataType::int64());
  Var s = VarNode::make("s", DataType::float32());
  Buffer x = BufferNode::make("X", DataType::float32(), {n});
  Buffer y = BufferNode::make("Y", DataType::float32(), {n});
  Buffer z = BufferNode::make("Z", DataType::float32(), {make_int(1)});
  PrimFunc scale = make_packed_kernel(
      "tanh_scale", {tensor_param(x, {n}), tensor_param(y, {n}), scalar_param(s)},
      for_loop(i, 0, n, store(y, call_intrin(DataType::float32(), "tanh", {load(x, {i})}) * s, {i}),
               ForKind::Parallel));
  Var n2 = VarNode::make("n", DataType::int64()), j = VarNode::make("j", DataType::int64());
  Buffer x2 = BufferNode::make("X", DataType::float32(), {n2});
  PrimFunc total = make_packed_kernel(
      "total", {tensor_param(x2, {n2}), tensor_param(z, {make_int(1)})},
      seq_stmt(
          {store(z, make_const(DataType::float32(), 0), {make_int(0)}),
           for_loop(j, 0, n2, store(z, load(z, {make_int(0)}) + load(x2, {j}), {make_int(0)}))}));
  return {scale, total};
}

std::vector<float> run_both(const Module& module, const std::vector<float>& input, float* sum) {
  int64_t n = int64_t(input.size());
  Tensor y = Tensor::zeros({n}, DataType::float32()), z = Tensor::zeros({1}, DataType::float32());
  module.function("tanh_scale")(tensor_of(input, DataType::float32(), {n}), y, 3.0);
  module.function("total")(y, z);
  *sum = values_of<float>(z)[0];
  return values_of<float>(y);
}

TEST(LlvmSharedLibrary, RoundTripsThroughLoadShared) {
  anvil::testing::ScratchDir dir;
  std::string path = (dir / "kernels.so").string();
  write_shared_library(library_kernels(), Target::host(), path);
  Module loaded = Module::load_shared(path);
  EXPECT_EQ(loaded.function_names(), (std::vector<std::string>{"tanh_scale", "total"}));
  Module jitted = jit_compile(library_kernels());
  std::vector<float> input;
  for (int k = 0; k < 101; ++k) input.push_back(float(k) * 0.07f - 3.5f);
  float loaded_sum = 0, jitted_sum = 0;
  std::vector<float> from_library = run_both(loaded, input, &loaded_sum);
  std::vector<float> from_jit = run_both(jitted, input, &jitted_sum);
  EXPECT_EQ(from_library, from_jit);
  EXPECT_EQ(loaded_sum, jitted_sum);
  float expected_sum = 0;
  for (size_t k = 0; k < input.size(); ++k) {
    EXPECT_NEAR(from_library[k], std::tanh(input[k]) * 3.0f, 1e-6f) << input[k];
    expected_sum += from_library[k];
  }
  EXPECT_EQ(loaded_sum, expected_sum);
  // A failing assert in the library surfaces like any kernel failure.
  Tensor wrong = Tensor::zeros({2}, DataType::float32());
  try {
    loaded.function("total")(wrong, wrong);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("total: Z.shape[0] must be 1"), std::string::npos)
        << e.what();
  }
}

TEST(LlvmSharedLibrary, ObjectFileIsElf) {
  anvil::testing::ScratchDir dir;
  write_object_file(library_kernels(), Target::host(), (dir / "kernels.o").string());
  std::string bytes = anvil::testing::read_file(dir / "kernels.o");
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(LlvmSharedLibrary, LinkErrorsNameTheCompiler) {
  anvil::testing::ScratchDir dir;
  std::string path = (dir / "kernels.so").string();
  try {
    write_shared_library(library_kernels(), Target::host(), path, "anvil-no-such-compiler");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run compiler 'anvil-no-such-compiler'"),
              std::string::npos)
        << e.what();
  }
  // A compiler that runs but fails: `false` exits 1 without output.
  try {
    write_shared_library(library_kernels(), Target::host(), path, "false");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("with 'false' failed (exit code 1)"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace anvil::codegen
