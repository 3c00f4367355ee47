#include "model_loading.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <random>

#include "anvil/codegen/target.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"

namespace anvil::cli {
namespace {

const ir::TensorTypeNode& param_type(const frontend::ImportedModel& model, size_t i) {
  ir::Function main = model.mod.get_function("main");
  const auto* t = ir::as<ir::TensorTypeNode>(main->params[i]->annotation);
  ANVIL_ICHECK(t, "model input ", i, " is not a tensor");
  return *t;
}

}  // namespace

ShapeDict parse_input_shapes(const std::string& text) {
  ShapeDict result;
  size_t i = 0;
  // A shape string that does not parse is a usage error, like any other bad flag value.
  auto bad = [&](const std::string& why) {
    throw CLI::ValidationError("--input-shapes",
                               "'" + text + "': " + why + " at position " + std::to_string(i));
  };
  auto skip_space = [&] {
    while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ','))
      ++i;
  };
  skip_space();
  while (i < text.size()) {
    size_t colon = text.find(":[", i);
    if (colon == std::string::npos || colon == i) bad("expected name:[dims]");
    std::string name = text.substr(i, colon - i);
    i = colon + 2;
    std::vector<int64_t> dims;
    while (true) {
      while (i < text.size() && text[i] == ' ') ++i;
      if (i < text.size() && text[i] == ']') break;
      size_t start = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (start == i) bad("expected a dimension");
      if (i - start > 12) bad("dimension too large");
      dims.push_back(std::stoll(text.substr(start, i - start)));
      while (i < text.size() && text[i] == ' ') ++i;
      if (i < text.size() && text[i] == ',')
        ++i;
      else if (i >= text.size() || text[i] != ']')
        bad("expected ',' or ']'");
    }
    ++i;  // ']'
    for (const auto& [existing, shape] : result)
      if (existing == name) bad("input '" + name + "' given twice");
    result.emplace_back(name, dims);
    skip_space();
  }
  if (result.empty()) throw CLI::ValidationError("--input-shapes", "'" + text + "' names no input");
  return result;
}

const CLI::Validator& existing_path() {
  static const CLI::Validator validator(
      [](std::string& path) -> std::string {
        std::error_code ec;
        if (std::filesystem::exists(path, ec)) return {};
        return "'" + path + "' does not exist (no such file or directory)";
      },
      "PATH");
  return validator;
}

void check_target(const std::string& target) {
  try {
    codegen::Target::parse(target);
  } catch (const Error& e) {
    throw CLI::ValidationError("--target", e.what());
  }
}

frontend::ImportedModel load_onnx_model(const std::string& path, const ShapeDict& shapes) {
  frontend::OnnxImportOptions options;
  options.shape_dict = shapes;
  return frontend::from_onnx(path, options);
}

std::vector<Tensor> match_inputs(const frontend::ImportedModel& model,
                                 const std::vector<std::pair<std::string, Tensor>>& given) {
  std::vector<Tensor> result;
  for (const auto& [name, tensor] : given) {
    bool known = false;
    for (const std::string& n : model.input_names) known |= n == name;
    if (!known) {
      std::string names;
      for (const std::string& n : model.input_names) names += (names.empty() ? "" : ", ") + n;
      throw_error("input '", name, "' is not an input of the model (its inputs: ", names, ")");
    }
  }
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    const std::string& name = model.input_names[i];
    const Tensor* found = nullptr;
    for (const auto& [n, tensor] : given)
      if (n == name) found = &tensor;
    if (!found) throw_error("input '", name, "' is missing from the given inputs");
    const ir::TensorTypeNode& expected = param_type(model, i);
    if (found->dtype() != expected.dtype)
      throw_error("input '", name, "' has dtype ", found->dtype().to_string(), ", expected ",
                  expected.dtype.to_string());
    if (expected.shape) {
      const auto& dims = *expected.shape;
      if (size_t(found->ndim()) != dims.size())
        throw_error("input '", name, "' has shape ", shape_to_string(found->shape()), " (rank ",
                    found->ndim(), "), expected ", ir::dims_to_string(dims), " (rank ", dims.size(),
                    ")");
      for (size_t d = 0; d < dims.size(); ++d)
        if (dims[d].is_int() && dims[d].int_value() != found->shape()[d])
          throw_error("input '", name, "' has shape ", shape_to_string(found->shape()),
                      ", expected ", ir::dims_to_string(dims), " (dim ", d, " differs)");
    }
    result.push_back(*found);
  }
  return result;
}

Tensor fill_tensor(const std::vector<int64_t>& shape, DataType dtype, const std::string& mode,
                   std::mt19937_64& rng) {
  Tensor t = Tensor::empty(shape, dtype);
  if (mode == "random") {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    bool integer = dtype.is_int() || dtype.is_uint() || dtype.is_bool();
    for (int64_t k = 0; k < t.numel(); ++k)
      t.set_from_double(
          k, integer ? double(int64_t(uniform(rng) * (dtype.is_bool() ? 2 : 10))) : uniform(rng));
  } else {
    t.fill(mode == "ones" ? 1.0 : 0.0);
  }
  return t;
}

std::vector<std::pair<std::string, Tensor>> fill_inputs(const frontend::ImportedModel& model,
                                                        const std::string& mode) {
  std::vector<std::pair<std::string, Tensor>> result;
  std::mt19937_64 rng(0);
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    const ir::TensorTypeNode& type = param_type(model, i);
    auto shape = type.static_shape();
    if (!shape)
      throw_error("input '", model.input_names[i], "' has no static shape (",
                  ir::type_to_string(ir::Type(&type)),
                  "); give its values with --inputs or its shape with --input-shapes");
    result.emplace_back(model.input_names[i], fill_tensor(*shape, type.dtype, mode, rng));
  }
  return result;
}

ModelAndParams load_model_or_workload(const std::string& model, const std::string& input_shapes,
                                      const std::string& workload, int64_t batch) {
  if (model.empty()) {
    testing::Workload w = testing::workload_by_name(workload, batch);
    return ModelAndParams{w.mod, std::move(w.params)};
  }
  ShapeDict shapes = input_shapes.empty() ? ShapeDict{} : parse_input_shapes(input_shapes);
  frontend::ImportedModel imported = load_onnx_model(model, shapes);
  return ModelAndParams{imported.mod, std::move(imported.params)};
}

}  // namespace anvil::cli
