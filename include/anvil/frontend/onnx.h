// The ONNX importer: an ONNX model becomes a typed graph IR module plus its
// parameters, as TVM's relay.frontend.from_onnx does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::frontend {

struct OnnxImportOptions {
  // Fixes the shape of named inputs; other dynamic dims stay symbolic.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shape_dict;
  // Overrides the element type of every graph input whose type the model leaves open.
  std::optional<DataType> dtype;
  // Overrides the model's opset of the default domain.
  std::optional<int64_t> opset;
  // Turns initializers into constants in the graph instead of parameters.
  bool freeze_params = false;
  // Graph inputs or initializers whose values are fixed at compile time (shape, axes or pad
  // inputs, as TVM specializes them): each becomes a constant, neither an input nor a param,
  // so the ops reading it import in their static form.
  std::vector<std::pair<std::string, Tensor>> constant_inputs;
};

// The result of an import: @main takes the model's inputs (keeping their
// names) followed by one parameter per initializer (unless frozen).
struct ImportedModel {
  ir::IRModule mod;
  std::vector<std::pair<std::string, Tensor>> params;
  std::vector<std::string> input_names;   // the model's real inputs, in order
  std::vector<std::string> output_names;  // the graph outputs, in order
};

// Imports a model file; tensors stored beside it (external data) are read relative to it.
ImportedModel from_onnx(const std::filesystem::path& path, const OnnxImportOptions& options = {});

// Imports a serialized ModelProto; `what` names it in errors, `base_dir` locates external data.
ImportedModel from_onnx_bytes(std::string_view bytes, const OnnxImportOptions& options = {},
                              const std::string& what = "<model>",
                              const std::filesystem::path& base_dir = {});

// "Type:domain:since" rows of the converter table, for documentation and tests.
std::vector<std::string> supported_onnx_ops();

}  // namespace anvil::frontend
