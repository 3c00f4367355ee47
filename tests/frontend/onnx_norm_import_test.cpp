// Importing the normalization, softmax-family, dropout and reduction ONNX
// ops on the paths the backend node tests leave out: opset-11 softmax
// coercion to 2-D, GroupNormalization-18 per-group scale, old Dropout masks,
// axes known at import time versus at run time, noop_with_empty_axes,
// LpNormalization, LayerNormalization's stash_type, and training-mode errors.
// Models and expected values (plain numpy) are written by Python.
#include <gtest/gtest.h>

#include <cmath>

#include "anvil/frontend/onnx.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "reference/kernel_util.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using testing::ScratchDir;

class OnnxNormImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    testing::run_python(R"(
import numpy as np
import onnx
from onnx import helper, TensorProto
def save(name, nodes, inputs, outputs, opset=13, initializers=(), check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    model.ir_version = 8  # readable by the pinned ONNX Runtime
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
def values(name, **arrays):
    np.savez(os.path.join(out_dir, name + '.npz'), **arrays)
f = lambda n, s, t=TensorProto.FLOAT: helper.make_tensor_value_info(n, t, s)
i64 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.INT64, s)
const = lambda out, t: helper.make_node('Constant', [], [out], value=t)
rng = np.random.default_rng(7)

# Opset 11: (2, 3, 4) seen as (2, 12) rows at axis 1.
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
rows = x.reshape(2, 12).astype(np.float64)
e = np.exp(rows - rows.max(axis=1, keepdims=True))
softmax = e / e.sum(axis=1, keepdims=True)
hard = np.zeros_like(rows)
hard[np.arange(2), rows.argmax(axis=1)] = 1
for op, expected in [('Softmax', softmax), ('LogSoftmax', np.log(softmax)), ('Hardmax', hard)]:
    save(op.lower() + '_v11', [helper.make_node(op, ['x'], ['y'], axis=1)],
         [f('x', [2, 3, 4])], [f('y', [2, 3, 4])], opset=11)
    values(op.lower() + '_v11', x=x, y=expected.reshape(2, 3, 4))

# GroupNormalization-18: scale and bias per group (2 groups of 2 channels).
g = rng.standard_normal((2, 4, 3)).astype(np.float32)
scale, bias = np.array([2.0, -1.0], np.float32), np.array([0.5, 3.0], np.float32)
grouped = g.reshape(2, 2, 6).astype(np.float64)
normal = (grouped - grouped.mean(axis=2, keepdims=True)) / np.sqrt(grouped.var(axis=2, keepdims=True) + 1e-5)
expected = normal * scale.reshape(1, 2, 1) + bias.reshape(1, 2, 1)
# The checker rejects GroupNormalization-18 as deprecated (by 21); exported models still hold it.
save('group_norm_v18', [helper.make_node('GroupNormalization', ['x', 's', 'b'], ['y'], num_groups=2)],
     [f('x', [2, 4, 3]), f('s', [2]), f('b', [2])], [f('y', [2, 4, 3])], opset=18, check=False)
values('group_norm_v18', x=g, s=scale, b=bias, y=expected.reshape(2, 4, 3))

# Dropout-7 returns its mask in the data's type; inference keeps everything.
save('dropout_v7_mask', [helper.make_node('Dropout', ['x'], ['y', 'mask'], ratio=0.3)],
     [f('x', [2, 3])], [f('y', [2, 3]), f('mask', [2, 3])], opset=7)
save('dropout_training', [const('mode', helper.make_tensor('mode', TensorProto.BOOL, [], [True])),
                          helper.make_node('Dropout', ['x', '', 'mode'], ['y'])],
     [f('x', [2, 3])], [f('y', [2, 3])])
# BatchNormalization-15 in training mode: the batch's own statistics, and the running ones
# moved toward them by momentum.
save('batch_norm_training',
     [helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'rm', 'rv'],
                       training_mode=1, momentum=0.8)],
     [f('x', [4, 3]), f('s', [3]), f('b', [3]), f('m', [3]), f('v', [3])],
     [f('y', [4, 3]), f('rm', [3]), f('rv', [3])], opset=15)
