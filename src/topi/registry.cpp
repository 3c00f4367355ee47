// Computes, shape functions and strategy records hang off the op table rows under their own
// keys, so the op table stays the one place that lists operators.
#include <algorithm>
#include <map>
#include <mutex>

#include "anvil/ir/op.h"
#include "anvil/topi/strategy.h"
#include "anvil/topi/topi.h"
#include "topi/families.h"

namespace anvil::topi {
namespace {

constexpr const char* kComputeKey = "te_compute";
constexpr const char* kStrategiesKey = "strategies";
constexpr const char* kShapeComputeKey = "te_shape_compute";

// An op's strategy records by target key, each list highest priority first.
using StrategyTable = std::map<std::string, std::vector<Strategy>, std::less<>>;

// The keys a CPU target (llvm, c) looks up when its target string names none.
const std::vector<std::string>& cpu_target_keys() {
  static const std::vector<std::string> keys = {"x86"};
  return keys;
}

void register_all_families() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elemwise_computes();
    register_reduce_computes();
    register_transform_computes();
    register_index_computes();
    register_nn_computes();
    register_qnn_computes();
    register_x86_strategies();
  });
}

// The entry of type T that a family registered under key on the row of op_name (the families
// register on first use), or nullptr.
template <typename T>
const T* find_entry(std::string_view op_name, const char* key) {
  register_all_families();
  const ir::OpDef* def = ir::OpTable::global().find(op_name);
  return def ? def->get_extra<T>(key) : nullptr;
}

const ir::TensorTypeNode& output_type(const ir::Type& out_type, size_t i, const std::string& op) {
  const ir::TensorTypeNode* tensor = nullptr;
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(out_type)) {
    ANVIL_ICHECK(i < tuple->fields.size(), op, ": output ", i, " of ", tuple->fields.size());
    tensor = ir::as<ir::TensorTypeNode>(tuple->fields[i]);
  } else {
    ANVIL_ICHECK(i == 0, op, ": output ", i, " of a single-output op");
    tensor = ir::as<ir::TensorTypeNode>(out_type);
  }
  ANVIL_ICHECK(tensor && tensor->has_shape(), op, ": output ", i, " is not a ranked tensor");
  return *tensor;
}

}  // namespace

size_t ComputeArgs::num_outputs() const {
  if (const auto* tuple = ir::as<ir::TupleTypeNode>(out_type)) return tuple->fields.size();
  return 1;
}

tir::PrimExpr DimVars::to_expr(const ir::Dim& dim) {
  switch (dim.kind()) {
    case ir::DimKind::Int:
      return tir::make_int(dim.int_value());
    case ir::DimKind::Var: {
      auto [it, added] = vars_.try_emplace(dim.var_name());
      if (added) it->second = tir::VarNode::make(dim.var_name());
      return it->second;
    }
    case ir::DimKind::Any:
      throw_error("an unknown dim (?) has no value a kernel could bind");
    case ir::DimKind::Add:
      return to_expr(dim.lhs()) + to_expr(dim.rhs());
    case ir::DimKind::Mul:
      return to_expr(dim.lhs()) * to_expr(dim.rhs());
    case ir::DimKind::FloorDiv:
      return tir::floordiv(to_expr(dim.lhs()), to_expr(dim.rhs()));
    case ir::DimKind::FloorMod:
      return tir::floormod(to_expr(dim.lhs()), to_expr(dim.rhs()));
    case ir::DimKind::Min:
      return tir::min(to_expr(dim.lhs()), to_expr(dim.rhs()));
    case ir::DimKind::Max:
      return tir::max(to_expr(dim.lhs()), to_expr(dim.rhs()));
    case ir::DimKind::Broadcast: {
      // Each operand appears up to three times in the selects, so a compound operand is bound
      // once: a residual stream's size broadcast with one more size per layer would otherwise
      // grow as 3^layers.
      tir::PrimExpr a_value = to_expr(dim.lhs()), b_value = to_expr(dim.rhs());
      auto compound = [](const tir::PrimExpr& e) {
        return e->kind != tir::ExprKind::IntImm && e->kind != tir::ExprKind::Var;
      };
      tir::Var a_var = compound(a_value) ? tir::VarNode::make("bcast") : tir::Var();
      tir::Var b_var = compound(b_value) ? tir::VarNode::make("bcast") : tir::Var();
      tir::PrimExpr a = a_var ? tir::PrimExpr(a_var) : a_value;
      tir::PrimExpr b = b_var ? tir::PrimExpr(b_var) : b_value;
      tir::PrimExpr one = tir::make_int(1);
      tir::PrimExpr result = tir::select(
          tir::eq(a, one), b,
          tir::select(tir::logical_or(tir::eq(b, one), tir::eq(a, b)), a, tir::make_int(-1)));
      if (b_var) result = tir::LetNode::make(b_var, b_value, result);
      if (a_var) result = tir::LetNode::make(a_var, a_value, result);
      return result;
    }
  }
  ANVIL_ICHECK(false, "a dim of unknown kind");
  return {};
}

