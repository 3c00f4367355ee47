// The converter table and what a converter sees. One converter per ONNX
// (domain, op type), with versioned implementations: the one used is the
// highest version not above the model's opset for that domain.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/frontend/onnx_tensor.h"
#include "anvil/ir/op.h"

namespace anvil::frontend::onnx_import {

class GraphConverter;

// A converter's view of one node: its inputs as graph IR, its attributes,
// and a way to emit typed op calls (folded on the spot when all inputs are constants).
class ConvertContext {
 public:
  ConvertContext(const onnx::NodeProto& node, int64_t opset, std::vector<ir::Expr> inputs,
                 GraphConverter& graph);

  const onnx::NodeProto& node() const { return node_; }
  // The opset of the node's domain.
  int64_t opset() const { return opset_; }

  // Inputs: an omitted optional input (empty name or past the end) is absent.
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && bool(inputs_[i]); }
  // True when the node asks for output i (it is present and named).
  bool output_requested(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
  // Input i; an Error naming the node if absent.
  const ir::Expr& input(size_t i) const;
  ir::Type input_type(size_t i) const;
  // Input i's tensor type with known rank; an Error naming the node otherwise.
  const ir::TensorTypeNode& input_tensor(size_t i) const;
  // Input i's value when it is a constant (after folding), else nullopt.
  std::optional<Tensor> input_constant(size_t i) const;
  // Input i's value when it is a constant or an initializer (which stays a parameter of the
  // graph): for checks of values, never for folding. nullopt for values computed at run time.
  std::optional<Tensor> known_value(size_t i) const;
  // Input i's value as int64s when constant; an Error naming what needs it otherwise.
  std::vector<int64_t> constant_ints(size_t i, const char* what) const;

  // Attributes.
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  // A tensor attribute (Constant's value); Error if missing.
  Tensor attr_tensor(const std::string& name) const;
  // A graph attribute (If's branches, Loop's body); Error if missing.
  const onnx::GraphProto& attr_graph(const std::string& name) const;
  // Required attributes: Error naming the node and attribute when missing.
  int64_t required_int(const std::string& name) const;

  // A typed call of an op; when every input is a constant and the op has a
  // reference kernel, the result is folded into a constant.
  ir::Expr op(std::string_view name, std::vector<ir::Expr> args,
              const std::vector<std::pair<std::string, ir::AttrValue>>& attrs = {});
  // A typed constant.
  ir::Expr constant(Tensor value);
  // Types an expression built directly (tuples, tuple items).
  ir::Expr typed(ir::Expr expr);

  // Converts a subgraph (If/Loop bodies) whose outer names resolve in this graph.
  GraphConverter& graph() { return graph_; }

  // Error "node '<name>' (<OpType>): <message>".
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    fail_message(str_cat(args...));
  }

 private:
  [[noreturn]] void fail_message(const std::string& message) const;
  const onnx::AttributeProto* find_attr(const std::string& name) const;

  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<ir::Expr> inputs_;
  GraphConverter& graph_;
};

// Converts a node to one Expr per ONNX output (a missing optional output may be null).
using ConverterFn = std::function<std::vector<ir::Expr>(ConvertContext&)>;

// The table of converters: (domain, op type) -> {since version -> converter}.
class ConverterTable {
 public:
  static ConverterTable& global();
  // Registers the implementation valid from opset `since_version` on.
  void add(const std::string& op_type, int since_version, ConverterFn fn,
           const std::string& domain = "");
  // The implementation for an opset, or nullptr.
  const ConverterFn* find(const std::string& domain, const std::string& op_type,
                          int64_t opset) const;
  // "Type:domain:since" for every registered implementation.
  std::vector<std::string> list() const;

 private:
  std::map<std::pair<std::string, std::string>, std::map<int, ConverterFn>> table_;
};

// TensorProto data type numbers of onnx 1.14 to 1.20, which the compiled-in onnx.proto may not
// name (its data_type and elem_type fields are plain int32s).
enum : int32_t {
  kOnnxFloat8E4M3FN = 17,
  kOnnxFloat8E4M3FNUZ = 18,
  kOnnxFloat8E5M2 = 19,
  kOnnxFloat8E5M2FNUZ = 20,
  kOnnxUInt4 = 21,
  kOnnxInt4 = 22,
  kOnnxFloat4E2M1 = 23,
  kOnnxFloat8E8M0 = 24,
  kOnnxUInt2 = 25,
  kOnnxInt2 = 26,
};

// Element type of an ONNX TensorProto data type; Error naming `what` if unsupported.
DataType onnx_dtype(int32_t onnx_type, const std::string& what);
// ONNX TensorProto data type of an anvil dtype.
int32_t to_onnx_dtype(DataType dtype);

}  // namespace anvil::frontend::onnx_import