bx, bs, bb, bm = (rng.standard_normal(shape).astype(np.float32) for shape in ((4, 3), 3, 3, 3))
bv = rng.random(3).astype(np.float32) + 0.5
values('batch_norm_training', x=bx, s=bs, b=bb, m=bm, v=bv,
       y=(bx - bx.mean(0)) / np.sqrt(bx.var(0) + 1e-5) * bs + bb,
       rm=0.8 * bm + 0.2 * bx.mean(0), rv=0.8 * bv + 0.2 * bx.var(0))

# ReduceSum-13 with axes from a Constant node, from a graph input, and
# noop_with_empty_axes with an axes input of unknown length.
r = rng.standard_normal((2, 3, 4)).astype(np.float32)
save('sum_constant_axes', [const('axes', helper.make_tensor('axes', TensorProto.INT64, [1], [1])),
                           helper.make_node('ReduceSum', ['x', 'axes'], ['y'], keepdims=0)],
     [f('x', [2, 3, 4])], [f('y', [2, 4])])
save('sum_runtime_axes', [helper.make_node('ReduceSum', ['x', 'axes'], ['y'], keepdims=1)],
     [f('x', [2, 3, 4]), i64('axes', [2])], [f('y', [None, None, None])])
values('sum_axes', x=r, axes=np.array([0, -1], np.int64), y=r.sum(axis=(0, 2), keepdims=True),
       y_constant=r.sum(axis=1))
save('sum_noop_unknown_axes',
     [helper.make_node('ReduceSum', ['x', 'axes'], ['y'], noop_with_empty_axes=1)],
     [f('x', [2, 3, 4]), i64('axes', ['k'])], [f('y', [None, None, None])])
# Without axes and with noop_with_empty_axes, ReduceSumSquare still squares and ReduceLogSum passes x.
save('sum_square_noop', [helper.make_node('ReduceSumSquare', ['x'], ['y'], noop_with_empty_axes=1)],
     [f('x', [2, 3, 4])], [f('y', [2, 3, 4])], opset=18)
save('log_sum_noop', [helper.make_node('ReduceLogSum', ['x'], ['y'], noop_with_empty_axes=1)],
     [f('x', [2, 3, 4])], [f('y', [2, 3, 4])], opset=18)
save('argmax_v11', [helper.make_node('ArgMax', ['x'], ['y'])],
     [f('x', [2, 3, 4])], [i64('y', [1, 3, 4])], opset=11)
values('reduce_misc', x=r, square=r * r, argmax=r.argmax(axis=0)[np.newaxis])

# LpNormalization with p = 1 along axis 0.
save('lp_norm_p1', [helper.make_node('LpNormalization', ['x'], ['y'], axis=0, p=1)],
     [f('x', [2, 3, 4])], [f('y', [2, 3, 4])], opset=13)
values('lp_norm_p1', x=r, y=r / np.abs(r).sum(axis=0, keepdims=True))

# LayerNormalization without bias and with Y only; then float64 data with the
# default float32 stash_type, asking for Mean and InvStdDev.
l = rng.standard_normal((3, 5)).astype(np.float32)
w = rng.standard_normal(5).astype(np.float32)
ld = l.astype(np.float64)
mean = ld.mean(axis=1, keepdims=True)
inv = 1 / np.sqrt(ld.var(axis=1, keepdims=True) + 1e-5)
save('layer_norm_no_bias', [helper.make_node('LayerNormalization', ['x', 'w'], ['y'])],
     [f('x', [3, 5]), f('w', [5])], [f('y', [3, 5])], opset=17)
