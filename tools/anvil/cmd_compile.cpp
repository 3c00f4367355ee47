// anvil compile MODEL.onnx: builds a model into a package (tvmc compile): mod.so, mod.json
// and mod.params in a .tar, or one self-contained .so.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "anvil/driver/apply_records.h"
#include "anvil/driver/build.h"
#include "anvil/driver/tuning_records.h"
#include "anvil/driver/vm_build.h"
#include "anvil/ir/printer.h"
#include "anvil/lower/lower.h"
#include "anvil/support/error.h"
#include "commands.h"
#include "model_loading.h"
#include "progress.h"

namespace anvil::cli {
namespace {

struct CompileOptions {
  std::string model;
  std::string workload;
  std::string output = "module.tar";
  std::string target = "llvm";
  int opt_level = 3;
  std::string input_shapes;
  std::string tuning_records;
  bool strict_records = false;
  std::string desired_layout;
  std::string precision;
  std::vector<std::string> disabled_passes;
  std::vector<std::string> pass_config;
  std::vector<std::string> dump_code;
  std::string cross_compiler = "cc";
  bool print_pass_times = false;
  std::vector<std::string> dump_after;
  bool print_tir = false;
  bool quiet = false;
  bool json = false;
  std::string executor = "auto";
};

const std::vector<std::string> kDumpFormats = {"relay", "tir", "ll", "asm", "c", "vm"};

// The file a --dump-code stage goes to, beside the package (tvmc: module.tar.ll).
std::string dump_path(const std::string& output, const std::string& format) {
  return output + "." + (format == "asm" ? std::string("s") : format);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw_error("cannot write '", path, "'");
  out << text;
  if (!out) throw_error("cannot write '", path, "'");
}

// Checks the flags that name things before anything slow happens.
void validate(const CompileOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("compile", "give either a model file or --workload NAME");
  for (const std::string& pass : options.disabled_passes) {
    bool known = false;
    for (const std::string& name : driver::pass_names()) known |= name == pass;
    if (!known) {
      std::string list;
      for (const std::string& name : driver::pass_names())
        list += (list.empty() ? "" : ", ") + name;
      throw CLI::ValidationError("--disabled-pass",
                                 "unknown pass '" + pass + "' (known: " + list + ")");
    }
  }
  for (const std::string& entry : options.pass_config)
    if (entry.find('=') == std::string::npos || entry.front() == '=')
      throw CLI::ValidationError("--pass-config", "'" + entry + "' is not of the form key=value");
  for (const std::string& format : options.dump_code) {
    if (std::find(kDumpFormats.begin(), kDumpFormats.end(), format) == kDumpFormats.end())
      throw CLI::ValidationError(
          "--dump-code", "unknown stage '" + format + "' (expected relay, tir, ll, asm, c or vm)");
    if (options.target.rfind("c", 0) == 0 && options.target.rfind("llvm", 0) != 0 &&
        (format == "ll" || format == "asm"))
      throw CLI::ValidationError(
          "--dump-code",
          "stage '" + format + "' needs an llvm target, not '" + options.target + "'");
  }
  check_target(options.target);
}

std::string source_of(const CompileOptions& options) {
  return options.model.empty() ? options.workload : options.model;
}

void compile_model(const CompileOptions& options) {
  validate(options);
  auto start = std::chrono::steady_clock::now();
  driver::TuningRecordsApplier records(options.tuning_records, options.target,
                                       options.strict_records);
  auto [mod, params] =
      load_model_or_workload(options.model, options.input_shapes, options.workload);
  driver::BuildOptions build_options;
  records.install(build_options);
  build_options.target = options.target;
  transform::PassContext& ctx = build_options.pass_context;
  ctx.opt_level = options.opt_level;
  ctx.disabled_passes = options.disabled_passes;
  for (const std::string& entry : options.pass_config) {
    size_t eq = entry.find('=');
    ctx.config[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (!options.desired_layout.empty()) ctx.config["relay.desired_layout"] = options.desired_layout;
  if (!options.precision.empty()) ctx.config["anvil.precision"] = options.precision;
  ctx.print_pass_times = options.print_pass_times;
  ctx.dump_after = options.dump_after;
  ctx.dump = [](const std::string& pass, const ir::IRModule& m) {
    std::fprintf(stderr, "// after %s\n%s\n", pass.c_str(), ir::print_module(m).c_str());
  };
  build_options.print_tir = options.print_tir;
  ProgressBar progress(!options.quiet && !options.json);
  build_options.progress = [&progress](const std::string& phase, int done, int total) {
    progress.update(phase == "lower" ? "lowering kernels" : "generating code", done, total);
  };
  const std::string precision = driver::build_precision(build_options);
  std::string executor = options.executor;
  if (executor == "auto") executor = driver::pick_executor(mod, params, build_options);
  std::vector<std::string> dumped;
  if (executor == "vm") {
    for (const std::string& format : options.dump_code)
      if (format != "vm")
        throw CLI::ValidationError(
            "--dump-code", "stage '" + format + "' needs a graph package; '" + source_of(options) +
                               "' compiles for the VM (use --dump-code vm)");
    driver::VmModule built = driver::build_vm(mod, params, build_options);
    progress.finish();
    // The bytecode is written first: it shows why an executable cannot be saved.
    for (const std::string& format : options.dump_code) {
      dumped.push_back(dump_path(options.output, format));
      write_text(dumped.back(), built.print_bytecode());
    }
    built.export_library(options.output, options.cross_compiler);
  } else {
    driver::BuiltModule built = driver::build(mod, params, build_options);
    progress.finish();
    for (const std::string& kernel : driver::heavy_generic_kernels(built.graph_json()))
      std::fprintf(stderr, "warning: %s is heavy and runs the generic schedule\n", kernel.c_str());
    built.export_library(options.output, options.cross_compiler);
    for (const std::string& format : options.dump_code) {
      if (format == "vm")
        throw CLI::ValidationError("--dump-code", "stage 'vm' needs a VM package; '" +
                                                      source_of(options) +
                                                      "' compiles for the graph executor");
      dumped.push_back(dump_path(options.output, format));
      write_text(dumped.back(), built.get_source(format));
    }
  }
  records.finish();
  for (const std::string& problem : records.problems())
    std::fprintf(stderr, "warning: %s\n", problem.c_str());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string source = source_of(options);
  if (options.json) {
    nlohmann::json summary = {{"model", source},
                              {"output", options.output},
                              {"target", options.target},
                              {"opt_level", options.opt_level},
                              {"precision", precision},
                              {"executor", executor},
                              {"seconds", seconds},
                              {"dumped", dumped},
                              {"tuning_records", records.read()},
                              {"tuned_kernels", records.applied()},
                              {"default_kept_kernels", records.kept_default()}};
    std::printf("%s\n", summary.dump().c_str());
  } else if (!options.quiet) {
    std::fprintf(stderr, "compiled %s at -O%d in %s for %s into %s (%s package) in %.1f s\n",
                 source.c_str(), options.opt_level, precision.c_str(), options.target.c_str(),
                 options.output.c_str(), executor.c_str(), seconds);
    if (!options.tuning_records.empty())
      std::fprintf(stderr,
                   "applied tuning records from %s to %d kernels, kept the default schedule of %d "
                   "that measured fastest (%zu records read)\n",
                   options.tuning_records.c_str(), records.applied(), records.kept_default(),
                   records.read());
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto options = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand("compile", "Compile a model into a deployable package");
  cmd->add_option("model", options->model, "the model: an .onnx file")->check(existing_path());
  cmd->add_option("--workload", options->workload,
                  "compile a built-in network instead (resnet18, resnet50, mlp, mobilenet, ...)");
  cmd->add_option("-o,--output", options->output,
                  "the package: .tar (mod.so, mod.json, mod.params) or .so (default module.tar)");
  cmd->add_option("--target", options->target,
                  "\"llvm\" (host CPU), \"llvm -mcpu=NAME -mattr=+f,-g\" or \"c\" (default llvm)");
  cmd->add_option("-O,--opt-level", options->opt_level, "optimization level 0..3 (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224] mask:[1,10]\"");
  cmd->add_option("--tuning-records", options->tuning_records,
                  "tuning records (JSON lines) from anvil tune: the best record of each task "
                  "sets its kernel's schedule knobs")
      ->check(existing_path());
  cmd->add_flag("--strict-records", options->strict_records,
                "a tuning record that cannot be applied (bad line, other target, unknown task, "
                "knobs outside the space) is an error instead of a warning");
  cmd->add_option("--desired-layout", options->desired_layout,
                  "convert 2-D convolutions to this data layout: NCHW or NHWC")
      ->check(CLI::IsMember({"NCHW", "NHWC"}));
  cmd->add_option("--precision", options->precision,
                  "the precision of convolutions and matrix products: fp32 (default, exact), "
                  "bf16 (bfloat16 operands, float32 sums) or auto (bf16 where the target has a "
                  "bf16 dot-product unit)")
      ->check(CLI::IsMember({"fp32", "bf16", "auto"}));
  cmd->add_option("--disabled-pass", options->disabled_passes,
                  "graph passes not to run, comma-separated (e.g. FoldScaleAxis,AlterOpLayout)")
      ->delimiter(',');
  cmd->add_option("--pass-config", options->pass_config,
                  "a pass setting key=value (repeatable), e.g. relay.FuseOps.max_depth=8");
  cmd->add_option("--dump-code", options->dump_code,
                  "write these stages beside the package, comma-separated: relay, tir, ll, asm, c "
                  "(graph packages) or vm (the bytecode of a VM package)")
      ->delimiter(',');
  cmd->add_option("--cross-compiler", options->cross_compiler,
                  "the C compiler driver that links the kernel library (default cc)");
  cmd->add_option("--executor", options->executor,
                  "the package's executor: auto (default: graph when every shape is static, else "
                  "vm), graph or vm")
      ->check(CLI::IsMember({"auto", "graph", "vm"}));
  cmd->add_flag("--print-pass-times", options->print_pass_times,
                "print the time of every graph pass to stderr");
  cmd->add_option("--dump-after", options->dump_after,
                  "print the graph IR after the named pass (or \"all\") to stderr");
  cmd->add_flag("--print-tir", options->print_tir, "print every lowered kernel to stderr");
  cmd->add_flag("-q,--quiet", options->quiet, "print nothing but errors");
  cmd->add_flag("--json", options->json, "print a one-line JSON summary on stdout");
  cmd->footer(
      "Examples:\n"
      "  anvil compile resnet50.onnx -o resnet50.tar\n"
      "  anvil compile model.onnx -O 1 --input-shapes \"input:[1,3,224,224]\" -o model.so\n"
      "  anvil compile resnet50.onnx --dump-code relay,asm --disabled-pass AlterOpLayout\n"
      "  anvil compile --workload resnet18 --print-pass-times --dump-after FuseOps");
  cmd->callback([options] { compile_model(*options); });
}

}  // namespace anvil::cli
