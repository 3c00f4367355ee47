// The VM compiler's vocabulary: types and dims of values, instructions, and fused groups run
// on the reference kernels.
#include "driver/vm_compile_util.h"

#include <functional>
#include <memory>

#include "anvil/reference/reference.h"
#include "anvil/support/error.h"

namespace anvil::driver::vm_compile {

ir::Type type_of(const ir::Expr& expr) {
  if (expr->checked_type) return expr->checked_type;
  if (const auto* var = ir::as<ir::VarNode>(expr); var && var->annotation) return var->annotation;
  ANVIL_ICHECK(false, "vm compile: a ", ir::expr_kind_name(expr->kind), " has no type");
  return nullptr;
}

// The tensor types of a type, tuples flattened.
void flatten_type(const ir::Type& type, std::vector<const ir::TensorTypeNode*>& out) {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    for (const ir::Type& field : tuple->fields) flatten_type(field, out);
    return;
  }
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  if (!tensor) throw_error("vm compile: a value of type ", ir::type_to_string(type));
  out.push_back(tensor);
}

// The dims of a tensor type, -1 for each that is not a constant.
std::vector<int64_t> dims_of(const ir::TensorTypeNode& type, const std::string& what) {
  if (!type.shape) throw_error("build_vm: ", what, " has unknown rank");
  std::vector<int64_t> dims;
  for (const ir::Dim& dim : *type.shape) dims.push_back(dim.as_int().value_or(-1));
  return dims;
}

// A dim as a program over the function's size variables (index by name in size_vars); nullopt
// when it holds an unknown dim (?) or a variable that no input binds.
std::optional<vm::DimProgram> dim_program(const ir::Dim& dim,
                                          const std::map<std::string, int64_t>& size_vars) {
  vm::DimProgram program;
  using Op = vm::DimProgram::Op;
  std::function<bool(const ir::Dim&)> emit = [&](const ir::Dim& d) {
    switch (d.kind()) {
      case ir::DimKind::Int:
        program.steps.push_back({Op::Const, d.int_value()});
        return true;
      case ir::DimKind::Var: {
        auto it = size_vars.find(d.var_name());
        if (it == size_vars.end()) return false;
        program.steps.push_back({Op::Var, it->second});
        return true;
      }
      case ir::DimKind::Any:
        return false;
      default:
        break;
    }
    if (!emit(d.lhs()) || !emit(d.rhs())) return false;
    Op op = d.kind() == ir::DimKind::Add        ? Op::Add
            : d.kind() == ir::DimKind::Mul      ? Op::Mul
            : d.kind() == ir::DimKind::FloorDiv ? Op::FloorDiv
            : d.kind() == ir::DimKind::FloorMod ? Op::FloorMod
            : d.kind() == ir::DimKind::Min      ? Op::Min
            : d.kind() == ir::DimKind::Max      ? Op::Max
                                                : Op::Broadcast;
    program.steps.push_back({op, 0});
    return true;
  };
  if (!emit(dim)) return std::nullopt;
  return program;
}

// Nodes the walk descends into inside a region (If branches and While conditions and bodies
// excluded) or everywhere.
void children_of(const ir::Expr& expr, bool enter_branches, std::vector<ir::Expr>& out) {
  switch (expr->kind) {
    case ir::ExprKind::Call:
      for (const ir::Expr& arg : ir::as<ir::CallNode>(expr)->args) out.push_back(arg);
      break;
    case ir::ExprKind::Tuple:
      for (const ir::Expr& field : ir::as<ir::TupleNode>(expr)->fields) out.push_back(field);
      break;
    case ir::ExprKind::TupleGetItem:
      out.push_back(ir::as<ir::TupleGetItemNode>(expr)->tuple);
      break;
    case ir::ExprKind::If: {
      const auto* node = ir::as<ir::IfNode>(expr);
      out.push_back(node->cond);
      if (enter_branches) {
        out.push_back(node->then_branch);
        out.push_back(node->else_branch);
      }
      break;
    }
    case ir::ExprKind::While: {
      const auto* loop = ir::as<ir::WhileNode>(expr);
      for (const ir::Expr& value : loop->init) out.push_back(value);
      if (enter_branches) {
        out.push_back(loop->cond);
        out.push_back(loop->body);
      }
      break;
    }
    default:
      break;
  }
}

bool is_data(const ir::Expr& expr) {
  return expr->kind != ir::ExprKind::Op && expr->kind != ir::ExprKind::GlobalVar &&
         expr->kind != ir::ExprKind::ExternFunc && expr->kind != ir::ExprKind::Function;
}

Instruction instruction(Opcode op, std::vector<RegIndex> args, std::vector<RegIndex> dsts,
                        int32_t index) {
  Instruction in;
  in.op = op;
  in.args = std::move(args);
  in.dsts = std::move(dsts);
  in.index = index;
  return in;
}

// A fused group evaluated with the reference kernels: the runtime function of groups that have
// no compute or no static types.
PackedFunc reference_group(const ir::Function& fn, const std::string& name) {
  ir::IRModule mod;
  mod.add("main", ir::FunctionNode::make(fn->params, fn->body, fn->ret_type));
  auto interpreter = std::make_shared<reference::Interpreter>(mod);
  std::vector<ir::Type> param_types;
  for (const ir::Var& param : fn->params) param_types.push_back(type_of(param));
  return PackedFunc(
      [interpreter, param_types](const PackedArgs& args) -> Value {
        size_t next = 0;
        std::function<reference::Value(const ir::Type&)> take = [&](const ir::Type& type) {
          if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
            std::vector<reference::Value> fields;
            for (const ir::Type& field : tuple->fields) fields.push_back(take(field));
            return reference::Value::tuple(std::move(fields));
          }
          return reference::Value::of(args.get<Tensor>(next++));
        };
        std::vector<reference::Value> inputs;
        for (const ir::Type& type : param_types) inputs.push_back(take(type));
        auto* outputs = args.get<std::vector<Tensor>*>(next);
        *outputs = reference::flatten(interpreter->call("main", std::move(inputs)));
        return Value();
      },
      name);
}

}  // namespace anvil::driver::vm_compile