save('layer_norm_stash', [helper.make_node('LayerNormalization', ['x', 'w'], ['y', 'mean', 'inv'])],
     [f('x', [3, 5], TensorProto.DOUBLE), f('w', [5], TensorProto.DOUBLE)],
     [f('y', [3, 5], TensorProto.DOUBLE), f('mean', [3, 1]), f('inv', [3, 1])], opset=17)
values('layer_norm', x=l, w=w, y=(ld - mean) * inv * w, mean=mean, inv=inv)
)",
                        dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::filesystem::path model(const std::string& name) { return *dir_ / (name + ".onnx"); }
  static Tensor value(const std::string& file, const std::string& name) {
    for (auto& [key, tensor] : read_npz(*dir_ / (file + ".npz")))
      if (key == name) return tensor;
    ADD_FAILURE() << "no " << name << " in " << file;
    return Tensor();
  }

  static ScratchDir* dir_;
};

ScratchDir* OnnxNormImport::dir_ = nullptr;

std::vector<Tensor> run(const std::string& path, std::vector<Tensor> inputs,
                        std::string* text = nullptr) {
  frontend::ImportedModel imported = frontend::from_onnx(path);
  if (text) *text = ir::print_module(imported.mod);
  reference::Interpreter interpreter(imported.mod);
  return interpreter.run(inputs);
}

// Succeeds when got has expected's shape and values to within float32 rounding.
::testing::AssertionResult close_to(const Tensor& got, const Tensor& expected) {
  if (got.shape_vector() != expected.shape_vector())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(got.shape())
                                         << ", expected " << shape_to_string(expected.shape());
  std::vector<double> g = reference::to_doubles(got), e = reference::to_doubles(expected);
  for (size_t i = 0; i < g.size(); ++i)
    if (std::fabs(g[i] - e[i]) > 1e-5 + 1e-4 * std::fabs(e[i]))
      return ::testing::AssertionFailure()
             << "element " << i << " is " << g[i] << ", expected " << e[i];
  return ::testing::AssertionSuccess();
}

