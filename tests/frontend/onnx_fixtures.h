// Small ONNX models written by the onnx Python package for the tests.
#pragma once

#include <filesystem>
#include <string>

#include "support/test_util.h"

namespace anvil::testing {

// Writes into dir:
//   add_relu.onnx      y = relu(a + b), a and b float32 (2, 3)
//   two_outputs.onnx   s = a + b, p = a * b (outputs in that order)
//   unsupported.onnx   uses FooOp and BarOp, which no converter knows
//   undefined.onnx     a node reads a tensor nothing defines
//   cycle.onnx         two nodes feed each other
//   duplicate.onnx     two nodes define the same output name
//   tensor.pb          a serialized TensorProto: valid protobuf, not a model
//   external.onnx      y = x + w with the initializer w stored in external.bin beside it
inline void write_onnx_fixtures(const std::filesystem::path& dir) {
  run_python(R"(
import onnx
from onnx import helper, TensorProto
def save(name, nodes, inputs, outputs, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 8  # readable by the pinned ONNX Runtime
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
f = lambda n, s=(2, 3): helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
save('add_relu', [helper.make_node('Add', ['a', 'b'], ['t'], name='add0'),
                  helper.make_node('Relu', ['t'], ['y'], name='relu0')], [f('a'), f('b')], [f('y')])
save('two_outputs', [helper.make_node('Add', ['a', 'b'], ['s'], name='add0'),
                     helper.make_node('Mul', ['a', 'b'], ['p'], name='mul0')], [f('a'), f('b')], [f('s'), f('p')])
save('unsupported', [helper.make_node('FooOp', ['a'], ['t'], name='foo0'),
                     helper.make_node('Relu', ['t'], ['u'], name='relu0'),
                     helper.make_node('BarOp', ['u'], ['y'], name='bar0')], [f('a')], [f('y')], check=False)
save('undefined', [helper.make_node('Add', ['a', 'ghost'], ['y'], name='add0')], [f('a')], [f('y')], check=False)
save('cycle', [helper.make_node('Add', ['a', 'v'], ['u'], name='first'),
               helper.make_node('Relu', ['u'], ['v'], name='second')], [f('a')], [f('v')], check=False)
save('duplicate', [helper.make_node('Relu', ['a'], ['y'], name='one'),
                   helper.make_node('Neg', ['a'], ['y'], name='two')], [f('a')], [f('y')], check=False)
import numpy as np
w = onnx.numpy_helper.from_array(np.array([[0.5, -1.0, 2.0], [4.0, 8.0, -16.0]], np.float32), 'w')
graph = helper.make_graph([helper.make_node('Add', ['x', 'w'], ['y'], name='add0')], 'external',
                          [f('x')], [f('y')], initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8  # readable by the pinned ONNX Runtime
onnx.save_model(model, os.path.join(out_dir, 'external.onnx'), save_as_external_data=True,
                all_tensors_to_one_file=True, location='external.bin', size_threshold=0)
t = helper.make_tensor('w', TensorProto.FLOAT, [2], [1.0, 2.0])
open(os.path.join(out_dir, 'tensor.pb'), 'wb').write(t.SerializeToString())
)",
             dir);
}

}  // namespace anvil::testing
