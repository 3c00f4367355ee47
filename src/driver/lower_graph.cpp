#include "driver/lower_graph.h"

#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "anvil/analysis/cost.h"
#include "anvil/ir/functor.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/topi/strategy.h"

namespace anvil::driver {
namespace {

// Operators called anywhere in main (the walk enters the groups) that have no compute,
// sorted. FuseOps puts every op call in a group, so this is what lowering would meet.
std::set<std::string> ops_without_compute(const ir::Function& main) {
  std::set<std::string> missing;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call) return;
    const ir::OpNode* op = call->op();
    if (op && op->name != "call_tir" && op->name != "call_dps_packed" &&
        !topi::find_compute(op->name))
      missing.insert(op->name);
  });
  return missing;
}

// The number of primitive group calls in main, for progress reports.
int count_groups(const ir::Function& main) {
  int groups = 0;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    const auto* fn = call ? ir::as<ir::FunctionNode>(call->callee) : nullptr;
    if (fn && fn->is_primitive()) ++groups;
  });
  return groups;
}

// The string attr `key` of func, or "".
std::string func_text_attr(const tir::PrimFunc& func, const char* key) {
  const ir::AttrValue* value = func->func_attrs.find(key);
  const std::string* s = value ? std::get_if<std::string>(value) : nullptr;
  return s ? *s : std::string();
}

// "x86.conv2d_nchwc", "auto", "generic", or either with " (declined x86.conv2d_nchwc: <why>)".
std::string schedule_summary(const tir::PrimFunc& func) {
  std::string schedule = func_text_attr(func, topi::kScheduleAttr);
  std::string declined = func_text_attr(func, topi::kScheduleDeclinedAttr);
  if (!declined.empty()) schedule += " (declined " + declined + ")";
  return schedule;
}

class GroupLowerer : public ir::ExprMutator {
 public:
  GroupLowerer(const lower::LowerGroupOptions& options, bool print_tir, LowerProgress progress,
               int total_groups)
      : options_(options),
        print_tir_(print_tir),
        progress_(std::move(progress)),
        total_groups_(total_groups) {}

  std::vector<tir::PrimFunc> kernels;
  std::map<std::string, KernelInfo> kernel_info;

  void add_kernel(const tir::PrimFunc& func) {
    names_.insert(func->global_symbol());
    if (print_tir_) std::fprintf(stderr, "%s\n", tir::print(func).c_str());
    kernels.push_back(func);
  }

  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    ir::Expr mutated = ir::ExprMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(mutated);
    const auto* fn = ir::as<ir::FunctionNode>(call->callee);
    if (!fn || !fn->is_primitive()) return mutated;
    std::string name = kernel_for(ir::downcast<ir::FunctionNode>(call->callee));
    if (progress_) progress_(++groups_done_, total_groups_);
    ir::Call lowered = ir::call_tir(ir::GlobalVarNode::make(name), call->args, node->checked_type);
    lowered->checked_type = node->checked_type;
    return lowered;
  }

 private:
  std::string kernel_for(const ir::Function& fn) {
    size_t hash = ir::structural_hash(fn);
    for (const auto& [known, name] : by_hash_[hash])
      if (ir::structural_equal(known, fn, true)) return name;
    std::string base = lower::kernel_name_hint(fn);
    std::string name = base;
    for (int n = 1; !names_.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    tir::PrimFunc scheduled = lower::lower_primitive(fn, name, options_);
    tir::PrimFunc lowered = tir::transform::lower(scheduled);
    if (print_tir_) std::fprintf(stderr, "%s\n", tir::print(lowered).c_str());
    kernels.push_back(lowered);
    kernel_info[name] =
        KernelInfo{fused_op_names(*fn), analysis::function_flops(*fn), schedule_summary(scheduled),
                   func_text_attr(scheduled, topi::kScheduleRefusedAttr)};
    by_hash_[hash].emplace_back(fn, name);
    return name;
  }

  const lower::LowerGroupOptions& options_;
  bool print_tir_;
  LowerProgress progress_;
  int total_groups_ = 0;
  int groups_done_ = 0;
  std::set<std::string> names_;
  std::unordered_map<size_t, std::vector<std::pair<ir::Function, std::string>>> by_hash_;
};

}  // namespace

std::string fused_op_names(const ir::FunctionNode& fn) {
  std::string names;
  ir::post_order_visit(fn.body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call || !call->op()) return;
    names += (names.empty() ? "" : ", ") + call->op()->name;
  });
  return names;
}

void check_every_op_has_compute(const ir::Function& main) {
  std::set<std::string> missing = ops_without_compute(main);
  if (missing.empty()) return;
  std::string list;
  for (const std::string& op : missing) list += (list.empty() ? "" : ", ") + op;
  throw_error("build: no code generation for operator", missing.size() > 1 ? "s " : " ", list);
}

tir::PrimFunc lower_called_prim_func(const ir::IRModule& mod, const std::string& name,
                                     const char* who) {
  const auto* prim = dynamic_cast<const tir::PrimFuncNode*>(mod.find(name).get());
  if (!prim) throw_error(who, ": call_tir calls @", name, ", which is not a PrimFunc");
  tir::PrimFunc func(prim);
  if (func->global_symbol() != name)
    func = tir::PrimFuncNode::make(func->params, func->buffer_map, func->body,
                                   func->func_attrs.with("global_symbol", name));
  return tir::transform::lower(func);
}

LoweredGraph lower_graph(const ir::IRModule& fused, const lower::LowerGroupOptions& options,
                         bool print_tir, const LowerProgress& progress) {
  ir::Function main = fused.get_function("main");
  check_every_op_has_compute(main);
  GroupLowerer lowerer(options, print_tir, progress, progress ? count_groups(main) : 0);
  // PrimFuncs of the module called directly (call_tir written by the user) are kernels too.
  std::set<std::string> called;
  ir::post_order_visit(main->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call || !call->op() || call->op()->name != "call_tir") return;
    if (const auto* gv = ir::as<ir::GlobalVarNode>(call->args.at(0))) called.insert(gv->name);
  });
  for (const std::string& name : called)
    lowerer.add_kernel(lower_called_prim_func(fused, name, "build"));
  ir::Expr body = lowerer.mutate(main->body);
  ir::Function lowered_main =
      ir::FunctionNode::make(main->params, body, main->ret_type, main->func_attrs);
  return LoweredGraph{lowered_main, std::move(lowerer.kernels), std::move(lowerer.kernel_info)};
}

}  // namespace anvil::driver
