// anvil run MODEL: runs a compiled package (.tar or .so from `anvil compile`) or an ONNX model
// (compiled in memory for the graph executor or the VM, or interpreted with --executor
// reference) on inputs from an .npz file (or filled ones) and writes its outputs as output_0,
// output_1, ... (tvmc's convention).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "anvil/analysis/peak.h"
#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "commands.h"
#include "model_loading.h"
#include "run_report.h"

namespace anvil::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string device = "cpu";
  std::string inputs;
  std::string outputs;
  std::string fill_mode = "random";
  std::string executor = "auto";
  std::string input_shapes;
  int opt_level = 3;
  bool print_time = false;
  int repeat = 1;
  int number = 1;
  int print_top = 0;
  int threads = 0;
  bool profile = false;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// True for a file that starts like a package (tar or ELF) rather than an ONNX model.
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

// What is printed or written after the run.
void report_outputs(const RunOptions& options, const std::vector<Tensor>& outputs) {
  NamedTensors named;
  for (size_t i = 0; i < outputs.size(); ++i)
    named.emplace_back("output_" + std::to_string(i), outputs[i]);
  if (!options.outputs.empty()) {
    write_npz(options.outputs, named, /*compress=*/false);
  } else if (options.print_top == 0) {
    for (const auto& [name, t] : named)
      std::printf("%s: %s %s\n", name.c_str(), t.dtype().to_string().c_str(),
                  shape_to_string(t.shape()).c_str());
  }
  if (options.print_top > 0) {
    if (outputs.empty()) throw_error("--print-top: the model has no outputs");
    print_top(outputs[0], options.print_top);
  }
}

// An ONNX model's inputs: read from --inputs (checked against the model's signature) or
// filled, in the model's order.
NamedTensors model_inputs(const RunOptions& options, const frontend::ImportedModel& model) {
  NamedTensors given =
      options.inputs.empty() ? fill_inputs(model, options.fill_mode) : read_npz(options.inputs);
  std::vector<Tensor> ordered = match_inputs(model, given);
  NamedTensors named;
  for (size_t i = 0; i < ordered.size(); ++i) named.emplace_back(model.input_names[i], ordered[i]);
  return named;
}

frontend::ImportedModel import_model(const RunOptions& options) {
  ShapeDict shapes =
      options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
  return load_onnx_model(options.model, shapes);
}

void run_reference(const RunOptions& options) {
  frontend::ImportedModel model = import_model(options);
  std::vector<Tensor> args;
  for (const auto& [name, tensor] : model_inputs(options, model)) args.push_back(tensor);
  for (const auto& [name, tensor] : model.params) args.push_back(tensor);
  reference::Interpreter interpreter(model.mod);
  auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> outputs = interpreter.run(args);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  report_outputs(options, outputs);
  if (options.print_time) std::printf("reference executor: %.2f ms\n", ms);
}

// Sets the given inputs of an executor (GraphExecutor or VirtualMachine), or fills them all
// from the executor's own input info when none are given.
template <typename Executor>
void set_inputs(Executor& executor, const NamedTensors& given, const std::string& fill_mode) {
  if (given.empty()) {
    std::mt19937_64 rng(0);
    for (const InputInfo& info : executor.get_input_info()) {
      for (int64_t d : info.shape)
        if (d < 0)
          throw_error("input '", info.name,
                      "' has a dynamic shape; give --inputs or --input-shapes");
      executor.set_input(info.name, fill_tensor(info.shape, info.dtype, fill_mode, rng));
    }
    return;
  }
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
}

template <typename Executor>
std::vector<Tensor> outputs_of(const Executor& executor) {
  std::vector<Tensor> outputs;
  for (int i = 0; i < executor.get_num_outputs(); ++i)
    outputs.push_back(executor.get_output(i).copy());
  return outputs;
}

// Runs an executor (GraphExecutor or VirtualMachine) on the given inputs and reports.
template <typename Executor>
void run_executor(const RunOptions& options, Executor& executor, const NamedTensors& given) {
  set_inputs(executor, given, options.fill_mode);
  executor.run();
  report_outputs(options, outputs_of(executor));
  if (options.print_time) print_time_summary(executor.benchmark(options.repeat, options.number));
}

// --profile: whole runs are timed in turns with the kernels, so the table can show how much of
// a run the kernels account for under the same load. The VM's rows are its invoke
// instructions, shape functions included.
template <typename Executor>
void print_executor_profile(const RunOptions& options, Executor& executor) {
  if (!options.profile) return;
  double run_ms = 0;
  std::vector<KernelProfile> rows = executor.profile(options.repeat, &run_ms);
  // The share of the machine's FP32 peak on the run's threads (about 0.2 s to measure), when a
  // row has a rate to compare (the VM's rows have none).
  const bool rates =
      std::any_of(rows.begin(), rows.end(), [](const KernelProfile& row) { return row.flops > 0; });
  const double peak = rates ? analysis::measure_peak_flops(512, num_threads()).gflops : 0.0;
  const bool bf16 = std::any_of(rows.begin(), rows.end(), [](const KernelProfile& row) {
    return row.flops > 0 && row.fused_ops.find("_bf16") != std::string::npos;
  });
  // A build for this host runs its bf16 products on AMX tiles where the host has them.
  double bf16_peak = 0.0;
  if (bf16) {
    bf16_peak = analysis::measure_amx_bf16_peak_flops(num_threads()).gflops;
    if (bf16_peak == 0.0) bf16_peak = analysis::measure_bf16_peak_flops(num_threads()).gflops;
  }
  print_profile(rows, run_ms, peak, bf16_peak);
}

