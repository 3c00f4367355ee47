// anvil quantize: calibrate the float model with anvil itself (compiled, every activation to
// be quantized added as a graph output), rewrite it in the QDQ format, and, for the report,
// run the float and the quantized model side by side to measure each activation's SQNR.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <optional>

#include "anvil/driver/build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/support/error.h"
#include "quantize/qdq_rewrite.h"
#include "quantize/range_observer.h"

namespace anvil::quantize {
namespace {

onnx::ModelProto parse_model(const std::string& bytes, const std::string& what) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw_error(what, ": not an ONNX model (protobuf parse failed)");
  return model;
}

// The model with `extra` tensors added as graph outputs (after its own), compiled; runs a
// sample and returns every output.
class ProbedModel {
 public:
  ProbedModel(onnx::ModelProto model, const std::vector<std::string>& extra,
              const std::string& what) {
    onnx::GraphProto& g = *model.mutable_graph();
    std::map<std::string, int> existing;
    for (int i = 0; i < g.output_size(); ++i) existing[g.output(i).name()] = i;
    for (const std::string& name : extra) {
      auto it = existing.find(name);
      if (it != existing.end()) {
        index_.push_back(it->second);
        continue;
      }
      onnx::ValueInfoProto* out = g.add_output();
      out->set_name(name);
      out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      existing[name] = g.output_size() - 1;
      index_.push_back(g.output_size() - 1);
    }
    std::string bytes;
    model.SerializeToString(&bytes);
    imported_ = frontend::from_onnx_bytes(bytes, {}, what);
    built_ = std::make_unique<driver::BuiltModule>(driver::build(imported_.mod, imported_.params));
    executor_ = std::make_unique<GraphExecutor>(built_->create_executor());
  }

  // The values of the `extra` tensors (in their order) and of the model's own outputs.
  std::vector<Tensor> run(const Sample& sample, size_t own_outputs,
                          std::vector<Tensor>* outputs = nullptr) {
    for (const std::string& input : imported_.input_names) {
      const Tensor* value = nullptr;
      for (const auto& [name, t] : sample)
        if (name == input) value = &t;
      if (!value) throw_error("a calibration sample has no value for input '", input, "'");
      executor_->set_input(input, *value);
    }
    executor_->run();
    std::vector<Tensor> extra;
    for (int i : index_) extra.push_back(executor_->get_output(i));
    if (outputs)
      for (size_t i = 0; i < own_outputs; ++i) outputs->push_back(executor_->get_output(int(i)));
    return extra;
  }

 private:
  std::vector<int> index_;
  frontend::ImportedModel imported_;
  std::unique_ptr<driver::BuiltModule> built_;
  std::unique_ptr<GraphExecutor> executor_;
};

// Accumulates the signal and noise energy of one tensor over the samples.
struct Energy {
  double signal = 0, noise = 0;
  void add(const Tensor& reference, const Tensor& quantized) {
    const int64_t n = std::min(reference.numel(), quantized.numel());
    for (int64_t i = 0; i < n; ++i) {
      const double x = reference.get_as_double(i), d = x - quantized.get_as_double(i);
      signal += x * x;
      noise += d * d;
    }
  }
  double sqnr_db() const {
    if (noise == 0) return 200.0;  // identical: report a ceiling rather than infinity
    return 10.0 * std::log10(std::max(signal, 1e-300) / noise);
  }
};

// Who writes each tensor: the label and op type of its producer.
std::map<std::string, std::pair<std::string, std::string>> producers(const onnx::GraphProto& g) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string& o : g.node(i).output())
      out[o] = {node_label(g, i), g.node(i).op_type()};
  for (const onnx::ValueInfoProto& v : g.input()) out.emplace(v.name(), std::pair{"(input)", "-"});
  return out;
}

}  // namespace

QuantizeResult quantize_model(const std::string& bytes, const std::string& what,
                              const std::vector<Sample>& samples, const QuantizeOptions& options) {
  if (samples.empty()) throw_error("no calibration sample");
  if (options.method == RangeMethod::Percentile &&
      !(options.percentile > 50 && options.percentile <= 100))
    throw_error("--percentile ", options.percentile, " is not in (50, 100]");
  const onnx::ModelProto model = parse_model(bytes, what);
  const QuantizationPlan plan = plan_quantization(model, options);

  QuantizeResult result;
  for (int i : plan.nodes) result.quantized_nodes.push_back(node_label(model.graph(), i));
  std::map<std::string, std::pair<double, double>> ranges;
  // The float model compiled with the activations as outputs: calibration runs it, and the
  // report runs it again beside the quantized model.
  std::optional<ProbedModel> float_model;
  if (!plan.activations.empty()) {
    ProbedModel& probe = float_model.emplace(model, plan.activations, what);
    std::vector<RangeObserver> observers(plan.activations.size());
    const size_t own = size_t(model.graph().output_size());
    for (const Sample& s : samples) {
      std::vector<Tensor> values = probe.run(s, own);
      for (size_t k = 0; k < values.size(); ++k) observers[k].observe_extremes(values[k]);
    }
    if (needs_histogram(options.method))
      for (const Sample& s : samples) {
        std::vector<Tensor> values = probe.run(s, own);
        for (size_t k = 0; k < values.size(); ++k) observers[k].observe_histogram(values[k]);
      }
    for (size_t k = 0; k < observers.size(); ++k)
      ranges[plan.activations[k]] = observers[k].range(options.method, options.percentile);
  }

  onnx::ModelProto quantized = model;
  rewrite_qdq(quantized, plan, ranges, options);
  quantized.SerializeToString(&result.model);
  if (!options.report) return result;

  // The report: each quantized activation and each output, float against quantized.
  std::vector<std::string> dequantized;
  for (const std::string& t : plan.activations)
    dequantized.push_back(dequantized_name(quantized.graph(), t));
  if (!float_model) float_model.emplace(model, plan.activations, what);
  ProbedModel int8_model(quantized, dequantized, what + " (quantized)");
  const size_t own = size_t(model.graph().output_size());
  std::vector<Energy> layers(plan.activations.size()), outputs(own);
  for (const Sample& s : samples) {
    std::vector<Tensor> float_out, int8_out;
    std::vector<Tensor> a = float_model->run(s, own, &float_out);
    std::vector<Tensor> b = int8_model.run(s, own, &int8_out);
    for (size_t k = 0; k < a.size(); ++k) layers[k].add(a[k], b[k]);
    for (size_t k = 0; k < own; ++k) outputs[k].add(float_out[k], int8_out[k]);
  }
  auto who = producers(model.graph());
  for (size_t k = 0; k < layers.size(); ++k) {
    const auto& [node, op] = who[plan.activations[k]];
    result.layers.push_back({node, op, plan.activations[k], layers[k].sqnr_db()});
  }
  for (size_t k = 0; k < own; ++k) {
    const std::string& name = model.graph().output(int(k)).name();
    result.outputs.push_back({who[name].first, who[name].second, name, outputs[k].sqnr_db()});
  }
  return result;
}

}  // namespace anvil::quantize
