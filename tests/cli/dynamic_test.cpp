// Dynamic shapes from the command line, as a user meets them: a model exported with a dynamic
// batch compiles into one VM package with no flag, which runs at batch 1, 3 and 8 against ONNX
// Runtime's outputs, also from a program linked with the runtime alone; inputs that contradict
// the model or each other are one-line errors naming the input and the dim.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "anvil/runtime/npy.h"
#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliDynamic : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto
rng = np.random.default_rng(0)
# conv -> relu -> max pool -> conv (+ a per-sample bias input sharing the batch) -> global
# average pool -> flatten -> gemm, with the batch a named dynamic dim.
w1 = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
b1 = rng.standard_normal((16,)).astype(np.float32)
w2 = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
wf = rng.standard_normal((10, 16)).astype(np.float32)
bf = rng.standard_normal((10,)).astype(np.float32)
nodes = [
    helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c1'], ['r1']),
    helper.make_node('MaxPool', ['r1'], ['p1'], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node('Conv', ['p1', 'w2'], ['c2'], pads=[1, 1, 1, 1]),
    helper.make_node('Add', ['c2', 'shift'], ['s']),
    helper.make_node('GlobalAveragePool', ['s'], ['g']),
    helper.make_node('Flatten', ['g'], ['f']),
    helper.make_node('Gemm', ['f', 'wf', 'bf'], ['y'], transB=1),
]
graph = helper.make_graph(
    nodes, 'dynamic_convnet',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', 3, 16, 16]),
     helper.make_tensor_value_info('shift', TensorProto.FLOAT, ['batch', 16, 1, 1])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', 10])],
    [onnx.numpy_helper.from_array(w1, 'w1'), onnx.numpy_helper.from_array(b1, 'b1'),
     onnx.numpy_helper.from_array(w2, 'w2'), onnx.numpy_helper.from_array(wf, 'wf'),
     onnx.numpy_helper.from_array(bf, 'bf')])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8  # readable by the pinned ONNX Runtime
path = os.path.join(out_dir, 'dynamic.onnx')
onnx.save(model, path)
session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
for b in (1, 3, 8):
    feeds = {'x': rng.standard_normal((b, 3, 16, 16)).astype(np.float32),
             'shift': rng.standard_normal((b, 16, 1, 1)).astype(np.float32)}
    np.savez(os.path.join(out_dir, f'in{b}.npz'), **feeds)
    np.savez(os.path.join(out_dir, f'ort{b}.npz'), output_0=session.run(None, feeds)[0])
np.savez(os.path.join(out_dir, 'mismatch.npz'),
         x=rng.standard_normal((3, 3, 16, 16)).astype(np.float32),
         shift=rng.standard_normal((4, 16, 1, 1)).astype(np.float32))
np.savez(os.path.join(out_dir, 'bad_static.npz'),
         x=rng.standard_normal((3, 3, 16, 17)).astype(np.float32),
         shift=rng.standard_normal((3, 16, 1, 1)).astype(np.float32))
# An If on a run-time condition whose branches give a scalar and a [1]; the If's result is
# added to x, so both meanings broadcast to x's shape.
then_g = helper.make_graph([helper.make_node('ReduceMax', ['x3'], ['t'], keepdims=0)], 'then', [],
                           [helper.make_tensor_value_info('t', TensorProto.FLOAT, [])])
else_g = helper.make_graph([helper.make_node('ReduceMin', ['x3'], ['e'], keepdims=1)], 'else', [],
                           [helper.make_tensor_value_info('e', TensorProto.FLOAT, [1])])
graph = helper.make_graph(
    [helper.make_node('If', ['flag'], ['picked'], then_branch=then_g, else_branch=else_g),
     helper.make_node('Add', ['picked', 'x3'], ['y'])], 'if_scalar_or_one',
    [helper.make_tensor_value_info('flag', TensorProto.BOOL, []),
     helper.make_tensor_value_info('x3', TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'if_scalar_or_one.onnx'))
session = ort.InferenceSession(os.path.join(out_dir, 'if_scalar_or_one.onnx'),
                               providers=['CPUExecutionProvider'])
for name, flag in (('if_then', True), ('if_else', False)):
    feeds = {'flag': np.array(flag), 'x3': rng.standard_normal(3).astype(np.float32)}
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    np.savez(os.path.join(out_dir, name + '.ort.npz'), output_0=session.run(None, feeds)[0])
)");
    CommandResult r =
        run_anvil({"compile", path("dynamic.onnx"), "-o", path("dynamic.tar"), "--json"});
    compile_result_ = new CommandResult(r);
  }
  static void TearDownTestSuite() {
    delete compile_result_;
    compile_result_ = nullptr;
    CliFixture::TearDownTestSuite();
  }

  // Within 1e-4 of the largest magnitude of ONNX Runtime's output.
  static void expect_matches_ort(const std::string& got_npz, int batch) {
    NamedTensors got = read_npz(got_npz);
    NamedTensors want = read_npz(path("ort" + std::to_string(batch) + ".npz"));
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].second.shape_vector(), want[0].second.shape_vector());
    double scale = 0;
    for (int64_t i = 0; i < want[0].second.numel(); ++i)
      scale = std::max(scale, std::fabs(want[0].second.get_as_double(i)));
    for (int64_t i = 0; i < want[0].second.numel(); ++i)
      ASSERT_NEAR(got[0].second.get_as_double(i), want[0].second.get_as_double(i), 1e-4 * scale)
          << "batch " << batch << " element " << i;
  }

  inline static CommandResult* compile_result_ = nullptr;
};

