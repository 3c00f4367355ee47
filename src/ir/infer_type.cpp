// Type inference: each expression's type from its operands', bottom-up, with
// op types computed by the op table's relations. Results are cached on the
// nodes (checked_type) once a whole function has been typed.
#include "anvil/ir/infer_type.h"

#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/op.h"

namespace anvil::ir {
namespace {

class TypeInferencer {
 public:
  explicit TypeInferencer(const IRModule* mod, bool reuse_cached = false)
      : mod_(mod), reuse_cached_(reuse_cached) {}

  Type infer(const Expr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    if (reuse_cached_ && e->checked_type && e->kind != ExprKind::Var) return e->checked_type;
    Type t = compute(e);
    memo_[e.get()] = t;
    return t;
  }

  // Writes the cached types onto the nodes.
  void commit() {
    for (const auto& [node, type] : memo_)
      if (type) node->checked_type = type;
  }

  Type global_type(const std::string& name) {
    if (auto it = global_types_.find(name); it != global_types_.end()) return it->second;
    BaseFunc f = mod_ ? mod_->find(name) : nullptr;
    if (!f) throw_error("call of unknown function @", name);
    if (f->kind != ExprKind::Function) {
      // Tensor-IR functions are reached only through call_tir, which declares its output.
      return nullptr;
    }
    const auto* fn = static_cast<const FunctionNode*>(f.get());
    if (in_progress_.count(name)) {
      // A recursive call: rely on the annotations.
      if (!fn->ret_type)
        throw_error("recursive function @", name, " needs a return type annotation");
      std::vector<Type> params;
      for (const Var& p : fn->params) params.push_back(p->annotation);
      return FuncTypeNode::make(std::move(params), fn->ret_type);
    }
    in_progress_.insert(name);
    Type t = infer(f);
    in_progress_.erase(name);
    global_types_[name] = t;
    return t;
  }

 private:
  Type compute(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Var: {
        const auto* var = as<VarNode>(e);
        if (!var->annotation) throw_error("variable %", var->name, " is used before it has a type");
        return var->annotation;
      }
      case ExprKind::GlobalVar:
        return global_type(as<GlobalVarNode>(e)->name);
      case ExprKind::Constant: {
        const Tensor& data = as<ConstantNode>(e)->data;
        return TensorTypeNode::make(to_dims(data.shape_vector()), data.dtype());
      }
      case ExprKind::Op:
      case ExprKind::ExternFunc:
      case ExprKind::PrimFunc:
        return nullptr;
      case ExprKind::Call:
        return infer_call(as<CallNode>(e));
      case ExprKind::Tuple: {
        std::vector<Type> fields;
        for (const Expr& f : as<TupleNode>(e)->fields) fields.push_back(infer(f));
        return TupleTypeNode::make(std::move(fields));
      }
      case ExprKind::TupleGetItem: {
        const auto* item = as<TupleGetItemNode>(e);
        Type t = infer(item->tuple);
        const auto* tuple = as<TupleTypeNode>(t);
        if (!tuple)
          throw_error("tuple index .", item->index, " applied to a non-tuple of type ",
                      type_to_string(t));
        if (item->index < 0 || size_t(item->index) >= tuple->fields.size())
          throw_error("tuple index .", item->index, " is out of range for ", type_to_string(t));
        return tuple->fields[item->index];
      }
      case ExprKind::Function:
        return infer_function(as<FunctionNode>(e));
      case ExprKind::If: {
        const auto* node = as<IfNode>(e);
        Type cond = infer(node->cond);
        const auto* c = as<TensorTypeNode>(cond);
        if (!c || !c->dtype.is_bool() || (c->shape && !c->shape->empty()))
          throw_error("if condition must be a scalar bool, got ", type_to_string(cond));
        Type then_type = infer(node->then_branch), else_type = infer(node->else_branch);
        // Branches may differ in their dims (an empty static tensor against a dynamic one):
        // the If's type is what holds both.
        Type joined = join_types(then_type, else_type);
        if (!joined)
          throw_error("if branches have different types: ", type_to_string(then_type), " vs ",
                      type_to_string(else_type));
        return joined;
      }
      case ExprKind::While:
        return infer_while(as<WhileNode>(e));
      case ExprKind::Let: {
        const auto* node = as<LetNode>(e);
        bind(node->var, infer_named(node->value, node->var->name));
        return infer(node->body);
      }
      case ExprKind::SeqExpr: {
        const auto* node = as<SeqExprNode>(e);
        for (const BindingBlock& block : node->blocks)
          for (const Binding& b : block.bindings) bind(b.var, infer_named(b.value, b.var->name));
        return infer(node->body);
      }
    }
    return nullptr;
  }

  // Infers a bound value, remembering the binding's name for messages.
  Type infer_named(const Expr& value, const std::string& name) {
    std::string saved = std::exchange(binding_name_, name);
    Type t = infer(value);
    binding_name_ = saved;
    return t;
  }

  void bind(const Var& var, Type value_type) {
    if (var->annotation && !types_equal(var->annotation, value_type))
      throw_error("%", var->name, " is annotated ", type_to_string(var->annotation),
                  " but its value has type ", type_to_string(value_type));
    memo_[var.get()] = value_type;
  }

