// The TVM ONNX tutorial, in C++: an ONNX ResNet-18 is imported with from_onnx, built at opt
// level 1, and classifies an input; the top-1 class must equal ONNX Runtime's.
//
//   onnx_resnet18 MODEL.onnx INPUT.npz EXPECTED.npz
// INPUT.npz holds the image under the model's input name; EXPECTED.npz holds ONNX Runtime's
// scores as output_0 (tests/models/export_models.py writes all three).
#include <cstdio>

#include "anvil/driver/build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/runtime/npy.h"

namespace {

int64_t argmax(const anvil::Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.get_as_double(i) > t.get_as_double(best)) best = i;
  return best;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4) {
    std::fprintf(stderr, "usage: onnx_resnet18 MODEL.onnx INPUT.npz EXPECTED.npz\n");
    return 2;
  }
  auto inputs = anvil::read_npz(argv[2]);
  auto expected = anvil::read_npz(argv[3]);
  const auto& [input_name, image] = inputs.at(0);

  // from_onnx(model, shape_dict)
  anvil::frontend::OnnxImportOptions import_options;
  import_options.shape_dict = {{input_name, image.shape_vector()}};
  anvil::frontend::ImportedModel model = anvil::frontend::from_onnx(argv[1], import_options);

  // build at opt level 1
  anvil::driver::BuildOptions options;
  options.pass_context.opt_level = 1;
  anvil::driver::BuiltModule built = anvil::driver::build(model.mod, model.params, options);

  anvil::GraphExecutor executor = built.create_executor();
  executor.set_input(input_name, image);
  executor.run();
  anvil::Tensor scores = executor.get_output(0);
  int64_t ours = argmax(scores), theirs = argmax(expected.at(0).second);
  std::printf("top-1: anvil %lld, onnxruntime %lld\n", (long long)ours, (long long)theirs);
  return ours == theirs ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "onnx_resnet18: %s\n", e.what());
  return 1;
}
