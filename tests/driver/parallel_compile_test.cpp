// Kernels compiled on one thread or two must give the same package: the same library bytes and
// the same outputs, which match the reference executor. --print-pass-times reports the build
// phases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "anvil/driver/build.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/package.h"
#include "anvil/testing/workloads.h"
#include "support/test_util.h"

namespace anvil {
namespace {

Tensor seeded_input(std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(std::move(shape), DataType::float32());
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = normal(rng);
  return t;
}

Tensor run_package(const Package& package, const Tensor& input) {
  GraphExecutor executor = package.create_executor();
  executor.set_input("data", input);
  executor.run();
  return executor.get_output(0).copy();
}

TEST(ParallelCompile, OneAndTwoThreadsGiveTheSamePackage) {
  testing::Workload w = testing::resnet(18, 1, {3, 32, 32});
  Tensor input = seeded_input({1, 3, 32, 32});
  std::vector<Tensor> args{input};
  for (const auto& [name, tensor] : w.params) args.push_back(tensor);
  Tensor expected = reference::Interpreter(w.mod).run(args).at(0);

  testing::ScratchDir dir;
  std::vector<std::string> libraries;
  std::vector<Tensor> outputs;
  for (int threads : {1, 2}) {
    driver::BuildOptions options;
    options.compile_threads = threads;
    driver::BuiltModule built = driver::build(w.mod, w.params, options);
    std::string path = (dir / ("resnet18_" + std::to_string(threads) + ".so")).string();
    built.export_library(path);
    libraries.push_back(testing::read_file(path));
    outputs.push_back(run_package(built.package(), input));
    Tensor exported = run_package(load_module(path), input);
    ASSERT_EQ(exported.shape_vector(), expected.shape_vector());
    EXPECT_EQ(std::memcmp(exported.data(), outputs.back().data(), size_t(exported.nbytes())), 0)
        << threads << " threads: the exported package differs from the in-memory build";
  }
  EXPECT_TRUE(libraries[0] == libraries[1]) << "the package depends on the thread count";
  EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[1].data(), size_t(outputs[0].nbytes())), 0);
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double got = outputs[1].get_as_double(i), want = expected.get_as_double(i);
    ASSERT_LE(std::fabs(got - want), 1e-5 + 1e-4 * std::fabs(want)) << i;
  }
}

TEST(ParallelCompile, PassTimesListTheBuildPhases) {
  testing::Workload w = testing::mlp();
  driver::BuildOptions options;
  options.pass_context.print_pass_times = true;
  options.compile_threads = 2;
  ::testing::internal::CaptureStderr();
  driver::BuiltModule built = driver::build(w.mod, w.params, options);
  testing::ScratchDir dir;
  built.export_library((dir / "mlp.tar").string());
  std::string report = ::testing::internal::GetCapturedStderr();
  for (const char* row :
       {"build phase times (total", "lower kernels", "distinct kernels", "compile kernels",
        "LLVM IR generation", "LLVM optimization", "machine code emission", "slowest kernel",
        "JIT linking", "export times (total", "link and write package"})
    EXPECT_NE(report.find(row), std::string::npos) << row << " is missing from:\n" << report;
}

}  // namespace
}  // namespace anvil
