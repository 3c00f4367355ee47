// Evaluation of graph IR with the reference kernels: a recursive walk with an
// environment of bound variables and a memo, so each shared node runs once.
#include <unordered_map>

#include "anvil/ir/op.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/packed_func.h"

namespace anvil::reference {
namespace {

using namespace ir;

// Binds each size variable of a declared type to the dim of a concrete tensor.
void bind_size_vars(const Type& declared, const Value& value,
                    std::vector<std::pair<std::string, Dim>>& bindings) {
  if (const auto* t = as<TensorTypeNode>(declared)) {
    if (!t->shape || !value.tensor.defined()) return;
    auto shape = value.tensor.shape();
    for (size_t i = 0; i < t->shape->size() && i < shape.size(); ++i)
      if ((*t->shape)[i].is_var()) bindings.emplace_back((*t->shape)[i].var_name(), Dim(shape[i]));
  } else if (const auto* tuple = as<TupleTypeNode>(declared)) {
    for (size_t i = 0; i < tuple->fields.size() && i < value.fields.size(); ++i)
      bind_size_vars(tuple->fields[i], value.fields[i], bindings);
  }
}

// Allocates a tensor (or tuple of tensors) of a type whose size variables are bound.
Value allocate(const Type& type, const std::vector<std::pair<std::string, Dim>>& bindings) {
  if (const auto* tuple = as<TupleTypeNode>(type)) {
    std::vector<Value> fields;
    for (const Type& f : tuple->fields) fields.push_back(allocate(f, bindings));
    return Value::tuple(std::move(fields));
  }
  const auto* t = as<TensorTypeNode>(type);
  if (!t || !t->shape) throw_error("cannot allocate an output of type ", type_to_string(type));
  std::vector<int64_t> shape;
  for (const Dim& d : *t->shape) {
    Dim concrete = substitute(d, bindings);
    if (!concrete.is_int())
      throw_error("output dim ", d.to_string(), " is not known from the inputs");
    shape.push_back(concrete.int_value());
  }
  return Value::of(Tensor::zeros(shape, t->dtype));
}

class Evaluator {
 public:
  Evaluator(const IRModule& mod, Interpreter& interpreter) : mod_(mod), interpreter_(interpreter) {}

  Value call_function(const FunctionNode& fn, std::vector<Value> args) {
    if (args.size() != fn.params.size())
      throw_error("function expects ", fn.params.size(), " arguments, got ", args.size());
    Evaluator inner(mod_, interpreter_);
    for (size_t i = 0; i < args.size(); ++i) {
      inner.size_bindings_.clear();
      inner.env_[fn.params[i].get()] = std::move(args[i]);
    }
    for (size_t i = 0; i < fn.params.size(); ++i)
      bind_size_vars(fn.params[i]->annotation, inner.env_[fn.params[i].get()],
                     inner.size_bindings_);
    return inner.eval(fn.body);
  }

  // Each iteration evaluates cond and body afresh over the values outside the loop, whose
  // memo it shares.
  Value eval_while(const WhileNode& loop) {
    std::vector<Value> vars;
    for (const Expr& value : loop.init) vars.push_back(eval(value));
    while (true) {
      Evaluator iteration(mod_, interpreter_);
      iteration.env_ = env_;
      iteration.size_bindings_ = size_bindings_;
      for (size_t i = 0; i < vars.size(); ++i) iteration.env_[loop.vars[i].get()] = vars[i];
      Value cond = iteration.eval(loop.cond);
      if (cond.tensor.numel() == 0 || cond.tensor.get_as_double(0) == 0) break;
      Value next = iteration.eval(loop.body);
      ANVIL_ICHECK(next.is_tuple && next.fields.size() == vars.size(),
                   "a loop body gives no tuple of its vars");
      vars = std::move(next.fields);
    }
    return Value::tuple(std::move(vars));
  }

  Value eval(const Expr& e) {
    if (auto it = env_.find(e.get()); it != env_.end()) return it->second;
    Value v = compute(e);
    if (e->kind != ExprKind::Var) env_[e.get()] = v;
    return v;
  }

 private:
  Value compute(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Var:
        throw_error("variable %", as<VarNode>(e)->name, " has no value");
      case ExprKind::Constant:
        return Value::of(as<ConstantNode>(e)->data);
      case ExprKind::Tuple: {
        std::vector<Value> fields;
        for (const Expr& f : as<TupleNode>(e)->fields) fields.push_back(eval(f));
        return Value::tuple(std::move(fields));
      }
      case ExprKind::TupleGetItem: {
        const auto* item = as<TupleGetItemNode>(e);
        Value tuple = eval(item->tuple);
        ANVIL_ICHECK(tuple.is_tuple && size_t(item->index) < tuple.fields.size());
        return tuple.fields[item->index];
      }
      case ExprKind::Call:
        return eval_call(*as<CallNode>(e));
      case ExprKind::If: {
        const auto* node = as<IfNode>(e);
        Value cond = eval(node->cond);
        return cond.tensor.get_as_double(0) != 0 ? eval(node->then_branch)
                                                 : eval(node->else_branch);
      }
      case ExprKind::While:
        return eval_while(*as<WhileNode>(e));
      case ExprKind::Let: {
        const auto* node = as<LetNode>(e);
        env_[node->var.get()] = eval(node->value);
        return eval(node->body);
      }
      case ExprKind::SeqExpr: {
        const auto* node = as<SeqExprNode>(e);
        for (const BindingBlock& block : node->blocks)
          for (const Binding& b : block.bindings) env_[b.var.get()] = eval(b.value);
        return eval(node->body);
      }
      default:
        throw_error("cannot evaluate a ", expr_kind_name(e->kind), " as a value");
    }
  }

