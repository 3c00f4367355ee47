// A model built by build() and written by export_library (.tar and .so) is loaded and run by
// package_runner, a program linked only against libanvil_runtime; its outputs must be the
// very same bits as the in-memory build's.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/driver/build.h"
#include "anvil/runtime/npy.h"
#include "anvil/testing/workloads.h"
#include "support/test_util.h"

namespace anvil {
namespace {

TEST(ExportLibrary, RuntimeOnlyProgramGivesIdenticalOutputs) {
  testing::Workload w = testing::resnet(18, 1, {3, 64, 64});
  Tensor input = Tensor::empty({1, 3, 64, 64}, DataType::float32());
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int64_t i = 0; i < input.numel(); ++i) input.data_as<float>()[i] = normal(rng);

  driver::BuiltModule built = driver::build(w.mod, w.params);
  GraphExecutor executor = built.create_executor();
  executor.set_input("data", input);
  executor.run();
  Tensor expected = executor.get_output(0).copy();

  testing::ScratchDir dir;
  write_npz(dir / "inputs.npz", {{"data", input}}, /*compress=*/false);
  for (const char* name : {"resnet18.tar", "resnet18.so"}) {
    built.export_library((dir / name).string());
    std::string outputs = (dir / (std::string(name) + ".out.npz")).string();
    testing::CommandResult result = testing::run_command(
        {ANVIL_PACKAGE_RUNNER, (dir / name).string(), (dir / "inputs.npz").string(), outputs});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
    NamedTensors got = read_npz(outputs);
    ASSERT_EQ(got.size(), 1u) << name;
    ASSERT_EQ(got[0].second.shape_vector(), expected.shape_vector()) << name;
    EXPECT_EQ(std::memcmp(got[0].second.data(), expected.data(), size_t(expected.nbytes())), 0)
        << name << ": the loaded package computes other bits than the in-memory build";
  }
}

TEST(ExportLibrary, UnknownExtensionIsAnErrorAndWritesNothing) {
  testing::Workload w = testing::mlp();
  driver::BuiltModule built = driver::build(w.mod, w.params);
  testing::ScratchDir dir;
  EXPECT_THROW(built.export_library((dir / "model.zip").string()), Error);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace anvil
