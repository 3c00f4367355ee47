// Construction of graph IR nodes, type printing and equality, and IRModule.
#include "anvil/ir/ir.h"

#include <algorithm>
#include <mutex>

#include "anvil/ir/op.h"

namespace anvil::ir {

// ---------------------------------------------------------------- types

TensorType TensorTypeNode::make(std::vector<Dim> shape, DataType dtype) {
  auto node = new TensorTypeNode();
  node->shape = std::move(shape);
  node->dtype = dtype;
  return TensorType(node);
}

TensorType TensorTypeNode::make_unknown_rank(DataType dtype) {
  auto node = new TensorTypeNode();
  node->dtype = dtype;
  return TensorType(node);
}

int TensorTypeNode::ndim() const {
  ANVIL_ICHECK(shape.has_value(), "rank of a tensor type of unknown rank");
  return int(shape->size());
}

std::optional<std::vector<int64_t>> TensorTypeNode::static_shape() const {
  if (!shape) return std::nullopt;
  return to_ints(*shape);
}

TupleType TupleTypeNode::make(std::vector<Type> fields) {
  auto node = new TupleTypeNode();
  node->fields = std::move(fields);
  return TupleType(node);
}

FuncType FuncTypeNode::make(std::vector<Type> params, Type ret) {
  auto node = new FuncTypeNode();
  node->params = std::move(params);
  node->ret = std::move(ret);
  return FuncType(node);
}

std::string type_to_string(const Type& type) {
  if (!type) return "?";
  if (auto* t = as<TensorTypeNode>(type)) {
    if (!t->shape) return "Tensor[?, " + t->dtype.to_string() + "]";
    if (t->shape->empty()) return t->dtype.to_string();
    std::string dims;
    for (size_t i = 0; i < t->shape->size(); ++i)
      dims += (i ? ", " : "") + (*t->shape)[i].to_string();
    return "Tensor[(" + dims + "), " + t->dtype.to_string() + "]";
  }
  if (auto* t = as<TupleTypeNode>(type)) {
    std::string text = "(";
    for (size_t i = 0; i < t->fields.size(); ++i)
      text += (i ? ", " : "") + type_to_string(t->fields[i]);
    return text + (t->fields.size() == 1 ? ",)" : ")");
  }
  auto* f = as<FuncTypeNode>(type);
  std::string text = "fn (";
  for (size_t i = 0; i < f->params.size(); ++i)
    text += (i ? ", " : "") + type_to_string(f->params[i]);
  return text + ") -> " + type_to_string(f->ret);
}

bool types_equal(const Type& a, const Type& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (auto* x = as<TensorTypeNode>(a)) {
    auto* y = as<TensorTypeNode>(b);
    return x->dtype == y->dtype && x->shape == y->shape;
  }
  if (auto* x = as<TupleTypeNode>(a)) {
    auto* y = as<TupleTypeNode>(b);
    return std::equal(x->fields.begin(), x->fields.end(), y->fields.begin(), y->fields.end(),
                      types_equal);
  }
  auto* x = as<FuncTypeNode>(a);
  auto* y = as<FuncTypeNode>(b);
  return types_equal(x->ret, y->ret) && std::equal(x->params.begin(), x->params.end(),
                                                   y->params.begin(), y->params.end(), types_equal);
}

Type join_types(const Type& a, const Type& b) {
  if (types_equal(a, b)) return a;
  if (!a || !b || a->kind != b->kind) return nullptr;
  if (auto* x = as<TensorTypeNode>(a)) {
    auto* y = as<TensorTypeNode>(b);
    if (x->dtype != y->dtype) return nullptr;
    if (!x->shape || !y->shape || x->shape->size() != y->shape->size())
      return TensorTypeNode::make_unknown_rank(x->dtype);
    std::vector<Dim> dims;
    for (size_t i = 0; i < x->shape->size(); ++i)
      dims.push_back((*x->shape)[i] == (*y->shape)[i] ? (*x->shape)[i] : Dim::any());
    return TensorTypeNode::make(std::move(dims), x->dtype);
  }
  if (auto* x = as<TupleTypeNode>(a)) {
    auto* y = as<TupleTypeNode>(b);
    if (x->fields.size() != y->fields.size()) return nullptr;
    std::vector<Type> fields;
    for (size_t i = 0; i < x->fields.size(); ++i) {
      fields.push_back(join_types(x->fields[i], y->fields[i]));
      if (!fields.back()) return nullptr;
    }
    return TupleTypeNode::make(std::move(fields));
  }
  return nullptr;  // functions of different types
}

// ---------------------------------------------------------------- expressions

const char* expr_kind_name(ExprKind kind) {
  switch (kind) {
#define ANVIL_EXPR_KIND(Name) \
  case ExprKind::Name:        \
    return #Name;
#include "anvil/ir/expr_kinds.def"
  }
  return "?";
}

Var VarNode::make(std::string name, Type annotation, bool is_dataflow) {
  auto node = new VarNode();
  node->name = std::move(name);
  node->annotation = std::move(annotation);
  node->is_dataflow = is_dataflow;
  return Var(node);
}

GlobalVar GlobalVarNode::make(std::string name) {
  auto node = new GlobalVarNode();
  node->name = std::move(name);
  return GlobalVar(node);
}

Constant ConstantNode::make(Tensor data) {
  ANVIL_ICHECK(data.defined(), "constant without data");
  auto node = new ConstantNode();
  node->data = std::move(data);
  return Constant(node);
}

Op OpNode::get(std::string_view name) {
  // One node per operator, created on first use and shared by all calls.
  static std::mutex mutex;
  static std::unordered_map<std::string, Op> nodes;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = nodes.find(std::string(name));
  if (it != nodes.end()) return it->second;
  const OpDef* def = OpTable::global().find(name);
  if (!def) throw_error("unknown operator '", name, "'");
  auto node = new OpNode();
  node->name = std::string(name);
  node->def = def;
  Op op(node);
  nodes.emplace(std::string(name), op);
  return op;
}

ExternFunc ExternFuncNode::make(std::string symbol) {
  auto node = new ExternFuncNode();
  node->symbol = std::move(symbol);
  return ExternFunc(node);
}

Call CallNode::make(Expr callee, std::vector<Expr> args, Attrs attrs, std::vector<Type> type_args) {
  ANVIL_ICHECK(callee, "call without callee");
  auto node = new CallNode();
  node->callee = std::move(callee);
  node->args = std::move(args);
  node->attrs = std::move(attrs);
  node->type_args = std::move(type_args);
  return Call(node);
}

Tuple TupleNode::make(std::vector<Expr> fields) {
  auto node = new TupleNode();
  node->fields = std::move(fields);
  return Tuple(node);
}

TupleGetItem TupleGetItemNode::make(Expr tuple, int index) {
  auto node = new TupleGetItemNode();
  node->tuple = std::move(tuple);
  node->index = index;
  return TupleGetItem(node);
}

Function FunctionNode::make(std::vector<Var> params, Expr body, Type ret_type, DictAttrs attrs) {
  ANVIL_ICHECK(body, "function without body");
  auto node = new FunctionNode();
  node->params = std::move(params);
  node->body = std::move(body);
  node->ret_type = std::move(ret_type);
  node->func_attrs = std::move(attrs);
  return Function(node);
}

bool FunctionNode::is_primitive() const {
  const AttrValue* v = func_attrs.find("Primitive");
  if (!v) return false;
  if (auto* i = std::get_if<int64_t>(v)) return *i != 0;
  if (auto* b = std::get_if<bool>(v)) return *b;
  return false;
}

If IfNode::make(Expr cond, Expr then_branch, Expr else_branch) {
  auto node = new IfNode();
  node->cond = std::move(cond);
  node->then_branch = std::move(then_branch);
  node->else_branch = std::move(else_branch);
  return If(node);
}

While WhileNode::make(std::vector<Var> vars, std::vector<Expr> init, Expr cond, Expr body) {
  ANVIL_ICHECK(vars.size() == init.size(), "a While needs one initial value per var, got ",
               vars.size(), " vars and ", init.size(), " values");
  auto node = new WhileNode();
  node->vars = std::move(vars);
  node->init = std::move(init);
  node->cond = std::move(cond);
  node->body = std::move(body);
  return While(node);
}

Let LetNode::make(Var var, Expr value, Expr body) {
  auto node = new LetNode();
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return Let(node);
}

SeqExpr SeqExprNode::make(std::vector<BindingBlock> blocks, Expr body) {
  auto node = new SeqExprNode();
  node->blocks = std::move(blocks);
  node->body = std::move(body);
  return SeqExpr(node);
}

Call call_op(std::string_view op_name, std::vector<Expr> args, Attrs attrs) {
  Op op = OpNode::get(op_name);
  if (!attrs && op->def->default_attrs) attrs = op->def->default_attrs;
  return CallNode::make(op, std::move(args), std::move(attrs));
}

Call call_tir(GlobalVar func, std::vector<Expr> args, Type out_type) {
  return CallNode::make(OpNode::get("call_tir"), {func, TupleNode::make(std::move(args))}, nullptr,
                        {std::move(out_type)});
}

Call call_dps_packed(std::string symbol, std::vector<Expr> args, Type out_type) {
  return CallNode::make(OpNode::get("call_dps_packed"),
                        {ExternFuncNode::make(std::move(symbol)), TupleNode::make(std::move(args))},
                        nullptr, {std::move(out_type)});
}

// ---------------------------------------------------------------- module

void IRModule::add(const std::string& name, BaseFunc func) {
  ANVIL_ICHECK(func, "adding a null function as @", name);
  for (auto& [existing, f] : functions_) {
    if (existing == name) {
      f = std::move(func);
      return;
    }
  }
  functions_.emplace_back(name, std::move(func));
}

BaseFunc IRModule::find(std::string_view name) const {
  for (const auto& [existing, f] : functions_)
    if (existing == name) return f;
  return nullptr;
}

BaseFunc IRModule::get(std::string_view name) const {
  BaseFunc f = find(name);
  if (!f) throw_error("module has no function named @", name);
  return f;
}

Function IRModule::get_function(std::string_view name) const {
  BaseFunc f = get(name);
  if (f->kind != ExprKind::Function) throw_error("@", name, " is not a graph function");
  return Function(static_cast<const FunctionNode*>(f.get()));
}

void IRModule::remove(std::string_view name) {
  std::erase_if(functions_, [&](const auto& entry) { return entry.first == name; });
}

std::vector<std::string> IRModule::names() const {
  std::vector<std::string> result;
  for (const auto& entry : functions_) result.push_back(entry.first);
  return result;
}

}  // namespace anvil::ir
