// Model tests: torchvision networks exported to ONNX by export_models.py
// (random weights, seed 0) run through the importer and the reference
// executor, and are compared with ONNX Runtime's outputs on the same input.
//
// Each output must satisfy max|anvil - ort| <= 1e-4 * max|ort|: relative to
// the largest magnitude rather than elementwise, because float32 kernels
// that sum in a different order legitimately differ on outputs near zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/frontend/onnx.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/support/error.h"

namespace fs = std::filesystem;

namespace anvil {
namespace {

constexpr double kRelativeTolerance = 1e-4;

// The cache export_models.py fills: $ANVIL_MODEL_CACHE, else the build tree's.
fs::path model_cache() {
  const char* env = std::getenv("ANVIL_MODEL_CACHE");
  if (env != nullptr && *env != '\0') return env;
  return ANVIL_MODEL_CACHE_DEFAULT;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const Tensor* find_tensor(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [key, tensor] : tensors)
    if (key == name) return &tensor;
  return nullptr;
}

class ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTest, MatchesOnnxRuntime) {
  const std::string& name = GetParam();
  const fs::path cache = model_cache();
  // The stamp is written last, so its presence means the other files are whole.
  ASSERT_TRUE(fs::exists(cache / (name + ".stamp")))
      << name << " is not exported in " << cache
      << "; run .venv/bin/python tests/models/export_models.py";

  auto start = std::chrono::steady_clock::now();
  frontend::ImportedModel model;
  try {
    model = frontend::from_onnx(cache / (name + ".onnx"));
  } catch (const std::exception& e) {
    FAIL() << name << ": import failed: " << e.what();
  }
  const double import_s = seconds_since(start);

  NamedTensors inputs = read_npz(cache / (name + ".input.npz"));
  NamedTensors expected = read_npz(cache / (name + ".expected.npz"));
  std::vector<Tensor> args;
  for (const std::string& input : model.input_names) {
    const Tensor* t = find_tensor(inputs, input);
    ASSERT_NE(t, nullptr) << name << ": the input file has no tensor '" << input << "'";
    args.push_back(*t);
  }
  for (const auto& [param, tensor] : model.params) args.push_back(tensor);

  start = std::chrono::steady_clock::now();
  std::vector<Tensor> outputs;
  try {
    reference::Interpreter interpreter(model.mod);
    outputs = interpreter.run(args);
  } catch (const std::exception& e) {
    FAIL() << name << ": reference executor failed: " << e.what();
  }
  const double run_s = seconds_since(start);

  ASSERT_EQ(outputs.size(), expected.size()) << name << ": number of outputs";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor* want = find_tensor(expected, "output_" + std::to_string(i));
    ASSERT_NE(want, nullptr) << name << ": the expected file has no output_" << i;
    const Tensor& got = outputs[i];
    ASSERT_EQ(got.dtype(), want->dtype()) << name << " output " << i;
    ASSERT_EQ(got.shape_vector(), want->shape_vector()) << name << " output " << i;
    double max_diff = 0, max_magnitude = 0;
    int64_t non_finite = 0;
    for (int64_t j = 0; j < got.numel(); ++j) {
      const double g = got.get_as_double(j), w = want->get_as_double(j);
      if (!std::isfinite(g)) ++non_finite;
      max_diff = std::max(max_diff, std::fabs(g - w));
      max_magnitude = std::max(max_magnitude, std::fabs(w));
    }
    const double relative = max_magnitude > 0 ? max_diff / max_magnitude : max_diff;
    std::printf(
        "%s output %zu: import %.2f s, run %.2f s, max|anvil - ort| = %.3g, max|ort| = %.3g, "
        "relative error %.3g (tolerance %.0e)\n",
        name.c_str(), i, import_s, run_s, max_diff, max_magnitude, relative, kRelativeTolerance);
    std::fflush(stdout);
    EXPECT_EQ(non_finite, 0) << name << " output " << i << " has non-finite values";
    // A zero reference would let any result pass; the exporter refuses to write one.
    EXPECT_GT(max_magnitude, 0) << name << " output " << i;
    EXPECT_LE(max_diff, kRelativeTolerance * max_magnitude)
        << name << " output " << i << ": relative error " << relative;
  }
}

INSTANTIATE_TEST_SUITE_P(Torchvision, ModelTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "squeezenet1_1",
                                           "efficientnet_b0", "vit_b_16"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace anvil
