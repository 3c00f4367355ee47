// anvil run MODEL: runs a compiled package (.tar or .so from `anvil compile`) or an ONNX
// model (compiled in memory first, or interpreted with --executor reference) on inputs from
// an .npz file (or filled ones) and writes its outputs as output_0, output_1, ... (tvmc's
// convention).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "anvil/driver/build.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/package.h"
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
  std::string executor = "graph";
  std::string input_shapes;
  int opt_level = 3;
  bool print_time = false;
  int repeat = 1;
  int number = 1;
  bool profile = false;
};

// True for a file that starts like an ONNX model rather than a package (tar or ELF).
bool is_package(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error("model file '", path, "' does not exist or cannot be read");
  char head[512] = {};
  in.read(head, sizeof head);
  size_t got = size_t(in.gcount());
  bool elf = got >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
  bool tar = got >= 262 && std::string(head + 257, 5) == "ustar";
  return elf || tar;
}

void write_outputs(const RunOptions& options, const std::vector<Tensor>& outputs) {
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
}

void run_reference(const RunOptions& options) {
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
  write_outputs(options, outputs);
  if (options.print_time) std::printf("reference executor: %.2f ms\n", ms);
}

void run_graph(const RunOptions& options) {
  Package package;
  std::vector<std::pair<std::string, Tensor>> given;
  if (is_package(options.model)) {
    package = load_module(options.model);
    if (!options.inputs.empty()) given = read_npz(options.inputs);
  } else {
    // An ONNX model: its signature checks the inputs before anything is compiled.
    ShapeDict shapes =
        options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
    frontend::ImportedModel model = load_onnx_model(options.model, shapes);
    given =
        options.inputs.empty() ? fill_inputs(model, options.fill_mode) : read_npz(options.inputs);
    std::vector<Tensor> ordered = match_inputs(model, given);
    given.clear();
    for (size_t i = 0; i < ordered.size(); ++i)
      given.emplace_back(model.input_names[i], ordered[i]);
    driver::BuildOptions build_options;
    build_options.pass_context.opt_level = options.opt_level;
    package = driver::build(model.mod, model.params, build_options).package();
  }
  GraphExecutor executor = package.create_executor();
  if (!given.empty()) {
    for (const auto& [name, tensor] : given) {
      if (executor.get_input_index(name) < 0)
        throw_error("input '", name, "' is not an input of the model");
      executor.set_input(name, tensor);
    }
    for (const InputInfo& info : executor.get_input_info()) {
      bool found = false;
      for (const auto& [name, tensor] : given) found |= name == info.name;
      if (!found) throw_error("input '", info.name, "' is missing from the given inputs");
    }
  } else {
    std::mt19937_64 rng(0);
    for (const InputInfo& info : executor.get_input_info())
      executor.set_input(info.name, fill_tensor(info.shape, info.dtype, options.fill_mode, rng));
  }
  executor.run();
  std::vector<Tensor> outputs;
  for (int i = 0; i < executor.get_num_outputs(); ++i)
    outputs.push_back(executor.get_output(i).copy());
  write_outputs(options, outputs);
  if (options.print_time) {
    BenchmarkResult r = executor.benchmark(options.repeat, options.number);
    std::printf("Execution time summary:\n");
    std::printf(" mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n");
    std::printf(" %9.4f    %9.4f    %9.4f    %9.4f    %9.4f\n", r.mean_ms, r.median_ms, r.max_ms,
                r.min_ms, r.std_ms);
  }
  if (options.profile) {
    std::printf("%-60s %10s %8s\n", "kernel", "mean (ms)", "percent");
    for (const KernelProfile& k : executor.profile(options.repeat))
      std::printf("%-60s %10.4f %7.2f%%\n", k.node_name.c_str(), k.mean_ms, k.percent);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd =
      app.add_subcommand("run", "Run a compiled package or a model on given or generated inputs");
  cmd->add_option("model", options->model,
                  "a package (.tar or .so from anvil compile) or an .onnx file")
      ->required();
  cmd->add_option("-i,--inputs", options->inputs,
                  ".npz file with one array per model input, by name");
  cmd->add_option("-o,--outputs", options->outputs,
                  ".npz file to write the outputs to (output_0, ...)");
  cmd->add_option("--fill-mode", options->fill_mode,
                  "values of inputs not given: zeros, ones or random")
      ->check(CLI::IsMember({"zeros", "ones", "random"}));
  cmd->add_option("--executor", options->executor,
                  "graph (compiled kernels, default) or reference (the interpreter; .onnx only)")
      ->check(CLI::IsMember({"graph", "reference"}));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224] mask:[1,10]\"");
  cmd->add_option("-O,--opt-level", options->opt_level,
                  "optimization level when an .onnx model is compiled in memory (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_flag("--print-time", options->print_time, "print the run time summary");
  cmd->add_option("--repeat", options->repeat,
                  "timed repeats for --print-time / --profile (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--number", options->number, "runs per timed repeat (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--profile", options->profile, "print the time of every kernel");
  cmd->footer(
      "Examples:\n"
      "  anvil run module.tar --inputs input.npz --outputs predictions.npz --print-time --repeat "
      "100\n"
      "  anvil run resnet18.onnx --inputs input.npz --outputs predictions.npz\n"
      "  anvil run model.onnx --executor reference --fill-mode ones\n"
      "  anvil run bert.onnx --input-shapes \"input_ids:[1,128]\" --fill-mode zeros");
  cmd->callback([options] {
    if (options->executor == "reference") {
      if (is_package(options->model))
        throw_error("--executor reference runs .onnx models; '", options->model,
                    "' is a compiled package");
      run_reference(*options);
    } else {
      run_graph(*options);
    }
  });
}

}  // namespace anvil::cli
