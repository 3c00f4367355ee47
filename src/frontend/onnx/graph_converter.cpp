#include "frontend/onnx/graph_converter.h"

#include <set>

#include "anvil/support/error.h"

namespace anvil::frontend::onnx_import {

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? "" : domain;
}

std::string sanitize_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

GraphConverter::GraphConverter(std::map<std::string, int64_t> opsets,
                               std::filesystem::path base_dir, GraphConverter* parent)
    : opsets_(std::move(opsets)), base_dir_(std::move(base_dir)), parent_(parent) {}

ir::Expr GraphConverter::lookup(const std::string& name) const {
  for (const GraphConverter* g = this; g; g = g->parent_) {
    auto it = g->scope_.find(name);
    if (it != g->scope_.end()) return it->second;
  }
  return nullptr;
}

const Tensor* GraphConverter::remembered_value(const ir::VarNode* var) const {
  for (const GraphConverter* g = this; g; g = g->parent_) {
    auto it = g->values_.find(var);
    if (it != g->values_.end()) return &it->second;
  }
  return nullptr;
}

void GraphConverter::define(const std::string& name, ir::Expr value, const std::string& definer) {
  if (!scope_.emplace(name, std::move(value)).second)
    throw_error(definer, " defines '", name, "', which is already defined in the graph");
}

int64_t GraphConverter::opset_of(const std::string& domain) const {
  auto it = opsets_.find(normalize_domain(domain));
  if (it == opsets_.end()) throw_error("the model imports no opset for domain '", domain, "'");
  return it->second;
}

namespace {

std::string describe_node(const onnx::NodeProto& node, size_t index) {
  std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
  return "node '" + name + "' (" + node.op_type() + ")";
}

}  // namespace

void GraphConverter::convert_nodes(const onnx::GraphProto& graph) {
  // Nodes should come sorted, but order them by their inputs anyway so that
  // a node's inputs are always converted first; what cannot be ordered is a
  // cycle or a use of an undefined name.
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (!producer.emplace(out, i).second || lookup(out))
        throw_error(describe_node(graph.node(i), size_t(i)), " defines output '", out,
                    "', which is already defined in the graph");
    }
  }
  // Names a node reads, including those its subgraphs read from this graph.
  std::vector<std::vector<int>> deps(static_cast<size_t>(n));
  std::function<void(const onnx::GraphProto&, std::set<std::string>&)> collect_reads =
      [&](const onnx::GraphProto& g, std::set<std::string>& reads) {
        for (const onnx::NodeProto& node : g.node()) {
          for (const std::string& in : node.input())
            if (!in.empty()) reads.insert(in);
          for (const onnx::AttributeProto& a : node.attribute()) {
            if (a.has_g()) collect_reads(a.g(), reads);
            for (const onnx::GraphProto& sub : a.graphs()) collect_reads(sub, reads);
          }
        }
      };
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    std::set<std::string> reads;
    for (const std::string& in : node.input())
      if (!in.empty()) reads.insert(in);
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g()) collect_reads(a.g(), reads);
      for (const onnx::GraphProto& sub : a.graphs()) collect_reads(sub, reads);
    }
    for (const std::string& name : reads) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i) deps[size_t(i)].push_back(it->second);
    }
    for (const std::string& in : node.input())
      if (!in.empty() && !producer.count(in) && !lookup(in))
        throw_error(describe_node(node, size_t(i)), " uses '", in,
                    "', which no node, input or initializer defines");
  }
  // Depth-first ordering with cycle detection.
  std::vector<int> state(static_cast<size_t>(n), 0);  // 0 new, 1 in progress, 2 done
  std::vector<int> order;
  std::function<void(int)> visit = [&](int i) {
    if (state[size_t(i)] == 2) return;
    if (state[size_t(i)] == 1)
      throw_error(describe_node(graph.node(i), size_t(i)), " is part of a cycle in the graph");
    state[size_t(i)] = 1;
    for (int d : deps[size_t(i)]) visit(d);
    state[size_t(i)] = 2;
    order.push_back(i);
  };
  for (int i = 0; i < n; ++i) visit(i);
  for (int i : order) {
    const onnx::NodeProto& node = graph.node(i);
    try {
      convert_node(node);
    } catch (const Error& e) {
      std::string message = e.what();
      // Converter failures already name their node; others get it added here.
      if (message.rfind("node '", 0) == 0) throw;
      throw Error(describe_node(node, size_t(i)) + ": " + message);
    }
  }
}

