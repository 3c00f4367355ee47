// FoldConstant: op calls whose inputs are all known at compile time are evaluated once, with
// the reference kernels, and replaced by their result.
#include <string>
#include <string_view>

#include "anvil/ir/builder.h"
#include "anvil/reference/reference.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

// Ops whose result is not a function of their inputs alone (random draws, training-time
// dropout), and the calls into compiled code, which the reference kernels cannot run.
bool never_folded(std::string_view op_name) {
  return op_name == "call_tir" || op_name == "call_dps_packed" || op_name == "nn.dropout" ||
         op_name.find("random") != std::string_view::npos;
}

// Bytes of a value of this type, or nullopt when a shape is not static.
std::optional<int64_t> static_bytes(const ir::Type& type) {
  if (const auto* tensor = ir::as<ir::TensorTypeNode>(type)) {
    std::optional<std::vector<int64_t>> shape = tensor->static_shape();
    if (!shape) return std::nullopt;
    int64_t count = 1;
    for (int64_t d : *shape) count *= d;
    return count * tensor->dtype.bytes();
  }
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    int64_t total = 0;
    for (const ir::Type& field : tuple->fields) {
      std::optional<int64_t> bytes = static_bytes(field);
      if (!bytes) return std::nullopt;
      total += *bytes;
    }
    return total;
  }
  return std::nullopt;
}

class ConstantFolder : public detail::TypedMutator {
 public:
  explicit ConstantFolder(int64_t max_bytes) : max_bytes_(max_bytes) {}

  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    Expr rewritten = TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    if (!call->checked_type) call->checked_type = node->checked_type;
    Expr folded = try_fold(*call);
    return folded ? folded : rewritten;
  }

  Expr mutate_TupleGetItem(const ir::TupleGetItemNode* node, const Expr& self) override {
    Expr tuple = mutate(node->tuple);
    // Taking a field of a tuple that is built right here is that field.
    if (const auto* built = ir::as<ir::TupleNode>(tuple)) {
      if (node->index >= 0 && size_t(node->index) < built->fields.size())
        return built->fields[size_t(node->index)];
    }
    return tuple == node->tuple ? self : Expr(ir::TupleGetItemNode::make(tuple, node->index));
  }

  Expr mutate_Let(const ir::LetNode* node, const Expr& self) override {
    // A variable bound to a constant is the constant wherever it is used.
    Expr value = mutate(node->value);
    if (ir::as<ir::ConstantNode>(value)) {
      memo_[node->var.get()] = value;
      return mutate(node->body);
    }
    return TypedMutator::mutate_Let(node, self);
  }

  ir::BindingBlock mutate_block(const ir::BindingBlock& block, bool& changed) override {
    // As with let: a binding whose value folds is dropped, its variable replaced by the
    // constant everywhere after it.
    ir::BindingBlock result;
    result.is_dataflow = block.is_dataflow;
    for (const ir::Binding& b : block.bindings) {
      Expr value = mutate(b.value);
      if (ir::as<ir::ConstantNode>(value)) {
        memo_[b.var.get()] = value;
        changed = true;
        continue;
      }
      changed |= value != b.value;
      result.bindings.push_back({b.var, value});
    }
    return result;
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    // Fused groups are left as fusion made them.
    if (node->is_primitive()) return self;
    return TypedMutator::mutate_Function(node, self);
  }

 private:
  // The constant (or tuple of constants) the call evaluates to, or null when it cannot or
  // must not be folded.
  Expr try_fold(const ir::CallNode& call) const {
    const ir::OpNode* op = call.op();
    if (!op || never_folded(op->name) || !reference::find_kernel(op->name)) return nullptr;
    std::vector<Tensor> inputs;
    for (const Expr& arg : call.args) {
      if (!collect_constant_inputs(arg, inputs)) return nullptr;
    }
    if (!call.checked_type) return nullptr;
    std::optional<int64_t> bytes = static_bytes(call.checked_type);
    if (!bytes || *bytes > max_bytes_) return nullptr;
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate_call(call, inputs);
    } catch (const Error&) {
      // A kernel that rejects these inputs leaves the call for run time, where the same
      // problem is reported with the model's own input.
      return nullptr;
    }
    const auto* tuple_type = ir::as<ir::TupleTypeNode>(call.checked_type);
    if (!tuple_type) {
      ANVIL_ICHECK(outputs.size() == 1, op->name, " returned ", outputs.size(), " tensors");
      return ir::ConstantNode::make(std::move(outputs[0]));
    }
    ANVIL_ICHECK(outputs.size() == tuple_type->fields.size(), op->name, " returned ",
                 outputs.size(), " tensors for ", tuple_type->fields.size(), " fields");
    std::vector<Expr> fields;
    for (Tensor& t : outputs) fields.push_back(ir::ConstantNode::make(std::move(t)));
    return ir::TupleNode::make(std::move(fields));
  }

  // Appends the tensors of a constant argument (a tuple argument gives its fields, as the
  // reference executor passes them); false when the argument is not constant.
  static bool collect_constant_inputs(const Expr& arg, std::vector<Tensor>& inputs) {
    if (const Tensor* data = ir::constant_data(arg)) {
      inputs.push_back(*data);
      return true;
    }
    if (const auto* tuple = ir::as<ir::TupleNode>(arg)) {
      for (const Expr& field : tuple->fields) {
        const Tensor* data = ir::constant_data(field);
        if (!data) return false;
        inputs.push_back(*data);
      }
      return true;
    }
    return false;
  }

  int64_t max_bytes_;
};

}  // namespace

ir::IRModule fold_constant(const ir::IRModule& mod, int64_t max_bytes) {
  return detail::mutate_graph_functions(mod, [max_bytes] { return ConstantFolder(max_bytes); });
}

}  // namespace anvil::transform
