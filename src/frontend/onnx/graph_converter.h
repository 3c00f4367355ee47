// Converts an ONNX graph (or subgraph) node by node into graph IR, keeping a
// scope from ONNX tensor names to the expressions that compute them.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/frontend/onnx.h"
#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

class GraphConverter {
 public:
  GraphConverter(std::map<std::string, int64_t> opsets, std::filesystem::path base_dir,
                 GraphConverter* parent = nullptr);

  // Converts the graph's nodes in dependency order; the graph's inputs and
  // initializers must already be defined. Errors name the node.
  void convert_nodes(const onnx::GraphProto& graph);

  // Converts a subgraph (If branch, Loop body) nested in this graph: its
  // inputs are bound to `inputs`, its initializers become constants, and
  // names from enclosing graphs resolve. Returns its outputs.
  std::vector<ir::Expr> convert_subgraph(const onnx::GraphProto& graph,
                                         const std::vector<ir::Expr>& inputs);

  // The expression of an ONNX tensor name, searching enclosing graphs; null if unknown.
  ir::Expr lookup(const std::string& name) const;
  // Defines a name; Error naming `definer` if the name is already defined in this graph.
  void define(const std::string& name, ir::Expr value, const std::string& definer);
  // Records the value of an initializer that stays a parameter (var), so that converters can
  // check it (a zero scale) without folding it into the graph.
  void remember_value(const ir::VarNode* var, Tensor value) { values_[var] = std::move(value); }
  // The value remembered for var (here or in an enclosing graph), or null.
  const Tensor* remembered_value(const ir::VarNode* var) const;

  int64_t opset_of(const std::string& domain) const;
  const std::filesystem::path& base_dir() const { return base_dir_; }

 private:
  void convert_node(const onnx::NodeProto& node);

  std::map<std::string, int64_t> opsets_;
  std::filesystem::path base_dir_;
  GraphConverter* parent_;
  std::unordered_map<std::string, ir::Expr> scope_;
  std::unordered_map<const ir::VarNode*, Tensor> values_;
};

// Every (domain, op type) used in the graph and its subgraphs that has no
// converter at the model's opset, as one Error listing them all.
void check_supported(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets);

// "" and "ai.onnx" are the same domain.
std::string normalize_domain(const std::string& domain);

// A name usable as a size variable or var name in the IR text: [A-Za-z_][A-Za-z0-9_]*.
std::string sanitize_name(const std::string& name);

}  // namespace anvil::frontend::onnx_import
