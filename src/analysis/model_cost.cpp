// Whole-function costs: the calls of @main in execution order (one layer each, a fused group
// being one layer), and the summed work of a fused function's body.
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/cost_util.h"
#include "anvil/analysis/cost.h"
#include "anvil/ir/infer_type.h"
#include "anvil/support/error.h"

namespace anvil::analysis {
namespace detail {

std::vector<int64_t> tensor_dims(const ir::Type& type, bool symbolic_as_minus_one) {
  std::vector<int64_t> dims;
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  if (tensor == nullptr || !tensor->shape) return dims;
  for (const ir::Dim& d : *tensor->shape)
    dims.push_back(d.is_int() ? d.int_value() : symbolic_as_minus_one ? -1 : 1);
  return dims;
}

int64_t elements(const ir::Type& type) {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    int64_t total = 0;
    for (const ir::Type& field : tuple->fields) total += elements(field);
    return total;
  }
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  if (tensor == nullptr) return 0;
  int64_t n = 1;
  for (int64_t d : tensor_dims(type)) n *= d;
  return n;
}

int64_t bytes(const ir::Type& type) {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    int64_t total = 0;
    for (const ir::Type& field : tuple->fields) total += bytes(field);
    return total;
  }
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  return tensor == nullptr ? 0 : elements(type) * tensor->dtype.bytes();
}

}  // namespace detail

namespace {

bool is_leaf(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::Var:
    case ir::ExprKind::GlobalVar:
    case ir::ExprKind::Op:
    case ir::ExprKind::ExternFunc:
    case ir::ExprKind::Constant:
    case ir::ExprKind::PrimFunc:
      return true;
    default:
      return false;
  }
}

// What a call site of the walk sees: the call, and its name ("%7" or the bound variable).
using CallVisitor = std::function<void(const ir::CallNode&, const std::string&)>;

// Walks an expression in execution order (operands first, each node once, with an explicit
// stack so that deep chains do not recurse), calling on_call for every call. Functions are not
// entered: a called function is one layer, as it is one kernel. Steps are numbered as print-ir
// numbers them, and calls bound to variables take the variable's name.
class ExecutionOrderWalk {
 public:
  explicit ExecutionOrderWalk(CallVisitor on_call) : on_call_(std::move(on_call)) {}

  void walk(const ir::Expr& root) {
    struct Frame {
      ir::Expr node;
      std::vector<ir::Expr> operands;
      size_t next = 0;
    };
    if (is_leaf(root) || root->kind == ir::ExprKind::Function) return;
    std::vector<Frame> stack;
    stack.push_back({root, operands(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.operands.size()) {
        ir::Expr child = top.operands[top.next++];
        if (is_leaf(child) || visited_.count(child.get())) continue;
        visited_.insert(child.get());
        if (const auto* fn = ir::as<ir::FunctionNode>(child)) {
          // Not entered, but print-ir numbers the steps of its body, then the function.
          next_step_ += steps_inside(*fn) + 1;
          continue;
        }
        stack.push_back({child, operands(child), 0});
        continue;
      }
      ir::Expr done = top.node;
      stack.pop_back();
      finish(done);
    }
  }

 private:
  // What a node needs done before it, in order. Bindings are walked here as well: a bound
  // value is finished under its variable's name.
  std::vector<ir::Expr> operands(const ir::Expr& e) {
    std::vector<ir::Expr> out;
    if (const auto* call = ir::as<ir::CallNode>(e)) {
      out.push_back(call->callee);
      out.insert(out.end(), call->args.begin(), call->args.end());
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      out = tuple->fields;
    } else if (const auto* item = ir::as<ir::TupleGetItemNode>(e)) {
      out.push_back(item->tuple);
    } else if (const auto* node = ir::as<ir::IfNode>(e)) {
      out = {node->cond, node->then_branch, node->else_branch};
    } else if (const auto* loop = ir::as<ir::WhileNode>(e)) {
      out = loop->init;
      out.push_back(loop->cond);
      out.push_back(loop->body);
    } else if (const auto* let = ir::as<ir::LetNode>(e)) {
      bound_names_[let->value.get()] = let->var->name;
      out = {let->value, let->body};
    } else if (const auto* seq = ir::as<ir::SeqExprNode>(e)) {
      for (const ir::BindingBlock& block : seq->blocks)
        for (const ir::Binding& b : block.bindings) {
          bound_names_[b.value.get()] = b.var->name;
          out.push_back(b.value);
        }
      out.push_back(seq->body);
    }
    return out;
  }

  // Nodes print-ir gives a numbered line of their own (when not bound to a variable).
  static bool is_step(const ir::ExprNode& e) {
    return e.kind == ir::ExprKind::Call || e.kind == ir::ExprKind::Tuple ||
           e.kind == ir::ExprKind::TupleGetItem || e.kind == ir::ExprKind::If ||
           e.kind == ir::ExprKind::While;
  }

  void finish(const ir::Expr& e) {
    std::string name;
    if (auto it = bound_names_.find(e.get()); it != bound_names_.end()) {
      name = "%" + it->second;
    } else if (is_step(*e)) {
      name = "%" + std::to_string(next_step_++);
    }
    if (const auto* call = ir::as<ir::CallNode>(e)) on_call_(*call, name);
  }

  // The numbered steps of a function's body: all but its result, which prints unnumbered.
  static int steps_inside(const ir::FunctionNode& fn) {
    ExecutionOrderWalk inner([](const ir::CallNode&, const std::string&) {});
    inner.walk(fn.body);
    bool result_is_step = is_step(*fn.body) && !inner.bound_names_.count(fn.body.get());
    return inner.next_step_ - (result_is_step ? 1 : 0);
  }

  CallVisitor on_call_;
  std::unordered_set<const ir::ExprNode*> visited_;
  std::unordered_map<const ir::ExprNode*, std::string> bound_names_;
  int next_step_ = 0;
};

// The ops a function's body calls, in order: "nn.conv2d, add, nn.relu".
std::string body_op_names(const ir::FunctionNode& fn) {
  std::string names;
  ExecutionOrderWalk([&](const ir::CallNode& call, const std::string&) {
    std::string op = call.op() ? call.op()->name : "fn";
    names += (names.empty() ? "" : ", ") + op;
  }).walk(fn.body);
  return names;
}

// The function's body carries types: typed now from the parameters' annotations if not.
void ensure_typed(const ir::FunctionNode& fn) {
  if (fn.body && !fn.body->checked_type) ir::infer_expr_type(ir::Expr(&fn), true);
}

std::string layer_op_name(const ir::CallNode& call) {
  if (const ir::OpNode* op = call.op()) return op->name;
  if (const auto* fn = ir::as<ir::FunctionNode>(call.callee))
    return "fused(" + body_op_names(*fn) + ")";
  if (const auto* global = ir::as<ir::GlobalVarNode>(call.callee)) return "@" + global->name;
  if (const auto* extern_func = ir::as<ir::ExternFuncNode>(call.callee)) return extern_func->symbol;
  return "call";
}

}  // namespace

