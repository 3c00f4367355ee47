// One convolution layer in the blocked layout (nn.contrib_conv2d_NCHWc, optionally followed by
// a per-channel bias add and relu as the layout pass and fusion leave them) compiled through
// lower_primitive, i.e. with the schedule the compiler picks for it, and timed.
//
//   build/conv_bench [--threads 2] [--repeat 20] [--epilogue 1] [--print-ir]
//                    [--config knob=value,...]   (the strategy's knobs; default: its heuristic)
//                    [--layer C,H,W,O,K,stride,pad[,groups] ...]   (default: ResNet-50 layers)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "bench_util.h"

namespace {

using namespace anvil;

struct Layer {
  int64_t channels, height, width, out_channels, kernel, stride, pad;
  int64_t groups = 1;  // channels: depthwise
};

// The layers ResNet-50 spends its time in (batch 1).
const std::vector<Layer> kResNet50Layers = {
    {64, 56, 56, 64, 3, 1, 1},    {64, 56, 56, 256, 1, 1, 0},  {256, 56, 56, 64, 1, 1, 0},
    {128, 28, 28, 128, 3, 1, 1},  {512, 28, 28, 128, 1, 1, 0}, {256, 14, 14, 256, 3, 1, 1},
    {1024, 14, 14, 256, 1, 1, 0}, {512, 7, 7, 512, 3, 1, 1},   {512, 7, 7, 2048, 1, 1, 0},
};

int64_t block_of(int64_t channels) {
  for (int64_t b : {16, 8, 4, 2})
    if (channels % b == 0) return b;
  return 1;
}

using bench::random_tensor;
using bench::tensor_type;

double run_layer(const Layer& l, int repeat, bool epilogue, bool print_ir,
                 const lower::KnobConfig* config, std::mt19937& rng) {
  const int64_t ib = block_of(l.channels), ob = block_of(l.out_channels);
  // Depthwise weights hold one input channel per group.
  const int64_t kernel_ib = l.groups > 1 ? 1 : ib;
  std::vector<int64_t> data_shape = {1, l.channels / ib, l.height, l.width, ib};
  std::vector<int64_t> weight_shape = {
      l.out_channels / ob, l.channels / l.groups / kernel_ib, l.kernel, l.kernel, kernel_ib, ob};
  const int64_t oh = (l.height + 2 * l.pad - l.kernel) / l.stride + 1;
  const int64_t ow = (l.width + 2 * l.pad - l.kernel) / l.stride + 1;
  std::vector<int64_t> bias_shape = {l.out_channels / ob, 1, 1, ob};
  ir::Var data = ir::VarNode::make("data", tensor_type(data_shape));
  ir::Var weight = ir::VarNode::make("weight", tensor_type(weight_shape));
  ir::Var bias = ir::VarNode::make("bias", tensor_type(bias_shape));
  ir::Attrs attrs = ir::make_op_attrs(
      "nn.contrib_conv2d_NCHWc",
      {{"strides", std::vector<int64_t>{l.stride, l.stride}},
       {"padding", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad}},
       {"data_layout", "NCHW" + std::to_string(ib) + "c"},
       {"groups", l.groups},
       {"kernel_layout", "OIHW" + std::to_string(kernel_ib) + "i" + std::to_string(ob) + "o"},
       {"out_layout", "NCHW" + std::to_string(ob) + "c"}});
  ir::Expr body = ir::call_op("nn.contrib_conv2d_NCHWc", {data, weight}, attrs);
  std::vector<ir::Var> params = {data, weight};
  if (epilogue) {
    body = ir::call_op("nn.relu", {ir::call_op("add", {body, bias})});
    params.push_back(bias);
  }
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make(params, body));
  mod = ir::infer_type(mod);
  ir::Function fn = mod.get_function("main");

  auto compile_start = std::chrono::steady_clock::now();
  lower::LowerGroupOptions options;
  if (config)
    options.config_for = [config](const ir::Function&, const lower::LowerGroupOptions&) {
      return config;
    };
  tir::PrimFunc scheduled = lower::lower_primitive(fn, "conv", options);
  if (print_ir) std::printf("%s\n", tir::print(scheduled).c_str());
  tir::PrimFunc func = tir::transform::lower(scheduled);
  Module module = codegen::jit_compile({func});
  double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  PackedFunc conv = module.function("conv");

  std::vector<Value> args = {random_tensor(data_shape, rng), random_tensor(weight_shape, rng)};
  if (epilogue) args.emplace_back(random_tensor(bias_shape, rng));
  args.emplace_back(Tensor::zeros({1, l.out_channels / ob, oh, ow, ob}, DataType::float32()));
  conv.call(args);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    conv.call(args);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  double seconds = times[times.size() / 2];
  double flops = 2.0 * l.out_channels * oh * ow * l.channels / l.groups * l.kernel * l.kernel;
  double best = times.front();
  std::printf(
      "  %4lldx%3lldx%3lld -> %4lld  %lldx%lld s%lld: median %7.3f ms %6.1f GFLOP/s, best %6.1f "
      "GFLOP/s (compile %.2f s)\n",
      (long long)l.channels, (long long)l.height, (long long)l.width, (long long)l.out_channels,
      (long long)l.kernel, (long long)l.kernel, (long long)l.stride, seconds * 1e3,
      flops / seconds * 1e-9, flops / best * 1e-9, compile_s);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, repeat = 20;
  bool epilogue = true, print_ir = false;
  std::vector<Layer> layers;
  std::optional<lower::KnobConfig> config;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--config" && i + 1 < argc) {
      config.emplace();
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
          std::fprintf(stderr, "conv_bench: --config wants knob=value,...\n");
          return 2;
        }
        (*config)[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
      }
      continue;
    }
    if (flag == "--print-ir") {
      print_ir = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "conv_bench: flag '%s' needs a value\n", flag.c_str());
      return 2;
    }
    std::string value = argv[i + 1];
    if (flag == "--threads") {
      threads = std::atoi(value.c_str());
    } else if (flag == "--repeat") {
      repeat = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--epilogue") {
      epilogue = value != "0";
    } else if (flag == "--layer") {
      Layer l{};
      std::replace(value.begin(), value.end(), ',', ' ');
      std::istringstream in(value);
      if (!(in >> l.channels >> l.height >> l.width >> l.out_channels >> l.kernel >> l.stride >>
            l.pad)) {
        std::fprintf(stderr, "conv_bench: --layer wants C,H,W,O,K,stride,pad[,groups]\n");
        return 2;
      }
      if (!(in >> l.groups)) l.groups = 1;
      layers.push_back(l);
    } else {
      std::fprintf(stderr, "conv_bench: unknown flag '%s'\n", flag.c_str());
      return 2;
    }
  }
  if (layers.empty()) layers = kResNet50Layers;
  try {
    set_num_threads(threads);
    std::printf("conv2d NCHWc float32, batch 1, %d threads%s\n", threads,
                epilogue ? ", bias + relu fused" : "");
    std::mt19937 rng(0);
    for (const Layer& l : layers)
      run_layer(l, repeat, epilogue, print_ir, config ? &*config : nullptr, rng);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_bench: %s\n", e.what());
    return 1;
  }
}
