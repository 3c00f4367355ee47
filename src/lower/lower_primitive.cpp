// A fused group -> TE: each call of the group's body becomes its op's compute over the
// tensors of its arguments; the group's outputs become the PrimFunc's output buffers. The
// naive function is then scheduled (src/lower/default_schedule.cpp).
#include <cctype>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/topi/strategy.h"
#include "lower/default_schedule.h"

namespace anvil::lower {
namespace {

// What an expression of the group evaluates to: a tensor or a tuple of values.
struct GroupValue {
  te::Tensor tensor;
  std::vector<GroupValue> fields;
  bool is_tuple = false;
};

// The shape of a parameter's type as index expressions: symbolic dims become the group's
// size variables. An unknown dim (?) cannot be lowered.
std::vector<tir::PrimExpr> shape_of(const ir::Type& type, const std::string& what,
                                    topi::DimVars& dim_vars) {
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  if (!tensor || !tensor->has_shape()) throw_error(what, " is not a tensor of known rank");
  std::vector<tir::PrimExpr> shape;
  for (const ir::Dim& dim : *tensor->shape) {
    if (dim.is_any())
      throw_error(what, " has an unknown dim (?); a kernel needs every dim named or static");
    shape.push_back(dim_vars.to_expr(dim));
  }
  return shape;
}

DataType dtype_of(const ir::Type& type) {
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  ANVIL_ICHECK(tensor, "not a tensor type");
  return tensor->dtype;
}

// A C identifier made of name's letters and digits.
std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "p_" + out;
  return out;
}

// A 0-d constant as a compute holding its value (inlined by the schedule). int64 values
// beyond 2^53 would lose bits through double; constants of such size do not reach a group.
te::Tensor scalar_constant(const Tensor& value) {
  DataType dtype = value.dtype();
  if (dtype.is_handle() || dtype.lanes != 1)
    throw_error("a scalar constant of dtype ", dtype.to_string(), " cannot be lowered");
  tir::PrimExpr imm = tir::make_const(dtype, value.get_as_double(0));
  return te::compute(
      {}, [imm](const std::vector<tir::Var>&) { return imm; }, "constant");
}

class GroupBuilder {
 public:
  GroupBuilder(const ir::Function& fn, const std::vector<std::string>& strategy_keys)
      : fn_(fn), strategy_keys_(strategy_keys) {}

  std::vector<te::Tensor> build_inputs() {
    std::vector<te::Tensor> inputs;
    std::unordered_set<std::string> names;
    for (const ir::Var& param : fn_->params) {
      std::string what = "parameter '" + param->name + "'";
      const ir::Type& type = param->checked_type ? param->checked_type : param->annotation;
      std::string name = identifier(param->name);
      for (int n = 1; !names.insert(name).second; ++n)
        name = identifier(param->name) + "_" + std::to_string(n);
      te::Tensor t = te::placeholder(shape_of(type, what, dim_vars_), dtype_of(type), name);
      values_[param.get()] = GroupValue{t, {}, false};
      inputs.push_back(t);
    }
    return inputs;
  }

  GroupValue eval(const ir::Expr& expr) {
    auto it = values_.find(expr.get());
    if (it != values_.end()) return it->second;
    GroupValue value = eval_uncached(expr);
    values_[expr.get()] = value;
    return value;
  }

 private:
  GroupValue eval_uncached(const ir::Expr& expr) {
    if (const auto* constant = ir::as<ir::ConstantNode>(expr)) {
      if (constant->data.ndim() != 0)
        throw_error("a fused group holds a constant of shape ", constant->data.ndim(),
                    "-d; constants of rank >= 1 must be group inputs");
      return GroupValue{scalar_constant(constant->data), {}, false};
    }
    if (const auto* tuple = ir::as<ir::TupleNode>(expr)) {
      GroupValue value;
      value.is_tuple = true;
      for (const ir::Expr& field : tuple->fields) value.fields.push_back(eval(field));
      return value;
    }
    if (const auto* get = ir::as<ir::TupleGetItemNode>(expr)) {
      GroupValue tuple = eval(get->tuple);
      ANVIL_ICHECK(tuple.is_tuple && get->index < int(tuple.fields.size()),
                   "TupleGetItem of a non-tuple in a fused group");
      return tuple.fields[get->index];
    }
    if (const auto* call = ir::as<ir::CallNode>(expr)) return eval_call(*call);
    if (ir::as<ir::VarNode>(expr))
      throw_error("a fused group reads a variable that is not its parameter");
    throw_error("a fused group cannot hold a ", ir::expr_kind_name(expr->kind), " expression");
  }

