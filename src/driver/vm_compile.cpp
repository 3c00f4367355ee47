// VM compilation of @main. The body is an expression DAG whose If and While nodes split it into
// regions: a region is what its root reaches without entering If branches or a While's
// condition and body. Each region is fused on its own (control-flow results and values of
// enclosing regions become parameters of a temporary function), then emitted in post order; an
// If emits its condition and the values its branches read from the region, then the branches
// inline between jumps; a While emits its initial values, then its condition and body as
// regions of their own inside a loop of jumps.
#include "driver/vm_compile.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/support/error.h"
#include "anvil/topi/topi.h"
#include "anvil/transform/passes.h"
#include "driver/pipeline.h"
#include "driver/vm_compile_util.h"

namespace anvil::driver {
namespace {

using namespace vm_compile;

class VmCompiler {
 public:
  // module holds the functions @main calls besides its own groups (PrimFuncs of call_tir).
  VmCompiler(const transform::PassContext& ctx, const lower::LowerGroupOptions& lower_options,
             const ir::IRModule& module)
      : ctx_(ctx), lower_options_(lower_options), module_(module) {}

  VmProgram compile(const ir::Function& main) {
    Env env;
    for (const ir::Var& param : main->params) {
      const auto* tensor = ir::as<ir::TensorTypeNode>(type_of(param));
      if (!tensor)
        throw_error("build_vm: input '", param->name, "' has type ",
                    ir::type_to_string(type_of(param)), "; inputs must be tensors");
      program_.main.params.push_back(
          InputInfo{param->name, dims_of(*tensor, "input '" + param->name + "'"), tensor->dtype});
      env[param.get()] = RegValue{new_reg(), {}, false};
      // Size variables, in order of first appearance; a bare one binds from this input.
      for (const ir::Dim& dim : *tensor->shape)
        for (const std::string& name : dim.free_vars())
          if (size_vars_.emplace(name, int64_t(program_.main.size_vars.size())).second)
            program_.main.size_vars.push_back(name);
    }
    // An unknown dim (?) of an input is named by a fresh size variable that the input binds,
    // so that the groups reading it compile; the names are taken once every input's own
    // variables are known.
    for (size_t i = 0; i < main->params.size(); ++i) {
      const auto* tensor = ir::as<ir::TensorTypeNode>(type_of(main->params[i]));
      std::vector<ir::Dim> named = name_unknown_dims(*tensor->shape);
      std::vector<vm::DimProgram> dims;
      for (const ir::Dim& dim : named) dims.push_back(*dim_program(dim, size_vars_));
      program_.main.param_dims.push_back(std::move(dims));
      reg_dims_[env.at(main->params[i].get()).reg] = std::move(named);
    }
    RegValue result = compile_region(main->body, env);
    emit(instruction(Opcode::Ret, result.flat()));
    if (!missing_kernels_.empty()) {
      std::string list;
      for (const std::string& op : missing_kernels_) list += (list.empty() ? "" : ", ") + op;
      throw_error("build_vm: no compute and no runtime kernel for operator",
                  missing_kernels_.size() > 1 ? "s " : " ", list);
    }
    program_.main.name = "main";
    program_.main.num_registers = next_reg_;
    return std::move(program_);
  }

 private:
  RegIndex new_reg() { return next_reg_++; }

  size_t emit(Instruction in) {
    program_.main.instructions.push_back(std::move(in));
    return program_.main.instructions.size() - 1;
  }
  size_t pc() const { return program_.main.instructions.size(); }

  // What an If or a While needs from its region: its operands (an If's condition, a While's
  // initial values) and the region's values its branches or its condition and body read.
  struct ControlSite {
    const ir::ExprNode* node;
    std::vector<ir::Expr> operands;
    std::vector<ir::Expr> free;  // region nodes read inside
    size_t first_field = 0;      // index in the fused tuple of the operands; free follow
  };

