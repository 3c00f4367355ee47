// anvil print-ir: prints a module in the graph IR's text form.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct PrintIrOptions {
  std::string model;
  std::string input_shapes;
  std::string workload;
  int64_t batch = 1;
  bool no_types = false;
};

void run_print_ir(const PrintIrOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("print-ir", "give either a model file or --workload NAME");
  ir::IRModule mod;
  if (!options.model.empty()) {
    ShapeDict shapes =
        options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
    mod = load_onnx_model(options.model, shapes).mod;
  } else {
    mod = testing::workload_by_name(options.workload, options.batch).mod;
  }
  ir::PrintOptions print;
  print.show_types = !options.no_types;
  // Parameters are not bound here, so there are no large constants to append.
  print.include_metadata = false;
  std::fputs(ir::print_module(mod, print).c_str(), stdout);
}

}  // namespace

void add_print_ir_command(CLI::App& app) {
  auto options = std::make_shared<PrintIrOptions>();
  auto* cmd = app.add_subcommand("print-ir", "Print a module in the graph IR text format");
  std::string names;
  for (const std::string& n : testing::workload_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("model", options->model, "an .onnx model file");
  cmd->add_option("--workload", options->workload, "a built-in network: " + names);
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes of the model, e.g. \"data:[1,3,224,224]\"");
  cmd->add_option("--batch", options->batch, "batch size of the workload's input")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-types", options->no_types, "leave out the /* ty=... */ annotations");
  cmd->footer(
      "Examples:\n"
      "  anvil print-ir --workload resnet18\n"
      "  anvil print-ir model.onnx --input-shapes \"data:[1,3,224,224]\"\n"
      "  anvil print-ir --workload mlp --batch 4 --no-types");
  cmd->callback([options] { run_print_ir(*options); });
}

}  // namespace anvil::cli
