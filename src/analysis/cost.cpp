// Per-call costs by op family: MACs of the contraction ops from their operand and output types,
// FLOPs of everything else per output (or input) element. The conventions are in
// docs/analysis.md; the numbers follow thop and fvcore so that totals compare with theirs.
#include "anvil/analysis/cost.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/cost_util.h"
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/op.h"
#include "anvil/support/error.h"

namespace anvil::analysis {
namespace {

using detail::elements;
using detail::tensor_dims;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

const ir::Type& operand_type(const ir::CallNode& call, size_t i) {
  ANVIL_ICHECK(i < call.args.size(), "call has ", call.args.size(), " operands, asked for ", i);
  const ir::Type& type = call.args[i]->checked_type;
  if (!type) throw_error("cost analysis needs inferred types; operand ", i, " has none");
  return type;
}

// Channels of a tensor in a layout such as "NCHW", "NHWC" or "NCHW16c": the product of the
// primal 'C' axis and its block 'c' axis. Digits in the layout are block factors, not axes.
int64_t channels_in_layout(const std::vector<int64_t>& shape, const std::string& layout) {
  int64_t channels = 1;
  bool found = false;
  size_t axis = 0;
  for (char c : layout) {
    if (c >= '0' && c <= '9') continue;
    if ((c == 'C' || c == 'c') && axis < shape.size()) {
      channels *= shape[axis];
      found = true;
    }
    ++axis;
  }
  // A layout the call's rank does not match: fall back to NC... order.
  if (!found || axis != shape.size()) return shape.size() > 1 ? shape[1] : 1;
  return channels;
}

// Every output element of a convolution reads weight_elements / out_channels weights:
// (in_channels / groups) x kernel elements, whatever the layouts.
template <typename Attrs>
int64_t conv_macs(const ir::CallNode& call, size_t weight_index) {
  const auto& attrs = call.attrs_as<Attrs>();
  std::vector<int64_t> out = tensor_dims(call.checked_type);
  const std::string& out_layout = attrs.out_layout.empty() ? attrs.data_layout : attrs.out_layout;
  int64_t out_channels = std::max<int64_t>(channels_in_layout(out, out_layout), 1);
  return elements(call.checked_type) / out_channels * elements(operand_type(call, weight_index));
}

// A transposed convolution scatters each input element into weight_elements / in_channels
// outputs: (out_channels / groups) x kernel elements.
template <typename Attrs>
int64_t conv_transpose_macs(const ir::CallNode& call) {
  const auto& attrs = call.attrs_as<Attrs>();
  std::vector<int64_t> data = tensor_dims(operand_type(call, 0));
  int64_t in_channels = std::max<int64_t>(channels_in_layout(data, attrs.data_layout), 1);
  return elements(operand_type(call, 0)) / in_channels * elements(operand_type(call, 1));
}

// MACs of a product whose output elements each sum `reduce` products.
int64_t contraction_macs(const ir::CallNode& call, int64_t reduce) {
  return elements(call.checked_type) * reduce;
}

int64_t dim_from_end(const std::vector<int64_t>& shape, size_t from_end) {
  return shape.size() >= from_end ? shape[shape.size() - from_end] : 1;
}

int64_t matmul_macs(const ir::CallNode& call, const std::string& op) {
  std::vector<int64_t> a = tensor_dims(operand_type(call, 0));
  if (op == "nn.dense" || op == "matmul" || op == "nn.contrib_dense_pack")
    return contraction_macs(call, dim_from_end(a, 1));
  if (op == "nn.matmul") {
    bool transpose_a = call.attrs_as<ir::MatmulAttrs>().transpose_a;
    return contraction_macs(call, dim_from_end(a, transpose_a ? 2 : 1));
  }
  bool transpose_a = call.attrs_as<ir::BatchMatmulAttrs>().transpose_a;
  return contraction_macs(call, dim_from_end(a, transpose_a ? 2 : 1));
}

// Extent of each index letter of an einsum equation, read from the operands ("..." takes the
// dims the letters leave over).
void einsum_extents(const std::string& term, const std::vector<int64_t>& shape,
                    std::unordered_map<char, int64_t>& extents) {
  size_t ellipsis = term.find("...");
  std::string before = ellipsis == std::string::npos ? term : term.substr(0, ellipsis);
  std::string after = ellipsis == std::string::npos ? "" : term.substr(ellipsis + 3);
  for (size_t i = 0; i < before.size() && i < shape.size(); ++i) extents[before[i]] = shape[i];
  for (size_t i = 0; i < after.size() && i < shape.size(); ++i)
    extents[after[after.size() - 1 - i]] = shape[shape.size() - 1 - i];
}

// Every output element of an einsum of n operands sums, over the contracted letters, products
// of n factors: n - 1 multiplies each.
int64_t einsum_macs(const ir::CallNode& call) {
  std::string equation;
  for (char c : call.attrs_as<ir::EinsumAttrs>().equation)
    if (c != ' ') equation += c;
  size_t arrow = equation.find("->");
  std::string inputs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = inputs.find(',', start);
    terms.push_back(inputs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // Operands may come as one tuple argument or as separate arguments.
  std::vector<ir::Type> operand_types;
  if (call.args.size() == 1) {
    if (const auto* tuple = ir::as<ir::TupleTypeNode>(operand_type(call, 0)))
      operand_types = tuple->fields;
    else
      operand_types.push_back(operand_type(call, 0));
  } else {
    for (size_t i = 0; i < call.args.size(); ++i) operand_types.push_back(operand_type(call, i));
  }
  if (terms.size() < 2 || operand_types.size() != terms.size()) return 0;

  std::unordered_map<char, int64_t> extents;
  std::unordered_map<char, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    einsum_extents(terms[i], tensor_dims(operand_types[i]), extents);
    for (char c : terms[i])
      if (c != '.') ++uses[c];
  }
  std::unordered_set<char> output_letters;
  if (arrow != std::string::npos) {
    for (char c : equation.substr(arrow + 2)) output_letters.insert(c);
  } else {
    for (const auto& [c, n] : uses)
      if (n == 1) output_letters.insert(c);
  }
  int64_t contracted = 1;
  for (const auto& [c, extent] : extents)
    if (!output_letters.count(c)) contracted *= extent;
  return contraction_macs(call, contracted) * int64_t(terms.size() - 1);
}

// Elements of the pooling window of a windowed pool op, or 0 when the call is not one.
template <template <int> class Attrs>
int64_t window_elements(const ir::CallNode& call) {
  auto product = [](const std::vector<int64_t>& sizes) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  };
  if (const auto* a = dynamic_cast<const Attrs<1>*>(call.attrs.get())) return product(a->pool_size);
  if (const auto* a = dynamic_cast<const Attrs<2>*>(call.attrs.get())) return product(a->pool_size);
  if (const auto* a = dynamic_cast<const Attrs<3>*>(call.attrs.get())) return product(a->pool_size);
  return 0;
}

// Interpolation taps of a resize: 2 per resized axis for linear, 4 for cubic, none for nearest.
template <int N>
int64_t resize_flops_per_output(const ir::ResizeAttrs<N>& attrs) {
  int64_t taps_per_axis = attrs.method == "linear" ? 2 : attrs.method == "cubic" ? 4 : 0;
  if (taps_per_axis == 0) return 0;
  int64_t taps = 1;
  for (int i = 0; i < N; ++i) taps *= taps_per_axis;
  return 2 * taps;  // a multiply and an add per tap
}

int64_t resize_flops_per_output(const ir::CallNode& call) {
  const ir::AttrsNode* attrs = call.attrs.get();
  if (const auto* a = dynamic_cast<const ir::Resize1DAttrs*>(attrs))
    return resize_flops_per_output(*a);
  if (const auto* a = dynamic_cast<const ir::Resize2DAttrs*>(attrs))
    return resize_flops_per_output(*a);
  if (const auto* a = dynamic_cast<const ir::Resize3DAttrs*>(attrs))
    return resize_flops_per_output(*a);
  return 0;
}

// Elementwise and broadcast ops that move or create data without arithmetic.
bool is_data_movement(const std::string& op) {
  static const std::unordered_set<std::string> kMovement = {
      "copy",      "cast",        "expand_dims", "broadcast_to", "dyn.broadcast_to",
      "tile",      "dyn.tile",    "repeat",      "full_like",    "zeros_like",
      "ones_like", "nn.dropout",  "reshape",     "zeros",        "ones",
      "full",      "dyn.full",    "squeeze",     "dyn.squeeze",  "dyn.expand_dims",
      "shape_of",  "ndarray_size"};
  return kMovement.count(op) > 0;
}

// MACs and FLOPs of one op call.
void op_work(const ir::CallNode& call, const ir::OpNode& op, OpCost& cost) {
  const std::string& name = op.name;
  const int64_t out_elements = elements(call.checked_type);
  auto first_output_elements = [&] {
    if (const auto* tuple = ir::as<ir::TupleTypeNode>(call.checked_type))
      return tuple->fields.empty() ? int64_t(0) : elements(tuple->fields[0]);
    return out_elements;
  };
  auto input_elements = [&] { return call.args.empty() ? 0 : elements(operand_type(call, 0)); };

  int64_t macs = -1;
  if (name == "nn.conv1d") macs = conv_macs<ir::Conv1DAttrs>(call, 1);
  if (name == "nn.conv2d" || name == "nn.contrib_conv2d_NCHWc" ||
      name == "nn.contrib_conv2d_NCHWc_bf16")
    macs = conv_macs<ir::Conv2DAttrs>(call, 1);
  if (name == "nn.conv3d") macs = conv_macs<ir::Conv3DAttrs>(call, 1);
  // Counted as the direct 3x3 convolution it replaces, so that GFLOP/s stay comparable: each
  // output element sums in_channels x 9 products (the weight is (6, 6, O/ob, in_channels, ob)).
  if (name == "nn.contrib_conv2d_winograd_NCHWc") {
    std::vector<int64_t> weight = tensor_dims(operand_type(call, 1));
    macs = weight.size() == 5 ? out_elements * weight[3] * 9 : 0;
  }
  if (name == "nn.conv1d_transpose") macs = conv_transpose_macs<ir::Conv1DTransposeAttrs>(call);
  if (name == "nn.conv2d_transpose") macs = conv_transpose_macs<ir::Conv2DTransposeAttrs>(call);
  if (name == "nn.conv3d_transpose") macs = conv_transpose_macs<ir::Conv3DTransposeAttrs>(call);
  if (name == "nn.deformable_conv2d" || name == "nn.modulated_deformable_conv2d") {
    std::vector<int64_t> weight = tensor_dims(operand_type(call, 2));
    int64_t out_channels = weight.empty() ? 1 : std::max<int64_t>(weight[0], 1);
    macs = out_elements / out_channels * elements(operand_type(call, 2));
  }
  if (name == "nn.dense" || name == "nn.matmul" || name == "nn.batch_matmul" || name == "matmul" ||
      name == "nn.contrib_dense_pack")
    macs = matmul_macs(call, name);
  if (name == "einsum") macs = einsum_macs(call);
  if (macs >= 0) {
    cost.macs += macs;
    cost.flops += 2 * macs;
    return;
  }

  int64_t flops = 0;
  if (int64_t window = window_elements<ir::MaxPoolAttrs>(call); window > 0) {
    flops = out_elements * window;
  } else if (int64_t w = window_elements<ir::AvgPoolAttrs>(call); w > 0) {
    flops = out_elements * w;
  } else if (int64_t lp = window_elements<ir::LPPoolAttrs>(call); lp > 0) {
    flops = out_elements * lp * 2;  // |x|^p and the sum
  } else if (starts_with(name, "nn.global_") || starts_with(name, "nn.adaptive_")) {
    flops = input_elements();
  } else if (name == "nn.batch_norm") {
    flops = 2 * first_output_elements();  // one scale and one shift with known statistics
  } else if (name == "nn.layer_norm" || name == "nn.group_norm" || name == "nn.instance_norm") {
    // mean (1), subtract (1), square and sum (2), multiply by 1/std (1), gamma (1), beta (1)
    flops = 7 * first_output_elements();
  } else if (name == "nn.lrn") {
    const auto& attrs = call.attrs_as<ir::LRNAttrs>();
    flops = (attrs.size + 3) * out_elements;  // the window's squares, scale, power, divide
  } else if (name == "nn.softmax" || name == "nn.log_softmax") {
    flops = 5 * out_elements;  // max, subtract, exp, sum, divide (or log)
  } else if (starts_with(name, "image.resize")) {
    flops = resize_flops_per_output(call) * out_elements;
  } else if (op.def != nullptr && op.def->pattern == ir::OpPattern::CommReduce) {
    flops = input_elements();
  } else if (name == "variance" || name == "std") {
    flops = 2 * input_elements();
  } else if (op.def != nullptr &&
             (op.def->pattern == ir::OpPattern::ElemWise ||
              op.def->pattern == ir::OpPattern::Broadcast) &&
             !is_data_movement(name)) {
    flops = out_elements;
  }
  cost.flops += flops;
}

// Elements of a constant that is a weight; a rank-0 constant is a literal of an expression.
int64_t constant_param_elements(const ir::ConstantNode& constant) {
  return constant.data.shape().empty() ? 0 : constant.data.numel();
}

}  // namespace

