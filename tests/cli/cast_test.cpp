// Cast into the exponent-only float8 (FLOAT8E8M0) through the command line: every round_mode,
// saturating or not, from float32, float16 and float64, over powers of two across the range,
// the values between them, zeros, subnormals, the largest floats, infinities and NaN. ONNX
// Runtime 1.19 has no E8M0, so the ONNX reference evaluator is the oracle. The codes come
// back as their base-2 logarithm (-1000 for NaN), so each step of the format is a unit.
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliCastE8M0 : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
from onnx import helper, TensorProto
from onnx.reference import ReferenceEvaluator

values = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-45, 1e-40, 5.9e-39, 1.2e-38]
for e in list(range(-126, 128, 7)) + [-126, -1, 0, 1, 126, 127]:
    for m in (1.0, 1.25, 1.5, 1.75, 1.9999):
        values += [m * 2.0 ** e, -m * 2.0 ** e]
for dtype, elem in ((np.float32, TensorProto.FLOAT), (np.float16, TensorProto.FLOAT16),
                    (np.float64, TensorProto.DOUBLE)):
    with np.errstate(over='ignore'):
        x = np.array(values, dtype=dtype)
    for mode in ('up', 'down', 'nearest'):
        for saturate in (1, 0):
            name = 'e8m0_%s_%s_%d' % (np.dtype(dtype).name, mode, saturate)
            nodes = [
                helper.make_node('Cast', ['x'], ['code'], to=TensorProto.FLOAT8E8M0,
                                 round_mode=mode, saturate=saturate),
                helper.make_node('Cast', ['code'], ['value'], to=TensorProto.FLOAT),
                helper.make_node('IsNaN', ['value'], ['nan']),
                helper.make_node('Log', ['value'], ['ln']),
                helper.make_node('Div', ['ln', 'ln2'], ['log2']),
                helper.make_node('Where', ['nan', 'marker', 'log2'], ['y'])]
            graph = helper.make_graph(
                nodes, name, [helper.make_tensor_value_info('x', elem, [len(values)])],
                [helper.make_tensor_value_info('y', TensorProto.FLOAT, [len(values)])],
                [onnx.numpy_helper.from_array(np.array(np.log(2), np.float32), 'ln2'),
                 onnx.numpy_helper.from_array(np.array(-1000, np.float32), 'marker')])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 24)])
            model.ir_version = 11
            onnx.save(model, os.path.join(out_dir, name + '.onnx'))
            np.savez(os.path.join(out_dir, name + '.in.npz'), x=x)
            y = ReferenceEvaluator(model).run(None, {'x': x})[0]
            np.savez(os.path.join(out_dir, name + '.ort.npz'), output_0=y)
)");
  }
};

TEST_F(CliCastE8M0, EveryRoundModeMatchesTheOnnxReference) {
  for (const char* dtype : {"float32", "float16", "float64"})
    for (const char* mode : {"up", "down", "nearest"})
      for (const char* saturate : {"1", "0"})
        expect_run_matches_oracle(std::string("e8m0_") + dtype + "_" + mode + "_" + saturate);
}

}  // namespace
}  // namespace anvil::testing