  RegValue compile_region(const ir::Expr& root, const Env& outer) {
    // 1. The region's nodes: what the root reaches without entering branches or outer values.
    std::vector<ir::Expr> order;
    std::unordered_set<const ir::ExprNode*> region;
    std::vector<ir::Expr> stack = {root};
    while (!stack.empty()) {
      ir::Expr e = stack.back();
      stack.pop_back();
      if (!is_data(e) || outer.count(e.get()) || !region.insert(e.get()).second) continue;
      if (e->kind == ir::ExprKind::Var)
        throw_error("build_vm: %", ir::as<ir::VarNode>(e)->name, " is not bound");
      order.push_back(e);
      children_of(e, false, stack);
    }
    // 2. For each If and While, the region nodes read inside it (nested ones included).
    std::vector<ControlSite> sites;
    std::unordered_map<const ir::ExprNode*, size_t> site_of;
    for (const ir::Expr& e : order) {
      ControlSite site{e.get(), {}, {}, 0};
      std::vector<ir::Expr> walk;
      if (const auto* node = ir::as<ir::IfNode>(e)) {
        site.operands = {node->cond};
        walk = {node->then_branch, node->else_branch};
      } else if (const auto* loop = ir::as<ir::WhileNode>(e)) {
        site.operands = loop->init;
        walk = {loop->cond, loop->body};
      } else {
        continue;
      }
      std::unordered_set<const ir::ExprNode*> seen;
      while (!walk.empty()) {
        ir::Expr x = walk.back();
        walk.pop_back();
        if (!is_data(x) || outer.count(x.get()) || !seen.insert(x.get()).second) continue;
        if (region.count(x.get())) {
          site.free.push_back(x);
          continue;
        }
        children_of(x, true, walk);
      }
      site_of[e.get()] = sites.size();
      sites.push_back(std::move(site));
    }
    // 3. The region as a function of its outer values and control-flow results, then fused.
    std::vector<ir::Var> params;
    std::vector<std::function<RegValue()>> param_values;
    std::unordered_map<const ir::ExprNode*, ir::Expr> rewritten;
    std::function<ir::Expr(const ir::Expr&)> rewrite = [&](const ir::Expr& e) -> ir::Expr {
      if (!is_data(e)) return e;
      auto found = rewritten.find(e.get());
      if (found != rewritten.end()) return found->second;
      ir::Expr result;
      if (auto it = outer.find(e.get()); it != outer.end()) {
        ir::Var param = ir::VarNode::make("v" + std::to_string(params.size()), type_of(e));
        params.push_back(param);
        RegValue value = it->second;
        param_values.push_back([value] { return value; });
        result = param;
      } else if (auto site = site_of.find(e.get()); site != site_of.end()) {
        ir::Var param = ir::VarNode::make("v" + std::to_string(params.size()), type_of(e));
        params.push_back(param);
        param_values.push_back([this, at = site->second, &sites, &outer] {
          const ControlSite& s = sites[at];
          return s.node->kind == ir::ExprKind::If ? emit_if(s, outer) : emit_while(s, outer);
        });
        result = param;
      } else if (const auto* call = ir::as<ir::CallNode>(e)) {
        std::vector<ir::Expr> args;
        for (const ir::Expr& arg : call->args) args.push_back(rewrite(arg));
        result = ir::CallNode::make(call->callee, std::move(args), call->attrs, call->type_args);
      } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
        std::vector<ir::Expr> fields;
        for (const ir::Expr& field : tuple->fields) fields.push_back(rewrite(field));
        result = ir::TupleNode::make(std::move(fields));
      } else if (const auto* get = ir::as<ir::TupleGetItemNode>(e)) {
        result = ir::TupleGetItemNode::make(rewrite(get->tuple), get->index);
      } else if (e->kind == ir::ExprKind::Constant) {
        result = e;
      } else {
        throw_error("build_vm: @main holds a ", ir::expr_kind_name(e->kind),
                    ", which the virtual machine does not run");
      }
      rewritten[e.get()] = result;
      return result;
    };
    std::vector<ir::Expr> fields = {rewrite(root)};
    for (ControlSite& site : sites) {
      site.first_field = fields.size();
      for (const ir::Expr& operand : site.operands) fields.push_back(rewrite(operand));
      for (const ir::Expr& f : site.free) fields.push_back(rewrite(f));
    }
    ir::IRModule region_mod = module_;
    region_mod.add("main", ir::FunctionNode::make(params, ir::TupleNode::make(fields)));
    ir::Function fused = fuse_groups(ir::infer_type(region_mod), ctx_).get_function("main");
    const auto* fused_tuple = ir::as<ir::TupleNode>(fused->body);
    ANVIL_ICHECK(fused_tuple && fused_tuple->fields.size() == fields.size(),
                 "vm compile: fusion changed the region's result tuple");

    // 4. Emission, children first; an If's or While's parameter emits it when first read.
    Env values;
    for (size_t i = 0; i < fused->params.size(); ++i) param_index_[fused->params[i].get()] = i;
    current_params_ = &param_values;
    current_fields_ = &fused_tuple->fields;
    current_values_ = &values;
    RegValue result = evaluate(fused_tuple->fields[0]);
    return result;
  }

