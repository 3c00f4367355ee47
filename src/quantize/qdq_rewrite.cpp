// The QDQ rewrite of a float ONNX graph: activations as uint8 with a scale and zero point
// over their calibrated range, weights as int8 symmetric per output channel, biases as int32
// in units of input scale x weight scale. The layout of the result follows what ONNX Runtime's
// quantize_static writes, so that both runtimes fuse it the same way.
#include "quantize/qdq_rewrite.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "anvil/frontend/onnx_tensor.h"
#include "anvil/support/error.h"

namespace anvil::quantize {
namespace {

using frontend::onnx_import::tensor_from_proto;

const onnx::TensorProto* find_initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const onnx::TensorProto& t : g.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

bool is_float_initializer(const onnx::GraphProto& g, const std::string& name, int rank) {
  const onnx::TensorProto* t = find_initializer(g, name);
  return t && t->data_type() == onnx::TensorProto::FLOAT && t->dims_size() == rank;
}

int64_t int_attr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

double float_attr(const onnx::NodeProto& node, const std::string& name, double fallback) {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

bool is_activation(const onnx::GraphProto& g, const std::string& name) {
  return !name.empty() && !find_initializer(g, name);
}

// Whether node i is one this quantizer handles, and the axis of its weight's output channels.
bool quantizable(const onnx::GraphProto& g, const onnx::NodeProto& n, int* weight_axis) {
  if (n.domain() != "" && n.domain() != "ai.onnx") return false;
  if (n.op_type() == "Conv") {
    *weight_axis = 0;
    return n.input_size() >= 2 && is_activation(g, n.input(0)) &&
           is_float_initializer(g, n.input(1), 4);
  }
  if (n.op_type() == "Gemm") {
    *weight_axis = int_attr(n, "transB", 0) ? 0 : 1;
    return n.input_size() >= 2 && int_attr(n, "transA", 0) == 0 &&
           float_attr(n, "alpha", 1.0) == 1.0 && float_attr(n, "beta", 1.0) == 1.0 &&
           is_activation(g, n.input(0)) && is_float_initializer(g, n.input(1), 2);
  }
  if (n.op_type() == "MatMul") {
    *weight_axis = 1;
    return n.input_size() == 2 && is_activation(g, n.input(0)) &&
           is_float_initializer(g, n.input(1), 2);
  }
  if (n.op_type() == "Add") {
    *weight_axis = -1;
    return n.input_size() == 2 && is_activation(g, n.input(0)) && is_activation(g, n.input(1));
  }
  return false;
}

int64_t default_opset(const onnx::ModelProto& m) {
  for (const onnx::OperatorSetIdProto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 1;
}

onnx::TensorProto make_initializer(const std::string& name, int32_t type,
                                   const std::vector<int64_t>& dims, const void* data,
                                   size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

onnx::NodeProto make_node(const std::string& op, std::vector<std::string> inputs,
                          const std::string& output, const std::string& name, int64_t axis = -1) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& i : inputs) n.add_input(i);
  n.add_output(output);
  if (axis >= 0) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
  }
  return n;
}

bool is_graph_output(const onnx::GraphProto& g, const std::string& name) {
  for (const onnx::ValueInfoProto& o : g.output())
    if (o.name() == name) return true;
  return false;
}

}  // namespace

std::string node_label(const onnx::GraphProto& graph, int i) {
  const onnx::NodeProto& n = graph.node(i);
  return n.name().empty() ? n.op_type() + "#" + std::to_string(i) : n.name();
}

QuantizationPlan plan_quantization(const onnx::ModelProto& model, const QuantizeOptions& options) {
  const onnx::GraphProto& g = model.graph();
  std::set<std::string> excluded(options.exclude.begin(), options.exclude.end());
  std::set<std::string> labels;
  for (int i = 0; i < g.node_size(); ++i) labels.insert(node_label(g, i));
  for (const std::string& name : excluded)
    if (!labels.count(name)) throw_error("--exclude: the model has no node '", name, "'");
  std::unordered_map<std::string, std::vector<int>> readers;
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string& in : g.node(i).input()) readers[in].push_back(i);

  QuantizationPlan plan;
  std::set<std::string> seen;
  auto want = [&](const std::string& tensor) {
    if (seen.insert(tensor).second) plan.activations.push_back(tensor);
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    int axis = 0;
    if (excluded.count(node_label(g, i)) || !quantizable(g, n, &axis)) continue;
    plan.nodes.push_back(i);
    want(n.input(0));
    if (n.op_type() == "Add") want(n.input(1));
    // The output, after a Relu or Clip that is its only reader (FakeQuantizationToInteger
    // folds that activation into the requantization's bounds).
    std::string out = n.output(0);
    const std::vector<int>& next = readers[out];
    if (next.size() == 1 && !is_graph_output(g, out)) {
      const onnx::NodeProto& act = g.node(next[0]);
      if ((act.op_type() == "Relu" || act.op_type() == "Clip") &&
          !excluded.count(node_label(g, next[0])))
        out = act.output(0);
    }
    want(out);
  }
  if (options.per_channel && !plan.nodes.empty() && default_opset(model) < 13)
    throw_error("per-channel weights need opset 13 or newer, the model has opset ",
                default_opset(model), " (quantize per tensor with --per-tensor)");
  return plan;
}

