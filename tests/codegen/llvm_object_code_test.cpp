// compile_objects: kernels compiled side by side on a pool of threads give the same object
// bytes as one thread, the loaded code computes what plain C++ does, and when kernels fail
// the first one's error is the one reported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/support/error.h"
#include "codegen/c_test_kernels.h"

namespace anvil::codegen {
namespace {

using testing::tensor_of;
using testing::values_of;

// A kernel whose packed signature has three parameters instead of five: code generation
// rejects it with an error naming it.
tir::PrimFunc broken_kernel(const std::string& name) {
  tir::PrimFunc good = testing::add_scalar_kernel();
  std::vector<tir::Var> params(good->params.begin(), good->params.begin() + 3);
  return tir::PrimFuncNode::make(params, good->buffer_map, good->body,
                                 good->func_attrs.with("global_symbol", name));
}

CodegenOptions with_threads(int threads) {
  CodegenOptions options;
  options.threads = threads;
  return options;
}

TEST(LlvmObjectCode, OneAndTwoThreadsGiveTheSameBytes) {
  std::vector<tir::PrimFunc> kernels = testing::all_test_kernels();
  ASSERT_GE(kernels.size(), 4u);
  ObjectCode serial = compile_objects(kernels, Target::host(), with_threads(1));
  ObjectCode parallel = compile_objects(kernels, Target::host(), with_threads(2));
  EXPECT_EQ(serial.times.threads, 1);
  EXPECT_EQ(parallel.times.threads, 2);
  ASSERT_EQ(serial.kernel_objects.size(), kernels.size());
  ASSERT_EQ(parallel.kernel_objects.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(parallel.symbols[i], kernels[i]->global_symbol());
    EXPECT_EQ(serial.kernel_objects[i], parallel.kernel_objects[i]) << parallel.symbols[i];
  }
  EXPECT_EQ(serial.packed_symbols, parallel.packed_symbols);
  EXPECT_EQ(serial.table_object, parallel.table_object);
  EXPECT_GT(parallel.times.optimize_seconds, 0);
  EXPECT_GT(parallel.times.emit_seconds, 0);
  EXPECT_FALSE(parallel.times.slowest_kernel.empty());

  // The loaded code of the parallel compilation: B = A + s.
  Module module = jit_load(parallel);
  std::vector<float> a = {1.5f, -2.f, 0.25f, 8.f, -0.5f};
  Tensor b = Tensor::zeros({5}, DataType::float32());
  module.function("add_scalar")(tensor_of(a, DataType::float32(), {5}), b, 0.5);
  EXPECT_EQ(values_of<float>(b), (std::vector<float>{2.f, -1.5f, 0.75f, 8.5f, 0.f}));
}

TEST(LlvmObjectCode, TheFirstFailingKernelIsReported) {
  std::vector<tir::PrimFunc> kernels = {testing::add_scalar_kernel(), broken_kernel("broken_one"),
                                        testing::row_sum_kernel(), broken_kernel("broken_two"),
                                        testing::vector_affine_kernel()};
  for (int threads : {1, 2, 3}) {
    try {
      compile_objects(kernels, Target::host(), with_threads(threads));
      ADD_FAILURE() << "no error with " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'broken_one'"), std::string::npos)
          << threads << " threads: " << e.what();
    }
  }
}

TEST(LlvmObjectCode, DuplicateSymbolsAreRejectedBeforeCompiling) {
  try {
    compile_objects({testing::add_scalar_kernel(), testing::add_scalar_kernel()}, Target::host());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two functions are named 'add_scalar'"), std::string::npos)
        << e.what();
  }
}

TEST(LlvmObjectCode, ThreadCountComesFromTheEnvironment) {
  std::vector<tir::PrimFunc> kernels = {testing::add_scalar_kernel(), testing::row_sum_kernel()};
  ::setenv("ANVIL_COMPILE_THREADS", "1", 1);
  EXPECT_EQ(compile_objects(kernels, Target::host()).times.threads, 1);
  // More threads than kernels are never started.
  ::setenv("ANVIL_COMPILE_THREADS", "16", 1);
  EXPECT_EQ(compile_objects(kernels, Target::host()).times.threads, 2);
  ::setenv("ANVIL_COMPILE_THREADS", "two", 1);
  try {
    compile_objects(kernels, Target::host());
    ADD_FAILURE() << "no error for ANVIL_COMPILE_THREADS=two";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "ANVIL_COMPILE_THREADS must be a whole number of threads from 1 to 1024, got 'two'"),
        std::string::npos)
        << e.what();
  }
  ::unsetenv("ANVIL_COMPILE_THREADS");
}

}  // namespace
}  // namespace anvil::codegen