TEST_F(CliDynamic, OnePackageRunsAtEveryBatch) {
  ASSERT_EQ(compile_result_->exit_code, 0) << compile_result_->err;
  EXPECT_NE(compile_result_->out.find("\"executor\":\"vm\""), std::string::npos)
      << compile_result_->out;
  for (int batch : {8, 1, 3}) {
    std::string out = path("out" + std::to_string(batch) + ".npz");
    CommandResult r = run_anvil({"run", path("dynamic.tar"), "--inputs",
                                 path("in" + std::to_string(batch) + ".npz"), "--outputs", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_matches_ort(out, batch);
  }
}

// --profile on a VM package: one row per kernel call, named by its instruction and kernel,
// the kernel time against the run's, and the VM's arena against what its allocations asked for.
TEST_F(CliDynamic, ProfileOfAVmPackageListsItsKernelCalls) {
  ASSERT_EQ(compile_result_->exit_code, 0) << compile_result_->err;
  CommandResult r = run_anvil(
      {"run", path("dynamic.tar"), "--inputs", path("in3.npz"), "--profile", "--repeat", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": fused_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernels: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory: activations "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" allocated"), std::string::npos) << r.out;
}

TEST_F(CliDynamic, RuntimeOnlyProgramRunsThePackage) {
  ASSERT_EQ(compile_result_->exit_code, 0) << compile_result_->err;
  for (int batch : {3, 8}) {
    std::string out = path("runner" + std::to_string(batch) + ".npz");
    CommandResult r = run_command({ANVIL_PACKAGE_RUNNER, path("dynamic.tar"),
                                   path("in" + std::to_string(batch) + ".npz"), out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_matches_ort(out, batch);
  }
}

TEST_F(CliDynamic, OnnxModelRunsOnTheVmWithoutAFlag) {
  std::string out = path("onnx_out.npz");
  CommandResult r =
      run_anvil({"run", path("dynamic.onnx"), "--inputs", path("in3.npz"), "--outputs", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_matches_ort(out, 3);
}

TEST_F(CliDynamic, InputsThatContradictTheModelNameTheInputAndDim) {
  ASSERT_EQ(compile_result_->exit_code, 0) << compile_result_->err;
  expect_one_line_error(
      run_anvil({"run", path("dynamic.tar"), "--inputs", path("mismatch.npz")}), 1,
      {"input 'shift' has batch = 4 in dim 0", "input 'x' has batch = 3 in dim 0"},
      "two inputs sharing the batch");
  expect_one_line_error(run_anvil({"run", path("dynamic.tar"), "--inputs", path("bad_static.npz")}),
                        1, {"input 'x' has 17 in dim 3", "fixes that dim at 16"},
                        "a static dim contradicted");
  expect_one_line_error(
      run_anvil({"run", path("dynamic.tar"), "--executor", "graph", "--inputs", path("in1.npz")}),
      1, {"is a vm package", "--executor graph"}, "the wrong executor forced");
}

TEST_F(CliDynamic, InputShapesSpecializeToAGraphPackage) {
  CommandResult r = run_anvil({"compile", path("dynamic.onnx"), "-o", path("static.tar"),
                               "--input-shapes", "x:[3,3,16,16] shift:[3,16,1,1]", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"executor\":\"graph\""), std::string::npos) << r.out;
  std::string out = path("static_out.npz");
  CommandResult run =
      run_anvil({"run", path("static.tar"), "--inputs", path("in3.npz"), "--outputs", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_matches_ort(out, 3);
}

TEST_F(CliDynamic, IfBranchesOfAScalarAndAOneElementVectorMatchOnnxRuntime) {
  for (const char* run : {"if_then", "if_else"}) {
    std::string out = path(std::string(run) + ".anvil.npz");
    CommandResult r = run_anvil({"run", path("if_scalar_or_one.onnx"), "--inputs",
                                 path(std::string(run) + ".in.npz"), "--outputs", out});
    ASSERT_EQ(r.exit_code, 0) << run << ": " << r.err;
    NamedTensors got = read_npz(out), want = read_npz(path(std::string(run) + ".ort.npz"));
    ASSERT_EQ(got[0].second.shape_vector(), want[0].second.shape_vector()) << run;
    for (int64_t i = 0; i < want[0].second.numel(); ++i)
      EXPECT_NEAR(got[0].second.get_as_double(i), want[0].second.get_as_double(i), 1e-6) << run;
  }
}

}  // namespace
}  // namespace anvil::testing
