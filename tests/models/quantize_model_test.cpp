// anvil quantize on ResNet-18 and MobileNetV2 against ONNX Runtime's quantize_static with the
// same 8 calibration inputs (export_models.py's int8 models): the output SQNR against the float
// model, measured by ONNX Runtime on 10 further seeded inputs, must be within 1 dB of
// quantize_static's or better.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "models/model_cache.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace anvil::testing {
namespace {

class QuantizeModel : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizeModel, OutputSqnrWithinOneDecibelOfQuantizeStatic) {
  const std::string& name = GetParam();
  const fs::path cache = model_cache();
  ASSERT_TRUE(fs::exists(cache / (name + "_int8.stamp"))) << "run tests/models/export_models.py";
  ScratchDir dir;
  // The calibration inputs export_models.py gave quantize_static, stacked.
  run_python(R"(
import numpy as np
rng = np.random.RandomState(0 + 2)
np.savez(os.path.join(out_dir, 'calibration.npz'),
         input=np.concatenate([rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
                               for _ in range(8)]))
)",
             dir.path());
  std::string quantized = (dir / (name + "_anvil_int8.onnx")).string();
  CommandResult r = run_anvil({"quantize", (cache / (name + ".onnx")).string(), "--calibration",
                               (dir / "calibration.npz").string(), "-o", quantized});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  run_python("cache = r'" + cache.string() + "'\nname = '" + name + "'\nours = r'" + quantized +
                 R"('
import numpy as np, onnxruntime as ort
inputs = np.load(os.path.join(cache, 'check_inputs.npz'))['input'][:10]
def outputs(path):
    # QDQ evaluated as written (dequantize, float op, quantize): the error of the quantization
    # itself, not of the host's int8 kernels (without VNNI ONNX Runtime's saturate).
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, options, providers=['CPUExecutionProvider'])
    return np.concatenate([s.run(None, {'input': inputs[i:i + 1]})[0] for i in range(len(inputs))])
ref = outputs(os.path.join(cache, name + '.onnx'))
def sqnr(q):
    return 10 * np.log10((ref ** 2).sum() / ((ref - q) ** 2).sum())
theirs = sqnr(outputs(os.path.join(cache, name + '_int8.onnx')))
mine = sqnr(outputs(ours))
print(f'{name}: output SQNR anvil quantize {mine:.2f} dB, quantize_static {theirs:.2f} dB')
assert mine >= theirs - 1.0, (mine, theirs)
)",
             dir.path());
}

INSTANTIATE_TEST_SUITE_P(Quantize, QuantizeModel, ::testing::Values("resnet18", "mobilenet_v2"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace anvil::testing