std::vector<tir::PrimExpr> DimVars::to_exprs(const std::vector<ir::Dim>& dims) {
  std::vector<tir::PrimExpr> exprs;
  for (const ir::Dim& dim : dims) exprs.push_back(to_expr(dim));
  return exprs;
}

std::vector<tir::PrimExpr> ComputeArgs::out_shape(size_t i) const {
  const ir::TensorTypeNode& type = output_type(out_type, i, op_name());
  std::vector<tir::PrimExpr> shape;
  for (const ir::Dim& dim : *type.shape) {
    if (auto value = dim.as_int()) {
      shape.push_back(tir::make_int(*value));
      continue;
    }
    if (!dim_vars) throw_error(op_name(), ": output dim ", dim.to_string(), " is not static");
    shape.push_back(dim_vars->to_expr(dim));
  }
  return shape;
}

DataType ComputeArgs::out_dtype(size_t i) const {
  return output_type(out_type, i, op_name()).dtype;
}

const ir::AttrsNode* ComputeArgs::attrs_node() const {
  if (call.attrs) return call.attrs.get();
  const ir::OpNode* op = call.op();
  return op ? op->def->default_attrs.get() : nullptr;
}

const std::string& ComputeArgs::op_name() const {
  static const std::string unknown = "<call>";
  const ir::OpNode* op = call.op();
  return op ? op->name : unknown;
}

void register_compute(std::string_view op_name, ComputeFn compute) {
  ir::OpTable::global().get_mutable(op_name).set_extra(kComputeKey, std::move(compute));
}

const ComputeFn* find_compute(std::string_view op_name) {
  return find_entry<ComputeFn>(op_name, kComputeKey);
}

std::vector<std::string> ops_without_compute() {
  register_all_families();
  std::vector<std::string> missing;
  for (const ir::OpDef* def : ir::OpTable::global().list())
    if (!def->get_extra<ComputeFn>(kComputeKey)) missing.push_back(def->name);
  return missing;
}

void register_shape_compute(std::string_view op_name, ShapeCompute shape) {
  ir::OpTable::global().get_mutable(op_name).set_extra(kShapeComputeKey, std::move(shape));
}

const ShapeCompute* find_shape_compute(std::string_view op_name) {
  return find_entry<ShapeCompute>(op_name, kShapeComputeKey);
}

void register_strategy(std::string_view op_name, std::string_view target_key, Strategy strategy) {
  ir::OpDef& def = ir::OpTable::global().get_mutable(op_name);
  std::any& entry = def.extra.try_emplace(kStrategiesKey, StrategyTable{}).first->second;
  std::vector<Strategy>& records = std::any_cast<StrategyTable&>(entry)[std::string(target_key)];
  // After every record of higher or equal priority: registration order breaks ties.
  auto at = std::find_if(records.begin(), records.end(),
                         [&](const Strategy& s) { return s.priority < strategy.priority; });
  records.insert(at, std::move(strategy));
}

std::vector<const Strategy*> find_strategies(std::string_view op_name,
                                             std::span<const std::string> target_keys) {
  if (target_keys.empty()) target_keys = cpu_target_keys();
  std::vector<const Strategy*> found;
  const StrategyTable* table = find_entry<StrategyTable>(op_name, kStrategiesKey);
  if (!table) return found;
  for (const std::string& key : target_keys) {
    auto it = table->find(key);
    if (it == table->end() || it->second.empty()) continue;
    for (const Strategy& s : it->second) found.push_back(&s);
    break;
  }
  return found;
}

const Strategy* find_strategy(std::string_view op_name, std::span<const std::string> target_keys,
                              LayoutRole role) {
  for (const Strategy* s : find_strategies(op_name, target_keys))
    if (s->layout_role == role) return s;
  return nullptr;
}

bool computes_in(const Strategy& record, const ir::CallNode& call) {
  if (record.precisions.empty() || call.args.empty()) return true;
  const auto* data = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
  return !data || std::find(record.precisions.begin(), record.precisions.end(), data->dtype) !=
                      record.precisions.end();
}

const ComputeFn* find_strategy_compute(std::string_view op_name,
                                       std::span<const std::string> target_keys) {
  for (const Strategy* s : find_strategies(op_name, target_keys))
    if (s->compute) return &s->compute;
  return find_compute(op_name);
}

std::string config_mismatch(const std::vector<KnobSpace>& space, const ScheduleConfig& config,
                            const std::string& strategy) {
  for (const auto& [name, value] : config) {
    auto knob = std::find_if(space.begin(), space.end(),
                             [&](const KnobSpace& k) { return k.name == name; });
    if (knob == space.end()) return strategy + " has no knob '" + name + "'";
    if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end()) {
      std::string values;
      for (int64_t v : knob->values) values += (values.empty() ? "" : ", ") + std::to_string(v);
      return "knob '" + name + "' = " + std::to_string(value) + " is not one of {" + values + "}";
    }
  }
  return "";
}

}  // namespace anvil::topi
