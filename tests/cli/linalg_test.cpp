// Det through the command line over a grid of matrix sizes, batch shapes and dtypes, with
// singular, permuted and badly scaled matrices; ONNX Runtime's outputs are the oracle (numpy's
// for float64, which ONNX Runtime does not implement).
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliLinalg : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto
rng = np.random.default_rng(5)

def det(name, x):
    elem = TensorProto.DOUBLE if x.dtype == np.float64 else TensorProto.FLOAT
    node = helper.make_node('Det', ['x'], ['y'])
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info('x', elem, list(x.shape))],
                              [helper.make_tensor_value_info('y', elem, list(x.shape[:-2]))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 8
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), x=x)
    if x.dtype == np.float64:  # ONNX Runtime has no float64 Det: numpy is the oracle
        y = np.linalg.det(x)
    else:
        y = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, {'x': x})[0]
    np.savez(os.path.join(out_dir, name + '.ort.npz'), output_0=y)

shapes = [(1, 1), (2, 2), (3, 3), (5, 5), (8, 8), (3, 4, 4), (2, 3, 2, 2), (6, 7, 7)]
for k, shape in enumerate(shapes):
    det('det%d' % k, rng.normal(0, 1, shape).astype(np.float32))
    det('det%d_f64' % k, rng.normal(0, 1, shape))
singular = rng.normal(0, 1, (3, 4, 4)).astype(np.float32)
singular[0, 3] = singular[0, 1]          # two equal rows
singular[1, :, 2] = 0                    # a zero column
singular[2] = np.eye(4, dtype=np.float32)[[2, 0, 3, 1]]  # a permutation: det +-1
det('det_special', singular)
det('det_scaled', (rng.normal(0, 1, (4, 5, 5)) * np.array([1e-3, 1, 1e3, 1, 10])).astype(np.float32))
)");
  }
};

TEST_F(CliLinalg, DetOverAGridOfShapesMatchesOnnxRuntime) {
  for (int k = 0; k < 8; ++k) {
    expect_run_matches_oracle("det" + std::to_string(k));
    expect_run_matches_oracle("det" + std::to_string(k) + "_f64");
  }
}

TEST_F(CliLinalg, SingularPermutedAndScaledMatricesMatchOnnxRuntime) {
  expect_run_matches_oracle("det_special");
  expect_run_matches_oracle("det_scaled");
}

}  // namespace
}  // namespace anvil::testing