// The graph executor's profile ends with what its storage plan holds; the VM's with its arena
// against what its allocations asked for.
void print_executor_profile(const RunOptions& options, GraphExecutor& executor) {
  if (!options.profile) return;
  print_executor_profile<GraphExecutor>(options, executor);
  print_memory(executor.memory_use());
}

void print_executor_profile(const RunOptions& options, VirtualMachine& vm) {
  if (!options.profile) return;
  print_executor_profile<VirtualMachine>(options, vm);
  print_memory(vm.memory_use());
}

void run_package(const RunOptions& options) {
  Package package = load_module(options.model);
  NamedTensors given;
  if (!options.inputs.empty()) given = read_npz(options.inputs);
  const char* kind = package.is_vm() ? "vm" : "graph";
  if (options.executor != "auto" && options.executor != kind)
    throw_error("'", options.model, "' is a ", kind, " package; --executor ", options.executor,
                " cannot run it");
  if (package.is_vm()) {
    VirtualMachine vm = package.create_vm();
    run_executor(options, vm, given);
    print_executor_profile(options, vm);
    return;
  }
  GraphExecutor executor = package.create_executor();
  run_executor(options, executor, given);
  print_executor_profile(options, executor);
}

void run_onnx(const RunOptions& options) {
  // The model's signature checks the inputs before anything is compiled.
  frontend::ImportedModel model = import_model(options);
  NamedTensors given = model_inputs(options, model);
  driver::BuildOptions build_options;
  build_options.pass_context.opt_level = options.opt_level;
  std::string executor = options.executor;
  if (executor == "auto") executor = driver::pick_executor(model.mod, model.params, build_options);
  if (executor == "vm") {
    VirtualMachine vm = driver::build_vm(model.mod, model.params, build_options).create_vm();
    run_executor(options, vm, given);
    print_executor_profile(options, vm);
    return;
  }
  GraphExecutor graph =
      driver::build(model.mod, model.params, build_options).package().create_executor();
  run_executor(options, graph, given);
  print_executor_profile(options, graph);
}

void run_model(const RunOptions& options) {
  if (options.threads > 0) set_num_threads(options.threads);
  if (options.executor == "reference") {
    if (is_package(options.model))
      throw_error("--executor reference runs .onnx models; '", options.model,
                  "' is a compiled package");
    if (options.profile) throw CLI::ValidationError("--profile", "needs --executor graph");
    run_reference(options);
  } else if (is_package(options.model)) {
    run_package(options);
  } else {
    run_onnx(options);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd =
      app.add_subcommand("run", "Run a compiled package or a model on given or generated inputs");
  cmd->add_option("model", options->model,
                  "a package (.tar or .so from anvil compile) or an .onnx file")
      ->required()
      ->check(existing_path());
  cmd->add_option("--device", options->device, "where to run: cpu (the only device so far)")
      ->check(CLI::IsMember({"cpu"}));
  cmd->add_option("-i,--inputs", options->inputs,
                  ".npz file with one array per model input, by name")
      ->check(existing_path());
  cmd->add_option("-o,--outputs", options->outputs,
                  ".npz file to write the outputs to (output_0, ...)");
  cmd->add_option("--fill-mode", options->fill_mode,
                  "values of inputs not given: zeros, ones or random")
      ->check(CLI::IsMember({"zeros", "ones", "random"}));
  cmd->add_option("--executor", options->executor,
                  "auto (default: the graph executor when every shape is static, else the VM), "
                  "graph, vm, or reference (the interpreter; .onnx only)")
      ->check(CLI::IsMember({"auto", "graph", "vm", "reference"}));
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
  cmd->add_option("--print-top", options->print_top,
                  "print the N largest values of output 0 with their indices")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", options->threads,
                  "worker threads (default: ANVIL_NUM_THREADS or the physical cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--profile", options->profile,
                "print a per-kernel table: name, fused ops, time, share, GFLOP/s, share of the "
                "measured FP32 peak; then each kernel's schedule (a strategy, auto or generic)");
  cmd->footer(
      "Examples:\n"
      "  anvil run module.tar --inputs input.npz --outputs predictions.npz --print-time --repeat "
      "100\n"
      "  anvil run resnet18.onnx --inputs input.npz --print-top 5 --threads 1\n"
      "  anvil run module.tar --fill-mode random --profile --repeat 20\n"
      "  anvil run dynamic_batch.tar --inputs batch8.npz\n"
      "  anvil run model.onnx --input-shapes \"input_ids:[1,128]\"");
  cmd->callback([options] { run_model(*options); });
}

}  // namespace anvil::cli
