// The tools of the extension: post-training quantization of ONNX models and auto-tuning
// (tasks, the search, the measurement worker). Both release the GIL while they work.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <unistd.h>

#include "anvil/quantize/quantize.h"
#include "anvil/support/error.h"
#include "anvil/tune/tune.h"
#include "bindings.h"

namespace anvil::python {
namespace {

nb::list layer_errors(const std::vector<quantize::TensorError>& errors) {
  nb::list out;
  for (const quantize::TensorError& e : errors) {
    nb::dict d;
    d["node"] = e.node;
    d["op_type"] = e.op_type;
    d["tensor"] = e.tensor;
    d["sqnr_db"] = e.sqnr_db;
    out.append(d);
  }
  return out;
}

nb::dict task_dict(const tune::TuneTask& task) {
  nb::dict d;
  d["key"] = task.key;
  d["name"] = task.name;
  d["fused_ops"] = task.fused_ops;
  d["flops"] = task.flops;
  d["calls"] = task.calls;
  d["strategy"] = task.space.strategy;
  d["space_size"] = task.space_size();
  return d;
}

}  // namespace

void bind_tools(nb::module_& m) {
  m.def(
      "quantize",
      [](nb::bytes model, const std::string& what, nb::list samples, const std::string& method,
         double percentile, bool per_channel, std::vector<std::string> exclude, bool report) {
        std::vector<quantize::Sample> converted;
        for (nb::handle sample : samples) {
          if (!nb::isinstance<nb::dict>(sample))
            throw Error("quantize: each calibration sample is a dict of input name -> array");
          quantize::Sample s;
          for (auto [key, value] : nb::borrow<nb::dict>(sample)) {
            std::string name = nb::cast<std::string>(key);
            s.emplace_back(name, as_tensor(value, "calibration input '" + name + "'").copy());
          }
          converted.push_back(std::move(s));
        }
        quantize::QuantizeOptions options;
        options.method = quantize::parse_range_method(method);
        options.percentile = percentile;
        options.per_channel = per_channel;
        options.exclude = std::move(exclude);
        options.report = report;
        std::string bytes(model.c_str(), model.size());
        quantize::QuantizeResult result;
        {
          nb::gil_scoped_release release;
          result = quantize::quantize_model(bytes, what, converted, options);
        }
        nb::dict out;
        out["model"] = nb::bytes(result.model.data(), result.model.size());
        out["quantized_nodes"] = nb::cast(result.quantized_nodes);
        out["layers"] = layer_errors(result.layers);
        out["outputs"] = layer_errors(result.outputs);
        return out;
      },
      nb::arg("model"), nb::arg("what"), nb::arg("samples"), nb::arg("method"),
      nb::arg("percentile"), nb::arg("per_channel"), nb::arg("exclude"), nb::arg("report"));

  m.def(
      "tune",
      [](const ir::IRModule& mod, nb::dict params, const std::string& target, int opt_level,
         const std::string& records_path, const std::string& tuner, int trials, double total_time_s,
         int early_stopping, int batch_size, int repeat, int number, double min_repeat_ms,
         double timeout_s, uint64_t seed, std::vector<std::string> worker_command, bool list_only,
         const std::string& prior_records, int threads, const std::string& desired_layout) {
        tune::TuningModel model{mod, {}};
        for (auto [key, value] : params) {
          std::string name = nb::cast<std::string>(key);
          model.params.emplace_back(name, as_tensor(value, "param '" + name + "'").copy());
        }
        tune::TuningRunOptions options;
        options.target = target;
        options.opt_level = opt_level;
        options.desired_layout = desired_layout;
        options.list_tasks = list_only;
        options.records_path = records_path;
        options.prior_records_path = prior_records;
        options.tune.tuner = tuner;
        options.tune.trials = trials;
        options.tune.total_time_s = total_time_s;
        options.tune.early_stopping = early_stopping;
        options.tune.batch_size = batch_size;
        options.tune.seed = seed;
        options.tune.measure.worker_command = std::move(worker_command);
        options.tune.measure.repeat = repeat;
        options.tune.measure.number = number;
        options.tune.measure.min_repeat_ms = min_repeat_ms;
        options.tune.measure.timeout_s = timeout_s;
        options.tune.measure.threads = threads;
        tune::TuningRunResult run;
        {
          nb::gil_scoped_release release;
          run = tune::run_tuning([&model] { return std::move(model); }, options);
        }
        nb::list result;
        for (size_t i = 0; i < run.tasks.size(); ++i) {
          nb::dict d = task_dict(run.tasks[i]);
          if (i < run.outcomes.size()) {
            d["default_ms"] = run.outcomes[i].default_ms;
            d["best_ms"] = run.outcomes[i].best_ms;
            d["trials"] = run.outcomes[i].trials;
            d["errors"] = run.outcomes[i].errors;
          }
          result.append(d);
        }
        return result;
      },
      nb::arg("mod"), nb::arg("params"), nb::arg("target"), nb::arg("opt_level"),
      nb::arg("records"), nb::arg("tuner"), nb::arg("trials"), nb::arg("total_time_s"),
      nb::arg("early_stopping"), nb::arg("batch_size"), nb::arg("repeat"), nb::arg("number"),
      nb::arg("min_repeat_ms"), nb::arg("timeout_s"), nb::arg("seed"), nb::arg("worker_command"),
      nb::arg("list_only"), nb::arg("prior_records"), nb::arg("threads"),
      nb::arg("desired_layout"));

  // The measurement worker's loop on stdin/stdout (python -m anvil.tune_worker).
  m.def("run_measure_worker", []() {
    nb::gil_scoped_release release;
    return tune::run_measure_worker(STDIN_FILENO, STDOUT_FILENO);
  });
}

}  // namespace anvil::python
