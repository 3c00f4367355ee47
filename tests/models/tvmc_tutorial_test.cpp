// The tvmc tutorial, typed with anvil: compile ResNet-50 (ONNX) to a .tar package, run it with
// inputs from a numpy-written .npz, write predictions.npz and print the time summary. The
// predictions are checked against ONNX Runtime's outputs on the same input (export_models.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "anvil/runtime/npy.h"
#include "models/model_cache.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace anvil::testing {
namespace {

TEST(TvmcTutorial, CompileResnet50ThenRunWithNumpyInputs) {
  const fs::path cache = model_cache();
  ASSERT_TRUE(fs::exists(cache / "resnet50.stamp")) << "run tests/models/export_models.py first";
  ScratchDir dir;
  // The input as a user writes it: np.savez with the model's input name.
  run_python("cache = r'" + cache.string() + R"('
import numpy as np
x = np.load(os.path.join(cache, 'resnet50.input.npz'))['input']
np.savez(os.path.join(out_dir, 'imagenet_cat.npz'), input=x)
)",
             dir.path());
  std::string package = (dir / "resnet50.tar").string();
  CommandResult compiled =
      run_anvil({"compile", (cache / "resnet50.onnx").string(), "--target", "llvm", "-o", package});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  std::string predictions = (dir / "predictions.npz").string();
  CommandResult ran = run_anvil({"run", package, "--inputs", (dir / "imagenet_cat.npz").string(),
                                 "--outputs", predictions, "--print-time", "--repeat", "100"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("Execution time summary:\n mean (ms)   median (ms)    max (ms)     min "
                         "(ms)     std (ms)"),
            std::string::npos)
      << ran.out;

  NamedTensors got = read_npz(predictions);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "output_0");
  EXPECT_EQ(got[0].second.shape_vector(), (std::vector<int64_t>{1, 1000}));
  NamedTensors expected = read_npz((cache / "resnet50.expected.npz").string());
  ASSERT_EQ(expected.size(), 1u);
  int64_t best_got = 0, best_expected = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    double g = got[0].second.get_as_double(i), e = expected[0].second.get_as_double(i);
    EXPECT_NEAR(g, e, 1e-4 * (1 + std::abs(e))) << "class " << i;
    if (g > got[0].second.get_as_double(best_got)) best_got = i;
    if (e > expected[0].second.get_as_double(best_expected)) best_expected = i;
  }
  EXPECT_EQ(best_got, best_expected);
}

}  // namespace
}  // namespace anvil::testing