  // A loop's vars keep their annotated types on every iteration: the initial values and the
  // body's must fit them (be them, or them with fewer dims unknown).
  Type infer_while(const WhileNode* node) {
    auto fits = [](const Type& annotated, const Type& value) {
      Type joined = join_types(annotated, value);
      return joined && types_equal(joined, annotated);
    };
    std::vector<Type> fields;
    for (size_t i = 0; i < node->vars.size(); ++i) {
      const Var& var = node->vars[i];
      if (!var->annotation) throw_error("loop variable %", var->name, " has no type annotation");
      Type init = infer(node->init[i]);
      if (!fits(var->annotation, init))
        throw_error("loop variable %", var->name, " has type ", type_to_string(var->annotation),
                    " but its initial value has type ", type_to_string(init));
      memo_[var.get()] = var->annotation;
      fields.push_back(var->annotation);
    }
    Type cond = infer(node->cond);
    const auto* c = as<TensorTypeNode>(cond);
    if (!c || !c->dtype.is_bool() || (c->shape && !c->shape->empty()))
      throw_error("loop condition must be a scalar bool, got ", type_to_string(cond));
    Type body = infer(node->body);
    const auto* next = as<TupleTypeNode>(body);
    if (!next || next->fields.size() != fields.size())
      throw_error("loop body must give a tuple of ", fields.size(),
                  " values (one per loop "
                  "variable), got ",
                  type_to_string(body));
    for (size_t i = 0; i < fields.size(); ++i)
      if (!fits(fields[i], next->fields[i]))
        throw_error("loop variable %", node->vars[i]->name, " has type ", type_to_string(fields[i]),
                    " but the body gives it ", type_to_string(next->fields[i]));
    return TupleTypeNode::make(std::move(fields));
  }

  Type infer_function(const FunctionNode* fn) {
    std::vector<Type> params;
    for (const Var& p : fn->params) {
      if (!p->annotation) throw_error("parameter %", p->name, " has no type annotation");
      params.push_back(p->annotation);
      memo_[p.get()] = p->annotation;
    }
    Type body = infer(fn->body);
    if (fn->ret_type && !types_equal(fn->ret_type, body))
      throw_error("function returns ", type_to_string(body), " but is annotated ",
                  type_to_string(fn->ret_type));
    return FuncTypeNode::make(std::move(params), body);
  }

  Type infer_call(const CallNode* call) {
    std::vector<Type> arg_types;
    for (const Expr& arg : call->args) arg_types.push_back(infer(arg));
    if (const OpNode* op = call->op()) return infer_op_call(call, *op->def, arg_types);

    Type callee = infer(call->callee);
    const auto* fn = as<FuncTypeNode>(callee);
    if (!fn) throw_error("call of a non-function of type ", type_to_string(callee));
    if (fn->params.size() != arg_types.size())
      throw_error("function expects ", fn->params.size(), " arguments, got ", arg_types.size());
    for (size_t i = 0; i < arg_types.size(); ++i)
      if (!types_equal(fn->params[i], arg_types[i]))
        throw_error("argument ", i, " of the call has type ", type_to_string(arg_types[i]),
                    " but the function expects ", type_to_string(fn->params[i]));
    return fn->ret;
  }

  Type infer_op_call(const CallNode* call, const OpDef& def, const std::vector<Type>& arg_types) {
    try {
      size_t n = arg_types.size(), expected = def.input_names.size();
      if (def.variadic ? n + 1 < expected : n != expected) {
        std::string names;
        for (size_t i = 0; i < expected; ++i) names += (i ? ", " : "") + def.input_names[i];
        throw_error("expects ", def.variadic ? "at least " : "",
                    def.variadic ? expected - 1 : expected, " arguments (", names, "), got ", n);
      }
      const AttrsNode* attrs = call->attrs ? call->attrs.get() : def.default_attrs.get();
      if (def.default_attrs && attrs &&
          std::string_view(attrs->type_key()) != def.default_attrs->type_key())
        throw_error("expects attrs ", def.default_attrs->type_key(), ", got ", attrs->type_key());
      ANVIL_ICHECK(def.relation, "operator ", def.name, " has no type relation");
      RelationArgs args{def, arg_types, attrs, call->type_args};
      Type result = def.relation(args);
      ANVIL_ICHECK(result, "type relation of ", def.name, " returned no type");
      return result;
    } catch (const Error& e) {
      std::string where = binding_name_.empty() ? "" : " (bound to %" + binding_name_ + ")";
      std::string inputs;
      for (size_t i = 0; i < arg_types.size(); ++i)
        inputs += (i ? ", " : "") + type_to_string(arg_types[i]);
      throw Error(
          str_cat("type error in ", def.name, where, ": ", e.what(), "; argument types: ", inputs));
    }
  }

  const IRModule* mod_;
  bool reuse_cached_;
  std::unordered_map<const ExprNode*, Type> memo_;
  std::unordered_map<std::string, Type> global_types_;
  std::unordered_set<std::string> in_progress_;
  std::string binding_name_;
};

}  // namespace

IRModule infer_type(const IRModule& mod) {
  TypeInferencer inferencer(&mod);
  IRModule result;
  for (const auto& [name, func] : mod.functions()) {
    if (func->kind != ExprKind::Function) {
      result.add(name, func);
      continue;
    }
    const auto* fn = static_cast<const FunctionNode*>(func.get());
    Type type;
    try {
      type = inferencer.global_type(name);
    } catch (const Error& e) {
      throw Error(str_cat("in @", name, ": ", e.what()));
    }
    const auto* ftype = as<FuncTypeNode>(type);
    Function typed = fn->ret_type
                         ? Function(fn)
                         : FunctionNode::make(fn->params, fn->body, ftype->ret, fn->func_attrs);
    typed->checked_type = type;
    result.add(name, typed);
  }
  inferencer.commit();
  return result;
}

Type infer_expr_type(const Expr& expr, bool reuse_cached_types) {
  TypeInferencer inferencer(nullptr, reuse_cached_types);
  Type t = inferencer.infer(expr);
  inferencer.commit();
  return t;
}

}  // namespace anvil::ir