OpCost& OpCost::operator+=(const OpCost& other) {
  macs += other.macs;
  flops += other.flops;
  params += other.params;
  activation_bytes += other.activation_bytes;
  return *this;
}

OpCost call_cost(const ir::CallNode& call, const std::vector<bool>& operand_is_param) {
  if (!call.checked_type) throw_error("cost analysis needs inferred types; the call has none");
  OpCost cost;
  cost.activation_bytes = detail::bytes(call.checked_type);
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (const auto* constant = ir::as<ir::ConstantNode>(call.args[i]))
      cost.params += constant_param_elements(*constant);
    else if (i < operand_is_param.size() && operand_is_param[i])
      cost.params += elements(operand_type(call, i));
  }
  if (const ir::OpNode* op = call.op()) {
    op_work(call, *op, cost);
  } else if (const auto* fn = ir::as<ir::FunctionNode>(call.callee)) {
    OpCost body = detail::body_work(*fn);
    cost.macs += body.macs;
    cost.flops += body.flops;
  }
  return cost;
}

namespace detail {

OpCost op_call_work(const ir::CallNode& call) {
  OpCost cost;
  if (const ir::OpNode* op = call.op()) op_work(call, *op, cost);
  return cost;
}

}  // namespace detail

}  // namespace anvil::analysis
