// Winograd F(4x4, 3x3) against the direct blocked convolution (docs/winograd.md).
//
// Layers: each 3x3 stride-1 layer of ResNet-18/50 (batch 1, bias + relu fused) compiled both
// ways through lower_primitive (the schedules the compiler picks), run interleaved (direct,
// Winograd, direct, ...) so that a noisy neighbour hits both alike; median, min and max of the
// runs, and the Winograd output's largest difference from the direct one.
//
// Models (--models): resnet18 / resnet50 built at -O3 with and without the WinogradConv2D pass,
// the same input through both; the largest absolute difference of the outputs, relative to the
// largest output magnitude, and the run times, interleaved.
//
//   build/winograd_bench [--threads 1,2] [--repeat 21] [--layer C,H,O ...] [--models 1]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/driver/build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/winograd.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/testing/workloads.h"
#include "anvil/tir/transform.h"
#include "bench_util.h"

namespace {

using namespace anvil;

struct Layer {
  int64_t channels, size, out_channels;
};

// The 3x3 stride-1 layers of ResNet-18 and ResNet-50 (the same four shapes in both).
const std::vector<Layer> kResNetLayers = {
    {64, 56, 64}, {128, 28, 128}, {256, 14, 256}, {512, 7, 512}};

constexpr int64_t kBlock = 16;

using bench::random_tensor;
using bench::tensor_type;

// conv(data, weight) + bias, relu, compiled with the schedule the compiler picks.
PackedFunc compile_layer(const std::string& op, const std::vector<int64_t>& data_shape,
                         const std::vector<int64_t>& weight_shape,
                         const std::vector<int64_t>& bias_shape, const std::string& kernel_layout) {
  ir::Var data = ir::VarNode::make("data", tensor_type(data_shape));
  ir::Var weight = ir::VarNode::make("weight", tensor_type(weight_shape));
  ir::Var bias = ir::VarNode::make("bias", tensor_type(bias_shape));
  const std::string layout = "NCHW" + std::to_string(kBlock) + "c";
  ir::Attrs attrs = ir::make_op_attrs(op, {{"padding", std::vector<int64_t>{1, 1, 1, 1}},
                                           {"kernel_size", std::vector<int64_t>{3, 3}},
                                           {"data_layout", layout},
                                           {"kernel_layout", kernel_layout},
                                           {"out_layout", layout}});
  ir::Expr body =
      ir::call_op("nn.relu", {ir::call_op("add", {ir::call_op(op, {data, weight}, attrs), bias})});
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make({data, weight, bias}, body));
  ir::Function fn = ir::infer_type(mod).get_function("main");
  Module module =
      codegen::jit_compile({tir::transform::lower(lower::lower_primitive(fn, "layer"))});
  return module.function("layer");
}

double seconds_of(const std::function<void()>& run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Stats {
  double median, low, high;
};

Stats stats(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front(), times.back()};
}

// Largest |a - b| over the largest |a|.
double relative_difference(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::fabs(a.get_as_double(i) - b.get_as_double(i)));
    scale = std::max(scale, std::fabs(a.get_as_double(i)));
  }
  return diff / std::max(scale, 1e-30);
}

void bench_layer(const Layer& l, int repeat, std::mt19937& rng) {
  const int64_t b = kBlock, c = l.channels, o = l.out_channels, n = l.size;
  std::vector<int64_t> data_shape = {1, c / b, n, n, b};
  std::vector<int64_t> weight_shape = {o / b, c / b, 3, 3, b, b};
  std::vector<int64_t> bias_shape = {o / b, 1, 1, b};
  std::vector<int64_t> out_shape = {1, o / b, n, n, b};
  const std::string direct_layout = "OIHW" + std::to_string(b) + "i" + std::to_string(b) + "o";
  PackedFunc direct =
      compile_layer("nn.contrib_conv2d_NCHWc", data_shape, weight_shape, bias_shape, direct_layout);
  PackedFunc winograd = compile_layer("nn.contrib_conv2d_winograd_NCHWc", data_shape,
                                      {6, 6, o / b, c, b}, bias_shape, "HWOI16o");
  Tensor data = random_tensor(data_shape, rng), weight = random_tensor(weight_shape, rng);
  Tensor bias = random_tensor(bias_shape, rng);
  Tensor direct_out = Tensor::zeros(out_shape, DataType::float32());
  Tensor winograd_out = Tensor::zeros(out_shape, DataType::float32());
  std::vector<Value> direct_args = {data, weight, bias, direct_out};
  std::vector<Value> winograd_args = {data, winograd::transform_weight(weight), bias, winograd_out};
  direct.call(direct_args);  // warm-up
  winograd.call(winograd_args);
  std::vector<double> direct_times, winograd_times;
  for (int r = 0; r < repeat; ++r) {
    direct_times.push_back(seconds_of([&] { direct.call(direct_args); }));
    winograd_times.push_back(seconds_of([&] { winograd.call(winograd_args); }));
  }
  Stats d = stats(direct_times), w = stats(winograd_times);
  const double gflop = 2.0 * o * n * n * c * 9 * 1e-9;
  std::printf(
      "  %4lld -> %4lld @ %3lldx%-3lld direct %7.3f ms [%7.3f, %7.3f] %6.1f GFLOP/s | winograd "
      "%7.3f ms [%7.3f, %7.3f] %6.1f GFLOP/s eq. | speedup %.2fx | max rel diff %.1e\n",
      (long long)c, (long long)o, (long long)n, (long long)n, d.median * 1e3, d.low * 1e3,
      d.high * 1e3, gflop / d.median, w.median * 1e3, w.low * 1e3, w.high * 1e3, gflop / w.median,
      d.median / w.median, relative_difference(direct_out, winograd_out));
}

