// anvil run MODEL.onnx: runs a model on inputs from an .npz file (or filled
// ones) and writes its outputs as output_0, output_1, ... (tvmc's convention).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/support/error.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string inputs;
  std::string outputs;
  std::string fill_mode = "random";
  std::string executor = "reference";
  std::string input_shapes;
};

void run_model(const RunOptions& options) {
  ShapeDict shapes =
      options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
  frontend::ImportedModel model = load_onnx_model(options.model, shapes);
  std::vector<std::pair<std::string, Tensor>> given =
      options.inputs.empty() ? fill_inputs(model, options.fill_mode) : read_npz(options.inputs);
  std::vector<Tensor> args = match_inputs(model, given);
  for (const auto& [name, tensor] : model.params) args.push_back(tensor);

  auto start = std::chrono::steady_clock::now();
  reference::Interpreter interpreter(model.mod);
  std::vector<Tensor> outputs = interpreter.run(args);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < outputs.size(); ++i)
    named.emplace_back("output_" + std::to_string(i), outputs[i]);
  if (!options.outputs.empty()) {
    write_npz(options.outputs, named, /*compress=*/false);
  } else {
    for (const auto& [name, t] : named)
      std::printf("%s: %s %s\n", name.c_str(), t.dtype().to_string().c_str(),
                  shape_to_string(t.shape()).c_str());
  }
  std::fprintf(stderr, "ran %s with the %s executor in %.1f ms\n", options.model.c_str(),
               options.executor.c_str(), ms);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a model on given or generated inputs");
  cmd->add_option("model", options->model, "the model: an .onnx file")->required();
  cmd->add_option("-i,--inputs", options->inputs,
                  ".npz file with one array per model input, by name");
  cmd->add_option("-o,--outputs", options->outputs,
                  ".npz file to write the outputs to (output_0, ...)");
  cmd->add_option("--fill-mode", options->fill_mode,
                  "values of inputs not given: zeros, ones or random")
      ->check(CLI::IsMember({"zeros", "ones", "random"}));
  cmd->add_option("--executor", options->executor, "how to run the model: reference")
      ->check(CLI::IsMember({"reference"}));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224] mask:[1,10]\"");
  cmd->footer(
      "Examples:\n"
      "  anvil run resnet18.onnx --inputs input.npz --outputs predictions.npz\n"
      "  anvil run model.onnx --fill-mode ones\n"
      "  anvil run bert.onnx --input-shapes \"input_ids:[1,128]\" --fill-mode zeros");
  cmd->callback([options] { run_model(*options); });
}

}  // namespace anvil::cli