  // The region being emitted, which an If's branches or a While's condition and body replace
  // with regions of their own while they compile.
  struct RegionState {
    std::vector<std::function<RegValue()>>* params;
    const std::vector<ir::Expr>* fields;
    Env* values;
  };
  RegionState region_state() const { return {current_params_, current_fields_, current_values_}; }
  void restore(const RegionState& state) {
    current_params_ = state.params;
    current_fields_ = state.fields;
    current_values_ = state.values;
  }

  // The registers of a site's operands, and the environment inside it: the outer one and the
  // region values it reads.
  std::vector<RegValue> emit_operands(const ControlSite& site, const Env& outer, Env& inner) {
    const std::vector<ir::Expr>* fields = current_fields_;
    std::vector<RegValue> operands;
    for (size_t i = 0; i < site.operands.size(); ++i)
      operands.push_back(evaluate((*fields)[site.first_field + i]));
    inner = outer;
    const size_t first_free = site.first_field + site.operands.size();
    for (size_t i = 0; i < site.free.size(); ++i)
      inner[site.free[i].get()] = evaluate((*fields)[first_free + i]);
    return operands;
  }

  // Emits a While: the vars take the initial values; at the head, their unknown dims are named
  // (size variables bound anew on every iteration), the condition jumps past the loop when
  // false, and the body's values move into the vars before the jump back to the head.
  RegValue emit_while(const ControlSite& site, const Env& outer) {
    const auto* loop = static_cast<const ir::WhileNode*>(site.node);
    Env inner;
    std::vector<RegValue> init = emit_operands(site, outer, inner);
    std::vector<RegIndex> vars, init_regs;
    std::vector<const ir::TensorTypeNode*> var_types;
    for (size_t i = 0; i < loop->vars.size(); ++i) {
      const ir::Var& var = loop->vars[i];
      const auto* tensor = ir::as<ir::TensorTypeNode>(var->annotation);
      if (!tensor || init[i].is_tuple)
        throw_error("build_vm: loop variable %", var->name, " has type ",
                    ir::type_to_string(var->annotation), "; loop variables must be tensors");
      vars.push_back(new_reg());
      init_regs.push_back(init[i].reg);
      var_types.push_back(tensor);
      inner[var.get()] = RegValue{vars.back(), {}, false};
    }
    emit(instruction(Opcode::Move, init_regs, vars));
    const size_t head = pc();
    for (size_t i = 0; i < vars.size(); ++i) match_unknown_dims(vars[i], *var_types[i]);

    const RegionState saved = region_state();
    RegValue cond = compile_region(loop->cond, inner);
    if (cond.is_tuple) throw_error("build_vm: the condition of a While is a tuple");
    size_t branch = emit(instruction(Opcode::If, {cond.reg}));
    program_.main.instructions[branch].true_target = int32_t(pc());
    RegValue next = compile_region(loop->body, inner);
    emit(instruction(Opcode::Move, next.flat(), vars));
    size_t back = emit(instruction(Opcode::Goto));
    program_.main.instructions[back].true_target = int32_t(head);
    program_.main.instructions[branch].false_target = int32_t(pc());
    restore(saved);
    RegValue result;
    result.is_tuple = true;
    for (RegIndex reg : vars) result.fields.push_back(RegValue{reg, {}, false});
    return result;
  }

  // Emits the If of a site: its condition, the values its branches read, the branches.
  RegValue emit_if(const ControlSite& site, const Env& outer) {
    // The region's emission state is saved: branches compile regions of their own.
    Env inner;
    RegValue cond = emit_operands(site, outer, inner).at(0);
    if (cond.is_tuple) throw_error("build_vm: the condition of an If is a tuple");
    const auto* node = static_cast<const ir::IfNode*>(site.node);

    ANVIL_ICHECK(site.node->checked_type, "vm compile: an untyped If");
    std::function<RegValue(const ir::Type&)> fresh = [&](const ir::Type& type) {
      if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
        RegValue value;
        value.is_tuple = true;
        for (const ir::Type& field : tuple->fields) value.fields.push_back(fresh(field));
        return value;
      }
      return RegValue{new_reg(), {}, false};
    };
    RegValue result = fresh(site.node->checked_type);