  Value eval_call(const CallNode& call) {
    if (const OpNode* op = call.op()) {
      if (op->name == "call_dps_packed") return eval_dps_packed(call);
      if (op->name == "call_tir")
        throw_error(
            "call_tir needs compiled tensor-IR functions; the reference executor cannot run @",
            as<GlobalVarNode>(call.args[0]) ? as<GlobalVarNode>(call.args[0])->name : "?");
      std::vector<Tensor> inputs;
      for (const Expr& arg : call.args) {
        Value v = eval(arg);
        if (v.is_tuple) {
          // Ops taking a tuple (concatenate) receive its fields as inputs.
          for (const Value& f : v.fields) inputs.push_back(f.tensor);
        } else {
          inputs.push_back(v.tensor);
        }
      }
      std::vector<Tensor> outputs = evaluate_call(call, inputs);
      if (as<TupleTypeNode>(call.checked_type)) {
        std::vector<Value> fields;
        for (Tensor& t : outputs) fields.push_back(Value::of(std::move(t)));
        return Value::tuple(std::move(fields));
      }
      ANVIL_ICHECK(outputs.size() == 1, op->name, " returned ", outputs.size(), " tensors");
      return Value::of(std::move(outputs[0]));
    }
    std::vector<Value> args;
    for (const Expr& arg : call.args) args.push_back(eval(arg));
    if (const auto* fn = as<FunctionNode>(call.callee)) return call_function(*fn, std::move(args));
    if (const auto* gv = as<GlobalVarNode>(call.callee))
      return interpreter_.call(gv->name, std::move(args));
    throw_error("cannot call a ", expr_kind_name(call.callee->kind));
  }

  // call_dps_packed("name", (args...), out=T): allocate the destination and
  // let the registered function fill it.
  Value eval_dps_packed(const CallNode& call) {
    const auto* extern_func = as<ExternFuncNode>(call.args[0]);
    ANVIL_ICHECK(extern_func && call.type_args.size() == 1);
    PackedFunc fn = get_global(extern_func->symbol);
    Value args = eval(call.args[1]);
    Value out = allocate(call.type_args[0], size_bindings_);
    std::vector<anvil::Value> packed;
    for (const Value& a : args.fields) packed.push_back(anvil::Value(a.tensor));
    for (const Tensor& t : flatten(out)) packed.push_back(anvil::Value(t));
    fn.call(packed);
    return out;
  }

  const IRModule& mod_;
  Interpreter& interpreter_;
  std::unordered_map<const ExprNode*, Value> env_;
  std::vector<std::pair<std::string, Dim>> size_bindings_;
};

}  // namespace

DataType KernelArgs::out_dtype(size_t index) const {
  if (const auto* t = as<TensorTypeNode>(out_type)) return t->dtype;
  const auto* tuple = as<TupleTypeNode>(out_type);
  ANVIL_ICHECK(tuple && index < tuple->fields.size(), "no output ", index);
  const auto* field = as<TensorTypeNode>(tuple->fields[index]);
  ANVIL_ICHECK(field, "output ", index, " is not a tensor");
  return field->dtype;
}

std::vector<Tensor> evaluate_call(const CallNode& call, std::span<const Tensor> inputs) {
  const OpNode* op = call.op();
  ANVIL_ICHECK(op, "evaluate_call needs an op call");
  const ReferenceKernel* kernel = find_kernel(op->name);
  if (!kernel) throw_error("operator ", op->name, " has no reference kernel");
  ANVIL_ICHECK(call.checked_type, "call of ", op->name, " is not typed");
  const AttrsNode* attrs = call.attrs ? call.attrs.get() : op->def->default_attrs.get();
  KernelArgs args{inputs, attrs, call.checked_type};
  return (*kernel)(args);
}

Interpreter::Interpreter(IRModule mod) : mod_(std::move(mod)) {}

Value Interpreter::call(std::string_view function, std::vector<Value> args) {
  Function fn = mod_.get_function(function);
  Evaluator evaluator(mod_, *this);
  return evaluator.call_function(*fn, std::move(args));
}

std::vector<Tensor> Interpreter::run(const std::vector<Tensor>& inputs, std::string_view function) {
  std::vector<Value> args;
  for (const Tensor& t : inputs) args.push_back(Value::of(t));
  return flatten(call(function, std::move(args)));
}

std::vector<Tensor> flatten(const Value& value) {
  if (!value.is_tuple) return {value.tensor};
  std::vector<Tensor> result;
  for (const Value& f : value.fields)
    for (Tensor& t : flatten(f)) result.push_back(std::move(t));
  return result;
}

}  // namespace anvil::reference
