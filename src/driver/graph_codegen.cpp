// Graph codegen: walks the lowered @main once, making a node per input, constant and kernel
// call, then plans storage (memory_plan.h) and writes TVM's graph executor JSON.
#include "driver/graph_codegen.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/lower/lower.h"
#include "driver/memory_plan.h"

namespace anvil::driver {
namespace {

using Json = nlohmann::ordered_json;

// One output of a node (TVM's node entry).
struct EntryRef {
  int node = 0;
  int index = 0;
};

// What an expression evaluates to: one entry, or a tuple of values.
struct GraphValue {
  EntryRef entry;
  std::vector<GraphValue> fields;
  bool is_tuple = false;

  void flatten_into(std::vector<EntryRef>& out) const {
    if (!is_tuple) {
      out.push_back(entry);
      return;
    }
    for (const GraphValue& field : fields) field.flatten_into(out);
  }
};

struct EntryType {
  DataType dtype;
  std::vector<int64_t> shape;

  int64_t bytes() const {
    int64_t n = dtype.bytes();
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct Node {
  bool is_input = false;  // "null": a graph input or a param
  std::string name;       // for kernels: the func_name until names are made unique
  std::string func_name;
  std::vector<EntryRef> inputs;
  std::vector<EntryType> outputs;
};

EntryType entry_type(const ir::Type& type, const std::string& what) {
  const auto* tensor = ir::as<ir::TensorTypeNode>(type);
  if (!tensor)
    throw_error("graph codegen: ", what, " has type ", type ? ir::type_to_string(type) : "none",
                ", not a tensor");
  std::optional<std::vector<int64_t>> shape = tensor->static_shape();
  if (!shape)
    throw_error("graph codegen: ", what, " has the symbolic shape ", ir::type_to_string(type),
                "; the graph executor needs static shapes");
  return EntryType{tensor->dtype, *shape};
}

// The tensor types of an output type, in order (tuples flattened).
void flatten_type(const ir::Type& type, const std::string& what, std::vector<EntryType>& out) {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(type)) {
    for (const ir::Type& field : tuple->fields) flatten_type(field, what, out);
    return;
  }
  out.push_back(entry_type(type, what));
}

class GraphBuilder {
 public:
  // groups_are_kernels: calls of primitive functions stand for the kernels lowering makes.
  GraphBuilder(const std::map<std::string, KernelInfo>& kernel_info, bool groups_are_kernels)
      : kernel_info_(kernel_info), groups_are_kernels_(groups_are_kernels) {}

  GraphCodegenResult build(const ir::Function& main) {
    for (const ir::Var& param : main->params) {
      ir::Type type = param->annotation ? param->annotation : param->checked_type;
      int node = add_input(param->name, entry_type(type, "input '" + param->name + "'"));
      values_[param.get()] = GraphValue{EntryRef{node, 0}, {}, false};
      taken_names_.insert(param->name);
    }
    num_graph_inputs_ = nodes_.size();
    walk(main->body);
    std::vector<EntryRef> heads;
    values_.at(main->body.get()).flatten_into(heads);
    for (EntryRef& head : heads)
      if (nodes_[head.node].is_input) head = copy_of(head);  // heads get storage of their own
    GraphMemoryUse memory;
    std::string json = write_json(heads, memory);
    return GraphCodegenResult{std::move(json), std::move(params_), memory};
  }

 private:
  int add_input(std::string name, EntryType type) {
    Node node;
    node.is_input = true;
    node.name = std::move(name);
    node.outputs.push_back(std::move(type));
    nodes_.push_back(std::move(node));
    return int(nodes_.size()) - 1;
  }

  int add_kernel(std::string func_name, std::vector<EntryRef> inputs,
                 std::vector<EntryType> outputs) {
    Node node;
    node.func_name = std::move(func_name);
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    nodes_.push_back(std::move(node));
    return int(nodes_.size()) - 1;
  }

  EntryRef copy_of(EntryRef entry) {
    EntryType type = nodes_[entry.node].outputs[entry.index];
    return EntryRef{add_kernel("__copy", {entry}, {type}), 0};
  }

  // Children before parents, iteratively so that long chains need no deep stack.
  void walk(const ir::Expr& body) {
    std::vector<std::pair<ir::Expr, bool>> stack = {{body, false}};
    while (!stack.empty()) {
      auto [expr, expanded] = stack.back();
      if (values_.count(expr.get())) {
        stack.pop_back();
        continue;
      }
      if (expanded) {
        stack.pop_back();
        values_[expr.get()] = evaluate(expr);
        continue;
      }
      stack.back().second = true;
      std::vector<ir::Expr> children;
      if (const auto* call = ir::as<ir::CallNode>(expr)) {
        children = call->args;
      } else if (const auto* tuple = ir::as<ir::TupleNode>(expr)) {
        children = tuple->fields;
      } else if (const auto* get = ir::as<ir::TupleGetItemNode>(expr)) {
        children = {get->tuple};
      }
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        if (is_value(*it) && !values_.count(it->get())) stack.emplace_back(*it, false);
    }
  }

