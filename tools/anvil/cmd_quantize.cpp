// anvil quantize MODEL.onnx --calibration data.npz -o model_int8.onnx: post-training static
// quantization into the QDQ format (docs/quantization.md). The calibration file holds one array
// per model input; arrays whose first dim is a multiple of the input's are split into samples
// along it. --report prints each quantized activation's SQNR against the float model, worst
// first, so that a user sees which node to --exclude.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "anvil/quantize/quantize.h"
#include "anvil/runtime/npy.h"
#include "anvil/support/error.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct QuantizeCommandOptions {
  std::string model;
  std::string calibration;
  std::string output;
  std::string method = "minmax";
  double percentile = 99.999;
  bool per_tensor = false;
  std::vector<std::string> exclude;
  bool report = false;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error("cannot read '", path, "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The samples of the calibration file: each array cut along its first dim into pieces of the
// model's batch (the input's declared first dim).
std::vector<quantize::Sample> read_samples(const std::string& path,
                                           const frontend::ImportedModel& model) {
  NamedTensors arrays = read_npz(path);
  const ir::FunctionNode& main = *model.mod.get_function("main");
  int64_t count = -1;
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    const std::string& name = model.input_names[i];
    auto it =
        std::find_if(arrays.begin(), arrays.end(), [&](const auto& a) { return a.first == name; });
    if (it == arrays.end())
      throw_error("calibration file '", path, "' has no array for input '", name, "'");
    const auto* type = ir::as<ir::TensorTypeNode>(main.params[i]->checked_type);
    std::optional<std::vector<int64_t>> shape = type ? type->static_shape() : std::nullopt;
    if (!shape || shape->empty())
      throw_error("input '", name, "' needs a static shape to be calibrated");
    const std::vector<int64_t> given = it->second.shape_vector();
    bool fits = given.size() == shape->size() && (*shape)[0] > 0 && given[0] % (*shape)[0] == 0;
    for (size_t d = 1; fits && d < given.size(); ++d) fits = given[d] == (*shape)[d];
    if (!fits)
      throw_error("calibration array '", name, "' has shape ", shape_text(given),
                  ", which is not a stack of the input's ", shape_text(*shape));
    const int64_t n = given[0] / (*shape)[0];
    if (count >= 0 && n != count)
      throw_error("calibration arrays hold different numbers of samples (", count, " and ", n, ")");
    count = n;
    if (it->second.dtype() != type->dtype)
      throw_error("calibration array '", name, "' is ", it->second.dtype().to_string(),
                  ", the input is ", type->dtype.to_string());
    inputs.emplace_back(name, it->second);
  }
  std::vector<quantize::Sample> samples(size_t(std::max<int64_t>(count, 0)));
  for (const auto& [name, all] : inputs) {
    const int64_t per = all.numel() / count;
    std::vector<int64_t> shape = all.shape_vector();
    shape[0] /= count;
    for (int64_t k = 0; k < count; ++k) {
      Tensor piece = Tensor::empty(shape, all.dtype());
      for (int64_t i = 0; i < per; ++i) piece.set_from_double(i, all.get_as_double(k * per + i));
      samples[size_t(k)].emplace_back(name, piece);
    }
  }
  return samples;
}

void print_report(const quantize::QuantizeResult& result) {
  std::vector<quantize::TensorError> layers = result.layers;
  std::sort(layers.begin(), layers.end(),
            [](const auto& a, const auto& b) { return a.sqnr_db < b.sqnr_db; });
  std::printf("%-40s %-10s %9s  %s\n", "node", "op", "SQNR dB", "tensor");
  for (const quantize::TensorError& e : layers)
    std::printf("%-40s %-10s %9.2f  %s\n", e.node.c_str(), e.op_type.c_str(), e.sqnr_db,
                e.tensor.c_str());
  for (const quantize::TensorError& e : result.outputs)
    std::printf("output %s: SQNR %.2f dB against the float model\n", e.tensor.c_str(), e.sqnr_db);
}

void run_quantize(const QuantizeCommandOptions& options) {
  quantize::QuantizeOptions q;
  q.method = quantize::parse_range_method(options.method);
  q.percentile = options.percentile;
  q.per_channel = !options.per_tensor;
  q.exclude = options.exclude;
  q.report = options.report;
  frontend::ImportedModel model = load_onnx_model(options.model, {});
  std::vector<quantize::Sample> samples = read_samples(options.calibration, model);
  quantize::QuantizeResult result =
      quantize::quantize_model(read_bytes(options.model), "'" + options.model + "'", samples, q);
  std::ofstream out(options.output, std::ios::binary);
  if (!out || !out.write(result.model.data(), std::streamsize(result.model.size())))
    throw_error("cannot write '", options.output, "'");
  out.close();
  std::printf("quantized %zu nodes of %s with %zu calibration samples (%s) into %s\n",
              result.quantized_nodes.size(), options.model.c_str(), samples.size(),
              options.method.c_str(), options.output.c_str());
  if (options.report) print_report(result);
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto options = std::make_shared<QuantizeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "quantize", "post-training static quantization of a float ONNX model into the QDQ format");
  cmd->add_option("model", options->model, "the float model: an .onnx file")
      ->required()
      ->check(existing_path());
  cmd->add_option("--calibration", options->calibration,
                  "an .npz with one array per input, samples stacked along the first dim")
      ->required()
      ->check(existing_path());
  cmd->add_option("-o,--output", options->output, "the quantized model to write (.onnx)")
      ->required();
  cmd->add_option("--method", options->method, "activation ranges: minmax, percentile or entropy")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  cmd->add_option("--percentile", options->percentile,
                  "for --method percentile: the percentile kept at each end (default 99.999)")
      ->check(CLI::Range(50.0, 100.0));
  cmd->add_flag("--per-tensor", options->per_tensor,
                "one scale per weight tensor instead of one per output channel");
  cmd->add_option("--exclude", options->exclude, "nodes (by name) to leave in float");
  cmd->add_flag("--report", options->report,
                "print each quantized activation's SQNR against the float model, worst first");
  cmd->callback([options] { run_quantize(*options); });
}

}  // namespace anvil::cli
