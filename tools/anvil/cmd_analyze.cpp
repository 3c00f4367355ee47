// anvil analyze: per-layer cost of a model (op, output shape, parameters, MACs, FLOPs and
// activation bytes) and its totals, as a table or one JSON object; with --target, the time the
// model's FLOPs take at this machine's measured FP32 peak.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ANVIL_ANALYZE_X86 1
#endif

#include "anvil/analysis/cost.h"
#include "anvil/codegen/target.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct AnalyzeOptions {
  std::string model;
  std::string workload;
  std::string input_shapes;
  int64_t batch = 1;
  std::string format = "table";
  std::string target;
  int threads = 0;  // 0: every core
};

// ---------------------------------------------------------------- peak FP32 rate

// Each loop iteration does kChains independent FMAs (named variables, so that they live in
// registers), enough to cover the FMA latency on every pipe: the loop runs at the FMA
// throughput. acc = acc * a + b with |a| < 1 converges and never overflows or reaches denormals.
constexpr int kChains = 12;
constexpr float kScale = 0.999f;
constexpr float kShift = 0.001f;

// The loop of one instruction set, its twelve chains spelled out: declares them, steps each
// `iterations` times, and leaves their sum in `sum`.
#define ANVIL_CHAIN_LOOP(Vec, set1, step, add)                                              \
  const Vec a = set1(kScale), b = set1(kShift);                                             \
  Vec c0 = set1(0.f), c1 = set1(1.f), c2 = set1(2.f), c3 = set1(3.f), c4 = set1(4.f),       \
      c5 = set1(5.f), c6 = set1(6.f), c7 = set1(7.f), c8 = set1(8.f), c9 = set1(9.f),       \
      c10 = set1(10.f), c11 = set1(11.f);                                                   \
  for (int64_t i = 0; i < iterations; ++i) {                                                \
    c0 = step(c0, a, b), c1 = step(c1, a, b), c2 = step(c2, a, b), c3 = step(c3, a, b);     \
    c4 = step(c4, a, b), c5 = step(c5, a, b), c6 = step(c6, a, b), c7 = step(c7, a, b);     \
    c8 = step(c8, a, b), c9 = step(c9, a, b), c10 = step(c10, a, b), c11 = step(c11, a, b); \
  }                                                                                         \
  Vec sum = add(add(add(add(c0, c1), add(c2, c3)), add(add(c4, c5), add(c6, c7))),          \
                add(add(c8, c9), add(c10, c11)))

template <typename Vec, size_t kLanes>
float sum_lanes(const Vec& v) {
  alignas(64) float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(lanes));
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

#ifdef ANVIL_ANALYZE_X86
__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps);
  return sum_lanes<__m512, 16>(sum);
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps);
  return sum_lanes<__m256, 8>(sum);
}

// Without FMA a multiply and an add are two instructions for the same two FLOPs.
inline __m128 mul_add_sse2(__m128 x, __m128 a, __m128 b) { return _mm_add_ps(_mm_mul_ps(x, a), b); }

float mul_add_loop_sse2(int64_t iterations) {
  ANVIL_CHAIN_LOOP(__m128, _mm_set1_ps, mul_add_sse2, _mm_add_ps);
  return sum_lanes<__m128, 4>(sum);
}
#endif

inline float scalar_set1(float x) { return x; }
inline float scalar_mul_add(float x, float a, float b) { return x * a + b; }
inline float scalar_add(float x, float y) { return x + y; }

float scalar_loop(int64_t iterations) {
  ANVIL_CHAIN_LOOP(float, scalar_set1, scalar_mul_add, scalar_add);
  return sum;
}

#undef ANVIL_CHAIN_LOOP

struct PeakMeasurement {
  double gflops = 0;  // over all threads
  int vector_bits = 0;
  std::string isa;
  int threads = 1;
};

using LoopFn = float (*)(int64_t);

