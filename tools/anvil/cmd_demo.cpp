// anvil demo: the main job on a built-in network. Builds the ResNet-18 workload as typed
// graph IR, compiles it at opt level 3, exports and reloads the package, runs it on a seeded
// input, and shows the top-5 classes, the latency and the agreement with the reference
// executor.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

#include "anvil/driver/build.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/testing/workloads.h"
#include "commands.h"

namespace anvil::cli {
namespace {

struct DemoOptions {
  std::string workload = "resnet18";
  std::string out_dir = "anvil-demo";
};

// The first lines of the module's text, enough to show what the IR looks like.
void print_ir_excerpt(const ir::IRModule& mod, size_t lines) {
  std::istringstream text(ir::print_module(mod));
  std::string line;
  for (size_t i = 0; i < lines && std::getline(text, line); ++i) {
    if (line.size() > 160) line = line.substr(0, 157) + "...";
    std::printf("  %s\n", line.c_str());
  }
  std::printf("  ...\n");
}

Tensor seeded_input(const ir::Function& main) {
  const auto* type = ir::as<ir::TensorTypeNode>(main->params[0]->annotation);
  std::vector<int64_t> shape = *type->static_shape();
  Tensor input = Tensor::empty(shape, type->dtype);
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = 0; i < input.numel(); ++i) input.set_from_double(i, normal(rng));
  return input;
}

std::vector<std::pair<double, int64_t>> top5(const Tensor& scores) {
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t i = 0; i < scores.numel(); ++i) ranked.emplace_back(scores.get_as_double(i), i);
  std::partial_sort(ranked.begin(), ranked.begin() + 5, ranked.end(), std::greater<>());
  ranked.resize(5);
  return ranked;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_demo(const DemoOptions& options) {
  namespace fs = std::filesystem;
  std::printf("== 1. build the %s workload as typed graph IR\n", options.workload.c_str());
  testing::Workload w = testing::workload_by_name(options.workload);
  ir::Function main = w.mod.get_function("main");
  std::printf("%zu parameters, %lld values\n", w.params.size(), (long long)w.parameter_count());
  print_ir_excerpt(w.mod, 6);

  std::printf("\n== 2. compile it at opt level 3 for this CPU\n");
  auto start = std::chrono::steady_clock::now();
  driver::BuiltModule built = driver::build(w.mod, w.params);
  std::printf("compiled in %.1f s\n", seconds_since(start));
  fs::create_directories(options.out_dir);
  fs::path package_path = fs::path(options.out_dir) / (options.workload + ".tar");
  built.export_library(package_path.string());
  std::printf("package %s (mod.so, mod.json, mod.params)\n", package_path.c_str());

  std::printf("\n== 3. load the package and run it on a seeded input\n");
  Tensor input = seeded_input(main);
  fs::path input_path = fs::path(options.out_dir) / "input.npz";
  write_npz(input_path, {{"data", input}}, /*compress=*/true);
  Package package = load_module(package_path.string());
  GraphExecutor executor = package.create_executor();
  executor.set_input("data", input);
  executor.run();
  Tensor scores = executor.get_output(0).copy();
  std::printf("top-5 classes of output 0 %s:\n", shape_to_string(scores.shape()).c_str());
  for (const auto& [score, index] : top5(scores))
    std::printf("  class %4lld  score %.6f\n", (long long)index, score);
  BenchmarkResult timing = executor.benchmark(10, 1);
  std::printf("latency: median %.2f ms, min %.2f ms over 10 runs (%d threads)\n", timing.median_ms,
              timing.min_ms, anvil::num_threads());
  fs::path output_path = fs::path(options.out_dir) / "output.npz";
  write_npz(output_path, {{"output_0", scores}}, /*compress=*/false);

  std::printf("\n== 4. check against the reference executor\n");
  std::vector<Tensor> args{input};
  for (const auto& [name, tensor] : w.params) args.push_back(tensor);
  start = std::chrono::steady_clock::now();
  Tensor expected = reference::Interpreter(w.mod).run(args).at(0);
  double max_diff = 0;
  for (int64_t i = 0; i < scores.numel(); ++i)
    max_diff = std::max(max_diff, std::abs(scores.get_as_double(i) - expected.get_as_double(i)));
  bool same_top1 = top5(scores)[0].second == top5(expected)[0].second;
  std::printf("reference executor: %.2f s; max |difference| %.3g; same top-1: %s\n",
              seconds_since(start), max_diff, same_top1 ? "yes" : "no");
  std::printf("files: %s, %s, %s\n", package_path.c_str(), input_path.c_str(), output_path.c_str());
  if (!same_top1) throw_error("demo: the compiled model disagrees with the reference executor");
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "Run anvil's main job on a built-in network");
  cmd->add_option("--workload", options->workload, "the built-in network (default resnet18)");
  cmd->add_option("--out-dir", options->out_dir,
                  "where the demo writes its files (default anvil-demo)");
  cmd->footer(
      "Examples:\n"
      "  anvil demo\n"
      "  anvil demo --workload mlp --out-dir /tmp/anvil-demo");
  cmd->callback([options] { run_demo(*options); });
}

}  // namespace anvil::cli