    const RegionState saved = region_state();
    size_t branch = emit(instruction(Opcode::If, {cond.reg}));
    program_.main.instructions[branch].true_target = int32_t(pc());
    RegValue then_value = compile_region(node->then_branch, inner);
    emit(instruction(Opcode::Move, then_value.flat(), result.flat()));
    size_t jump = emit(instruction(Opcode::Goto));
    program_.main.instructions[branch].false_target = int32_t(pc());
    RegValue else_value = compile_region(node->else_branch, inner);
    emit(instruction(Opcode::Move, else_value.flat(), result.flat()));
    program_.main.instructions[jump].true_target = int32_t(pc());
    // Where the branches join, the result's unknown dims (branches may differ in them) are
    // named, so that the groups reading it compile.
    std::vector<const ir::TensorTypeNode*> leaves;
    flatten_type(site.node->checked_type, leaves);
    std::vector<RegIndex> regs = result.flat();
    for (size_t i = 0; i < regs.size() && i < leaves.size(); ++i)
      match_unknown_dims(regs[i], *leaves[i]);
    restore(saved);
    return result;
  }

  // A load_const of a new constant of the executable.
  RegIndex emit_constant(const Tensor& data) {
    RegIndex reg = new_reg();
    program_.constants.push_back(data);
    emit(instruction(Opcode::LoadConst, {}, {reg}, int32_t(program_.constants.size() - 1)));
    reg_dims_[reg] = ir::to_dims(data.shape_vector());
    return reg;
  }

  RegValue evaluate(const ir::Expr& expr) {
    Env& values = *current_values_;
    if (auto it = values.find(expr.get()); it != values.end()) return it->second;
    RegValue value;
    switch (expr->kind) {
      case ir::ExprKind::Var: {
        auto it = param_index_.find(expr.get());
        ANVIL_ICHECK(it != param_index_.end(), "vm compile: an unbound variable after fusion");
        // The function may emit code (an If), which must not disturb this region's state.
        auto saved_values = current_values_;
        value = (*current_params_)[it->second]();
        current_values_ = saved_values;
        break;
      }
      case ir::ExprKind::Constant:
        value = RegValue{emit_constant(ir::as<ir::ConstantNode>(expr)->data), {}, false};
        break;
      case ir::ExprKind::Tuple:
        value.is_tuple = true;
        for (const ir::Expr& field : ir::as<ir::TupleNode>(expr)->fields)
          value.fields.push_back(evaluate(field));
        break;
      case ir::ExprKind::TupleGetItem: {
        const auto* get = ir::as<ir::TupleGetItemNode>(expr);
        RegValue tuple = evaluate(get->tuple);
        ANVIL_ICHECK(tuple.is_tuple && get->index >= 0 && get->index < int(tuple.fields.size()),
                     "vm compile: tuple index ", get->index, " out of range");
        value = tuple.fields[size_t(get->index)];
        break;
      }
      case ir::ExprKind::Call:
        value = emit_call(*ir::as<ir::CallNode>(expr));
        break;
      default:
        throw_error("build_vm: a ", ir::expr_kind_name(expr->kind), " after fusion");
    }
    (*current_values_)[expr.get()] = value;
    return value;
  }

