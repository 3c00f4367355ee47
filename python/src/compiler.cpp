// The compiler half of the extension: graph IR modules and their text, the ONNX importer,
// build() and the VM's build, BindParams, the built-in workloads. Builds release the GIL.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>

#include "anvil/driver/apply_records.h"
#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "anvil/tir/parser.h"
#include "anvil/transform/passes.h"
#include "bindings.h"

namespace anvil::python {
namespace {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

NamedTensors to_named(nb::handle params) {
  NamedTensors out;
  if (params.is_none()) return out;
  if (!nb::isinstance<nb::dict>(params))
    throw Error(std::string("params: expected a dict of name -> array, got ") +
                nb::type_name(params.type()).c_str());
  for (auto [key, value] : nb::borrow<nb::dict>(params)) {
    if (!PyUnicode_Check(key.ptr())) throw Error("params: every key must be a str");
    std::string name = nb::cast<std::string>(key);
    // Copied: the compiler keeps params beyond this call, the caller's array may change.
    out.emplace_back(name, as_tensor(value, "param '" + name + "'").copy());
  }
  return out;
}

nb::dict to_dict(const NamedTensors& tensors) {
  nb::dict d;
  for (const auto& [name, tensor] : tensors) d[name.c_str()] = to_python(tensor);
  return d;
}

// The build options of a Python PassContext's fields.
driver::BuildOptions build_options(const std::string& target, int opt_level,
                                   const std::vector<std::string>& disabled_passes,
                                   const std::map<std::string, std::string>& config) {
  driver::BuildOptions options;
  options.target = target;
  options.pass_context.opt_level = opt_level;
  options.pass_context.disabled_passes = disabled_passes;
  options.pass_context.config = config;
  return options;
}

nb::tuple workload_tuple(const testing::Workload& w) {
  return nb::make_tuple(nb::cast(w.mod), to_dict(w.params));
}

}  // namespace

void bind_compiler(nb::module_& m) {
  tir::install_graph_ir_hooks();

  nb::class_<ir::IRModule>(m, "IRModule", "A module of the graph IR: @main and other functions.")
      .def(
          "astext", [](const ir::IRModule& mod) { return ir::print_module(mod); },
          "The module in the graph IR's text format (anvil.ir.parse reads it back).")
      .def("__str__", [](const ir::IRModule& mod) { return ir::print_module(mod); })
      .def("function_names", &ir::IRModule::names)
      .def("__contains__",
           [](const ir::IRModule& mod, const std::string& name) { return mod.contains(name); });
  m.def(
      "parse",
      [](const std::string& text, const std::string& source_name) {
        return ir::parse_module(text, source_name);
      },
      nb::arg("text"), nb::arg("source_name") = "<text>");
  m.def(
      "parse_tir",
      [](const std::string& text, const std::string& source_name) {
        ir::IRModule mod;
        for (const tir::PrimFunc& func : tir::parse_prim_funcs(text, source_name))
          mod.add(func->global_symbol(), func);
        return mod;
      },
      nb::arg("text"), nb::arg("source_name") = "<text>");

  m.def(
      "from_onnx",
      [](nb::bytes model, const std::string& what, const std::string& base_dir,
         std::vector<std::pair<std::string, std::vector<int64_t>>> shape,
         std::optional<std::string> dtype, std::optional<int64_t> opset, bool freeze_params) {
        frontend::OnnxImportOptions options;
        options.shape_dict = std::move(shape);
        if (dtype) options.dtype = DataType::parse(*dtype);
        options.opset = opset;
        options.freeze_params = freeze_params;
        std::string bytes(model.c_str(), model.size());
        frontend::ImportedModel imported;
        {
          nb::gil_scoped_release release;
          imported = frontend::from_onnx_bytes(bytes, options, what, base_dir);
        }
        return nb::make_tuple(nb::cast(imported.mod), to_dict(imported.params),
                              nb::cast(imported.input_names), nb::cast(imported.output_names));
      },
      nb::arg("model"), nb::arg("what"), nb::arg("base_dir"), nb::arg("shape"),
      nb::arg("dtype").none(), nb::arg("opset").none(), nb::arg("freeze_params"));

  m.def(
      "bind_params",
      [](const ir::IRModule& mod, nb::handle params) {
        return transform::bind_params(mod, to_named(params));
      },
      nb::arg("mod"), nb::arg("params").none());

  nb::class_<driver::BuiltModule>(m, "BuiltModule",
                                  "What build() returns: graph JSON, kernels and params.")
      .def_prop_ro("graph_json", &driver::BuiltModule::graph_json)
      .def_prop_ro("params", [](const driver::BuiltModule& b) { return to_dict(b.params()); })
      .def("package", &driver::BuiltModule::package)
      .def("create_executor", &driver::BuiltModule::create_executor)
      .def("get_source", &driver::BuiltModule::get_source, nb::arg("format"))
      .def(
          "export_library",
          [](const driver::BuiltModule& b, const std::string& path, const std::string& cc) {
            nb::gil_scoped_release release;
            b.export_library(path, cc);
          },
          nb::arg("path"), nb::arg("cc") = "cc");
  m.def(
      "build",
      [](const ir::IRModule& mod, nb::handle params, const std::string& target, int opt_level,
         std::vector<std::string> disabled_passes, std::map<std::string, std::string> config,
         const std::string& tuning_records) {
        NamedTensors named = to_named(params);
        driver::BuildOptions options = build_options(target, opt_level, disabled_passes, config);
        nb::gil_scoped_release release;
        driver::TuningRecordsApplier records(tuning_records, target, /*strict=*/false);
        records.install(options);
        driver::BuiltModule built = driver::build(mod, named, options);
        records.finish();
        for (const std::string& problem : records.problems())
          std::fprintf(stderr, "warning: %s\n", problem.c_str());
        return built;
      },
      nb::arg("mod"), nb::arg("params").none(), nb::arg("target"), nb::arg("opt_level"),
      nb::arg("disabled_passes"), nb::arg("config"), nb::arg("tuning_records") = "");
  nb::class_<driver::VmModule>(m, "VmModule", "What the VM's build returns: the executable.")
      .def("create_vm", &driver::VmModule::create_vm)
      .def("as_text", &driver::VmModule::print_bytecode)
      .def(
          "export_library",
          [](const driver::VmModule& v, const std::string& path, const std::string& cc) {
            nb::gil_scoped_release release;
            v.export_library(path, cc);
          },
          nb::arg("path"), nb::arg("cc") = "cc");
  m.def(
      "vm_build",
      [](const ir::IRModule& mod, nb::handle params, const std::string& target, int opt_level,
         std::vector<std::string> disabled_passes, std::map<std::string, std::string> config) {
        NamedTensors named = to_named(params);
        driver::BuildOptions options = build_options(target, opt_level, disabled_passes, config);
        nb::gil_scoped_release release;
        return driver::build_vm(mod, named, options);
      },
      nb::arg("mod"), nb::arg("params").none(), nb::arg("target"), nb::arg("opt_level"),
      nb::arg("disabled_passes"), nb::arg("config"));

  m.def(
      "resnet",
      [](int num_layers, int64_t batch, std::vector<int64_t> image_shape, int64_t classes,
         const std::string& dtype) {
        return workload_tuple(testing::resnet(num_layers, batch, std::move(image_shape), classes,
                                              DataType::parse(dtype)));
      },
      nb::arg("num_layers"), nb::arg("batch_size"), nb::arg("image_shape"), nb::arg("num_classes"),
      nb::arg("dtype"));
  m.def(
      "mlp",
      [](int64_t batch, int64_t in_features, int64_t hidden, int64_t classes,
         const std::string& dtype) {
        return workload_tuple(
            testing::mlp(batch, in_features, hidden, classes, DataType::parse(dtype)));
      },
      nb::arg("batch_size"), nb::arg("in_features"), nb::arg("hidden"), nb::arg("num_classes"),
      nb::arg("dtype"));
  m.def(
      "mobilenet",
      [](int64_t batch, int64_t classes, std::vector<int64_t> image_shape,
         const std::string& dtype) {
        return workload_tuple(
            testing::mobilenet(batch, classes, std::move(image_shape), DataType::parse(dtype)));
      },
      nb::arg("batch_size"), nb::arg("num_classes"), nb::arg("image_shape"), nb::arg("dtype"));
}

}  // namespace anvil::python
