// The measurement worker: a process of its own that compiles and times candidates for the
// tuner, so that a candidate that crashes or hangs takes down the worker, not the tuner.
//
// Protocol, one JSON object per line each way:
//   {"op": "task", "id": 3, "group": "<graph IR of the group>", "target": "llvm ..."}
//     -> {"event": "task", "id": 3, "error": 0, "message": ""}
//        The worker parses the group, makes random inputs and runs the heuristic's schedule
//        once: its outputs are what every candidate of the task must reproduce.
//   {"op": "measure", "repeat": 3, "number": 1, "min_repeat_ms": 10, "threads": 2,
//    "flush_cache": true,
//    "candidates": [{"task": 3, "knobs": {"oc_tile": 2} | null, "fault": ""}, ...]}
//     -> {"event": "compiled", "index": i, "error": 0|1, "message": ...} for every candidate,
//        then per candidate that compiled {"event": "start", "index": i} and
//        {"event": "result", "index": i, "error": 0|4, "costs_ms": [...], "message": ...},
//        then {"event": "done"}.
// "start" precedes each run so that the tuner knows which candidate a crash or hang belongs to.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "anvil/codegen/llvm.h"
#include "anvil/driver/build_target.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "anvil/tir/transform.h"
#include "anvil/tune/tune.h"

namespace anvil::tune {
namespace {

using nlohmann::json;

struct WorkerTask {
  ir::Function group;
  codegen::Target target;
  lower::LowerGroupOptions lower_options;
  std::string strategy;  // the strategy its knobs belong to
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;  // the heuristic schedule's outputs
};

// Uniform values in [-1, 1) for floats (a fixed sequence), zeros otherwise: integer inputs of
// tunable groups are indices or shapes, for which 0 is always in range.
Tensor random_input(const std::vector<int64_t>& shape, DataType dtype, uint64_t seed) {
  Tensor t = Tensor::zeros(shape, dtype);
  if (!dtype.is_float()) return t;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t.set_from_double(i, double(state >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return t;
}

std::vector<const ir::TensorTypeNode*> output_types(const ir::Function& fn) {
  std::vector<const ir::TensorTypeNode*> types;
  const ir::Type& ret = fn->body->checked_type;
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(ret)) {
    for (const ir::Type& field : tuple->fields) types.push_back(ir::as<ir::TensorTypeNode>(field));
  } else {
    types.push_back(ir::as<ir::TensorTypeNode>(ret));
  }
  for (const auto* type : types)
    if (!type || !type->static_shape()) throw Error("the group's outputs are not static tensors");
  return types;
}

// The lowered kernel of one candidate; throws Error when the anchor's strategy declines the
// knobs (the group would fall back to the generic schedule: not the candidate asked for).
tir::PrimFunc lower_candidate(const WorkerTask& task, const topi::ScheduleConfig* knobs,
                              const std::string& symbol) {
  lower::LowerGroupOptions options = task.lower_options;
  if (knobs)
    options.config_for = [knobs](const ir::Function&, const lower::LowerGroupOptions&) {
      return knobs;
    };
  tir::PrimFunc scheduled = lower::lower_primitive(task.group, symbol, options);
  if (knobs && !task.strategy.empty()) {
    const std::string why = lower::config_declined(scheduled, task.strategy);
    if (!why.empty()) throw Error(why);
  }
  return tir::transform::lower(scheduled);
}

std::vector<Tensor> fresh_outputs(const WorkerTask& task) {
  std::vector<Tensor> outputs;
  for (const auto* type : output_types(task.group))
    outputs.push_back(Tensor::zeros(*type->static_shape(), type->dtype));
  return outputs;
}

void call_kernel(const PackedFunc& kernel, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& outputs) {
  std::vector<Value> args;
  for (const Tensor& t : inputs) args.emplace_back(t);
  for (const Tensor& t : outputs) args.emplace_back(t);
  kernel.call(args);
}

// "" when got matches want to 1e-3 of want's largest finite magnitude (different schedules sum in
// different orders; a wrong schedule misses by the order of the values themselves).
std::string compare_outputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  for (size_t o = 0; o < want.size(); ++o) {
    double scale = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double magnitude = std::fabs(want[o].get_as_double(i));
      if (std::isfinite(magnitude)) scale = std::max(scale, magnitude);
    }
    const double tolerance = 1e-3 * std::max(scale, 1e-3);
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double a = got[o].get_as_double(i), b = want[o].get_as_double(i);
      // NaN where the default has NaN (sqrt of a negative random input) and equal infinities
      // agree.
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      if (!(std::fabs(a - b) <= tolerance))
        return "output " + std::to_string(o) + " element " + std::to_string(i) + " is " +
               std::to_string(a) + ", the default schedule's " + std::to_string(b);
    }
  }
  return "";
}

