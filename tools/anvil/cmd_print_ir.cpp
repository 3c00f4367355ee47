// anvil print-ir: prints a model at one stage of the compiler: the imported or optimized graph
// IR, the lowered tensor IR of its kernels, LLVM IR or assembly.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "anvil/driver/build.h"
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
  std::string stage = "imported";
  int opt_level = 3;
  std::string target = "llvm";
};

void run_print_ir(const PrintIrOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("print-ir", "give either a model file or --workload NAME");
  check_target(options.target);
  if (options.target == "c" && (options.stage == "ll" || options.stage == "asm"))
    throw CLI::ValidationError("--stage", "'" + options.stage + "' needs an llvm target");
  auto [mod, params] =
      load_model_or_workload(options.model, options.input_shapes, options.workload, options.batch);
  if (options.stage != "imported") {
    driver::BuildOptions build_options;
    build_options.target = options.target;
    build_options.pass_context.opt_level = options.opt_level;
    driver::BuiltModule built = driver::build(mod, params, build_options);
    std::string format = options.stage == "optimized" ? "relay" : options.stage;
    std::fputs(built.get_source(format).c_str(), stdout);
    return;
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
  cmd->add_option("model", options->model, "an .onnx model file")->check(existing_path());
  cmd->add_option("--workload", options->workload, "a built-in network: " + names);
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes of the model, e.g. \"data:[1,3,224,224]\"");
  cmd->add_option("--batch", options->batch, "batch size of the workload's input")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-types", options->no_types, "leave out the /* ty=... */ annotations");
  cmd->add_option("--stage", options->stage,
                  "imported (default), optimized (after the graph passes), tir (lowered "
                  "kernels), ll (LLVM IR) or asm")
      ->check(CLI::IsMember({"imported", "optimized", "tir", "ll", "asm"}));
  cmd->add_option("-O,--opt-level", options->opt_level,
                  "optimization level for the stages after import (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--target", options->target,
                  "the target for the stages after import (default llvm, the host CPU)");
  cmd->footer(
      "Examples:\n"
      "  anvil print-ir --workload resnet18\n"
      "  anvil print-ir model.onnx --input-shapes \"data:[1,3,224,224]\"\n"
      "  anvil print-ir --workload mlp --batch 4 --no-types\n"
      "  anvil print-ir model.onnx --stage optimized -O 3\n"
      "  anvil print-ir --workload mlp --stage asm");
  cmd->callback([options] { run_print_ir(*options); });
}

}  // namespace anvil::cli
