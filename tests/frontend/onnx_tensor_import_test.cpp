// Importing the tensor converters' ONNX ops: shape arithmetic folds into
// static ops, run-time shape values give dyn.* ops, Loop unrolls when its
// trip count is known (a while loop otherwise) and Scan when its length is. Models are written with the onnx Python package.
#include <gtest/gtest.h>

#include "anvil/frontend/onnx.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "reference/kernel_util.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using testing::ScratchDir;

class OnnxTensorImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    testing::run_python(R"(
import onnx
from onnx import helper, TensorProto
def save(name, nodes, inputs, outputs, initializers=(), opset=13, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    model.ir_version = 8  # readable by the pinned ONNX Runtime
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
f = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
i64 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.INT64, s)

# y = reshape(x, concat(shape(x)[0:1], [-1])): the shape folds to a constant.
save('flatten_by_shape', [
    helper.make_node('Shape', ['x'], ['s']),
    helper.make_node('Gather', ['s', 'zero'], ['batch'], axis=0),
    helper.make_node('Unsqueeze', ['batch', 'axes'], ['batch1']),
    helper.make_node('Concat', ['batch1', 'minus_one'], ['target'], axis=0),
    helper.make_node('Reshape', ['x', 'target'], ['y'])],
    [f('x', [2, 3, 4])], [f('y', [2, 12])],
    [helper.make_tensor('zero', TensorProto.INT64, [], [0]),
     helper.make_tensor('axes', TensorProto.INT64, [1], [0]),
     helper.make_tensor('minus_one', TensorProto.INT64, [1], [-1])])

# A shape given at run time.
save('runtime_reshape', [helper.make_node('Reshape', ['x', 'shape'], ['y'])],
     [f('x', [2, 3]), i64('shape', [2])], [f('y', [None, None])])

# sum = y + x[i] for i < 3, and each partial sum as a scan output.
body = helper.make_graph([
    helper.make_node('Identity', ['cond_in'], ['cond_out']),
    helper.make_node('Unsqueeze', ['i', 'axes'], ['start']),
    helper.make_node('Add', ['i', 'one'], ['i1']),
    helper.make_node('Unsqueeze', ['i1', 'axes'], ['end']),
    helper.make_node('Slice', ['x', 'start', 'end'], ['xi']),
    helper.make_node('Add', ['y_in', 'xi'], ['y_out']),
    helper.make_node('Identity', ['y_out'], ['scan'])],
    'body',
    [i64('i', []), helper.make_tensor_value_info('cond_in', TensorProto.BOOL, []), f('y_in', [1])],
    [helper.make_tensor_value_info('cond_out', TensorProto.BOOL, []), f('y_out', [1]),
     f('scan', [1])],
    [helper.make_tensor('axes', TensorProto.INT64, [1], [0]),
     helper.make_tensor('one', TensorProto.INT64, [], [1])])
loop = helper.make_node('Loop', ['trip', '', 'y0'], ['y', 'partial'], body=body)
save('loop_sum', [helper.make_node('Constant', [], ['trip'],
                                   value=helper.make_tensor('trip', TensorProto.INT64, [], [3])),
                  loop],
     [f('x', [5]), f('y0', [1])], [f('y', [1]), f('partial', [3, 1])])
save('loop_runtime_trip', [loop], [i64('trip', []), f('x', [5]), f('y0', [1])],
     [f('y', [1]), f('partial', [None, 1])])

# Running sums over the rows of x, read backwards, stacked along axis 1.
scan_body = helper.make_graph([
    helper.make_node('Add', ['sum_in', 'row'], ['sum_out']),
    helper.make_node('Identity', ['sum_out'], ['scan_out'])],
    'scan_body', [f('sum_in', [2]), f('row', [2])], [f('sum_out', [2]), f('scan_out', [2])])
save('scan_reverse', [helper.make_node('Scan', ['init', 'x'], ['y', 'z'], body=scan_body,
                                       num_scan_inputs=1, scan_input_directions=[1],
                                       scan_output_axes=[1])],
     [f('init', [2]), f('x', [3, 2])], [f('y', [2]), f('z', [2, 3])], opset=11)
)",
                        dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::filesystem::path model(const std::string& name) { return *dir_ / (name + ".onnx"); }

  static ScratchDir* dir_;
};