  // A group call: a kernel when every type is static or computable from the size variables,
  // a shape function then a kernel for an op whose output dims are known only at run time, or
  // else a runtime function over the reference kernels.
  RegValue emit_call(const ir::CallNode& call) {
    std::vector<RegIndex> inputs;
    for (const ir::Expr& arg : call.args)
      if (is_data(arg)) evaluate(arg).flatten_into(inputs);
    if (const ir::OpNode* op = call.op(); op && op->name == "call_tir")
      return emit_call_tir(call, inputs);
    if (const ir::OpNode* op = call.op(); op && op->name == "call_dps_packed")
      return emit_call_dps_packed(call, inputs);
    ir::Function fn;
    if (const auto* callee = ir::as<ir::FunctionNode>(call.callee);
        callee && callee->is_primitive())
      fn = ir::downcast<ir::FunctionNode>(call.callee);
    if (!fn) {
      std::string what = call.op() ? call.op()->name : ir::expr_kind_name(call.callee->kind);
      throw_error("build_vm: a call of ", what, " outside a fused group");
    }
    ANVIL_ICHECK(call.checked_type, "vm compile: an untyped group call");
    ir::Type result_type = call.checked_type;
    fn = refine_params(fn, inputs, result_type);
    std::vector<const ir::TensorTypeNode*> out_types;
    flatten_type(result_type, out_types);

    if (std::optional<RegValue> called = emit_runtime_function_call(fn, inputs, result_type))
      return *called;

    // A kernel needs every dim static or computable from the size variables bound so far.
    bool compiled = true, dynamic = false;
    auto expressible = [&](const ir::TensorTypeNode* tensor) {
      if (!tensor || !tensor->shape) return false;
      for (const ir::Dim& dim : *tensor->shape) {
        if (dim.is_static()) continue;
        dynamic = true;
        if (!dim_program(dim, size_vars_)) return false;
      }
      return true;
    };
    bool params_expressible = true;
    for (const ir::Var& param : fn->params)
      params_expressible &= expressible(ir::as<ir::TensorTypeNode>(type_of(param)));
    compiled = params_expressible;
    for (const ir::TensorTypeNode* type : out_types) compiled &= expressible(type);
    ir::post_order_visit(fn->body, [&](const ir::Expr& e) {
      const auto* inner = ir::as<ir::CallNode>(e);
      if (!inner) return;
      const ir::OpNode* op = inner->op();
      if (!op || !topi::find_compute(op->name)) compiled = false;
      if (op && !reference::find_kernel(op->name)) missing_kernels_.insert(op->name);
      if (!op) missing_kernels_.insert(ir::expr_kind_name(inner->callee->kind));
      std::vector<const ir::TensorTypeNode*> inner_types;
      if (inner->checked_type) flatten_type(inner->checked_type, inner_types);
      for (const ir::TensorTypeNode* type : inner_types) compiled &= expressible(type);
    });
    std::string declined;
    if (params_expressible) {
      std::vector<RegIndex> outputs;
      if (emit_shape_function_call(fn, inputs, result_type, outputs, declined))
        return shape_like(result_type, outputs);
    }
    // Computes that need a static dim decline the dynamic one when the group is lowered.
    if (compiled && dynamic && !probe(fn, declined)) compiled = false;

    std::vector<RegIndex> outputs;
    if (compiled) {
      for (const ir::TensorTypeNode* type : out_types)
        outputs.push_back(emit_alloc(*type->shape, type->dtype));
      size_t at = emit(instruction(Opcode::InvokeKernel, inputs, outputs));
      program_.kernel_calls.emplace_back(at, fn);
    } else {
      for (size_t i = 0; i < out_types.size(); ++i) outputs.push_back(new_reg());
      std::string name = lower::kernel_name_hint(fn);
      program_.runtime_funcs.push_back(vm::RuntimeFunc{name, reference_group(fn, name), declined});
      emit(instruction(Opcode::InvokePacked, inputs, outputs,
                       int32_t(program_.runtime_funcs.size() - 1)));
      // Unknown dims of the results are named now, so that later groups compile over them.
      for (size_t i = 0; i < outputs.size(); ++i) match_unknown_dims(outputs[i], *out_types[i]);
    }
    return shape_like(result_type, outputs);
  }

  // The outputs of call_tir or call_dps_packed, allocated by the VM from their declared types.
  std::vector<RegIndex> emit_declared_outputs(const ir::CallNode& call, const std::string& what) {
    std::vector<const ir::TensorTypeNode*> out_types;
    flatten_type(call.checked_type, out_types);
    std::vector<RegIndex> outputs;
    for (const ir::TensorTypeNode* type : out_types) {
      if (!type || !type->shape)
        throw_error("build_vm: ", what, " declares an output without a known rank");
      for (const ir::Dim& dim : *type->shape)
        if (!dim.is_static() && !dim_program(dim, size_vars_))
          throw_error("build_vm: ", what, " declares output dim ", dim.to_string(),
                      ", which the inputs' dims do not determine");
      outputs.push_back(emit_alloc(*type->shape, type->dtype));
    }
    return outputs;
  }

  // call_tir(@f, args, out=...) of a PrimFunc of the module: its outputs allocated, then the
  // PrimFunc as a kernel (vm_build compiles it under its name).
  RegValue emit_call_tir(const ir::CallNode& call, const std::vector<RegIndex>& inputs) {
    const auto* global = ir::as<ir::GlobalVarNode>(call.args.at(0));
    if (!global) throw_error("build_vm: call_tir of something other than a PrimFunc of the module");
    std::vector<RegIndex> outputs = emit_declared_outputs(call, "call_tir(@" + global->name + ")");
    size_t at = emit(instruction(Opcode::InvokeKernel, inputs, outputs));
    program_.prim_func_calls.emplace_back(at, global->name);
    return shape_like(call.checked_type, outputs);
  }