// The widest loop this CPU runs that is no wider than max_vector_bits.
LoopFn choose_loop(int max_vector_bits, PeakMeasurement& m) {
#ifdef ANVIL_ANALYZE_X86
  __builtin_cpu_init();
  if (max_vector_bits >= 512 && __builtin_cpu_supports("avx512f")) {
    m.vector_bits = 512;
    m.isa = "AVX-512";
    return fma_loop_avx512;
  }
  if (max_vector_bits >= 256 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    m.vector_bits = 256;
    m.isa = "AVX2+FMA";
    return fma_loop_avx2;
  }
  if (max_vector_bits >= 128) {
    m.vector_bits = 128;
    m.isa = "SSE2";
    return mul_add_loop_sse2;
  }
#endif
  (void)max_vector_bits;
  m.vector_bits = 32;
  m.isa = "scalar";
  return scalar_loop;
}

// Seconds for every thread to run `iterations` of the loop, started together.
double timed_run(LoopFn loop, int64_t iterations, int threads) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<float> sinks(size_t(threads), 0.0f);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      sinks[size_t(t)] = loop(iterations);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& w : workers) w.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The sums keep the loops from being optimized away; they are finite by construction.
  float total = 0;
  for (float s : sinks) total += s;
  if (total != total) seconds = -1;
  return seconds;
}

PeakMeasurement measure_peak_flops(int max_vector_bits, int threads) {
  PeakMeasurement m;
  m.threads = threads;
  LoopFn loop = choose_loop(max_vector_bits, m);
  const int lanes = std::max(m.vector_bits / 32, 1);
  // Grow the run until it takes about 50 ms, then keep the best of three runs of that length.
  int64_t iterations = 1 << 16;
  double seconds = timed_run(loop, iterations, threads);
  while (seconds < 0.05 && iterations < (int64_t(1) << 34)) {
    iterations *= 2;
    seconds = timed_run(loop, iterations, threads);
  }
  double best = seconds;
  for (int repeat = 0; repeat < 3; ++repeat)
    best = std::min(best, timed_run(loop, iterations, threads));
  const double flops = 2.0 * double(kChains) * lanes * double(iterations) * threads;
  m.gflops = best > 0 ? flops / best / 1e9 : 0;
  return m;
}

// The vector width of a target string, as its code generator would use it; an unknown target
// is a usage error naming it.
int target_vector_bits(const std::string& text) {
  codegen::Target target =
      text == "llvm" || text == "c" ? codegen::Target::host() : codegen::Target::parse(text);
  return target.vector_bits();
}

// ---------------------------------------------------------------- output

