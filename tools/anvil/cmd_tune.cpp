// anvil tune: tvmc's auto-tuner. `--list-tasks` prints the model's tuning tasks (its distinct
// kernels, their work, their weight and the knobs their schedules offer); the search itself
// is not available yet, and the command says so instead of pretending to tune.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "anvil/tune/tune.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct TuneOptions {
  std::string model;
  std::string workload;
  std::string input_shapes;
  std::string target = "llvm";
  int opt_level = 3;
  bool list_tasks = false;
};

void print_tasks(const std::vector<tune::TuneTask>& tasks) {
  int64_t total_flops = 0;
  for (const tune::TuneTask& task : tasks) total_flops += task.flops * task.calls;
  std::printf("%-5s %-16s %6s %10s %7s %-20s %8s  %s\n", "task", "key", "calls", "MFLOP", "share",
              "strategy", "configs", "kernel");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const tune::TuneTask& task = tasks[i];
    const double share =
        total_flops > 0 ? 100.0 * double(task.flops * task.calls) / double(total_flops) : 0.0;
    std::printf("%-5zu %-16s %6d %10.2f %6.1f%% %-20s %8lld  %s\n", i + 1, task.key.c_str(),
                task.calls, double(task.flops) / 1e6, share,
                task.space.strategy.empty() ? "generic" : task.space.strategy.c_str(),
                static_cast<long long>(task.space_size()), task.name.c_str());
  }
  std::printf("knobs:\n");
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].space.knobs.empty()) continue;
    std::string text;
    for (const auto& [name, values] : tasks[i].space.knobs) {
      text += (text.empty() ? "" : "  ") + name + " {";
      for (size_t v = 0; v < values.size(); ++v)
        text += (v ? ", " : "") + std::to_string(values[v]);
      text += "}";
    }
    std::printf("  %zu: %s\n", i + 1, text.c_str());
  }
}

void run_tune(const TuneOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("tune", "give either a model file or --workload NAME");
  check_target(options.target);
  if (!options.list_tasks)
    throw CLI::ValidationError("tune",
                               "the search is not available yet; --list-tasks lists the model's "
                               "tuning tasks, and anvil compile runs without --tuning-records");
  auto [mod, params] =
      load_model_or_workload(options.model, options.input_shapes, options.workload);
  driver::BuildOptions build_options;
  build_options.target = options.target;
  build_options.pass_context.opt_level = options.opt_level;
  print_tasks(tune::extract_tasks(mod, params, build_options));
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto options = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand("tune", "Auto-tune the kernels of a model (--list-tasks for now)");
  cmd->add_option("model", options->model, "the model: an .onnx file")->check(existing_path());
  cmd->add_option("--workload", options->workload,
                  "a built-in network instead (resnet18, resnet50, mlp, mobilenet, ...)");
  cmd->add_option("--target", options->target,
                  "\"llvm\" (host CPU), \"llvm -mcpu=NAME -mattr=+f,-g\" or \"c\" (default llvm)");
  cmd->add_option("-O,--opt-level", options->opt_level, "optimization level 0..3 (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224] mask:[1,10]\"");
  cmd->add_flag("--list-tasks", options->list_tasks,
                "print the tuning tasks (distinct kernels, their FLOPs and weight, the knobs of "
                "their schedules) and exit");
  cmd->footer(
      "Examples:\n"
      "  anvil tune resnet50.onnx --list-tasks\n"
      "  anvil tune --workload resnet18 --list-tasks -O 3");
  cmd->callback([options] { run_tune(*options); });
}

}  // namespace anvil::cli