std::string import_error(const std::filesystem::path& path) {
  try {
    frontend::from_onnx(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(OnnxNormImport, Opset11SoftmaxFamilyActsOnRowsFromAxis) {
  for (const char* name : {"softmax_v11", "logsoftmax_v11", "hardmax_v11"}) {
    std::vector<Tensor> out = run(model(name), {value(name, "x")});
    EXPECT_TRUE(close_to(out.at(0), value(name, "y"))) << name;
  }
}

TEST_F(OnnxNormImport, GroupNormalization18SpreadsGroupScaleOverChannels) {
  const char* name = "group_norm_v18";
  std::vector<Tensor> out =
      run(model(name), {value(name, "x"), value(name, "s"), value(name, "b")});
  EXPECT_TRUE(close_to(out.at(0), value(name, "y")));
}

TEST_F(OnnxNormImport, DropoutKeepsEverythingInInference) {
  Tensor x = reference::from_doubles({1, -2, 3, 4, 5, -6}, {2, 3}, DataType::float32());
  std::vector<Tensor> out = run(model("dropout_v7_mask"), {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(close_to(out[0], x));
  // Before opset 10 the mask has the data's type.
  EXPECT_EQ(out[1].dtype(), DataType::float32());
  EXPECT_EQ(reference::to_doubles(out[1]), std::vector<double>(6, 1.0));
}

TEST_F(OnnxNormImport, TrainingModeDropoutIsAClearError) {
  EXPECT_NE(import_error(model("dropout_training")).find("(Dropout): training_mode=1"),
            std::string::npos);
}

TEST_F(OnnxNormImport, TrainingModeBatchNormUsesTheBatchStatistics) {
  const char* name = "batch_norm_training";
  std::vector<Tensor> out = run(model(name), {value(name, "x"), value(name, "s"), value(name, "b"),
                                              value(name, "m"), value(name, "v")});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(close_to(out[0], value(name, "y")));
  EXPECT_TRUE(close_to(out[1], value(name, "rm")));
  EXPECT_TRUE(close_to(out[2], value(name, "rv")));
}

TEST_F(OnnxNormImport, AxesKnownAtImportGiveStaticReductions) {
  std::string text;
  std::vector<Tensor> out = run(model("sum_constant_axes"), {value("sum_axes", "x")}, &text);
  EXPECT_NE(text.find("sum(%x, axis=[1])"), std::string::npos) << text;
  EXPECT_EQ(text.find("dyn."), std::string::npos) << text;
  EXPECT_TRUE(close_to(out.at(0), value("sum_axes", "y_constant")));
}

TEST_F(OnnxNormImport, AxesGivenAtRunTimeGiveDynReductions) {
  std::string text;
  std::vector<Tensor> out =
      run(model("sum_runtime_axes"), {value("sum_axes", "x"), value("sum_axes", "axes")}, &text);
  EXPECT_NE(text.find("dyn.sum(%x, %axes, keepdims=True)"), std::string::npos) << text;
  EXPECT_TRUE(close_to(out.at(0), value("sum_axes", "y")));
  std::string message = import_error(model("sum_noop_unknown_axes"));
  EXPECT_NE(message.find("(ReduceSum): noop_with_empty_axes needs the number of axes"),
            std::string::npos)
      << message;
}

TEST_F(OnnxNormImport, NoopWithEmptyAxes) {
  Tensor x = value("reduce_misc", "x");
  EXPECT_TRUE(close_to(run(model("sum_square_noop"), {x}).at(0), value("reduce_misc", "square")));
  EXPECT_TRUE(close_to(run(model("log_sum_noop"), {x}).at(0), x));
}

TEST_F(OnnxNormImport, ArgMaxBeforeOpset12DefaultsToAxis0) {
  Tensor out = run(model("argmax_v11"), {value("reduce_misc", "x")}).at(0);
  EXPECT_EQ(out.dtype(), DataType::int64());
  EXPECT_TRUE(close_to(out, value("reduce_misc", "argmax")));
}

TEST_F(OnnxNormImport, LpNormalizationWithP1) {
  std::vector<Tensor> out = run(model("lp_norm_p1"), {value("lp_norm_p1", "x")});
  EXPECT_TRUE(close_to(out.at(0), value("lp_norm_p1", "y")));
}

TEST_F(OnnxNormImport, LayerNormalizationOnTheLastAxisIsOneOp) {
  std::string text;
  std::vector<Tensor> out =
      run(model("layer_norm_no_bias"), {value("layer_norm", "x"), value("layer_norm", "w")}, &text);
  EXPECT_NE(text.find("nn.layer_norm("), std::string::npos) << text;
  EXPECT_NE(text.find("center=False"), std::string::npos) << text;
  EXPECT_TRUE(close_to(out.at(0), value("layer_norm", "y")));
}

TEST_F(OnnxNormImport, LayerNormalizationStatisticsInTheStashType) {
  Tensor x = value("layer_norm", "x"), w = value("layer_norm", "w");
  Tensor x64 =
      reference::from_doubles(reference::to_doubles(x), x.shape_vector(), DataType::float64());
  Tensor w64 =
      reference::from_doubles(reference::to_doubles(w), w.shape_vector(), DataType::float64());
  std::vector<Tensor> out = run(model("layer_norm_stash"), {x64, w64});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].dtype(), DataType::float64());
  EXPECT_EQ(out[1].dtype(), DataType::float32());
  EXPECT_EQ(out[2].dtype(), DataType::float32());
  EXPECT_TRUE(close_to(out[0], value("layer_norm", "y")));
  EXPECT_TRUE(close_to(out[1], value("layer_norm", "mean")));
  EXPECT_TRUE(close_to(out[2], value("layer_norm", "inv")));
}

}  // namespace
}  // namespace anvil