  // call_dps_packed("name", args, out=...): its outputs allocated, then the registered function
  // called with the inputs and the outputs, which it writes (vm::destination_passing_func).
  RegValue emit_call_dps_packed(const ir::CallNode& call, const std::vector<RegIndex>& inputs) {
    const auto* extern_func = ir::as<ir::ExternFuncNode>(call.args.at(0));
    if (!extern_func) throw_error("build_vm: call_dps_packed of something other than a name");
    std::vector<RegIndex> outputs =
        emit_declared_outputs(call, "call_dps_packed(\"" + extern_func->symbol + "\")");
    std::vector<RegIndex> args = inputs;
    args.insert(args.end(), outputs.begin(), outputs.end());
    program_.runtime_funcs.push_back(vm::destination_passing_func(extern_func->symbol));
    emit(instruction(Opcode::InvokePacked, args, {}, int32_t(program_.runtime_funcs.size() - 1)));
    return shape_like(call.checked_type, outputs);
  }

  // A group that is one call of an op the runtime library implements (the op's
  // "runtime_function", anvil/runtime/builtins.h): an InvokePacked of that global function,
  // which a loader finds by name. Its arguments are the group's tensor parameters and constants.
  std::optional<RegValue> emit_runtime_function_call(const ir::Function& fn,
                                                     const std::vector<RegIndex>& inputs,
                                                     const ir::Type& result_type) {
    const auto* call = ir::as<ir::CallNode>(fn->body);
    const ir::OpNode* op = call ? call->op() : nullptr;
    const std::string* name =
        op && op->def ? op->def->get_extra<std::string>("runtime_function") : nullptr;
    if (!name) return std::nullopt;
    std::optional<PackedFunc> func = find_global(*name);
    ANVIL_ICHECK(func, "build_vm: runtime function '", *name, "' of ", op->name,
                 " is not registered");
    if (inputs.size() != fn->params.size()) return std::nullopt;  // a tuple parameter
    std::vector<RegIndex> args;
    for (const ir::Expr& arg : call->args) {
      auto param = std::find_if(fn->params.begin(), fn->params.end(),
                                [&](const ir::Var& p) { return p.get() == arg.get(); });
      if (param != fn->params.end()) {
        args.push_back(inputs[size_t(param - fn->params.begin())]);
      } else if (ir::as<ir::ConstantNode>(arg)) {
        args.push_back(evaluate(arg).reg);
      } else {
        return std::nullopt;
      }
    }
    // Attributes the function needs follow as constants.
    if (const auto* operands =
            op->def->get_extra<ir::RuntimeFunctionOperands>("runtime_function_operands"))
      for (const Tensor& operand : (*operands)(*call)) args.push_back(emit_constant(operand));
    std::vector<const ir::TensorTypeNode*> out_types;
    flatten_type(result_type, out_types);
    std::vector<RegIndex> outputs;
    for (size_t i = 0; i < out_types.size(); ++i) outputs.push_back(new_reg());
    program_.runtime_funcs.push_back(vm::RuntimeFunc{*name, *func, ""});
    emit(instruction(Opcode::InvokePacked, args, outputs,
                     int32_t(program_.runtime_funcs.size() - 1)));
    for (size_t i = 0; i < outputs.size(); ++i) match_unknown_dims(outputs[i], *out_types[i]);
    return shape_like(result_type, outputs);
  }

  // Lowers fn without scheduling; false (with the reason in `declined`) when a compute
  // declines its dynamic shapes.
  bool probe(const ir::Function& fn, std::string& declined) {
    try {
      lower::LowerGroupOptions naive = lower_options_;
      naive.schedule = false;
      lower::lower_primitive(fn, "probe", naive);
      return true;
    } catch (const Error& e) {
      declined = std::string("dynamic shapes declined: ") + e.what();
      return false;
    }
  }

  // The group's value over its output registers, tuples rebuilt from the type.
  RegValue shape_like(const ir::Type& type, const std::vector<RegIndex>& outputs) {
    size_t next = 0;
    std::function<RegValue(const ir::Type&)> build = [&](const ir::Type& t) {
      if (const auto* tuple = ir::as<ir::TupleTypeNode>(t)) {
        RegValue value;
        value.is_tuple = true;
        for (const ir::Type& field : tuple->fields) value.fields.push_back(build(field));
        return value;
      }
      return RegValue{outputs.at(next++), {}, false};
    };
    return build(type);
  }

  RegIndex emit_alloc(const std::vector<ir::Dim>& dims, DataType dtype) {
    RegIndex reg = new_reg();
    Instruction alloc = instruction(Opcode::AllocTensor, {}, {reg});
    for (const ir::Dim& dim : dims) alloc.shape.push_back(*dim_program(dim, size_vars_));
    alloc.dtype = dtype;
    emit(std::move(alloc));
    reg_dims_[reg] = dims;
    return reg;
  }

  // A size variable no input binds, named apart from every other.
  std::string fresh_size_var() {
    std::string name;
    do name = "d" + std::to_string(next_fresh_++);
    while (size_vars_.count(name));
    size_vars_.emplace(name, int64_t(program_.main.size_vars.size()));
    program_.main.size_vars.push_back(name);
    return name;
  }

