// The operator table: one entry per operator with its attrs struct, inputs,
// type relation and fusion pattern. Later layers (lowering, reference kernels)
// attach their own per-op entries as typed attributes of the same table.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::ir {

// How an operator fuses with its neighbours (TVM's numbering).
enum class OpPattern : int {
  ElemWise = 0,         // out[i] = f(in[i]) with identical shapes
  Broadcast = 1,        // elementwise with numpy broadcasting
  Injective = 2,        // each output element reads a computed set of inputs (transpose)
  CommReduce = 3,       // commutative reduction (sum, max)
  OutEWiseFusable = 4,  // complex op whose output takes elementwise epilogues (conv2d)
  Tuple = 7,            // builds or takes tuples
  Opaque = 8,           // never fused
};

// "elemwise", "broadcast", ...
const char* op_pattern_name(OpPattern pattern);

// What a type relation sees: the op, the argument types and the attrs.
struct RelationArgs {
  const OpDef& op;
  std::span<const Type> inputs;
  const AttrsNode* attrs;  // null when the op takes none
  std::span<const Type> type_args;

  // The attrs as T (the op's registered attrs type).
  template <typename T>
  const T& attrs_as() const {
    return *static_cast<const T*>(attrs);
  }
  // Argument i as a tensor type with known rank; throws Error naming the argument otherwise.
  const TensorTypeNode& tensor(size_t i) const;
  // Name of argument i for messages: "argument 'weight'".
  std::string arg_name(size_t i) const;
};

// Computes an op's output type from its inputs, or throws anvil::Error saying
// what is wrong (attribute or argument, and the shapes involved). InferType
// adds which call it was.
using TypeRelation = std::function<Type(const RelationArgs&)>;

// One row of the operator table.
struct OpDef {
  std::string name;
  std::string description;
  std::vector<std::string> input_names;
  bool variadic = false;         // the last input repeats (concatenate, einsum)
  Ref<AttrsNode> default_attrs;  // null: the op takes no attrs
  TypeRelation relation;
  OpPattern pattern = OpPattern::Opaque;
  std::unordered_map<std::string, std::any> extra;  // per-layer entries, see set_extra

  // Fluent setters used by the family files.
  OpDef& describe(std::string text) {
    description = std::move(text);
    return *this;
  }
  OpDef& inputs(std::vector<std::string> names, bool is_variadic = false) {
    input_names = std::move(names);
    variadic = is_variadic;
    return *this;
  }
  template <typename AttrsT>
  OpDef& attrs() {
    default_attrs = make_ref<AttrsT>();
    return *this;
  }
  OpDef& type_relation(TypeRelation rel) {
    relation = std::move(rel);
    return *this;
  }
  OpDef& fusion_pattern(OpPattern p) {
    pattern = p;
    return *this;
  }
  // Attaches a value of a later layer (e.g. "reference_kernel") to this op.
  template <typename T>
  OpDef& set_extra(const std::string& key, T value) {
    extra[key] = std::move(value);
    return *this;
  }
  // The value under key, or nullptr when there is none. A value of another type is an
  // internal error: a registration under the wrong type must not pass for a missing one.
  template <typename T>
  const T* get_extra(const std::string& key) const {
    auto it = extra.find(key);
    if (it == extra.end()) return nullptr;
    const T* value = std::any_cast<T>(&it->second);
    ANVIL_ICHECK(value != nullptr, "op ", name, ": entry '", key, "' holds a ",
                 it->second.type().name(), ", not the type asked for");
    return value;
  }
  int num_inputs() const { return int(input_names.size()); }
};

// The extra entry "runtime_function_operands" of an op whose runtime function (the entry
// "runtime_function", anvil/runtime/builtins.h) needs its attrs: the constant tensors that
// follow the call's arguments.
using RuntimeFunctionOperands = std::function<std::vector<Tensor>(const CallNode& call)>;

// The one operator table.
class OpTable {
 public:
  // The table, with every op family registered on first use.
  static OpTable& global();
  // Adds an op; an internal error if the name is taken.
  OpDef& add(const std::string& name);
  // The op, or nullptr.
  const OpDef* find(std::string_view name) const;
  // The op for changes by later layers (set_extra); throws Error if unknown.
  OpDef& get_mutable(std::string_view name);
  // All ops sorted by name.
  std::vector<const OpDef*> list() const;

 private:
  std::unordered_map<std::string, std::unique_ptr<OpDef>> ops_;
};

// The named op's attrs with the given fields set over its defaults; throws
// Error naming the op and field when a field is unknown or of the wrong kind.
Attrs make_op_attrs(std::string_view op_name,
                    const std::vector<std::pair<std::string, AttrValue>>& fields);

// The string field `name` of an op call's attrs (the op's defaults when the call has none), or
// "" when there is no such string field ("layout" of a pool, "src_layout" of a transform).
std::string call_string_attr(const CallNode& call, std::string_view name);

// Fresh attrs of T for an op call, to be filled in before the call is made.
template <typename T>
Ref<T> make_attrs() {
  return make_ref<T>();
}

}  // namespace anvil::ir