// "1.814 G", "11.690 M", "512" (three decimals past the unit, as thop prints).
std::string human(double value) {
  const char* units[] = {"", " K", " M", " G", " T", " P"};
  int unit = 0;
  while (std::abs(value) >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  char buffer[64];
  if (unit == 0)
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3f%s", value, units[unit]);
  return buffer;
}

// "24.087 MB", "48 B".
std::string human_bytes(double value) {
  std::string text = human(value);
  if (value < 1000) text += ' ';
  return text + "B";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Floor {
  PeakMeasurement peak;
  double floor_ms = 0;
};

void print_json(const analysis::ModelCost& cost, const Floor* floor) {
  const analysis::OpCost& t = cost.total;
  std::printf("{\n  \"total_params\": %lld,\n  \"total_macs\": %lld,\n  \"total_flops\": %lld,\n",
              (long long)t.params, (long long)t.macs, (long long)t.flops);
  std::printf("  \"total_activation_bytes\": %lld,\n", (long long)t.activation_bytes);
  if (floor != nullptr) {
    std::printf("  \"peak_gflops\": %.3f,\n  \"floor_ms\": %.6f,\n", floor->peak.gflops,
                floor->floor_ms);
    std::printf("  \"peak_threads\": %d,\n  \"peak_vector_bits\": %d,\n", floor->peak.threads,
                floor->peak.vector_bits);
  }
  std::printf("  \"layers\": [");
  for (size_t i = 0; i < cost.layers.size(); ++i) {
    const analysis::LayerCost& l = cost.layers[i];
    std::string shape = "[";
    for (size_t d = 0; d < l.out_shape.size(); ++d)
      shape += (d ? ", " : "") + std::to_string(l.out_shape[d]);
    shape += "]";
    std::printf(
        "%s\n    {\"name\": %s, \"op\": %s, \"output_shape\": %s, \"params\": %lld, \"macs\": "
        "%lld, \"flops\": %lld, \"activation_bytes\": %lld}",
        i ? "," : "", json_string(l.name).c_str(), json_string(l.op).c_str(), shape.c_str(),
        (long long)l.cost.params, (long long)l.cost.macs, (long long)l.cost.flops,
        (long long)l.cost.activation_bytes);
  }
  std::printf("%s]\n}\n", cost.layers.empty() ? "" : "\n  ");
}

void print_table(const analysis::ModelCost& cost, const Floor* floor) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"layer", "op", "output shape", "params", "MACs", "FLOPs", "activation bytes"});
  for (const analysis::LayerCost& l : cost.layers)
    rows.push_back({l.name, l.op, shape_text(l.out_shape), std::to_string(l.cost.params),
                    std::to_string(l.cost.macs), std::to_string(l.cost.flops),
                    std::to_string(l.cost.activation_bytes)});
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // Names and text left-aligned, numbers right-aligned.
      std::string pad(widths[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (c < 3 ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  }
  const analysis::OpCost& t = cost.total;
  std::printf("total: %zu layers, %s params, %s MACs, %s FLOPs, %s of activations\n",
              cost.layers.size(), human(double(t.params)).c_str(), human(double(t.macs)).c_str(),
              human(double(t.flops)).c_str(), human_bytes(double(t.activation_bytes)).c_str());
  if (floor != nullptr)
    std::printf("peak %.1f GFLOP/s (%s, %d threads), floor %.3f ms at peak\n", floor->peak.gflops,
                floor->peak.isa.c_str(), floor->peak.threads, floor->floor_ms);
}

void run_analyze(const AnalyzeOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("analyze", "give either a model file or --workload NAME");
  // The target is checked before the model is read, so a bad flag fails fast.
  int vector_bits = options.target.empty() ? 0 : target_vector_bits(options.target);

  analysis::ModelCost cost;
  if (!options.model.empty()) {
    ShapeDict shapes =
        options.input_shapes.empty() ? ShapeDict{} : parse_input_shapes(options.input_shapes);
    frontend::ImportedModel model = load_onnx_model(options.model, shapes);
    std::vector<std::string> weights;
    for (const auto& [name, tensor] : model.params) weights.push_back(name);
    cost = analysis::model_cost(model.mod, weights);
  } else {
    testing::Workload workload = testing::workload_by_name(options.workload, options.batch);
    std::vector<std::string> weights;
    for (const auto& [name, tensor] : workload.params) weights.push_back(name);
    cost = analysis::model_cost(workload.mod, weights);
  }

  Floor floor;
  if (!options.target.empty()) {
    int threads = options.threads > 0 ? options.threads
                                      : std::max(1, int(std::thread::hardware_concurrency()));
    floor.peak = measure_peak_flops(vector_bits, threads);
    if (floor.peak.gflops > 0) floor.floor_ms = double(cost.total.flops) / floor.peak.gflops / 1e6;
  }
  const Floor* floor_or_null = options.target.empty() ? nullptr : &floor;
  if (options.format == "json")
    print_json(cost, floor_or_null);
  else
    print_table(cost, floor_or_null);
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze", "Per-layer parameters, MACs, FLOPs and activation bytes of a model");
  std::string names;
  for (const std::string& n : testing::workload_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("model", options->model, "an .onnx model file")->check(existing_path());
  cmd->add_option("--workload", options->workload, "a built-in network instead: " + names);
  cmd->add_option("--input-shapes", options->input_shapes,
                  "fix dynamic input shapes of the model, e.g. \"data:[1,3,224,224]\"");
  cmd->add_option("--batch", options->batch, "batch size of the workload's input (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", options->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--target", options->target,
                  "also print the time floor at this machine's FP32 peak, measured at the "
                  "target's vector width: \"llvm\", \"llvm -mcpu=NAME -mattr=+f,-g\" or \"c\"")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              target_vector_bits(text);
            } catch (const Error& e) {
              return e.what();
            }
            return {};
          },
          "TARGET", "target"));
  cmd->add_option("--threads", options->threads,
                  "threads of the peak measurement (default: every core)")
      ->check(CLI::PositiveNumber);
  cmd->footer(
      "Examples:\n"
      "  anvil analyze resnet50.onnx\n"
      "  anvil analyze mobilenet_v2.onnx --format json > cost.json\n"
      "  anvil analyze --workload resnet18 --target \"llvm -mcpu=znver4\" --threads 2");
  cmd->callback([options] { run_analyze(*options); });
}

}  // namespace anvil::cli
