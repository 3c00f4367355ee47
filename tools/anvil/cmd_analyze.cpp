// anvil analyze: per-layer cost of a model (op, output shape, parameters, MACs, FLOPs and
// activation bytes) and its totals, as a table or one JSON object; the graph executor's memory
// as build() would plan it (the graph passes and the storage plan run, no kernel is compiled);
// with --target, the time the model's FLOPs take at this machine's measured FP32 peak.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "anvil/analysis/cost.h"
#include "anvil/analysis/peak.h"
#include "anvil/codegen/target.h"
#include "anvil/driver/build.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "commands.h"
#include "model_loading.h"
#include "run_report.h"

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
  analysis::PeakMeasurement peak;
  double floor_ms = 0;
};

// The graph executor's storage plan for the model, or why there is none (a model only the VM
// runs, an op without a compute).
struct MemoryReport {
  std::optional<driver::GraphMemoryPlan> plan;
  std::string error;
};

void print_json(const analysis::ModelCost& cost, const MemoryReport& memory, const Floor* floor) {
  const analysis::OpCost& t = cost.total;
  std::printf("{\n  \"total_params\": %lld,\n  \"total_macs\": %lld,\n  \"total_flops\": %lld,\n",
              (long long)t.params, (long long)t.macs, (long long)t.flops);
  std::printf("  \"total_activation_bytes\": %lld,\n", (long long)t.activation_bytes);
  if (const auto& plan = memory.plan)
    std::printf(
        "  \"memory_plan\": {\"activation_bytes\": %lld, \"largest_live_set_bytes\": %lld, "
        "\"param_bytes\": %lld, \"io_bytes\": %lld},\n",
        (long long)plan->memory.activation_bytes, (long long)plan->memory.largest_live_set,
        (long long)plan->memory.param_bytes, (long long)plan->memory.io_bytes);
  else
    std::printf("  \"memory_plan\": {\"error\": %s},\n", json_string(memory.error).c_str());
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

void print_table(const analysis::ModelCost& cost, const MemoryReport& memory, const Floor* floor) {
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
  if (const auto& plan = memory.plan)
    print_memory(plan->memory);
  else
    std::printf("memory: no graph executor plan (%s)\n", memory.error.c_str());
  if (floor != nullptr)
    std::printf("peak %.1f GFLOP/s (%s, %d threads), floor %.3f ms at peak\n", floor->peak.gflops,
                floor->peak.isa.c_str(), floor->peak.threads, floor->floor_ms);
}

void run_analyze(const AnalyzeOptions& options) {
  if (options.model.empty() == options.workload.empty())
    throw CLI::ValidationError("analyze", "give either a model file or --workload NAME");
  // The target is checked before the model is read, so a bad flag fails fast.
  int vector_bits = options.target.empty() ? 0 : target_vector_bits(options.target);

  auto [mod, params] =
      load_model_or_workload(options.model, options.input_shapes, options.workload, options.batch);
  std::vector<std::string> weights;
  for (const auto& [name, tensor] : params) weights.push_back(name);
  analysis::ModelCost cost = analysis::model_cost(mod, weights);

  // Planned as `anvil compile` would build it by default (opt level 3), for the target given.
  MemoryReport memory;
  try {
    driver::BuildOptions build_options;
    if (!options.target.empty()) build_options.target = options.target;
    memory.plan = driver::plan_graph_memory(mod, params, build_options);
  } catch (const Error& e) {
    memory.error = e.what();
  }

  Floor floor;
  if (!options.target.empty()) {
    int threads = options.threads > 0 ? options.threads
                                      : std::max(1, int(std::thread::hardware_concurrency()));
    floor.peak = analysis::measure_peak_flops(vector_bits, threads);
    if (floor.peak.gflops > 0) floor.floor_ms = double(cost.total.flops) / floor.peak.gflops / 1e6;
  }
  const Floor* floor_or_null = options.target.empty() ? nullptr : &floor;
  if (options.format == "json")
    print_json(cost, memory, floor_or_null);
  else
    print_table(cost, memory, floor_or_null);
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze",
      "Per-layer parameters, MACs, FLOPs and activation bytes of a model, and its planned memory");
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
