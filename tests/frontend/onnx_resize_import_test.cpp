// Importing ONNX Resize with constant sizes and a keep_aspect_ratio_policy: the importer
// derives the static image.resize2d (the one scale the policy picks, as coordinate_scales)
// through ir::static_resize, as DynamicToStatic does, and the result matches ONNX Runtime.
#include <gtest/gtest.h>

#include "anvil/frontend/onnx.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "reference/kernel_util.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using testing::ScratchDir;

class OnnxResizeImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    testing::run_python(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto
x = np.random.default_rng(7).uniform(-1, 1, size=(1, 2, 5, 7)).astype(np.float32)
np.save(os.path.join(out_dir, 'x.npy'), x)
def save(name, sizes, axes, policy, mode):
    const = helper.make_node('Constant', [], ['sizes'],
                             value=helper.make_tensor('s', TensorProto.INT64, [2], sizes))
    resize = helper.make_node('Resize', ['x', '', '', 'sizes'], ['y'], mode=mode, axes=axes,
                              keep_aspect_ratio_policy=policy)
    graph = helper.make_graph(
        [const, resize], name,
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [None] * 4)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    model.ir_version = 8  # readable by the pinned ONNX Runtime
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
    session = ort.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])
    np.save(os.path.join(out_dir, name + '.npy'), session.run(None, {'x': x})[0])
# Upsampling: not_larger fits 8x9 (scale 9/7), not_smaller covers it (scale 8/5).
save('not_larger_linear', [8, 9], [2, 3], 'not_larger', 'linear')
save('not_smaller_nearest', [8, 9], [2, 3], 'not_smaller', 'nearest')
# Downsampling, with the axes listed in reverse order.
save('not_larger_reversed_axes', [4, 3], [3, 2], 'not_larger', 'linear')
)",
                        dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::filesystem::path file(const std::string& name) { return *dir_ / name; }
  static ScratchDir* dir_;
};

ScratchDir* OnnxResizeImport::dir_ = nullptr;

void expect_static_resize_matches_onnxruntime(const std::string& name,
                                              const std::filesystem::path& model,
                                              const std::filesystem::path& x,
                                              const std::filesystem::path& expected) {
  SCOPED_TRACE(name);
  frontend::ImportedModel imported = frontend::from_onnx(model);
  std::string text = ir::print_module(imported.mod);
  EXPECT_NE(text.find("image.resize2d("), std::string::npos) << text;
  EXPECT_NE(text.find("coordinate_scales="), std::string::npos) << text;
  EXPECT_EQ(text.find("dyn.image.resize"), std::string::npos) << text;
  reference::Interpreter interpreter(imported.mod);
  std::vector<Tensor> outputs = interpreter.run({read_npy(x)});
  ASSERT_EQ(outputs.size(), 1u);
  Tensor want = read_npy(expected);
  auto dims = [](const Tensor& t) {
    return std::vector<int64_t>(t.shape().begin(), t.shape().end());
  };
  ASSERT_EQ(dims(outputs[0]), dims(want));
  std::vector<double> got = reference::to_doubles(outputs[0]), ort = reference::to_doubles(want);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ort[i], 1e-5) << "element " << i;
}

TEST_F(OnnxResizeImport, KeepAspectRatioPolicyGivesAStaticResizeMatchingOnnxRuntime) {
  for (const char* name : {"not_larger_linear", "not_smaller_nearest", "not_larger_reversed_axes"})
    expect_static_resize_matches_onnxruntime(name, file(std::string(name) + ".onnx"), file("x.npy"),
                                             file(std::string(name) + ".npy"));
}

}  // namespace
}  // namespace anvil