void bench_model(const std::string& name, int repeat) {
  testing::Workload w = name == "resnet50" ? testing::resnet(50) : testing::resnet(18);
  driver::BuildOptions with, without;
  with.pass_context.opt_level = 3;
  without.pass_context.opt_level = 3;
  without.pass_context.disabled_passes = {"WinogradConv2D"};
  GraphExecutor on = driver::build(w.mod, w.params, with).create_executor();
  GraphExecutor off = driver::build(w.mod, w.params, without).create_executor();
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  Tensor input = Tensor::zeros({1, 3, 224, 224}, DataType::float32());
  float* p = static_cast<float*>(input.data());
  for (int64_t i = 0; i < input.numel(); ++i) p[i] = normal(rng);
  on.set_input("data", input);
  off.set_input("data", input);
  on.run();
  off.run();
  Tensor a = off.get_output(0).copy(), b = on.get_output(0).copy();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::fabs(a.get_as_double(i) - b.get_as_double(i)));
    scale = std::max(scale, std::fabs(a.get_as_double(i)));
  }
  std::vector<double> off_times, on_times;
  for (int r = 0; r < repeat; ++r) {
    off_times.push_back(seconds_of([&] { off.run(); }));
    on_times.push_back(seconds_of([&] { on.run(); }));
  }
  Stats d = stats(off_times), s = stats(on_times);
  std::printf(
      "  %s: without %7.2f ms [%7.2f, %7.2f] | with %7.2f ms [%7.2f, %7.2f] | speedup %.2fx | "
      "output max abs diff %.2e, relative to max |output| %.2e\n",
      name.c_str(), d.median * 1e3, d.low * 1e3, d.high * 1e3, s.median * 1e3, s.low * 1e3,
      s.high * 1e3, d.median / s.median, diff, diff / std::max(scale, 1e-30));
}

std::vector<int> parse_ints(std::string text) {
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<int> values;
  for (int v; in >> v;) values.push_back(v);
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads = {1, 2};
  int repeat = 21;
  bool models = false;
  std::vector<Layer> layers;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") {
      threads = parse_ints(value);
    } else if (flag == "--repeat") {
      repeat = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--models") {
      models = value != "0";
    } else if (flag == "--layer") {
      std::vector<int> v = parse_ints(value);
      if (v.size() != 3 || v[0] % kBlock || v[2] % kBlock) {
        std::fprintf(stderr, "winograd_bench: --layer wants C,H,O with C and O multiples of 16\n");
        return 2;
      }
      layers.push_back({v[0], v[1], v[2]});
    } else {
      std::fprintf(stderr, "winograd_bench: unknown flag '%s'\n", flag.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "winograd_bench: flag '%s' needs a value\n", argv[argc - 1]);
    return 2;
  }
  if (layers.empty()) layers = kResNetLayers;
  try {
    std::mt19937 rng(0);
    for (int t : threads) {
      set_num_threads(t);
      std::printf("%d thread(s), median of %d interleaved runs [min, max]\n", t, repeat);
      if (models) {
        for (const char* name : {"resnet18", "resnet50"}) bench_model(name, repeat);
      } else {
        for (const Layer& l : layers) bench_layer(l, repeat, rng);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "winograd_bench: %s\n", e.what());
    return 1;
  }
}
