// Optional through the command line: Optional of a tensor, OptionalHasElement of a tensor and
// of no input, OptionalGetElement, as ONNX Runtime computes them; and an empty Optional, which
// anvil's IR cannot hold, refused with the node named.
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliOptional : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto
rng = np.random.default_rng(2)

def save(name, nodes, inputs, outputs, feeds, opset=18):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    model.ir_version = 8
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    got = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, feeds)
    np.savez(os.path.join(out_dir, name + '.ort.npz'), **{'output_%d' % i: v for i, v in enumerate(got)})

for shape in ([4], [2, 3], [1, 5, 2]):
    name = 'optional_%d' % len(shape)
    x = rng.normal(size=shape).astype(np.float32)
    save(name, [
        helper.make_node('Optional', ['x'], ['o']),
        helper.make_node('OptionalHasElement', ['o'], ['has']),
        helper.make_node('OptionalHasElement', [], ['has_none']),
        helper.make_node('OptionalGetElement', ['o'], ['e']),
        helper.make_node('Relu', ['e'], ['y']),
        helper.make_node('OptionalGetElement', ['x'], ['same'])],
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info('has', TensorProto.BOOL, []),
         helper.make_tensor_value_info('has_none', TensorProto.BOOL, []),
         helper.make_tensor_value_info('y', TensorProto.FLOAT, shape),
         helper.make_tensor_value_info('same', TensorProto.FLOAT, shape)], {'x': x})

empty_type = helper.make_tensor_type_proto(TensorProto.FLOAT, [4])
graph = helper.make_graph(
    [helper.make_node('Optional', [], ['o'], name='nothing', type=empty_type),
     helper.make_node('OptionalGetElement', ['o'], ['y'])], 'empty_optional', [],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'empty_optional.onnx'))
)");
  }
};

TEST_F(CliOptional, OptionalOfATensorMatchesOnnxRuntime) {
  for (int rank : {1, 2, 3}) expect_run_matches_oracle("optional_" + std::to_string(rank));
}

TEST_F(CliOptional, AnEmptyOptionalIsRefusedNamingTheNode) {
  CommandResult r = run_anvil({"run", path("empty_optional.onnx")});
  expect_one_line_error(r, 1, {"nothing", "Optional", "empty optional"});
}

}  // namespace
}  // namespace anvil::testing
