// anvil demo: the main job on a built-in network. Builds the ResNet-18
// workload as typed graph IR, saves its parameters (TVM params format) and a
// seeded input (.npz), runs it, and shows the top-5 classes and the files.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/params.h"
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

void run_demo(const DemoOptions& options) {
  namespace fs = std::filesystem;
  std::printf("== 1. build the %s workload as typed graph IR\n", options.workload.c_str());
  testing::Workload w = testing::workload_by_name(options.workload);
  ir::Function main = w.mod.get_function("main");
  std::printf("%zu parameters, %lld values\n", w.params.size(), (long long)w.parameter_count());
  print_ir_excerpt(w.mod, 6);

  std::printf("\n== 2. save the parameters and a seeded input\n");
  fs::create_directories(options.out_dir);
  fs::path params_path = fs::path(options.out_dir) / (options.workload + ".params");
  fs::path input_path = fs::path(options.out_dir) / "input.npz";
  Tensor input = seeded_input(main);
  write_params_file(params_path, w.params);
  write_npz(input_path, {{"data", input}}, /*compress=*/true);
  print_tensor_file_summary(input_path.string());
  std::printf("%s: %zu tensors in the TVM params format\n", params_path.c_str(), w.params.size());

  std::printf("\n== 3. run it with the reference executor\n");
  std::vector<Tensor> args{input};
  for (const auto& [name, tensor] : read_params_file(params_path)) args.push_back(tensor);
  auto start = std::chrono::steady_clock::now();
  reference::Interpreter interpreter(w.mod);
  Tensor scores = interpreter.run(args).at(0);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t i = 0; i < scores.numel(); ++i) ranked.emplace_back(scores.get_as_double(i), i);
  std::partial_sort(ranked.begin(), ranked.begin() + 5, ranked.end(), std::greater<>());
  std::printf("top-5 classes of output 0 %s:\n", shape_to_string(scores.shape()).c_str());
  for (int k = 0; k < 5; ++k)
    std::printf("  class %4lld  score %.6f\n", (long long)ranked[size_t(k)].second,
                ranked[size_t(k)].first);
  std::printf("reference executor: %.2f s\n", seconds);
  fs::path output_path = fs::path(options.out_dir) / "output.npz";
  write_npz(output_path, {{"output_0", scores}}, /*compress=*/false);
  print_tensor_file_summary(output_path.string());
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
