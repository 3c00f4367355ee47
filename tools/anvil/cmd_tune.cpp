// anvil tune: tvmc's auto-tuner. Finds the model's tasks (its distinct kernels), searches the
// knobs of their schedules by measuring candidates in a worker process (`anvil tune-worker`,
// hidden), and writes one tuning record per measurement for anvil compile --tuning-records.
// `--list-tasks` only prints the tasks.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "anvil/support/error.h"
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
  std::string desired_layout;
  bool list_tasks = false;
  std::string output;
  std::string prior_records;
  int trials = 0;
  double total_time = 0;
  int early_stopping = 0;
  std::string tuner = "xgb";
  double timeout = 10;
  int repeat = 3;
  int number = 1;
  double min_repeat_ms = 10;
  int threads = 0;
  int batch_size = 8;
  uint64_t seed = 1;
  bool quiet = false;
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

// The program to run as the measurement worker: this very binary.
std::string self_path() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw Error("cannot find the anvil binary to run the measurement worker");
  return std::string(buffer, size_t(n));
}

std::string knobs_text(const std::optional<topi::ScheduleConfig>& knobs) {
  if (!knobs) return "default";
  std::string text;
  for (const auto& [name, value] : *knobs)
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text;
}

// The table printed after tuning: per tuned task its default and tuned time, and the model's
// kernel time (calls x time over the tuned tasks) before and after.
void print_summary(const std::vector<tune::TuneTask>& tasks,
                   const std::vector<tune::TaskOutcome>& outcomes, double seconds, int trials) {
  std::printf("\n%-5s %-44s %5s %11s %11s %8s %7s  %s\n", "task", "kernel", "calls", "default ms",
              "tuned ms", "speed-up", "trials", "knobs");
  double before = 0, after = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const tune::TaskOutcome& outcome = outcomes[i];
    if (outcome.trials == 0) continue;
    std::string name = tasks[i].name;
    if (name.size() > 44) name = name.substr(0, 41) + "...";
    const double tuned = outcome.best_ms > 0 ? outcome.best_ms : outcome.default_ms;
    const double speedup = outcome.default_ms > 0 && tuned > 0 ? outcome.default_ms / tuned : 0;
    std::printf("%-5zu %-44s %5d %11.4f %11.4f %7.2fx %7d  %s\n", i + 1, name.c_str(),
                tasks[i].calls, outcome.default_ms, tuned, speedup, outcome.trials,
                knobs_text(outcome.best_knobs).c_str());
    if (outcome.default_ms > 0) {
      before += tasks[i].calls * outcome.default_ms;
      after += tasks[i].calls * tuned;
    }
  }
  std::printf("tuned kernels: %.3f ms -> %.3f ms per inference (%.2fx), %d trials in %.1f s\n",
              before, after, after > 0 ? before / after : 0.0, trials, seconds);
}

