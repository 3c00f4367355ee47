// The one operator table, filled with every family on first use.
#include <algorithm>
#include <mutex>

#include "anvil/ir/op.h"
#include "ir/op/families.h"

namespace anvil::ir {

const char* op_pattern_name(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::ElemWise:
      return "elemwise";
    case OpPattern::Broadcast:
      return "broadcast";
    case OpPattern::Injective:
      return "injective";
    case OpPattern::CommReduce:
      return "comm-reduce";
    case OpPattern::OutEWiseFusable:
      return "out-elemwise-fusable";
    case OpPattern::Tuple:
      return "tuple";
    case OpPattern::Opaque:
      return "opaque";
  }
  return "?";
}

OpTable& OpTable::global() {
  static OpTable* table = [] {
    auto* t = new OpTable();
    register_builtin_ops(*t);
    register_nn_conv_ops(*t);
    register_nn_conv_winograd_ops(*t);
    register_nn_dense_ops(*t);
    register_nn_pool_ops(*t);
    register_nn_image_ops(*t);
    register_nn_norm_ops(*t);
    register_nn_activation_ops(*t);
    register_elemwise_ops(*t);
    register_reduce_ops(*t);
    register_transform_ops(*t);
    register_index_ops(*t);
    register_creation_ops(*t);
    register_qnn_ops(*t);
    register_vision_ops(*t);
    register_linalg_ops(*t);
    register_signal_ops(*t);
    register_ml_ops(*t);
    return t;
  }();
  return *table;
}

OpDef& OpTable::add(const std::string& name) {
  auto [it, inserted] = ops_.emplace(name, std::make_unique<OpDef>());
  ANVIL_ICHECK(inserted, "operator '", name, "' registered twice");
  it->second->name = name;
  return *it->second;
}

const OpDef* OpTable::find(std::string_view name) const {
  auto it = ops_.find(std::string(name));
  return it == ops_.end() ? nullptr : it->second.get();
}

OpDef& OpTable::get_mutable(std::string_view name) {
  auto it = ops_.find(std::string(name));
  if (it == ops_.end()) throw_error("unknown operator '", name, "'");
  return *it->second;
}

std::vector<const OpDef*> OpTable::list() const {
  std::vector<const OpDef*> result;
  for (const auto& [name, def] : ops_) result.push_back(def.get());
  std::sort(result.begin(), result.end(),
            [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  return result;
}

std::string call_string_attr(const CallNode& call, std::string_view name) {
  const AttrsNode* attrs = call.attrs ? call.attrs.get() : nullptr;
  if (!attrs && call.op() && call.op()->def) attrs = call.op()->def->default_attrs.get();
  if (!attrs) return {};
  for (const AttrField& field : attrs->fields())
    if (const auto* text = std::get_if<std::string>(&field.value);
        text && std::string_view(field.name) == name)
      return *text;
  return {};
}

Attrs make_op_attrs(std::string_view op_name,
                    const std::vector<std::pair<std::string, AttrValue>>& fields) {
  const OpDef* def = OpTable::global().find(op_name);
  if (!def) throw_error("unknown operator '", op_name, "'");
  if (!def->default_attrs) {
    if (fields.empty()) return nullptr;
    throw_error("operator ", op_name, " takes no attributes, got '", fields.front().first, "'");
  }
  Ref<AttrsNode> attrs = def->default_attrs->make_default();
  for (const auto& [name, value] : fields) {
    try {
      attrs->set_field(name, value);
    } catch (const Error& e) {
      throw_error(op_name, ": ", e.what());
    }
  }
  return attrs;
}

}  // namespace anvil::ir