  static bool is_value(const ir::Expr& expr) {
    return expr->kind != ir::ExprKind::GlobalVar && expr->kind != ir::ExprKind::ExternFunc &&
           expr->kind != ir::ExprKind::Op;
  }

  GraphValue evaluate(const ir::Expr& expr) {
    switch (expr->kind) {
      case ir::ExprKind::Constant:
        return constant(*ir::as<ir::ConstantNode>(expr));
      case ir::ExprKind::Call:
        return kernel_call(*ir::as<ir::CallNode>(expr));
      case ir::ExprKind::Tuple: {
        GraphValue value;
        value.is_tuple = true;
        for (const ir::Expr& field : ir::as<ir::TupleNode>(expr)->fields)
          value.fields.push_back(values_.at(field.get()));
        return value;
      }
      case ir::ExprKind::TupleGetItem: {
        const auto* get = ir::as<ir::TupleGetItemNode>(expr);
        const GraphValue& tuple = values_.at(get->tuple.get());
        ANVIL_ICHECK(tuple.is_tuple && get->index >= 0 && get->index < int(tuple.fields.size()),
                     "graph codegen: tuple index ", get->index, " out of range");
        return tuple.fields[get->index];
      }
      case ir::ExprKind::Var:
        throw_error("graph codegen: %", ir::as<ir::VarNode>(expr)->name,
                    " is not a parameter of @main");
      default:
        throw_error("graph codegen: @main holds a ", ir::expr_kind_name(expr->kind),
                    "; only calls of kernels, tuples, parameters and constants are allowed");
    }
  }

  GraphValue constant(const ir::ConstantNode& constant) {
    std::string name;
    do {
      name = "p" + std::to_string(next_param_++);
    } while (taken_names_.count(name));
    taken_names_.insert(name);
    params_.emplace_back(name, constant.data);
    int node = add_input(name, EntryType{constant.data.dtype(), constant.data.shape_vector()});
    return GraphValue{EntryRef{node, 0}, {}, false};
  }

  GraphValue kernel_call(const ir::CallNode& call) {
    const auto* group = ir::as<ir::FunctionNode>(call.callee);
    if (groups_are_kernels_ && group && group->is_primitive()) {
      std::vector<EntryRef> inputs;
      for (const ir::Expr& arg : call.args) values_.at(arg.get()).flatten_into(inputs);
      std::string func_name = lower::kernel_name_hint(ir::downcast<ir::FunctionNode>(call.callee));
      return kernel_value(std::move(func_name), std::move(inputs), call.checked_type);
    }
    const ir::OpNode* op = call.op();
    if (!op || (op->name != "call_tir" && op->name != "call_dps_packed")) {
      std::string what = op ? op->name : std::string("a ") + ir::expr_kind_name(call.callee->kind);
      throw_error("graph codegen: @main must be lowered to kernel calls; found a call of ", what);
    }
    ANVIL_ICHECK(call.args.size() == 2 && call.type_args.size() == 1, "graph codegen: malformed ",
                 op->name);
    std::string func_name;
    if (const auto* global = ir::as<ir::GlobalVarNode>(call.args[0])) func_name = global->name;
    if (const auto* extern_func = ir::as<ir::ExternFuncNode>(call.args[0]))
      func_name = extern_func->symbol;
    ANVIL_ICHECK(!func_name.empty(), "graph codegen: ", op->name, " without a callee name");

    std::vector<EntryRef> inputs;
    values_.at(call.args[1].get()).flatten_into(inputs);
    return kernel_value(std::move(func_name), std::move(inputs), call.type_args[0]);
  }

  // A kernel node of that output type and its value.
  GraphValue kernel_value(std::string func_name, std::vector<EntryRef> inputs,
                          const ir::Type& out_type) {
    std::vector<EntryType> outputs;
    flatten_type(out_type, "the output of " + func_name, outputs);
    int node = add_kernel(std::move(func_name), std::move(inputs), std::move(outputs));
    if (!ir::as<ir::TupleTypeNode>(out_type)) return GraphValue{EntryRef{node, 0}, {}, false};
    int next = 0;
    return tuple_value(out_type, node, next);
  }

  // The value of a tuple-typed output, entries numbered in order.
  static GraphValue tuple_value(const ir::Type& type, int node, int& next) {
    const auto* tuple = ir::as<ir::TupleTypeNode>(type);
    if (!tuple) return GraphValue{EntryRef{node, next++}, {}, false};
    GraphValue value;
    value.is_tuple = true;
    for (const ir::Type& field : tuple->fields)
      value.fields.push_back(tuple_value(field, node, next));
    return value;
  }

  // Kernel node names: the kernel's name, with "_1", "_2", ... on later calls of it.
  std::vector<std::string> node_names() {
    std::vector<std::string> names;
    std::set<std::string> taken = taken_names_;
    for (const Node& node : nodes_)
      if (!node.is_input) taken.insert(node.func_name);
    std::set<std::string> used;
    std::unordered_map<std::string, int> next_suffix;
    for (const Node& node : nodes_) {
      if (node.is_input) {
        names.push_back(node.name);
        continue;
      }
      std::string name = node.func_name;
      if (used.count(name) || taken_names_.count(name)) {
        int& n = next_suffix[node.func_name];
        do {
          name = node.func_name + "_" + std::to_string(++n);
        } while (taken.count(name));
        taken.insert(name);
      }
      used.insert(name);
      names.push_back(name);
    }
    return names;
  }

