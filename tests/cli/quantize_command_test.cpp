// anvil quantize on a small convolutional network: the QDQ model it writes loads in ONNX Runtime
// and in anvil, which agree on it; it stays close to the float model; each calibration method
// runs; --exclude keeps a node in float; --report ranks the activations; bad calibration files
// and flags are one-line errors.
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliQuantizeCommand : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
inits = [numpy_helper.from_array(a, n) for n, a in [
    ('w1', w(8, 3, 3, 3)), ('b1', w(8)), ('w2', w(8, 8, 3, 3)), ('b2', w(8)),
    ('wf', w(5, 8)), ('bf', w(5))]]
nodes = [
    helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1], name='conv1'),
    helper.make_node('Relu', ['c1'], ['r1'], name='relu1'),
    helper.make_node('Conv', ['r1', 'w2', 'b2'], ['c2'], pads=[1, 1, 1, 1], name='conv2'),
    helper.make_node('Add', ['c2', 'r1'], ['s'], name='residual'),
    helper.make_node('Relu', ['s'], ['r2'], name='relu2'),
    helper.make_node('GlobalAveragePool', ['r2'], ['g'], name='pool'),
    helper.make_node('Flatten', ['g'], ['f'], name='flatten'),
    helper.make_node('Gemm', ['f', 'wf', 'bf'], ['y'], transB=1, name='fc'),
]
graph = helper.make_graph(nodes, 'small_convnet',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out_dir, 'float.onnx'))
np.savez(os.path.join(out_dir, 'calibration.npz'),
         x=rng.standard_normal((8, 3, 12, 12)).astype(np.float32))
np.savez(os.path.join(out_dir, 'test_input.npz'),
         x=rng.standard_normal((1, 3, 12, 12)).astype(np.float32))
np.savez(os.path.join(out_dir, 'wrong_shape.npz'), x=np.zeros((8, 3, 12, 11), np.float32))
np.savez(os.path.join(out_dir, 'wrong_name.npz'), image=np.zeros((8, 3, 12, 12), np.float32))
)");
  }

  static CommandResult quantize(const std::vector<std::string>& extra, const std::string& out) {
    std::vector<std::string> args = {
        "quantize", path("float.onnx"), "--calibration", path("calibration.npz"), "-o", path(out)};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_anvil(args);
  }
};

TEST_F(CliQuantizeCommand, QuantizedModelRunsInOnnxRuntimeAndAnvilAlike) {
  CommandResult r = quantize({}, "q.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("quantized 4 nodes"), std::string::npos) << r.out;
  CommandResult run = run_anvil({"run", path("q.onnx"), "--inputs", path("test_input.npz"),
                                 "--outputs", path("q_anvil.npz")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  run_python(R"(
import numpy as np, onnx, onnxruntime as ort
q = onnx.load(os.path.join(out_dir, 'q.onnx'))
ops = [n.op_type for n in q.graph.node]
assert ops.count('QuantizeLinear') >= 4, ops
weights = {t.name: t for t in q.graph.initializer}
int8 = [t for t in q.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) >= 2]
assert len(int8) == 3, [t.name for t in int8]
x = dict(np.load(os.path.join(out_dir, 'test_input.npz')))
ref = ort.InferenceSession(os.path.join(out_dir, 'float.onnx')).run(None, x)[0]
# The QDQ graph as written (dequantize, float op, quantize): without VNNI, ONNX Runtime's fused
# int8 kernels saturate pairs of products in int16 (docs/quantization.md).
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
quant = ort.InferenceSession(os.path.join(out_dir, 'q.onnx'), options).run(None, x)[0]
sqnr = 10 * np.log10((ref ** 2).sum() / ((ref - quant) ** 2).sum())
assert sqnr > 20, sqnr
ours = np.load(os.path.join(out_dir, 'q_anvil.npz'))['output_0']
scale = [onnx.numpy_helper.to_array(t) for t in q.graph.initializer if t.name == 'y_scale'][0]
assert np.abs(ours - quant).max() <= 2 * scale + 1e-6, (np.abs(ours - quant).max(), scale)
)",
             dir_->path());
}

TEST_F(CliQuantizeCommand, EveryMethodRunsAndReportRanksActivations) {
  for (const char* method : {"minmax", "percentile", "entropy"}) {
    CommandResult r = quantize({"--method", method}, std::string("q_") + method + ".onnx");
    ASSERT_EQ(r.exit_code, 0) << method << ": " << r.err;
  }
  CommandResult r = quantize({"--report"}, "q_report.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SQNR dB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output y: SQNR"), std::string::npos) << r.out;
  for (const char* node : {"relu1", "conv2", "relu2", "flatten", "fc", "(input)"})
    EXPECT_NE(r.out.find(node), std::string::npos) << node << " in\n" << r.out;
}

TEST_F(CliQuantizeCommand, ExcludedNodeStaysInFloat) {
  CommandResult r = quantize({"--exclude", "conv2", "--per-tensor"}, "q_exclude.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("quantized 3 nodes"), std::string::npos) << r.out;
  run_python(R"(
import onnx
q = onnx.load(os.path.join(out_dir, 'q_exclude.onnx'))
conv2 = [n for n in q.graph.node if n.name == 'conv2'][0]
assert conv2.input[1] == 'w2', list(conv2.input)
conv1 = [n for n in q.graph.node if n.name == 'conv1'][0]
assert conv1.input[1] != 'w1', list(conv1.input)
)",
             dir_->path());
}

TEST_F(CliQuantizeCommand, BadCalibrationAndFlagsAreOneLineErrors) {
  expect_one_line_error(quantize({"--exclude", "conv9"}, "bad.onnx"), 1,
                        {"--exclude", "no node 'conv9'"});
  expect_one_line_error(run_anvil({"quantize", path("float.onnx"), "--calibration",
                                   path("wrong_shape.npz"), "-o", path("bad.onnx")}),
                        1, {"calibration array 'x'", "(8, 3, 12, 11)", "(1, 3, 12, 12)"});
  expect_one_line_error(run_anvil({"quantize", path("float.onnx"), "--calibration",
                                   path("wrong_name.npz"), "-o", path("bad.onnx")}),
                        1, {"no array for input 'x'"});
  expect_one_line_error(quantize({"--method", "median"}, "bad.onnx"), 2, {"--method"});
  expect_one_line_error(run_anvil({"quantize", path("float.onnx"), "-o", path("bad.onnx")}), 2,
                        {"--calibration"});
}

}  // namespace
}  // namespace anvil::testing