void GraphConverter::convert_node(const onnx::NodeProto& node) {
  int64_t opset = opset_of(node.domain());
  const ConverterFn* fn =
      ConverterTable::global().find(normalize_domain(node.domain()), node.op_type(), opset);
  ANVIL_ICHECK(fn, "no converter for ", node.op_type(), " after the support check");
  std::vector<ir::Expr> inputs;
  for (const std::string& name : node.input())
    inputs.push_back(name.empty() ? nullptr : lookup(name));
  ConvertContext ctx(node, opset, std::move(inputs), *this);
  std::vector<ir::Expr> outputs = (*fn)(ctx);
  std::string definer = describe_node(node, 0);
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    if (size_t(i) >= outputs.size() || !outputs[size_t(i)])
      ctx.fail("output ", i, " ('", name, "') is not supported by this converter");
    define(name, outputs[size_t(i)], definer);
  }
}

std::vector<ir::Expr> GraphConverter::convert_subgraph(const onnx::GraphProto& graph,
                                                       const std::vector<ir::Expr>& inputs) {
  GraphConverter sub(opsets_, base_dir_, this);
  if (size_t(graph.input_size()) != inputs.size())
    throw_error("subgraph '", graph.name(), "' takes ", graph.input_size(), " inputs, given ",
                inputs.size());
  for (int i = 0; i < graph.input_size(); ++i)
    sub.define(graph.input(i).name(), inputs[size_t(i)], "subgraph '" + graph.name() + "'");
  for (const onnx::TensorProto& init : graph.initializer())
    sub.define(init.name(), ir::ConstantNode::make(tensor_from_proto(init, base_dir_)),
               "subgraph initializer");
  sub.convert_nodes(graph);
  std::vector<ir::Expr> outputs;
  for (const onnx::ValueInfoProto& out : graph.output()) {
    ir::Expr e = sub.lookup(out.name());
    if (!e) throw_error("subgraph '", graph.name(), "' output '", out.name(), "' is never defined");
    outputs.push_back(e);
  }
  return outputs;
}

void check_supported(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets) {
  struct Missing {
    std::string op_type, domain, first_node;
    int64_t opset;
  };
  std::vector<Missing> missing;
  std::set<std::pair<std::string, std::string>> seen;
  std::function<void(const onnx::GraphProto&)> scan = [&](const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      std::string domain = normalize_domain(node.domain());
      auto it = opsets.find(domain);
      int64_t opset = it == opsets.end() ? -1 : it->second;
      bool supported =
          opset >= 0 && ConverterTable::global().find(domain, node.op_type(), opset) != nullptr;
      if (!supported && seen.emplace(domain, node.op_type()).second)
        missing.push_back({node.op_type(), domain,
                           node.name().empty() ? "#" + std::to_string(i) : node.name(), opset});
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) scan(a.g());
        for (const onnx::GraphProto& sub : a.graphs()) scan(sub);
      }
    }
  };
  scan(graph);
  if (missing.empty()) return;
  std::string text =
      missing.size() == 1 ? "unsupported ONNX operator: " : "unsupported ONNX operators: ";
  for (size_t i = 0; i < missing.size(); ++i) {
    const Missing& m = missing[i];
    text += (i ? "; " : "") + m.op_type + " (domain '" + (m.domain.empty() ? "ai.onnx" : m.domain) +
            "', opset " + (m.opset < 0 ? std::string("not imported") : std::to_string(m.opset)) +
            ", first used by node '" + m.first_node + "')";
  }
  throw Error(text);
}

}  // namespace anvil::frontend::onnx_import
