// Post-training static quantization of a float ONNX model (`anvil quantize`): calibration
// runs the float model on sample inputs and records the range of every activation that a
// quantized node reads or writes; the model is then rewritten in the QDQ format (the form
// ONNX Runtime's quantize_static writes and anvil's FakeQuantizationToInteger compiles):
// QuantizeLinear / DequantizeLinear pairs on those activations (uint8, asymmetric), int8
// weights quantized per output channel (symmetric), int32 biases in units of input scale x
// weight scale. The result loads in ONNX Runtime as well as in anvil.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/runtime/tensor.h"

namespace anvil::quantize {

// How an activation's range is chosen from what calibration saw.
enum class RangeMethod {
  MinMax,      // the smallest and largest value
  Percentile,  // the percentile-th value from each end (outliers clipped)
  Entropy,     // the clipping threshold whose 128-level quantization keeps the histogram's
               // distribution closest (least KL divergence), as TensorRT calibrates
};

// Parses "minmax", "percentile", "entropy"; throws Error naming the text otherwise.
RangeMethod parse_range_method(const std::string& text);

struct QuantizeOptions {
  RangeMethod method = RangeMethod::MinMax;
  double percentile = 99.999;        // for RangeMethod::Percentile, in (50, 100]
  bool per_channel = true;           // weights: one scale per output channel, else one per tensor
  std::vector<std::string> exclude;  // node names left in float
  bool report = false;               // measure per-layer SQNR (runs both models again)
};

// One calibration sample: a value for every graph input, by name.
using Sample = std::vector<std::pair<std::string, Tensor>>;

// The signal-to-quantization-noise ratio of one tensor: 10 log10(sum x^2 / sum (x - q)^2) over
// the calibration samples, q the quantized model's value of it.
struct TensorError {
  std::string node;     // the node that produces it
  std::string op_type;  // and its op type
  std::string tensor;
  double sqnr_db = 0;
};

struct QuantizeResult {
  std::string model;                         // the serialized QDQ ModelProto
  std::vector<std::string> quantized_nodes;  // names (or "op#index") of the nodes quantized
  std::vector<TensorError> layers;           // with options.report: every quantized activation
  std::vector<TensorError> outputs;          // with options.report: every graph output
};

// Quantizes the serialized float model `model` ("what" names it in errors). Every sample must
// give every graph input with the shape the model declares. Throws Error naming the culprit:
// a model that does not parse, an unknown excluded node, a sample without an input or of the
// wrong shape, no sample at all.
QuantizeResult quantize_model(const std::string& model, const std::string& what,
                              const std::vector<Sample>& samples, const QuantizeOptions& options);

}  // namespace anvil::quantize
