// The executors of the extension: loaded packages (runtime modules), the graph executor and
// the virtual machine. Every run releases the GIL, so Python threads run models side by side.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/vm.h"
#include "anvil/support/error.h"
#include "bindings.h"

namespace anvil::python {
namespace {

nb::dict benchmark_dict(const BenchmarkResult& r) {
  nb::dict d;
  d["mean"] = r.mean_ms / 1e3;
  d["median"] = r.median_ms / 1e3;
  d["min"] = r.min_ms / 1e3;
  d["max"] = r.max_ms / 1e3;
  d["std"] = r.std_ms / 1e3;
  nb::list results;
  for (double ms : r.results_ms) results.append(ms / 1e3);
  d["results"] = results;
  return d;
}

nb::list profile_list(const std::vector<KernelProfile>& rows) {
  nb::list out;
  for (const KernelProfile& row : rows) {
    nb::dict d;
    d["node_name"] = row.node_name;
    d["func_name"] = row.func_name;
    d["mean_ms"] = row.mean_ms;
    d["percent"] = row.percent;
    d["fused_ops"] = row.fused_ops;
    d["flops"] = row.flops;
    d["schedule"] = row.schedule;
    d["schedule_refused"] = row.schedule_refused;
    out.append(d);
  }
  return out;
}

nb::list input_info_list(const std::vector<InputInfo>& infos) {
  nb::list out;
  for (const InputInfo& info : infos)
    out.append(nb::make_tuple(info.name, nb::tuple(nb::cast(info.shape)), info.dtype.to_string()));
  return out;
}

// An input given by name or by position.
template <typename Executor>
void set_input(Executor& executor, nb::handle key, nb::handle value) {
  if (PyLong_Check(key.ptr())) {
    const int index = nb::cast<int>(key);
    Tensor tensor = as_tensor(value, "input " + std::to_string(index));
    nb::gil_scoped_release release;
    executor.set_input(index, tensor);
    return;
  }
  if (!PyUnicode_Check(key.ptr()))
    throw Error(std::string("set_input: an input is named by a str or an int, got ") +
                nb::type_name(key.type()).c_str());
  const std::string name = nb::cast<std::string>(key);
  Tensor tensor = as_tensor(value, "input '" + name + "'");
  nb::gil_scoped_release release;
  executor.set_input(name, tensor);
}

template <typename Executor>
Tensor get_output(const Executor& executor, int index) {
  if (index < 0 || index >= executor.get_num_outputs())
    throw Error("get_output: index " + std::to_string(index) + " is out of range (" +
                std::to_string(executor.get_num_outputs()) + " outputs)");
  return executor.get_output(index);
}

// benchmark() and profile() of either executor, without the GIL.
template <typename Executor>
nb::dict run_benchmark(Executor& executor, int repeat, int number) {
  BenchmarkResult r;
  {
    nb::gil_scoped_release release;
    r = executor.benchmark(repeat, number);
  }
  return benchmark_dict(r);
}

template <typename Executor>
nb::list run_profile(Executor& executor, int repeat) {
  std::vector<KernelProfile> rows;
  {
    nb::gil_scoped_release release;
    rows = executor.profile(repeat);
  }
  return profile_list(rows);
}

}  // namespace

void bind_executors(nb::module_& m) {
  nb::class_<Package>(m, "Package",
                      "A loaded package (load_module): a graph, its params and kernels, or a VM "
                      "executable and its kernels.")
      .def_prop_ro("graph_json", [](const Package& p) { return p.graph_json; })
      .def_prop_ro("is_vm", &Package::is_vm)
      .def_prop_ro("params",
                   [](const Package& p) {
                     nb::dict d;
                     for (const auto& [name, tensor] : p.params)
                       d[name.c_str()] = to_python(tensor);
                     return d;
                   })
      .def("function_names", [](const Package& p) { return p.lib.function_names(); })
      .def("get_function",
           [](const Package& p, const std::string& name) { return p.lib.function(name); });
  m.def(
      "load_module",
      [](const std::string& path) {
        nb::gil_scoped_release release;
        return load_module(path);
      },
      nb::arg("path"));

  nb::class_<GraphExecutor>(m, "GraphExecutor")
      .def(
          "__init__",
          [](GraphExecutor* self, const std::string& graph_json, const Package& lib,
             const Device& device) { new (self) GraphExecutor(graph_json, lib.lib, device); },
          nb::arg("graph_json"), nb::arg("lib"), nb::arg("device"))
      .def_static("from_package",
                  [](const Package& package, const Device& device) {
                    return package.create_executor(device);
                  })
      .def("set_input", &set_input<GraphExecutor>, nb::arg("key"), nb::arg("value"))
      .def("run", &GraphExecutor::run, nb::call_guard<nb::gil_scoped_release>())
      .def("get_output", &get_output<GraphExecutor>, nb::arg("index"))
      .def(
          "get_input",
          [](const GraphExecutor& e, int index) {
            if (index < 0 || index >= e.get_num_inputs())
              throw Error("get_input: index " + std::to_string(index) + " is out of range");
            return e.get_input(index);
          },
          nb::arg("index"))
      .def("get_input_index", &GraphExecutor::get_input_index)
      .def("get_num_inputs", &GraphExecutor::get_num_inputs)
      .def("get_num_outputs", &GraphExecutor::get_num_outputs)
      .def("get_input_info",
           [](const GraphExecutor& e) { return input_info_list(e.get_input_info()); })
      .def(
          "load_params",
          [](GraphExecutor& e, nb::bytes bytes) {
            std::string data(bytes.c_str(), bytes.size());
            nb::gil_scoped_release release;
            e.load_params(data);
          },
          nb::arg("param_bytes"))
      .def("benchmark", &run_benchmark<GraphExecutor>, nb::arg("repeat") = 10,
           nb::arg("number") = 1)
      .def("profile", &run_profile<GraphExecutor>, nb::arg("repeat") = 10);

  nb::class_<VirtualMachine>(m, "VirtualMachine")
      .def_static("from_package", [](const Package& package,
                                     const Device& device) { return package.create_vm(device); })
      .def("set_input", &set_input<VirtualMachine>, nb::arg("key"), nb::arg("value"))
      .def("run", &VirtualMachine::run, nb::call_guard<nb::gil_scoped_release>())
      .def("get_output", &get_output<VirtualMachine>, nb::arg("index"))
      .def("get_num_inputs", &VirtualMachine::get_num_inputs)
      .def("get_num_outputs", &VirtualMachine::get_num_outputs)
      .def("get_input_info",
           [](const VirtualMachine& v) { return input_info_list(v.get_input_info()); })
      .def("benchmark", &run_benchmark<VirtualMachine>, nb::arg("repeat") = 10,
           nb::arg("number") = 1)
      .def("profile", &run_profile<VirtualMachine>, nb::arg("repeat") = 10);
}

}  // namespace anvil::python
