// DynamicToStatic: dyn.* calls whose shape operands are known at compile time become the
// static ops, which alone have TE computes. The operands are usually small computations on
// constants and on the shapes of statically shaped tensors (shape_of, slices, concatenations,
// casts), left behind by the importer before the params were bound; those subgraphs are
// evaluated with the reference kernels first. A static op's output type can make another
// dyn op's operand known (through shape_of), so the pass repeats until nothing changes.
// With symbolic dims the operand subgraphs are evaluated symbolically as well: their elements
// become dim expressions (symbolic_shape_values.h), parts that are integers fold to constants,
// and dyn calls whose operands are certain get a static form typed with those dims
// (dynamic_to_static_symbolic.h).
#include <string_view>
#include <unordered_set>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/reference/reference.h"
#include "anvil/transform/passes.h"
#include "transform/dynamic_to_static_ops.h"
#include "transform/dynamic_to_static_symbolic.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

// Operand subgraphs are shape arithmetic; a result larger than this is no shape operand.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 20;

// The nodes whose values feed a shape operand of a dyn op: the calls, tuples and
// TupleGetItems reached backwards from those operands. The data of shape_of and ndarray_size
// is not entered, as only its type matters.
class OperandSubgraphs : public ir::ExprVisitor {
 public:
  std::unordered_set<const ir::ExprNode*> nodes;

  void visit_Call(const ir::CallNode* node) override {
    if (const ir::OpNode* op = node->op()) {
      for (size_t i : detail::dyn_shape_operands(op->name))
        if (i < node->args.size()) mark(node->args[i]);
    }
    ir::ExprVisitor::visit_Call(node);
  }

 private:
  void mark(const Expr& e) {
    if (!e || !nodes.insert(e.get()).second) return;
    if (const auto* call = ir::as<ir::CallNode>(e)) {
      const ir::OpNode* op = call->op();
      if (!op || op->name == "shape_of" || op->name == "ndarray_size") return;
      for (const Expr& arg : call->args) mark(arg);
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const Expr& field : tuple->fields) mark(field);
    } else if (const auto* item = ir::as<ir::TupleGetItemNode>(e)) {
      mark(item->tuple);
    }
  }
};

// Ops the reference kernels must not fold: random draws, and calls into compiled code.
bool never_folded(std::string_view op_name) {
  return op_name == "call_tir" || op_name == "call_dps_packed" || op_name == "nn.dropout" ||
         op_name.find("random") != std::string_view::npos;
}

class DynamicToStaticRewriter : public detail::TypedMutator {
 public:
  DynamicToStaticRewriter(const std::unordered_set<const ir::ExprNode*>& operand_nodes,
                          detail::SymbolicShapeEvaluator& values)
      : operand_nodes_(operand_nodes), values_(values) {}