  std::string write_json(const std::vector<EntryRef>& heads, GraphMemoryUse& memory) {
    std::vector<int> row_ptr = {0};
    for (const Node& node : nodes_) row_ptr.push_back(row_ptr.back() + int(node.outputs.size()));
    auto entry_id = [&](EntryRef e) { return row_ptr[e.node] + e.index; };

    std::vector<PlanEntry> entries;
    for (const Node& node : nodes_)
      for (const EntryType& type : node.outputs)
        entries.push_back(PlanEntry{type.bytes(), !node.is_input});
    for (EntryRef head : heads) entries[entry_id(head)].reusable = false;
    std::vector<PlanStep> steps;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (nodes_[n].is_input) continue;
      PlanStep step;
      for (EntryRef input : nodes_[n].inputs) step.reads.push_back(entry_id(input));
      for (size_t k = 0; k < nodes_[n].outputs.size(); ++k)
        step.writes.push_back(row_ptr[n] + int(k));
      steps.push_back(std::move(step));
    }
    MemoryPlan plan = plan_memory(entries, steps, int64_t(Tensor::kAlignment));
    memory.activation_bytes = plan.activation_bytes;
    memory.largest_live_set = plan.largest_live_set;
    for (size_t n = 0; n < nodes_.size(); ++n)
      if (nodes_[n].is_input)
        (is_param(n) ? memory.param_bytes : memory.io_bytes) += nodes_[n].outputs[0].bytes();
    for (EntryRef head : heads) memory.io_bytes += entries[entry_id(head)].bytes;

    std::vector<std::string> names = node_names();
    Json nodes = Json::array(), arg_nodes = Json::array();
    Json dltype = Json::array(), shape = Json::array();
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const Node& node = nodes_[n];
      Json inputs = Json::array();
      for (EntryRef input : node.inputs) inputs.push_back({input.node, input.index, 0});
      Json json_node = {{"op", node.is_input ? "null" : "tvm_op"}, {"name", names[n]}};
      if (node.is_input) {
        arg_nodes.push_back(n);
      } else {
        json_node["attrs"] = {{"func_name", node.func_name},
                              {"num_inputs", std::to_string(node.inputs.size())},
                              {"num_outputs", std::to_string(node.outputs.size())},
                              {"flatten_data", "0"}};
        if (auto info = kernel_info_.find(node.func_name); info != kernel_info_.end()) {
          json_node["attrs"]["fused_ops"] = info->second.fused_ops;
          json_node["attrs"]["flops"] = std::to_string(info->second.flops);
          if (!info->second.schedule.empty())
            json_node["attrs"]["schedule"] = info->second.schedule;
          if (!info->second.schedule_refused.empty())
            json_node["attrs"]["schedule_refused"] = info->second.schedule_refused;
        }
      }
      json_node["inputs"] = std::move(inputs);
      nodes.push_back(std::move(json_node));
      for (const EntryType& type : node.outputs) {
        dltype.push_back(type.dtype.to_string());
        shape.push_back(type.shape);
      }
    }
    Json json_heads = Json::array();
    for (EntryRef head : heads) json_heads.push_back({head.node, head.index, 0});
    Json graph = {
        {"nodes", std::move(nodes)},
        {"arg_nodes", std::move(arg_nodes)},
        {"heads", std::move(json_heads)},
        {"attrs",
         {{"dltype", Json::array({"list_str", std::move(dltype)})},
          {"shape", Json::array({"list_shape", std::move(shape)})},
          {"storage_id", Json::array({"list_int", plan.storage_id})},
          {"arena_offset", Json::array({"list_int", plan.arena_offset})},
          {"largest_live_set_bytes", Json::array({"size_t", plan.largest_live_set})}}},
        {"node_row_ptr", row_ptr},
    };
    return graph.dump(2);
  }

  // Constants are the inputs not among @main's params, which come first.
  bool is_param(size_t node) const { return node >= num_graph_inputs_; }

  std::vector<Node> nodes_;
  std::unordered_map<const ir::ExprNode*, GraphValue> values_;
  const std::map<std::string, KernelInfo>& kernel_info_;
  std::vector<std::pair<std::string, Tensor>> params_;
  std::set<std::string> taken_names_;  // inputs and params
  int next_param_ = 0;
  bool groups_are_kernels_ = false;
  size_t num_graph_inputs_ = 0;
};

}  // namespace

GraphCodegenResult codegen_graph(const ir::Function& main,
                                 const std::map<std::string, KernelInfo>& kernel_info) {
  return GraphBuilder(kernel_info, /*groups_are_kernels=*/false).build(main);
}

GraphCodegenResult codegen_graph_of_groups(const ir::Function& fused_main) {
  static const std::map<std::string, KernelInfo> no_info;
  return GraphBuilder(no_info, /*groups_are_kernels=*/true).build(fused_main);
}

}  // namespace anvil::driver
