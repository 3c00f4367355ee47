// Which nodes of a float ONNX graph get quantized and which activations need a range
// (plan_quantization), and the rewrite of the ModelProto into the QDQ format once the ranges
// are known (rewrite_qdq).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anvil/quantize/quantize.h"

namespace anvil::quantize {

struct QuantizationPlan {
  std::vector<int> nodes;                // indices of the nodes to quantize
  std::vector<std::string> activations;  // tensors that get a QuantizeLinear/DequantizeLinear pair
};

// Conv, Gemm and MatMul with a float initializer as weight and Add of two activations are
// quantized, unless excluded; their activation inputs and their outputs (after a Relu or Clip
// that is the output's only reader) get ranges. Throws Error naming an excluded node that the
// graph does not have, and a model whose opset cannot hold per-axis scales when options ask
// for them.
QuantizationPlan plan_quantization(const onnx::ModelProto& model, const QuantizeOptions& options);

// The name a tensor's dequantized value takes in the rewritten graph (the tensor's own name
// for a graph output, whose float producer is renamed).
std::string dequantized_name(const onnx::GraphProto& graph, const std::string& tensor);

// Rewrites the model in place: QuantizeLinear/DequantizeLinear on each planned activation
// (uint8, asymmetric over its range), int8 weights and int32 biases dequantized in front of
// each planned node.
void rewrite_qdq(onnx::ModelProto& model, const QuantizationPlan& plan,
                 const std::map<std::string, std::pair<double, double>>& ranges,
                 const QuantizeOptions& options);

// The label of node i in reports and messages: its name, or "OpType#i" when it has none.
std::string node_label(const onnx::GraphProto& graph, int i);

}  // namespace anvil::quantize