  bool changed() const { return changed_; }

  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    Expr rewritten = TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    if (!call || !call->op()) return rewritten;
    if (!call->checked_type) call->checked_type = node->checked_type;
    Expr result = shape_constant(*call);
    if (!result && operand_nodes_.count(node)) result = fold(*call);
    if (!result && operand_nodes_.count(node)) result = symbolic_constant(rewritten, *call);
    if (!result) result = convert(*call);
    if (!result) return rewritten;
    changed_ = true;
    return result;
  }

  Expr mutate_TupleGetItem(const ir::TupleGetItemNode* node, const Expr& self) override {
    Expr tuple = mutate(node->tuple);
    // A field of a tuple of constants (a folded multi-output call) is that constant.
    if (const auto* built = ir::as<ir::TupleNode>(tuple)) {
      if (operand_nodes_.count(node) && node->index >= 0 &&
          size_t(node->index) < built->fields.size() &&
          ir::constant_data(built->fields[size_t(node->index)])) {
        changed_ = true;
        return built->fields[size_t(node->index)];
      }
    }
    return tuple == node->tuple ? self : Expr(ir::TupleGetItemNode::make(tuple, node->index));
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    Expr rewritten = TypedMutator::mutate_Function(node, self);
    const auto* fn = ir::as<ir::FunctionNode>(rewritten);
    if (rewritten == self || !fn) return rewritten;
    // The declared result type was the dyn ops' (unknown dims); typing derives the new one.
    return ir::FunctionNode::make(fn->params, fn->body, nullptr, fn->func_attrs);
  }

 private:
  // shape_of / ndarray_size of a statically shaped tensor, as a constant.
  static Expr shape_constant(const ir::CallNode& call) {
    const std::string& name = call.op()->name;
    if (name != "shape_of" && name != "ndarray_size") return nullptr;
    std::optional<std::vector<int64_t>> shape = ir::static_shape(call.args[0]);
    if (!shape) return nullptr;
    if (name == "shape_of") {
      DataType dtype = call.attrs_as<ir::ShapeOfAttrs>().dtype;
      std::vector<double> dims(shape->begin(), shape->end());
      return ir::ConstantNode::make(ir::make_tensor(dims, {int64_t(dims.size())}, dtype));
    }
    int64_t count = 1;
    for (int64_t d : *shape) count *= d;
    return ir::scalar_constant(double(count), call.attrs_as<ir::NdarraySizeAttrs>().dtype);
  }

  // The call evaluated by its reference kernel when every argument is a constant.
  static Expr fold(const ir::CallNode& call) {
    const std::string& name = call.op()->name;
    if (never_folded(name) || !reference::find_kernel(name) || !call.checked_type) return nullptr;
    std::vector<Tensor> inputs;
    for (const Expr& arg : call.args) {
      if (const Tensor* data = ir::constant_data(arg)) {
        inputs.push_back(*data);
      } else if (const auto* tuple = ir::as<ir::TupleNode>(arg)) {
        for (const Expr& field : tuple->fields) {
          const Tensor* item = ir::constant_data(field);
          if (!item) return nullptr;
          inputs.push_back(*item);
        }
      } else {
        return nullptr;
      }
    }
    const auto* type = ir::as<ir::TensorTypeNode>(call.checked_type);
    const auto* tuple_type = ir::as<ir::TupleTypeNode>(call.checked_type);
    if (type) {
      std::optional<std::vector<int64_t>> shape = type->static_shape();
      int64_t count = 1;
      for (int64_t d : shape.value_or(std::vector<int64_t>{})) count *= d;
      if (shape && count > kMaxFoldedElements) return nullptr;
    } else if (!tuple_type) {
      return nullptr;
    }
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate_call(call, inputs);
    } catch (const Error&) {
      // Values the kernel rejects are left for run time, which reports them.
      return nullptr;
    }
    if (type) {
      if (outputs.size() != 1 || outputs[0].numel() > kMaxFoldedElements) return nullptr;
      return ir::ConstantNode::make(std::move(outputs[0]));
    }
    std::vector<Expr> fields;
    for (Tensor& t : outputs) {
      if (t.numel() > kMaxFoldedElements) return nullptr;
      fields.push_back(ir::ConstantNode::make(std::move(t)));
    }
    return ir::TupleNode::make(std::move(fields));
  }

  // An operand node whose symbolic value is all integers (take(shape_of(x), 2) when only
  // x's other dims are symbolic), as a constant.
  Expr symbolic_constant(const Expr& self, const ir::CallNode& call) {
    const auto* type = ir::as<ir::TensorTypeNode>(call.checked_type);
    const detail::SymbolicValue* value = values_.evaluate(self);
    if (!type || !value || value->dtype != type->dtype) return nullptr;
    std::optional<std::vector<int64_t>> ints = value->static_values();
    if (!ints) return nullptr;
    Tensor t = Tensor::empty(value->shape, value->dtype);
    for (size_t i = 0; i < ints->size(); ++i) {
      if (value->dtype == DataType::int64())
        t.data_as<int64_t>()[i] = (*ints)[i];
      else
        t.set_from_double(int64_t(i), double((*ints)[i]));
    }
    return ir::ConstantNode::make(std::move(t));
  }

  // The static form of a dyn call, when it exists and its type checks: from constant operands,
  // else from their symbolic values.
  Expr convert(const ir::CallNode& call) {
    Expr result = detail::static_form(call);
    if (!result) return detail::symbolic_static_form(call, values_);
    try {
      ir::infer_expr_type(result, /*reuse_cached_types=*/true);
    } catch (const Error&) {
      // The static op rejects what the dyn op accepts at run time (say, a shape that does not
      // broadcast): the call stays, and run time reports the problem.
      return nullptr;
    }
    return result;
  }

  const std::unordered_set<const ir::ExprNode*>& operand_nodes_;
  detail::SymbolicShapeEvaluator& values_;
  bool changed_ = false;
};

}  // namespace

ir::IRModule dynamic_to_static(const ir::IRModule& mod) {
  ir::IRModule current = ir::infer_type(mod);
  // Each round converts at least one call or folds one node, so the graph bounds the rounds;
  // the limit only guards against a conversion that undoes another.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    ir::IRModule next;
    for (const auto& [name, func] : current.functions()) {
      if (func->kind != ir::ExprKind::Function) {
        next.add(name, func);
        continue;
      }
      OperandSubgraphs operands;
      operands.visit(Expr(func));
      detail::SymbolicShapeEvaluator values;
      DynamicToStaticRewriter rewriter(operands.nodes, values);
      Expr rewritten = rewriter.mutate(Expr(func));
      const auto* fn = ir::as<ir::FunctionNode>(rewritten);
      ANVIL_ICHECK(fn, "DynamicToStatic turned @", name, " into a ",
                   ir::expr_kind_name(rewritten->kind));
      changed |= rewriter.changed();
      // A fresh node: the mutator carries the old (dynamic) function type over to the
      // rewritten one, and typing must derive the new one.
      if (rewriter.changed())
        next.add(name, ir::FunctionNode::make(fn->params, fn->body, nullptr, fn->func_attrs));
      else
        next.add(name, ir::BaseFunc(fn));
    }
    if (!changed) return current;
    current = ir::infer_type(next);
  }
  return current;
}

}  // namespace anvil::transform
