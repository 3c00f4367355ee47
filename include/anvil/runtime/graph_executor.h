// The graph executor (TVM's graph_executor): runs a static dataflow graph described by graph
// JSON (TVM's schema, docs/artifact-format.md) whose nodes call kernels of a Module. Storage
// is allocated once from the graph's storage plan; run() allocates nothing.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

// Timings of benchmark(), in milliseconds per run.
struct BenchmarkResult {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0, std_ms = 0;
  std::vector<double> results_ms;  // one per repeat
};

// One row of profile(): a kernel node and its mean time.
struct KernelProfile {
  std::string node_name;
  std::string func_name;
  double mean_ms = 0;
  double percent = 0;            // of the summed kernel time
  std::string fused_ops;         // the ops compiled into the kernel, when the graph says
  int64_t flops = 0;             // floating-point operations per call, when the graph says
  std::string schedule;          // the schedule strategy that compiled it, when the graph says
  std::string schedule_refused;  // the optional schedule steps refused in it, when any were
};

// Fills each row's share of the summed kernel time from the rows' mean times, and orders them
// slowest first (the executors' profile()).
void rank_kernel_profile(std::vector<KernelProfile>& rows);

// Name, shape and dtype of one graph input.
struct InputInfo {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
};

// The bytes a graph's storage plan holds, by kind of value (docs/fusion-and-memory.md).
struct GraphMemoryUse {
  // The intermediate values (activations): the arena, and any slot holding only them.
  int64_t activation_bytes = 0;
  // The most bytes of activations alive at once, as the graph's "largest_live_set_bytes" attr
  // records it: the least any storage plan for the graph could spend on them. -1 when the graph
  // does not say (graphs not written by anvil).
  int64_t largest_live_set = -1;
  int64_t param_bytes = 0;  // slots of the params
  int64_t io_bytes = 0;     // slots of the other inputs and of the outputs
};

// Times run: one warm-up call, then `repeat` timings of `number` calls each, summarized (what
// the executors' benchmark() report).
BenchmarkResult benchmark_function(const std::function<void()>& run, int repeat, int number);

class GraphExecutor {
 public:
  // Parses graph_json (throws Error naming the field on anything malformed), resolves each
  // kernel node's func_name in lib (or, failing that, in the global function registry) and
  // allocates every storage entry of the plan.
  GraphExecutor(const std::string& graph_json, Module lib, Device device = Device::cpu());
  ~GraphExecutor();
  GraphExecutor(GraphExecutor&&) noexcept;
  GraphExecutor& operator=(GraphExecutor&&) noexcept;

  // Copies value into the named input (or a param); throws Error naming the input when the
  // name is unknown or the shape/dtype differ.
  void set_input(std::string_view name, const Tensor& value);
  void set_input(int index, const Tensor& value);
  // Makes the input use value's memory directly (no copy) until replaced; value must be
  // compact, 64-byte aligned and stay alive.
  void set_input_zero_copy(std::string_view name, const Tensor& value);
  // Copies every named tensor of a params blob (params.h format) into the matching input.
  void load_params(std::string_view params_bytes);
  void load_params(const std::vector<std::pair<std::string, Tensor>>& params);

  // Runs every node once, in order.
  void run();

  // Output i (a view of executor storage, overwritten by the next run).
  Tensor get_output(int index) const;
  // Input by index or name (executor storage).
  Tensor get_input(int index) const;
  int get_input_index(std::string_view name) const;  // -1 if absent
  int get_num_inputs() const;                        // graph inputs that are not params
  int get_num_outputs() const;
  // The inputs that are not params, in order.
  std::vector<InputInfo> get_input_info() const;

  // Runs `number` times per repeat, `repeat` times, after one warm-up run.
  BenchmarkResult benchmark(int repeat = 10, int number = 1);
  // Per-kernel mean times over `repeat` runs, slowest first. When run_mean_ms is given it
  // receives the mean time of a whole run(), measured in turns with the kernel timings so that
  // both see the same machine load.
  std::vector<KernelProfile> profile(int repeat = 10, double* run_mean_ms = nullptr);
  // The bytes of the storage plan by kind of value. A slot counts for a param when it holds an
  // input loaded by load_params, for inputs and outputs when it holds another input or an
  // output, and for activations otherwise.
  GraphMemoryUse memory_use() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace anvil