class Worker {
 public:
  explicit Worker(int out) : out_(out) {}

  void handle(const json& request) {
    const std::string op = request.at("op");
    if (op == "task") return add_task(request);
    if (op == "measure") return measure(request);
    throw Error("unknown request '" + op + "'");
  }

 private:
  void send(const json& message) {
    const std::string line = message.dump() + "\n";
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(out_, line.data() + done, line.size() - done);
      if (n <= 0) std::_Exit(3);  // the tuner went away
      done += size_t(n);
    }
  }

  void add_task(const json& request) {
    const int id = request.at("id");
    json reply = {{"event", "task"}, {"id", id}, {"error", 0}, {"message", ""}};
    try {
      WorkerTask task;
      ir::Expr parsed = ir::parse_expr(request.at("group").get<std::string>(), "group");
      if (!ir::as<ir::FunctionNode>(parsed)) throw Error("the group is not a function");
      ir::IRModule mod;
      mod.add("main", ir::downcast<ir::FunctionNode>(parsed));
      task.group = ir::infer_type(mod).get_function("main");
      // The target as build() resolves it ("llvm": this machine's CPU and features).
      const driver::BuildTarget target =
          driver::resolve_build_target(request.at("target").get<std::string>());
      task.target = target.target;
      task.lower_options.vector_bits = target.vector_bits;
      task.lower_options.target_kind = target.target.kind;
      task.lower_options.strategy_keys = target.target.keys;
      task.lower_options.amx_bf16 = target.target.has_amx_bf16();
      task.strategy = request.value("strategy", "");
      for (size_t i = 0; i < task.group->params.size(); ++i) {
        const auto* type = ir::as<ir::TensorTypeNode>(task.group->params[i]->checked_type);
        if (!type || !type->static_shape()) throw Error("a group input is not a static tensor");
        task.inputs.push_back(random_input(*type->static_shape(), type->dtype, 17 + i));
      }
      Module module =
          codegen::jit_compile({lower_candidate(task, nullptr, "reference")}, task.target);
      task.expected = fresh_outputs(task);
      call_kernel(module.function("reference"), task.inputs, task.expected);
      tasks_[id] = std::move(task);
    } catch (const std::exception& e) {
      reply["error"] = driver::kRecordRuntimeError;
      reply["message"] = e.what();
    }
    send(reply);
  }

  void measure(const json& request) {
    const int repeat = std::max(1, request.value("repeat", 3));
    const int number = std::max(1, request.value("number", 1));
    const double min_repeat_ms = request.value("min_repeat_ms", 0.0);
    const bool flush_cache = request.value("flush_cache", true);
    set_num_threads(request.value("threads", 0));
    const json& candidates = request.at("candidates");
    const size_t n = candidates.size();

    // Lower one by one (cheap), then compile everything that lowered in one go: the code
    // generator spreads the kernels over its threads.
    std::vector<std::string> errors(n);
    std::vector<topi::ScheduleConfig> knobs(n);
    std::vector<tir::PrimFunc> funcs;
    std::vector<size_t> func_of(n, SIZE_MAX);
    for (size_t i = 0; i < n; ++i) {
      try {
        const WorkerTask& task = tasks_.at(candidates[i].at("task").get<int>());
        const json& k = candidates[i].at("knobs");
        if (!k.is_null()) knobs[i] = k.get<topi::ScheduleConfig>();
        if (candidates[i].value("fault", "") == "compile-crash") std::raise(SIGSEGV);
        func_of[i] = funcs.size();
        funcs.push_back(lower_candidate(task, k.is_null() ? nullptr : &knobs[i],
                                        "candidate_" + std::to_string(i)));
      } catch (const std::exception& e) {
        errors[i] = e.what();
        func_of[i] = SIZE_MAX;
        if (errors[i].empty()) errors[i] = "lowering failed";
      }
    }
    std::vector<Module> modules(funcs.size());
    try {
      if (!funcs.empty()) {
        Module all =
            codegen::jit_load(codegen::compile_objects(funcs, tasks_.begin()->second.target));
        for (Module& m : modules) m = all;
      }
    } catch (const std::exception&) {
      // Some kernel failed: compile each alone to tell which.
      for (size_t i = 0; i < n; ++i) {
        if (func_of[i] == SIZE_MAX) continue;
        try {
          const WorkerTask& task = tasks_.at(candidates[i].at("task").get<int>());
          modules[func_of[i]] = codegen::jit_compile({funcs[func_of[i]]}, task.target);
        } catch (const std::exception& e) {
          errors[i] = e.what();
          func_of[i] = SIZE_MAX;
        }
      }
    }
    for (size_t i = 0; i < n; ++i)
      send({{"event", "compiled"},
            {"index", i},
            {"error", errors[i].empty() ? 0 : int(driver::kRecordCompileError)},
            {"message", errors[i]}});

    for (size_t i = 0; i < n; ++i) {
      if (func_of[i] == SIZE_MAX) continue;
      send({{"event", "start"}, {"index", i}});
      json result = {{"event", "result"}, {"index", i}, {"error", 0}, {"message", ""}};
      try {
        const WorkerTask& task = tasks_.at(candidates[i].at("task").get<int>());
        const std::string fault = candidates[i].value("fault", "");
        if (fault == "crash") std::raise(SIGSEGV);
        if (fault == "hang")
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        PackedFunc kernel = modules[func_of[i]].function("candidate_" + std::to_string(i));
        std::vector<Tensor> outputs = fresh_outputs(task);
        call_kernel(kernel, task.inputs, outputs);
        if (fault == "wrong") outputs[0].set_from_double(0, outputs[0].get_as_double(0) + 1e3);
        const std::string mismatch = compare_outputs(outputs, task.expected);
        if (!mismatch.empty()) {
          result["error"] = driver::kRecordWrongResult;
          result["message"] = mismatch;
        } else {
          result["costs_ms"] =
              time_kernel(kernel, task.inputs, outputs, repeat, number, min_repeat_ms, flush_cache);
        }
      } catch (const std::exception& e) {
        result["error"] = driver::kRecordRuntimeError;
        result["message"] = e.what();
      }
      send(result);
    }
    send({{"event", "done"}});
  }

  // Mean milliseconds per call for each repeat; a repeat shorter than min_repeat_ms is run
  // again with more calls. With flush_cache, every input but the first (the weights, in a
  // model's kernels) leaves the caches before each call, untimed: inside a model, the weights
  // of a layer were evicted by the layers between two of its calls, and a kernel timed with
  // them cached would be chosen for a reuse pattern it will never see.
  static std::vector<double> time_kernel(const PackedFunc& kernel, const std::vector<Tensor>& in,
                                         const std::vector<Tensor>& out, int repeat, int number,
                                         double min_repeat_ms, bool flush_cache) {
    std::vector<double> costs;
    using clock = std::chrono::steady_clock;
    while (int(costs.size()) < repeat) {
      double ms = 0;
      for (int c = 0; c < number; ++c) {
        if (flush_cache) flush_from_caches(in);
        const auto start = clock::now();
        call_kernel(kernel, in, out);
        ms += std::chrono::duration<double, std::milli>(clock::now() - start).count();
      }
      if (ms < min_repeat_ms && number < (1 << 20)) {
        const double scale = ms > 0 ? min_repeat_ms / ms : 16.0;
        number = int(std::min(double(number) * std::min(scale * 1.2, 16.0) + 1, 1048576.0));
        continue;
      }
      costs.push_back(ms / number);
    }
    return costs;
  }

  static void flush_from_caches(const std::vector<Tensor>& in) {
#if defined(__x86_64__)
    for (size_t i = 1; i < in.size(); ++i) {
      const char* data = static_cast<const char*>(in[i].data());
      const int64_t bytes = in[i].numel() * in[i].dtype().bytes();
      for (int64_t offset = 0; offset < bytes; offset += 64) __builtin_ia32_clflush(data + offset);
    }
    __builtin_ia32_mfence();
#else
    (void)in;
#endif
  }

  int out_;
  std::map<int, WorkerTask> tasks_;
};

}  // namespace

int run_measure_worker(int in, int out) {
  Worker worker(out);
  std::string buffer;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(in, chunk, sizeof chunk);
    if (n <= 0) return 0;
    buffer.append(chunk, size_t(n));
    for (size_t end; (end = buffer.find('\n')) != std::string::npos;) {
      const std::string line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      if (line.empty()) continue;
      try {
        worker.handle(json::parse(line));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tune-worker: %s\n", e.what());
        return 2;
      }
    }
  }
}

}  // namespace anvil::tune