void run_tune(const TuneOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("tune", "give either a model file or --workload NAME");
  check_target(options.target);
  if (!options.list_tasks && options.output.empty())
    throw CLI::ValidationError("tune",
                               "give -o/--output FILE for the tuning records (or "
                               "--list-tasks to print the tasks)");
  if (!options.list_tasks && options.target.rfind("llvm", 0) != 0)
    throw CLI::ValidationError("--target",
                               "tuning measures on this machine: give an llvm target, "
                               "not '" +
                                   options.target + "'");
  tune::TuningRunOptions run;
  run.target = options.target;
  run.opt_level = options.opt_level;
  run.desired_layout = options.desired_layout;
  run.list_tasks = options.list_tasks;
  run.records_path = options.output;
  run.prior_records_path = options.prior_records;
  run.tune.tuner = options.tuner;
  run.tune.trials = options.trials;
  run.tune.total_time_s = options.total_time;
  run.tune.early_stopping = options.early_stopping;
  run.tune.batch_size = options.batch_size;
  run.tune.seed = options.seed;
  run.tune.measure.repeat = options.repeat;
  run.tune.measure.number = options.number;
  run.tune.measure.min_repeat_ms = options.min_repeat_ms;
  run.tune.measure.timeout_s = options.timeout;
  run.tune.measure.threads = options.threads;
  if (!options.list_tasks) run.tune.measure.worker_command = {self_path(), "tune-worker"};

  // The tuned tasks are numbered among themselves in the progress lines.
  int tunable = 0;
  std::vector<int> task_number;
  if (!options.quiet) {
    run.tasks_ready = [&](const std::vector<tune::TuneTask>& tasks) {
      task_number.assign(tasks.size(), 0);
      for (size_t i = 0; i < tasks.size(); ++i)
        if (!tasks[i].space.knobs.empty()) task_number[i] = ++tunable;
      std::printf(
          "tuning %d of %zu tasks with the %s tuner%s\n", tunable, tasks.size(),
          options.tuner.c_str(),
          options.trials > 0 ? (", " + std::to_string(options.trials) + " trials").c_str() : "");
    };
    run.progress = [&](const tune::TuneProgress& p) {
      std::printf(
          "[Task %2d/%2d]  Current/Best: %8.2f/%8.2f GFLOPS | Progress: (%d/%lld) | %.2f s%s\n",
          task_number[p.task], tunable, p.current_gflops, p.best_gflops, p.task_trials,
          static_cast<long long>(p.task_space), p.elapsed_s, p.task_done ? " Done." : "");
      std::fflush(stdout);
    };
  }
  tune::TuningRunResult result = tune::run_tuning(
      [&] {
        ModelAndParams loaded =
            load_model_or_workload(options.model, options.input_shapes, options.workload);
        return tune::TuningModel{std::move(loaded.mod), std::move(loaded.params)};
      },
      run);
  if (options.list_tasks) return print_tasks(result.tasks);
  if (!options.quiet) {
    print_summary(result.tasks, result.outcomes, result.seconds, result.trials);
    std::printf("tuning records: %s\n", options.output.c_str());
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto options = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand("tune", "Auto-tune the kernels of a model into tuning records");
  cmd->add_option("model", options->model, "the model: an .onnx file")->check(existing_path());
  cmd->add_option("--workload", options->workload,
                  "a built-in network instead (resnet18, resnet50, mlp, mobilenet, ...)");
  cmd->add_option("-o,--output", options->output,
                  "the tuning records file to write (JSON lines, one per measurement)");
  cmd->add_option("--target", options->target,
                  "\"llvm\" (host CPU) or \"llvm -mcpu=NAME -mattr=+f,-g\" (default llvm)");
  cmd->add_option("-O,--opt-level", options->opt_level, "optimization level 0..3 (default 3)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes, e.g. \"data:[1,3,224,224] mask:[1,10]\"");
  cmd->add_option("--desired-layout", options->desired_layout,
                  "the convolution layout to tune for, as anvil compile's (NCHW or NHWC)")
      ->check(CLI::IsMember({"NCHW", "NHWC"}));
  cmd->add_option("--trials", options->trials,
                  "measurements in all, spread over the tasks (default: until every config is "
                  "measured or --total-time is spent)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--total-time", options->total_time,
                  "seconds to tune for; no batch starts after that (default: no limit)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--early-stopping", options->early_stopping,
                  "leave a task after this many trials without a better config (default: never)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--tuner", options->tuner,
                  "xgb (a cost model ranks the candidates), ga, random or grid (default xgb)")
      ->check(CLI::IsMember({"xgb", "ga", "random", "grid"}));
  cmd->add_option("--prior-records", options->prior_records,
                  "records of an earlier run: what they measured is not measured again")
      ->check(existing_path());
  cmd->add_option("--timeout", options->timeout,
                  "seconds a candidate may take to compile or to run before it counts as hung "
                  "(default 10)")
      ->check(CLI::Range(0.1, 1e6));
  cmd->add_option("--repeat", options->repeat, "timed repeats per candidate (default 3)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option(
         "--number", options->number,
         "kernel calls per repeat, raised until a repeat lasts --min-repeat-ms (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--min-repeat-ms", options->min_repeat_ms,
                  "least milliseconds one repeat lasts (default 10)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--threads", options->threads,
                  "threads the kernels run on while measured (default: all cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--batch-size", options->batch_size,
                  "candidates compiled together and measured one after another (default 8)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--seed", options->seed, "seed of the search's random choices (default 1)");
  cmd->add_flag("-q,--quiet", options->quiet, "print nothing but errors");
  cmd->add_flag("--list-tasks", options->list_tasks,
                "print the tuning tasks (distinct kernels, their FLOPs and weight, the knobs of "
                "their schedules) and exit");
  cmd->footer(
      "Examples:\n"
      "  anvil tune resnet50.onnx -o records.json --trials 400\n"
      "  anvil tune resnet50.onnx -o records.json --total-time 600 --early-stopping 64\n"
      "  anvil tune resnet50.onnx -o more.json --prior-records records.json --trials 200\n"
      "  anvil compile resnet50.onnx --tuning-records records.json -o tuned.tar\n"
      "  anvil tune resnet50.onnx --list-tasks");
  cmd->callback([options] { run_tune(*options); });

  // The measurement worker the tuner starts: requests on stdin, results on stdout.
  auto* worker = app.add_subcommand("tune-worker", "");
  worker->group("");
  worker->callback([] { std::exit(tune::run_measure_worker(0, 1)); });
}

}  // namespace anvil::cli
