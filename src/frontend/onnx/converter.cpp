#include "frontend/onnx/converter.h"

#include "anvil/ir/infer_type.h"
#include "anvil/reference/reference.h"
#include "frontend/onnx/converter_families.h"
#include "frontend/onnx/graph_converter.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

ConvertContext::ConvertContext(const onnx::NodeProto& node, int64_t opset, std::vector<Expr> inputs,
                               GraphConverter& graph)
    : node_(node), opset_(opset), inputs_(std::move(inputs)), graph_(graph) {}

void ConvertContext::fail_message(const std::string& message) const {
  std::string name = node_.name().empty() ? "<unnamed>" : node_.name();
  throw Error("node '" + name + "' (" + node_.op_type() + "): " + message);
}

const Expr& ConvertContext::input(size_t i) const {
  if (!has_input(i)) fail("input ", i, " is required but missing");
  return inputs_[i];
}

Type ConvertContext::input_type(size_t i) const {
  const Expr& e = input(i);
  if (!e->checked_type) infer_expr_type(e, true);
  return e->checked_type;
}

const TensorTypeNode& ConvertContext::input_tensor(size_t i) const {
  Type t = input_type(i);
  const auto* tensor = as<TensorTypeNode>(t);
  if (!tensor || !tensor->shape)
    fail("input ", i, " ('", node_.input(int(i)), "') must be a tensor of known rank, got ",
         type_to_string(t));
  return *tensor;
}

std::optional<Tensor> ConvertContext::input_constant(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (const auto* c = as<ConstantNode>(inputs_[i])) return c->data;
  return std::nullopt;
}

std::optional<Tensor> ConvertContext::known_value(size_t i) const {
  if (std::optional<Tensor> c = input_constant(i)) return c;
  if (!has_input(i)) return std::nullopt;
  if (const auto* var = as<VarNode>(inputs_[i]))
    if (const Tensor* value = graph_.remembered_value(var)) return *value;
  return std::nullopt;
}

std::vector<int64_t> ConvertContext::constant_ints(size_t i, const char* what) const {
  std::optional<Tensor> value = input_constant(i);
  if (!value)
    fail(what, " (input ", i, ") must be a constant to be imported; it is computed at run time");
  return reference::to_int64s(*value);
}

const onnx::AttributeProto* ConvertContext::find_attr(const std::string& name) const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool ConvertContext::has_attr(const std::string& name) const { return find_attr(name) != nullptr; }

int64_t ConvertContext::attr_int(const std::string& name, int64_t fallback) const {
  const auto* a = find_attr(name);
  return a ? a->i() : fallback;
}

double ConvertContext::attr_float(const std::string& name, double fallback) const {
  const auto* a = find_attr(name);
  return a ? double(a->f()) : fallback;
}

std::string ConvertContext::attr_string(const std::string& name,
                                        const std::string& fallback) const {
  const auto* a = find_attr(name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> ConvertContext::attr_ints(const std::string& name,
                                               std::vector<int64_t> fallback) const {
  const auto* a = find_attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<double> ConvertContext::attr_floats(const std::string& name,
                                                std::vector<double> fallback) const {
  const auto* a = find_attr(name);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : fallback;
}

std::vector<std::string> ConvertContext::attr_strings(const std::string& name) const {
  const auto* a = find_attr(name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
           : std::vector<std::string>{};
}

Tensor ConvertContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_t()) fail("attribute '", name, "' (a tensor) is missing");
  try {
    return tensor_from_proto(a->t(), graph_.base_dir());
  } catch (const Error& e) {
    fail("attribute '", name, "': ", e.what());
  }
}

const onnx::GraphProto& ConvertContext::attr_graph(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_g()) fail("attribute '", name, "' (a graph) is missing");
  return a->g();
}

int64_t ConvertContext::required_int(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a) fail("attribute '", name, "' is required but missing");
  return a->i();
}

namespace {

bool is_constant_value(const Expr& e) {
  if (as<ConstantNode>(e)) return true;
  if (const auto* t = as<TupleNode>(e)) {
    for (const Expr& f : t->fields)
      if (!is_constant_value(f)) return false;
    return true;
  }
  return false;
}

void collect_constants(const Expr& e, std::vector<Tensor>& out) {
  if (const auto* c = as<ConstantNode>(e)) {
    out.push_back(c->data);
  } else {
    for (const Expr& f : as<TupleNode>(e)->fields) collect_constants(f, out);
  }
}

}  // namespace

Expr ConvertContext::op(std::string_view name, std::vector<Expr> args,
                        const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  Expr call;
  try {
    call = call_op(name, args, make_op_attrs(name, attrs));
    infer_expr_type(call, true);
  } catch (const Error& e) {
    fail(e.what());
  }
  // A dequantized constant stays a dequantize: FakeQuantizationToInteger needs the
  // integer weights and their scales, and FoldConstant folds it later when nothing does.
  bool foldable = !args.empty() && name != "qnn.dequantize";
  for (const Expr& a : args) foldable &= is_constant_value(a);
  if (!foldable || !reference::find_kernel(name)) return call;
  std::vector<Tensor> inputs;
  for (const Expr& a : args) collect_constants(a, inputs);
  std::vector<Tensor> outputs;
  try {
    outputs = reference::evaluate_call(*as<CallNode>(call), inputs);
  } catch (const Error& e) {
    fail(e.what());
  }
  if (!as<TupleTypeNode>(call->checked_type)) return constant(outputs.at(0));
  std::vector<Expr> fields;
  for (Tensor& t : outputs) fields.push_back(constant(std::move(t)));
  return typed(TupleNode::make(std::move(fields)));
}

Expr ConvertContext::constant(Tensor value) {
  Expr c = ConstantNode::make(std::move(value));
  infer_expr_type(c, true);
  return c;
}

Expr ConvertContext::typed(Expr expr) {
  try {
    infer_expr_type(expr, true);
  } catch (const Error& e) {
    fail(e.what());
  }
  return expr;
}

ConverterTable& ConverterTable::global() {
  static ConverterTable* table = [] {
    auto* t = new ConverterTable();
    register_all_converters(*t);
    return t;
  }();
  return *table;
}

void ConverterTable::add(const std::string& op_type, int since_version, ConverterFn fn,
                         const std::string& domain) {
  auto& versions = table_[{normalize_domain(domain), op_type}];
  ANVIL_ICHECK(!versions.count(since_version), "converter ", op_type, " v", since_version,
               " registered twice");
  versions[since_version] = std::move(fn);
}

const ConverterFn* ConverterTable::find(const std::string& domain, const std::string& op_type,
                                        int64_t opset) const {
  auto it = table_.find({normalize_domain(domain), op_type});
  if (it == table_.end()) return nullptr;
  // The newest implementation not newer than the model's opset.
  auto version = it->second.upper_bound(int(opset));
  if (version == it->second.begin()) return nullptr;
  return &std::prev(version)->second;
}

std::vector<std::string> ConverterTable::list() const {
  std::vector<std::string> rows;
  for (const auto& [key, versions] : table_)
    for (const auto& [since, fn] : versions)
      rows.push_back(key.second + ":" + (key.first.empty() ? "ai.onnx" : key.first) + ":" +
                     std::to_string(since));
  return rows;
}

}  // namespace anvil::frontend::onnx_import