  GroupValue eval_call(const ir::CallNode& call) {
    const ir::OpNode* op = call.op();
    if (!op) throw_error("a fused group calls something that is not an operator");
    const topi::ComputeFn* compute = topi::find_strategy_compute(op->name, strategy_keys_);
    if (!compute) throw_error("operator '", op->name, "' has no compute for code generation");
    std::vector<te::Tensor> inputs;
    for (const ir::Expr& arg : call.args) {
      GroupValue value = eval(arg);
      if (value.is_tuple) {
        for (const GroupValue& field : value.fields) inputs.push_back(field.tensor);
      } else {
        inputs.push_back(value.tensor);
      }
    }
    ANVIL_ICHECK(call.checked_type, "fused group is not typed");
    // The group of an op with a shape function is that call alone (see lower.h).
    bool is_body = fn_->body.get() == &call;
    if (is_body && fn_->func_attrs.find(kShapeFunctionAttr)) {
      const topi::ShapeCompute* shape = topi::find_shape_compute(op->name);
      if (!shape) throw_error("operator '", op->name, "' has no shape function");
      topi::ComputeArgs args{call, inputs, call.checked_type, &dim_vars_};
      return GroupValue{shape->dims(args), {}, false};
    }
    ir::Type out_type = call.checked_type;
    std::vector<tir::PrimExpr> extras;
    if (is_body) {
      if (const ir::AttrValue* text = fn_->func_attrs.find(kResultTypeAttr))
        out_type = ir::parse_type(std::get<std::string>(*text), kResultTypeAttr);
      if (const ir::AttrValue* names = fn_->func_attrs.find(kExtraVarsAttr)) {
        std::stringstream list(std::get<std::string>(*names));
        for (std::string name; std::getline(list, name, ',');)
          extras.push_back(dim_vars_.to_expr(ir::Dim::var(name)));
      }
    }
    topi::ComputeArgs args{call, inputs, out_type, &dim_vars_, extras};
    std::vector<te::Tensor> outputs = (*compute)(args);
    if (outputs.size() != args.num_outputs())
      throw_error("operator '", op->name, "': compute made ", outputs.size(),
                  " outputs, the type has ", args.num_outputs());
    if (!ir::as<ir::TupleTypeNode>(out_type)) return GroupValue{outputs[0], {}, false};
    GroupValue value;
    value.is_tuple = true;
    for (te::Tensor& t : outputs) value.fields.push_back(GroupValue{t, {}, false});
    return value;
  }

  const ir::Function& fn_;
  const std::vector<std::string>& strategy_keys_;
  std::unordered_map<const ir::ExprNode*, GroupValue> values_;
  topi::DimVars dim_vars_;

 public:
  const topi::DimVars& dim_vars() const { return dim_vars_; }
};

void flatten_into(const GroupValue& value, std::vector<te::Tensor>& out) {
  if (!value.is_tuple) {
    out.push_back(value.tensor);
    return;
  }
  for (const GroupValue& field : value.fields) flatten_into(field, out);
}

// The kernel binds a size variable from a tensor dim that is that variable alone; a variable
// that only occurs inside compound dims (batch * 6) or inside the group becomes an int64
// scalar parameter after the tensors, in name order, listed in the attr kSizeVarArgsAttr for
// the caller (the VM evaluates them from its bound variables).
tir::PrimFunc with_size_var_params(const tir::PrimFunc& func, const topi::DimVars& dim_vars,
                                   const std::vector<te::Tensor>& args) {
  std::unordered_set<const tir::VarNode*> bare;
  for (const te::Tensor& t : args)
    for (const tir::PrimExpr& dim : t.shape())
      if (const auto* var = tir::as<tir::VarNode>(dim)) bare.insert(var);
  std::vector<tir::Var> params = func->params;
  std::string names;
  for (const auto& [name, var] : dim_vars.vars()) {
    if (bare.count(var.get())) continue;
    params.push_back(var);
    names += (names.empty() ? "" : ",") + name;
  }
  if (names.empty()) return func;
  return tir::PrimFuncNode::make(params, func->buffer_map, func->body,
                                 func->func_attrs.with(kSizeVarArgsAttr, names));
}

}  // namespace

tir::PrimFunc lower_primitive(const ir::Function& fn, const std::string& name,
                              const LowerGroupOptions& options) {
  GroupBuilder builder(fn, options.strategy_keys);
  std::vector<te::Tensor> args = builder.build_inputs();
  std::vector<te::Tensor> outputs;
  flatten_into(builder.eval(fn->body), outputs);

  // An output must be a tensor computed here, once: a group returning its input (or one
  // tensor twice) gets an identity copy so every output buffer is written by a block.
  std::unordered_set<const te::TensorNode*> taken;
  for (const te::Tensor& t : args) taken.insert(t.get());
  std::vector<std::string> output_names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    te::Tensor& out = outputs[i];
    if (!taken.insert(out.get()).second) {
      te::Tensor source = out;
      out = te::compute(
          source.shape(),
          [source](const std::vector<tir::Var>& idx) {
            return source.at(std::vector<tir::PrimExpr>(idx.begin(), idx.end()));
          },
          "T_copy");
      taken.insert(out.get());
    }
    args.push_back(out);
  }
  tir::PrimFunc func =
      with_size_var_params(te::create_prim_func(args, name), builder.dim_vars(), args);
  if (!options.schedule) return func;
  return schedule_group(func, fn, options);
}

std::string kernel_name_hint(const ir::Function& fn) {
  std::vector<std::string> ops;
  std::function<void(const ir::Expr&)> visit;
  std::unordered_set<const ir::ExprNode*> seen;
  visit = [&](const ir::Expr& e) {
    if (!e || !seen.insert(e.get()).second) return;
    if (const auto* call = ir::as<ir::CallNode>(e)) {
      for (const ir::Expr& arg : call->args) visit(arg);
      if (const ir::OpNode* op = call->op()) ops.push_back(op->name);
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const ir::Expr& f : tuple->fields) visit(f);
    } else if (const auto* get = ir::as<ir::TupleGetItemNode>(e)) {
      visit(get->tuple);
    }
  };
  visit(fn->body);
  std::string name = fn->func_attrs.find(kShapeFunctionAttr) ? "shape" : "fused";
  for (const std::string& op : ops) {
    std::string part = op;
    for (char& c : part)
      if (c == '.') c = '_';
    if (name.size() + part.size() + 1 > 80) break;
    name += "_" + part;
  }
  return name;
}

}  // namespace anvil::lower