ScratchDir* OnnxTensorImport::dir_ = nullptr;

std::vector<double> run(const frontend::ImportedModel& model, std::vector<Tensor> inputs) {
  for (const auto& [name, value] : model.params) inputs.push_back(value);
  reference::Interpreter interpreter(model.mod);
  std::vector<Tensor> outputs = interpreter.run(inputs);
  std::vector<double> values;
  for (const Tensor& t : outputs)
    for (double v : reference::to_doubles(t)) values.push_back(v);
  return values;
}

TEST_F(OnnxTensorImport, ShapeArithmeticFoldsIntoAStaticReshape) {
  frontend::OnnxImportOptions options;
  options.freeze_params = true;
  frontend::ImportedModel imported = frontend::from_onnx(model("flatten_by_shape"), options);
  std::string text = ir::print_module(imported.mod);
  EXPECT_NE(text.find("reshape(%x, newshape=[2, -1])"), std::string::npos) << text;
  EXPECT_EQ(text.find("shape_of"), std::string::npos) << text;
  EXPECT_EQ(text.find("dyn."), std::string::npos) << text;
  EXPECT_NE(text.find("Tensor[(2, 12), float32]"), std::string::npos) << text;
}

TEST_F(OnnxTensorImport, RuntimeShapeUsesDynReshape) {
  frontend::ImportedModel imported = frontend::from_onnx(model("runtime_reshape"));
  EXPECT_NE(ir::print_module(imported.mod).find("dyn.reshape"), std::string::npos);
  Tensor x = reference::from_doubles({0, 1, 2, 3, 4, 5}, {2, 3}, DataType::float32());
  Tensor shape = reference::from_int64s({3, -1}, {2}, DataType::int64());
  reference::Interpreter interpreter(imported.mod);
  std::vector<Tensor> out = interpreter.run({x, shape});
  EXPECT_EQ(out.at(0).shape_vector(), (std::vector<int64_t>{3, 2}));
}

TEST_F(OnnxTensorImport, LoopWithAConstantTripCountUnrolls) {
  frontend::ImportedModel imported = frontend::from_onnx(model("loop_sum"));
  Tensor x = reference::from_doubles({1, 2, 3, 4, 5}, {5}, DataType::float32());
  Tensor y0 = reference::from_doubles({10}, {1}, DataType::float32());
  // Final sum 10 + 1 + 2 + 3, then the partial sums 11, 13, 16.
  EXPECT_EQ(run(imported, {x, y0}), (std::vector<double>{16, 11, 13, 16}));
}

TEST_F(OnnxTensorImport, ScanUnrollsOverTheScanAxis) {
  frontend::ImportedModel imported = frontend::from_onnx(model("scan_reverse"));
  Tensor init = reference::from_doubles({0, 0}, {2}, DataType::float32());
  Tensor x = reference::from_doubles({1, 2, 3, 4, 5, 6}, {3, 2}, DataType::float32());
  // Rows from the last: sums (5, 6), (8, 10), (9, 12); z holds them as columns.
  EXPECT_EQ(run(imported, {init, x}), (std::vector<double>{9, 12, 5, 8, 9, 6, 10, 12}));
}

// The same loop with its trip count an input: a while loop in the IR (not unrolled), which the
// reference interpreter runs for each count.
TEST_F(OnnxTensorImport, LoopWithARuntimeTripCountBecomesAWhileLoop) {
  frontend::ImportedModel imported = frontend::from_onnx(model("loop_runtime_trip"));
  EXPECT_NE(ir::print_module(imported.mod).find("while ("), std::string::npos);
  Tensor x = reference::from_doubles({1, 2, 3, 4, 5}, {5}, DataType::float32());
  Tensor y0 = reference::from_doubles({10}, {1}, DataType::float32());
  auto trip = [](int64_t n) { return reference::from_int64s({n}, {}, DataType::int64()); };
  EXPECT_EQ(run(imported, {trip(3), x, y0}), (std::vector<double>{16, 11, 13, 16}));
  EXPECT_EQ(run(imported, {trip(0), x, y0}), (std::vector<double>{10}));
  EXPECT_EQ(run(imported, {trip(1), x, y0}), (std::vector<double>{11, 11}));
}

}  // namespace
}  // namespace anvil
