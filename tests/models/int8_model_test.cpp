// Int8 model tests: ResNet-18, MobileNetV2 and ResNet-50 quantized by ONNX Runtime's
// quantize_static (QDQ, per-channel int8 weights, uint8 activations; export_models.py),
// compiled at the default opt level (integer convolutions, VNNI where the CPU has it) and run
// by the graph executor on 100 seeded inputs. Against ONNX Runtime's int8 outputs: every output
// within 2 steps of the output's scale, and the same top-1 class for at least 98 of the 100.
// The VM runs ResNet-18's seeded input too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/vm.h"
#include "models/check_inputs.h"
#include "models/model_cache.h"

namespace fs = std::filesystem;

namespace anvil {
namespace {

using testing::model_cache;
using testing::named;

class Int8ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8ModelTest, MatchesOnnxRuntimeInt8) {
  const std::string& name = GetParam();
  const fs::path cache = model_cache();
  ASSERT_TRUE(fs::exists(cache / (name + ".stamp")))
      << name << " is not exported in " << cache
      << "; run .venv/bin/python tests/models/export_models.py " << name;
  frontend::ImportedModel model = frontend::from_onnx(cache / (name + ".onnx"));
  const double step =
      named(read_npz(cache / (name + ".expected.npz")), "output_scale").get_as_double(0);
  ASSERT_GT(step, 0);
  driver::BuiltModule built = driver::build(model.mod, model.params, {});
  GraphExecutor executor = built.create_executor();
  const testing::CheckRun run = testing::run_check_inputs(executor, name, model.input_names[0]);
  std::printf("%s: %lld inputs, max |anvil - ort| = %.3g steps of %.4g, same top-1 on %lld\n",
              name.c_str(), static_cast<long long>(run.inputs), run.max_gap / step, step,
              static_cast<long long>(run.same_top1));
  EXPECT_EQ(run.inputs, 100) << name;
  EXPECT_LE(run.max_gap / step, 2.0 + 1e-6) << name;
  EXPECT_GE(run.same_top1, run.inputs * 98 / 100) << name;
}

INSTANTIATE_TEST_SUITE_P(Quantized, Int8ModelTest,
                         ::testing::Values("resnet18_int8", "mobilenet_v2_int8", "resnet50_int8"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(Int8ModelVm, ResNet18MatchesOnnxRuntimeInt8) {
  const fs::path cache = model_cache();
  ASSERT_TRUE(fs::exists(cache / "resnet18_int8.stamp"));
  frontend::ImportedModel model = frontend::from_onnx(cache / "resnet18_int8.onnx");
  const Tensor input = named(read_npz(cache / "resnet18_int8.input.npz"), "input");
  const Tensor expected = named(read_npz(cache / "resnet18_int8.expected.npz"), "output_0");
  driver::VmModule built = driver::build_vm(model.mod, model.params);
  VirtualMachine vm = built.create_vm();
  vm.set_input(model.input_names[0], input);
  vm.run();
  ASSERT_EQ(vm.get_num_outputs(), 1);
  Tensor got = vm.get_output(0);
  ASSERT_EQ(got.numel(), expected.numel());
  const double step =
      named(read_npz(cache / "resnet18_int8.expected.npz"), "output_scale").get_as_double(0);
  for (int64_t j = 0; j < got.numel(); ++j)
    ASSERT_LE(std::fabs(got.get_as_double(j) - expected.get_as_double(j)), 2 * step + 1e-6)
        << "element " << j;
}

}  // namespace
}  // namespace anvil