  // The dims with each unknown one (?) named by a fresh size variable.
  std::vector<ir::Dim> name_unknown_dims(std::vector<ir::Dim> dims) {
    for (ir::Dim& dim : dims)
      if (dim.is_any()) dim = ir::Dim::var(fresh_size_var());
    return dims;
  }

  // The same through a type (each field of a tuple).
  ir::Type name_unknown_dims(const ir::Type& type) {
    if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
      std::vector<ir::Type> fields;
      for (const ir::Type& field : tuple->fields) fields.push_back(name_unknown_dims(field));
      return ir::TupleTypeNode::make(std::move(fields));
    }
    const auto* tensor = ir::as<ir::TensorTypeNode>(type);
    if (!tensor || !tensor->shape) return type;
    return ir::TensorTypeNode::make(name_unknown_dims(*tensor->shape), tensor->dtype);
  }

  // match_shape of a runtime function's result: its unknown dims bind fresh size variables.
  void match_unknown_dims(RegIndex reg, const ir::TensorTypeNode& type) {
    if (!type.shape) return;
    bool unknown = false;
    for (const ir::Dim& dim : *type.shape) unknown |= dim.is_any();
    std::vector<ir::Dim> named = name_unknown_dims(*type.shape);
    if (unknown) {
      Instruction match = instruction(Opcode::MatchShape, {reg});
      for (const ir::Dim& dim : named) {
        std::optional<vm::DimProgram> program = dim_program(dim, size_vars_);
        if (!program) return;  // a dim over a variable nothing binds: left unknown
        match.shape.push_back(*program);
      }
      emit(std::move(match));
    }
    reg_dims_[reg] = named;
  }

  // The group with the unknown dims of its tensor parameters replaced by what the registers
  // passed to them are known to hold (the dims match_shape or a shape function named), types
  // inferred again; result_type becomes the group's result type.
  ir::Function refine_params(const ir::Function& fn, const std::vector<RegIndex>& inputs,
                             ir::Type& result_type) {
    std::vector<ir::Var> params;
    bool changed = false;
    size_t next = 0;
    for (const ir::Var& param : fn->params) {
      ir::Type type = type_of(param);
      std::vector<const ir::TensorTypeNode*> leaves;
      flatten_type(type, leaves);
      const auto* tensor = ir::as<ir::TensorTypeNode>(type);
      if (tensor && tensor->shape && next < inputs.size()) {
        auto known = reg_dims_.find(inputs[next]);
        bool unknown = false;
        for (const ir::Dim& dim : *tensor->shape) unknown |= dim.is_any();
        if (unknown && known != reg_dims_.end() && known->second.size() == tensor->shape->size()) {
          std::vector<ir::Dim> dims = *tensor->shape;
          for (size_t d = 0; d < dims.size(); ++d)
            if (dims[d].is_any()) dims[d] = known->second[d];
          params.push_back(
              ir::VarNode::make(param->name, ir::TensorTypeNode::make(dims, tensor->dtype)));
          changed = true;
          next += leaves.size();
          continue;
        }
      }
      params.push_back(param);
      next += leaves.size();
    }
    if (!changed) return fn;
    struct Substitute : ir::ExprMutator {
      Substitute(const std::vector<ir::Var>& from, const std::vector<ir::Var>& to) {
        for (size_t i = 0; i < from.size(); ++i) memo_[from[i].get()] = to[i];
      }
    } substitute(fn->params, params);
    ir::IRModule mod;
    mod.add("main",
            ir::FunctionNode::make(params, substitute.mutate(fn->body), nullptr, fn->func_attrs));
    ir::Function refined = ir::infer_type(mod).get_function("main");
    ANVIL_ICHECK(refined->body->checked_type, "vm compile: a refined group has no type");
    result_type = refined->body->checked_type;
    return refined;
  }

  // An op whose output dims come from values (topi::ShapeCompute), lowered alone: its shape
  // function's kernel writes the sizes, load_shape binds them to fresh size variables, then the
  // op's kernel writes outputs allocated over them. False (the reason in `declined`) when the
  // group is not such an op or its computes decline.
  bool emit_shape_function_call(const ir::Function& fn, const std::vector<RegIndex>& inputs,
                                const ir::Type& result_type, std::vector<RegIndex>& outputs,
                                std::string& declined) {
    const auto* op_call = ir::as<ir::CallNode>(fn->body);
    const ir::OpNode* op = op_call ? op_call->op() : nullptr;
    const topi::ShapeCompute* shape = op ? topi::find_shape_compute(op->name) : nullptr;
    if (!shape || !topi::find_compute(op->name)) return false;
    std::vector<const ir::TensorTypeNode*> out_types;
    flatten_type(result_type, out_types);
    for (const ir::TensorTypeNode* type : out_types)
      if (!type->shape) return false;
    // Names are taken only once both computes accept the group.
    const size_t known_vars = program_.main.size_vars.size();
    auto forget_names = [&] {
      for (size_t i = known_vars; i < program_.main.size_vars.size(); ++i)
        size_vars_.erase(program_.main.size_vars[i]);
      program_.main.size_vars.resize(known_vars);
    };
    ir::Type named = name_unknown_dims(result_type);
    size_t num_extras = shape->num_extras ? shape->num_extras(*op_call) : 0;
    std::string extra_names;
    std::vector<std::string> extras;
    for (size_t i = 0; i < num_extras; ++i) {
      extras.push_back(fresh_size_var());
      extra_names += (i ? "," : "") + extras.back();
    }
    ir::Function shape_fn = ir::FunctionNode::make(
        fn->params, fn->body, nullptr, fn->func_attrs.with(lower::kShapeFunctionAttr, int64_t(1)));
    ir::DictAttrs kernel_attrs =
        fn->func_attrs.with(lower::kResultTypeAttr, ir::type_to_string(named));
    if (!extras.empty()) kernel_attrs = kernel_attrs.with(lower::kExtraVarsAttr, extra_names);
    ir::Function kernel_fn = ir::FunctionNode::make(fn->params, fn->body, nullptr, kernel_attrs);
    if (!probe(shape_fn, declined) || !probe(kernel_fn, declined)) {
      forget_names();
      return false;
    }

    std::vector<const ir::TensorTypeNode*> named_types;
    flatten_type(named, named_types);
    size_t num_sizes = num_extras;
    for (const ir::TensorTypeNode* type : named_types) num_sizes += type->shape->size();
    RegIndex sizes = emit_alloc({ir::Dim(int64_t(num_sizes))}, DataType::int64());
    program_.kernel_calls.emplace_back(emit(instruction(Opcode::InvokeKernel, inputs, {sizes})),
                                       shape_fn);
    Instruction load = instruction(Opcode::LoadShape, {sizes});
    for (const ir::TensorTypeNode* type : named_types)
      for (const ir::Dim& dim : *type->shape) load.shape.push_back(*dim_program(dim, size_vars_));
    for (const std::string& name : extras)
      load.shape.push_back(*dim_program(ir::Dim::var(name), size_vars_));
    emit(std::move(load));
    for (const ir::TensorTypeNode* type : named_types)
      outputs.push_back(emit_alloc(*type->shape, type->dtype));
    program_.kernel_calls.emplace_back(emit(instruction(Opcode::InvokeKernel, inputs, outputs)),
                                       kernel_fn);
    return true;
  }

  const transform::PassContext& ctx_;
  const lower::LowerGroupOptions& lower_options_;
  const ir::IRModule& module_;
  std::map<std::string, int64_t> size_vars_;  // size variable -> index in main.size_vars
  VmProgram program_;
  RegIndex next_reg_ = 0;
  std::set<std::string> missing_kernels_;
  // What each register is known to hold: its dims over the size variables (with ? where
  // nothing names a dim). Tuples are flattened into their registers.
  std::unordered_map<RegIndex, std::vector<ir::Dim>> reg_dims_;
  int64_t next_fresh_ = 0;  // the next candidate name of a fresh size variable
  // The region being emitted: its parameters' values, fused result fields and emitted values.
  std::unordered_map<const ir::ExprNode*, size_t> param_index_;
  std::vector<std::function<RegValue()>>* current_params_ = nullptr;
  const std::vector<ir::Expr>* current_fields_ = nullptr;
  Env* current_values_ = nullptr;
};

}  // namespace

VmProgram compile_vm_program(const ir::IRModule& optimized, const transform::PassContext& ctx,
                             const lower::LowerGroupOptions& lower_options) {
  ir::IRModule typed = ir::infer_type(optimized);
  ir::Function main = typed.get_function("main");
  ir::IRModule flat = typed;
  flat.add("main", ir::FunctionNode::make(main->params, transform::inline_bindings(main->body),
                                          main->ret_type, main->func_attrs));
  main = ir::infer_type(flat).get_function("main");
  return VmCompiler(ctx, lower_options, flat).compile(main);
}

}  // namespace anvil::driver
