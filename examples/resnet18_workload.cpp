// The TVM quick-start, in C++: the built-in ResNet-18 workload is built at opt level 3, run
// on a seeded input, exported as a package, loaded back and run again; both runs must agree.
//
//   resnet18_workload [OUT_DIR]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "anvil/driver/build.h"
#include "anvil/runtime/package.h"
#include "anvil/testing/workloads.h"

int main(int argc, char** argv) try {
  namespace fs = std::filesystem;
  fs::path out_dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "anvil-example-a";
  fs::create_directories(out_dir);

  // 1. The network as typed graph IR plus its parameters.
  anvil::testing::Workload workload = anvil::testing::resnet(18);

  // 2. build(mod, target="llvm", params, opt_level=3).
  anvil::driver::BuildOptions options;
  options.target = "llvm";
  options.pass_context.opt_level = 3;
  anvil::driver::BuiltModule built = anvil::driver::build(workload.mod, workload.params, options);

  // 3. Run it with the graph executor on a seeded input.
  anvil::Tensor input = anvil::Tensor::empty({1, 3, 224, 224}, anvil::DataType::float32());
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int64_t i = 0; i < input.numel(); ++i) input.data_as<float>()[i] = normal(rng);
  anvil::GraphExecutor executor = built.create_executor();
  executor.set_input("data", input);
  executor.run();
  anvil::Tensor first = executor.get_output(0).copy();

  // 4. Export, load elsewhere (here: the same process), run again.
  std::string package_path = (out_dir / "resnet18.tar").string();
  built.export_library(package_path);
  anvil::Package package = anvil::load_module(package_path);
  anvil::GraphExecutor loaded = package.create_executor();
  loaded.set_input("data", input);
  loaded.run();
  anvil::Tensor second = loaded.get_output(0);

  double max_diff = 0;
  int64_t best = 0;
  for (int64_t i = 0; i < first.numel(); ++i) {
    max_diff = std::max(max_diff,
                        double(std::fabs(first.data_as<float>()[i] - second.data_as<float>()[i])));
    if (first.data_as<float>()[i] > first.data_as<float>()[best]) best = i;
  }
  std::printf("output %s, top-1 class %lld, max |in-memory - loaded| = %g\n",
              anvil::shape_to_string(first.shape()).c_str(), (long long)best, max_diff);
  if (max_diff > 1e-5) {
    std::fprintf(stderr, "the loaded package disagrees with the in-memory build\n");
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "resnet18_workload: %s\n", e.what());
  return 1;
}
