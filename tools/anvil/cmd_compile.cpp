// anvil compile MODEL.onnx: builds a model into a package (tvmc compile): mod.so, mod.json
// and mod.params in a .tar, or one self-contained .so.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "anvil/driver/build.h"
#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct CompileOptions {
  std::string model;
  std::string workload;
  std::string output = "module.tar";
  std::string target = "llvm";
  int opt_level = 3;
  std::string input_shapes;
  bool print_pass_times = false;
  std::vector<std::string> dump_after;
  bool print_tir = false;
};

void compile_model(const CompileOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw_error("compile: give either a model file or --workload");
  auto start = std::chrono::steady_clock::now();
  ir::IRModule mod;
  std::vector<std::pair<std::string, Tensor>> params;
  if (!options.workload.empty()) {
    testing::Workload w = testing::workload_by_name(options.workload);
    mod = w.mod;
    params = w.params;
  } else {
    ShapeDict shapes =
        options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
    frontend::ImportedModel model = load_onnx_model(options.model, shapes);
    mod = model.mod;
    params = model.params;
  }
  driver::BuildOptions build_options;
  build_options.target = options.target;
  build_options.pass_context.opt_level = options.opt_level;
  build_options.pass_context.print_pass_times = options.print_pass_times;
  build_options.pass_context.dump_after = options.dump_after;
  build_options.pass_context.dump = [](const std::string& pass, const ir::IRModule& m) {
    std::fprintf(stderr, "// after %s\n%s\n", pass.c_str(), ir::print_module(m).c_str());
  };
  build_options.print_tir = options.print_tir;
  driver::BuiltModule built = driver::build(mod, params, build_options);
  built.export_library(options.output);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "compiled %s at -O%d for %s into %s in %.1f s\n",
               options.model.empty() ? options.workload.c_str() : options.model.c_str(),
               options.opt_level, options.target.c_str(), options.output.c_str(), seconds);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand("compile", "Compile a model into a deployable package");
  cmd->add_option("model", options->model, "the model: an .onnx file");
  cmd->add_option("--workload", options->workload,
                  "compile a built-in network instead (resnet18, resnet50, mlp, mobilenet, ...)");
  cmd->add_option("-o,--output", options->output,
                  "the package: .tar (mod.so, mod.json, mod.params) or .so (default module.tar)");
  cmd->add_option("--target", options->target,
                  "\"llvm\" (host CPU), \"llvm -mcpu=NAME -mattr=+f,-g\" or \"c\" (default llvm)");
  cmd->add_option("-O,--opt-level", options->opt_level, "optimization level 0..3 (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224]\"");
  cmd->add_flag("--print-pass-times", options->print_pass_times,
                "print the time of every graph pass to stderr");
  cmd->add_option("--dump-after", options->dump_after,
                  "print the graph IR after the named pass (or \"all\") to stderr");
  cmd->add_flag("--print-tir", options->print_tir, "print every lowered kernel to stderr");
  cmd->footer(
      "Examples:\n"
      "  anvil compile resnet50.onnx -o resnet50.tar\n"
      "  anvil compile model.onnx -O 1 --input-shapes \"input:[1,3,224,224]\" -o model.so\n"
      "  anvil compile --workload resnet18 --print-pass-times --dump-after FuseOps");
  cmd->callback([options] { compile_model(*options); });
}

}  // namespace anvil::cli
