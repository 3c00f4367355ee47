// What several subcommands share: reading a model file and the
// --input-shapes flag, and checking user inputs against a model's signature.
#pragma once

#include <CLI/CLI.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "anvil/frontend/onnx.h"

namespace anvil::cli {

using ShapeDict = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// Parses "a:[1,3,224,224] b:[1,10]" (also comma-separated entries); throws Error naming the text.
ShapeDict parse_input_shapes(const std::string& text);

// A CLI11 check for flags and arguments that name an input file: a path that does not exist is
// a usage error, "'PATH' does not exist (no such file or directory)".
const CLI::Validator& existing_path();

// Throws a usage error naming the bad part of a target string ("llvm -mcpu=NAME", "c").
void check_target(const std::string& target);

// Imports an ONNX model file with the given fixed input shapes.
frontend::ImportedModel load_onnx_model(const std::string& path, const ShapeDict& shapes);

// The graph and params of a subcommand's model: the ONNX file `model` (with --input-shapes
// `input_shapes`, which may be empty) or, when `model` is empty, the built-in `workload` at
// `batch`.
struct ModelAndParams {
  ir::IRModule mod;
  std::vector<std::pair<std::string, Tensor>> params;
};
ModelAndParams load_model_or_workload(const std::string& model, const std::string& input_shapes,
                                      const std::string& workload, int64_t batch = 1);

// Checks named input tensors against @main's parameters (names, dtypes,
// ranks, static dims) and returns them in parameter order; unknown or
// missing names are errors naming the input.
std::vector<Tensor> match_inputs(const frontend::ImportedModel& model,
                                 const std::vector<std::pair<std::string, Tensor>>& given);

// A tensor filled by mode ("zeros", "ones" or "random" from rng).
Tensor fill_tensor(const std::vector<int64_t>& shape, DataType dtype, const std::string& mode,
                   std::mt19937_64& rng);

// Inputs filled by mode ("zeros", "ones" or "random", seeded), for models whose input shapes are
// static.
std::vector<std::pair<std::string, Tensor>> fill_inputs(const frontend::ImportedModel& model,
                                                        const std::string& mode);

}  // namespace anvil::cli