namespace detail {

OpCost body_work(const ir::FunctionNode& fn) {
  ensure_typed(fn);
  OpCost work;
  ExecutionOrderWalk([&](const ir::CallNode& call, const std::string&) {
    if (const auto* inner = ir::as<ir::FunctionNode>(call.callee)) {
      work += body_work(*inner);
    } else {
      work += op_call_work(call);
    }
  }).walk(fn.body);
  return work;
}

}  // namespace detail

ModelCost model_cost(const ir::IRModule& mod, const std::vector<std::string>& param_names) {
  ir::Function main = mod.get_function("main");
  ir::IRModule typed = mod;
  if (main->body && !main->body->checked_type) {
    typed = ir::infer_type(mod);
    main = typed.get_function("main");
  }
  std::unordered_set<std::string> weight_names(param_names.begin(), param_names.end());
  std::unordered_set<const ir::ExprNode*> weights;
  for (const ir::Var& p : main->params)
    if (weight_names.count(p->name)) weights.insert(p.get());

  ModelCost result;
  std::unordered_set<const ir::ExprNode*> counted_weights;
  ExecutionOrderWalk([&](const ir::CallNode& call, const std::string& name) {
    std::vector<bool> is_param(call.args.size(), false);
    for (size_t i = 0; i < call.args.size(); ++i) is_param[i] = weights.count(call.args[i].get());
    LayerCost layer;
    layer.name = name;
    layer.op = layer_op_name(call);
    const ir::Type& out = call.checked_type;
    const auto* tuple = ir::as<ir::TupleTypeNode>(out);
    layer.out_shape =
        detail::tensor_dims(tuple && !tuple->fields.empty() ? tuple->fields[0] : out, true);
    layer.cost = call_cost(call, is_param);
    // A weight read by several layers counts once in the total.
    int64_t shared = 0;
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ir::Expr& arg = call.args[i];
      bool weight = is_param[i] || (arg->kind == ir::ExprKind::Constant &&
                                    !ir::as<ir::ConstantNode>(arg)->data.shape().empty());
      if (weight && !counted_weights.insert(arg.get()).second)
        shared += ir::as<ir::ConstantNode>(arg) ? ir::as<ir::ConstantNode>(arg)->data.numel()
                                                : detail::elements(arg->checked_type);
    }
    OpCost counted = layer.cost;
    counted.params -= shared;
    result.total += counted;
    result.layers.push_back(std::move(layer));
  }).walk(main->body);
  return result;
}

int64_t function_flops(const ir::FunctionNode& fn) { return detail::body_work(fn).flops; }

}  // namespace anvil::analysis
