// Auto-tuning (tvmc tune): the tasks of a model and the knobs a tuner may turn for each. A task
// is one distinct kernel of the model as build() would lower it (structurally equal fused
// groups are one task), with the work it does per call and how many times the model calls it.
// The tuner knows no op: what it may change comes from the anchor op's schedule strategy
// (lower::group_knob_space).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/tuning_records.h"
#include "anvil/ir/ir.h"
#include "anvil/lower/lower.h"

namespace anvil::tune {

struct TuneTask {
  // The workload key (driver::workload_key): equal for the same ops, shapes, dtypes, layouts
  // and attrs in any model, so that a record helps every model with that workload.
  std::string key;
  std::string name;       // a readable kernel name ("fused_nn_contrib_conv2d_NCHWc_add")
  std::string fused_ops;  // "nn.contrib_conv2d_NCHWc, add, nn.relu"
  int64_t flops = 0;      // per call
  int calls = 0;          // how many times the model calls it (its weight)
  // The anchor's strategy and its knobs (lower::group_knob_space); an empty strategy: nothing
  // to tune (generic schedule).
  lower::GroupKnobSpace space;
  ir::Function group;  // the fused group
  // The options build() lowers the group with (vector width, target kind).
  lower::LowerGroupOptions lower_options;

  // The number of configs of the knobs' space (1 without knobs).
  int64_t space_size() const;
};

// The tasks of a model, in the order the model first calls them.
std::vector<TuneTask> extract_tasks(const ir::IRModule& mod,
                                    const std::vector<std::pair<std::string, Tensor>>& params,
                                    const driver::BuildOptions& options = {});

// ---- Measurement ------------------------------------------------------------------------
// Candidates are compiled and timed in a worker process (`anvil tune-worker`, or any program
// that runs run_measure_worker): a crash, a hang or a wrong result there costs the candidate,
// never the tuner. The worker is restarted after a failure.

struct MeasureOptions {
  // The worker's command line (program first); the worker reads requests on stdin.
  std::vector<std::string> worker_command;
  std::string target = "llvm";  // an llvm target string
  int repeat = 3;               // timed repeats; the cost of each is the mean over its calls
  int number = 1;               // calls per repeat (raised until a repeat lasts min_repeat_ms)
  double min_repeat_ms = 10;
  double timeout_s = 10;  // per candidate's run, and per candidate compiled
  int threads = 0;        // runtime threads while timing (0: all hardware threads)
  // Evict every input but the first (a kernel's weights) from the caches before each timed
  // call, as a model's later calls find them (TVM's enable_cpu_cache_flush).
  bool flush_cache = true;
};

// One candidate: a task and a point of its knob space, or nullopt for the heuristic's
// schedule. `fault` ("crash", "hang", "wrong") makes the worker fail on purpose, for tests.
struct MeasureInput {
  size_t task = 0;
  std::optional<topi::ScheduleConfig> knobs;
  std::string fault;
};

struct MeasureResult {
  int error = driver::kRecordOk;  // driver::RecordError
  std::vector<double> costs_ms;   // per repeat; empty after an error
  std::string message;            // why, after an error
  double mean_ms() const;
};

class Measurer {
 public:
  Measurer(std::vector<TuneTask> tasks, MeasureOptions options);
  ~Measurer();
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  // Compiles the batch (side by side on the compile threads) and times it, one candidate at a
  // time; results in input order.
  std::vector<MeasureResult> measure(const std::vector<MeasureInput>& batch);
  // Worker processes started so far (a restart follows every crash or hang).
  int workers_started() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The worker's loop: reads JSON requests from fd `in`, answers on fd `out`, until end of
// input. Returns the exit status.
int run_measure_worker(int in, int out);

// ---- Search -----------------------------------------------------------------------------

struct TuneOptions {
  std::string tuner = "xgb";  // "xgb", "ga", "random" or "grid"
  int trials = 0;             // measurements in all (defaults included); 0: every config
  double total_time_s = 0;    // stop starting batches after this long; 0: no limit
  int early_stopping = 0;     // leave a task after this many trials without a better one
  int batch_size = 8;         // candidates compiled and measured together
  uint64_t seed = 1;
  MeasureOptions measure;
  // Records already measured (--prior-records): their configs are not measured again, and they
  // seed each task's best and cost model.
  std::vector<driver::TuningRecord> prior;
};

// What the tuner reports after each measured batch of a task.
struct TuneProgress {
  size_t task = 0;      // index into the tasks
  int task_trials = 0;  // measured for this task so far (prior records included)
  int64_t task_space = 0;
  double current_gflops = 0;  // the best of this batch
  double best_gflops = 0;
  int trials = 0;  // all tasks
  double elapsed_s = 0;
  bool task_done = false;  // the space is exhausted or early stopping left it
};

struct TaskOutcome {
  double default_ms = 0;  // the heuristic's schedule; 0 when not measured
  double best_ms = 0;     // the best measured (the default when nothing beat it)
  std::optional<topi::ScheduleConfig> best_knobs;  // nullopt: the default is best
  int trials = 0;
  int errors = 0;
};

struct TuneCallbacks {
  std::function<void(const TuneProgress&)> progress;
  std::function<void(const driver::TuningRecord&)> record;  // each new measurement
};

// Tunes the tasks with knobs; tasks without knobs are left alone. One outcome per task.
std::vector<TaskOutcome> tune_tasks(const std::vector<TuneTask>& tasks, const TuneOptions& options,
                                    const TuneCallbacks& callbacks = {});

// ---- A tuning run (anvil tune, anvil.tune) ------------------------------------------------

// A model and its parameters, as a tuning run loads them.
struct TuningModel {
  ir::IRModule mod;
  std::vector<std::pair<std::string, Tensor>> params;
};

// What a tuning run does besides the search: how the model is built, where records come from
// and go, and whom it tells along the way.
struct TuningRunOptions {
  std::string target = "llvm";  // the build's target; tuning measures only llvm targets
  int opt_level = 3;
  std::string desired_layout;  // the convolution layout to tune for (NCHW, NHWC); "": as is
  bool list_tasks = false;     // only extract the tasks: no records read back or written
  std::string records_path;    // the records file written (one line per measurement)
  // An earlier run's records (--prior-records), or "": their configs are not measured again.
  // Equal to records_path, the file is appended to; else the records of this model's tasks
  // are copied to the front of records_path.
  std::string prior_records_path;
  // The search and its measurement; `prior` is filled from prior_records_path, and
  // measure.target from target.
  TuneOptions tune;
  // Each line of prior records that was skipped, read before the model is loaded; empty:
  // "warning: ..." on stderr.
  std::function<void(const std::string&)> warning;
  // The tasks, once the records file is open and before any is tuned.
  std::function<void(const std::vector<TuneTask>&)> tasks_ready;
  std::function<void(const TuneProgress&)> progress;  // after each measured batch
};

// What a tuning run found.
struct TuningRunResult {
  std::vector<TuneTask> tasks;
  std::vector<TaskOutcome> outcomes;  // one per task; empty after list_tasks
  int trials = 0;                     // measured in all
  double seconds = 0;                 // spent tuning
};

// Reads the prior records, loads the model (load runs after them, so that a bad records file
// fails before a slow import), extracts its tasks and, unless list_tasks, tunes them, writing
// each measurement to records_path as it comes: a stopped run keeps what it measured.
TuningRunResult run_tuning(const std::function<TuningModel()>& load,
                           const TuningRunOptions& options);

// ---- Cost model features ----------------------------------------------------------------

// Loop features of a lowered candidate (its scheduled tensor IR): how much runs in parallel,
// vector lanes, unrolled work, loop depth, stores executed, scratch memory; all log-scaled.
std::vector<float> loop_features(const tir::PrimFunc& scheduled);

}  // namespace anvil::tune