std::string dequantized_name(const onnx::GraphProto& graph, const std::string& tensor) {
  return is_graph_output(graph, tensor) ? tensor : tensor + "_dequantized";
}

void rewrite_qdq(onnx::ModelProto& model, const QuantizationPlan& plan,
                 const std::map<std::string, std::pair<double, double>>& ranges,
                 const QuantizeOptions& options) {
  onnx::GraphProto& g = *model.mutable_graph();
  std::vector<onnx::NodeProto> front;  // weight dequantizers and the graph inputs' pairs
  std::unordered_map<std::string, std::vector<onnx::NodeProto>> after;  // pairs after a producer
  std::map<std::string, float> activation_scale;

  std::set<std::string> graph_inputs;
  for (const onnx::ValueInfoProto& v : g.input()) graph_inputs.insert(v.name());
  // Activation pairs: T -> QuantizeLinear -> DequantizeLinear -> every reader of T.
  std::map<std::string, std::string> renamed;  // graph outputs: producer's output -> new name
  for (const std::string& tensor : plan.activations) {
    auto it = ranges.find(tensor);
    if (it == ranges.end()) throw_error("calibration saw no value of '", tensor, "'");
    auto [lo, hi] = it->second;
    float scale = float((hi - lo) / 255.0);
    if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0f;
    const double zero = std::nearbyint(-lo / double(scale));
    const uint8_t zero_point = uint8_t(std::clamp(zero, 0.0, 255.0));
    activation_scale[tensor] = scale;
    *g.add_initializer() =
        make_initializer(tensor + "_scale", onnx::TensorProto::FLOAT, {}, &scale, sizeof scale);
    *g.add_initializer() =
        make_initializer(tensor + "_zero_point", onnx::TensorProto::UINT8, {}, &zero_point, 1);
    const bool output = is_graph_output(g, tensor);
    const std::string source = output ? tensor + "_float" : tensor;
    if (output) renamed[tensor] = source;
    std::vector<onnx::NodeProto> pair = {
        make_node("QuantizeLinear", {source, tensor + "_scale", tensor + "_zero_point"},
                  tensor + "_quantized", tensor + "_QuantizeLinear"),
        make_node("DequantizeLinear",
                  {tensor + "_quantized", tensor + "_scale", tensor + "_zero_point"},
                  dequantized_name(g, tensor), tensor + "_DequantizeLinear")};
    auto& slot = graph_inputs.count(tensor) ? front : after[tensor];
    slot.insert(slot.end(), pair.begin(), pair.end());
  }
  std::map<int, float> input_scales;  // of each quantized product, for its bias
  for (int index : plan.nodes) input_scales[index] = activation_scale.at(g.node(index).input(0));
  // Readers of a paired activation read its dequantized value (outputs keep their names: their
  // producers write the float value under a new one).
  for (onnx::NodeProto& n : *g.mutable_node()) {
    for (int k = 0; k < n.input_size(); ++k)
      if (activation_scale.count(n.input(k)) && !renamed.count(n.input(k)))
        n.set_input(k, dequantized_name(g, n.input(k)));
    for (int k = 0; k < n.output_size(); ++k)
      if (auto r = renamed.find(n.output(k)); r != renamed.end()) n.set_output(k, r->second);
  }

  // Weights and biases of the quantized products.
  for (int index : plan.nodes) {
    onnx::NodeProto& n = *g.mutable_node(index);
    if (n.op_type() == "Add") continue;
    int axis = 0;
    quantizable(g, n, &axis);
    const std::string weight_name = n.input(1);
    Tensor w = tensor_from_proto(*find_initializer(g, weight_name), {});
    std::vector<int64_t> shape = w.shape_vector();
    const int64_t channels = shape[size_t(axis)];
    const int64_t inner = axis == 0 ? w.numel() / channels : 1;
    // Axis 0: channel c holds elements [c * inner, (c + 1) * inner); axis 1 of a (K, N)
    // matrix: element i is channel i % N.
    std::vector<float> scales(size_t(options.per_channel ? channels : 1), 0.0f);
    for (int64_t i = 0; i < w.numel(); ++i) {
      const int64_t c = axis == 0 ? i / inner : i % channels;
      float& s = scales[options.per_channel ? size_t(c) : 0];
      s = std::max(s, float(std::fabs(w.get_as_double(i))));
    }
    for (float& s : scales) s = s > 0 ? s / 127.0f : 1.0f;
    std::vector<int8_t> q(static_cast<size_t>(w.numel()));
    for (int64_t i = 0; i < w.numel(); ++i) {
      const int64_t c = axis == 0 ? i / inner : i % channels;
      const float s = scales[options.per_channel ? size_t(c) : 0];
      q[size_t(i)] =
          int8_t(std::clamp(std::nearbyint(float(w.get_as_double(i)) / s), -127.0f, 127.0f));
    }
    const std::string base = weight_name + "_" + std::to_string(index);
    std::vector<int64_t> scale_dims;
    if (options.per_channel) scale_dims = {channels};
    std::vector<int8_t> zeros(scales.size(), 0);
    *g.add_initializer() =
        make_initializer(base + "_quantized", onnx::TensorProto::INT8, shape, q.data(), q.size());
    *g.add_initializer() = make_initializer(base + "_scale", onnx::TensorProto::FLOAT, scale_dims,
                                            scales.data(), scales.size() * sizeof(float));
    *g.add_initializer() = make_initializer(base + "_zero_point", onnx::TensorProto::INT8,
                                            scale_dims, zeros.data(), zeros.size());
    front.push_back(make_node(
        "DequantizeLinear", {base + "_quantized", base + "_scale", base + "_zero_point"},
        base + "_dequantized", base + "_DequantizeLinear", options.per_channel ? axis : -1));
    n.set_input(1, base + "_dequantized");

    // The bias, in units of input scale x weight scale.
    if (n.input_size() < 3 || !is_float_initializer(g, n.input(2), 1)) continue;
    Tensor b = tensor_from_proto(*find_initializer(g, n.input(2)), {});
    if (b.numel() != channels) continue;
    const float input_scale = input_scales.at(index);
    std::vector<int32_t> bias(static_cast<size_t>(channels));
    std::vector<float> bias_scales(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      bias_scales[size_t(c)] = input_scale * scales[options.per_channel ? size_t(c) : 0];
      double v = std::nearbyint(b.get_as_double(c) / double(bias_scales[size_t(c)]));
      bias[size_t(c)] = int32_t(std::clamp(v, -2147483647.0, 2147483647.0));
    }
    std::vector<int32_t> bias_zeros(static_cast<size_t>(channels), 0);
    const std::string bias_base = n.input(2) + "_" + std::to_string(index);
    *g.add_initializer() = make_initializer(bias_base + "_quantized", onnx::TensorProto::INT32,
                                            {channels}, bias.data(), bias.size() * 4);
    *g.add_initializer() = make_initializer(bias_base + "_scale", onnx::TensorProto::FLOAT,
                                            {channels}, bias_scales.data(), bias_scales.size() * 4);
    *g.add_initializer() = make_initializer(bias_base + "_zero_point", onnx::TensorProto::INT32,
                                            {channels}, bias_zeros.data(), bias_zeros.size() * 4);
    front.push_back(
        make_node("DequantizeLinear",
                  {bias_base + "_quantized", bias_base + "_scale", bias_base + "_zero_point"},
                  bias_base + "_dequantized", bias_base + "_DequantizeLinear", 0));
    n.set_input(2, bias_base + "_dequantized");
  }

  // Node order: the dequantized weights and the inputs' pairs first, each activation's pair
  // right after its producer.
  std::vector<onnx::NodeProto> ordered = front;
  for (const onnx::NodeProto& n : g.node()) {
    ordered.push_back(n);
    for (const std::string& out : n.output()) {
      std::string original = out;
      for (const auto& [name, source] : renamed)
        if (source == out) original = name;
      if (auto it = after.find(original); it != after.end())
        ordered.insert(ordered.end(), it->second.begin(), it->second.end());
    }
  }
  g.clear_node();
  for (onnx::NodeProto& n : ordered) *g.add_node() = std::move(n);

  // The float weights the int8 ones replaced, now read by nothing (and their entries among the
  // graph inputs, where older models list initializers too).
  std::set<std::string> used;
  for (const onnx::NodeProto& n : g.node())
    for (const std::string& in : n.input()) used.insert(in);
  for (const onnx::ValueInfoProto& o : g.output()) used.insert(o.name());
  auto* inits = g.mutable_initializer();
  std::set<std::string> dropped;
  for (int i = inits->size() - 1; i >= 0; --i)
    if (!used.count(inits->Get(i).name())) {
      dropped.insert(inits->Get(i).name());
      inits->DeleteSubrange(i, 1);
    }
  auto* inputs = g.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i)
    if (dropped.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
}

}  // namespace anvil::quantize
