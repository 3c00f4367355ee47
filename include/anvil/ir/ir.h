// The graph IR: types, expressions, functions and modules (TVM's Relay, with
// what Relax adds: binding blocks, dataflow blocks, call_tir and
// call_dps_packed). Every node is immutable after construction and shared
// through intrusive refcounts; build nodes with their make() functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "anvil/ir/attrs.h"
#include "anvil/ir/dim.h"
#include "anvil/runtime/tensor.h"
#include "anvil/support/error.h"

namespace anvil::ir {

// ---------------------------------------------------------------- types

enum class TypeKind : uint8_t { Tensor, Tuple, Func };

struct TypeNode : RefCounted {
  const TypeKind kind;
  explicit TypeNode(TypeKind k) : kind(k) {}
};
using Type = Ref<const TypeNode>;

// A tensor of known dtype; the shape is a list of dims, or unknown rank.
struct TensorTypeNode : TypeNode {
  static constexpr TypeKind kKind = TypeKind::Tensor;
  DataType dtype;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown

  TensorTypeNode() : TypeNode(kKind) {}
  static Ref<const TensorTypeNode> make(std::vector<Dim> shape, DataType dtype);
  static Ref<const TensorTypeNode> make_unknown_rank(DataType dtype);
  static Ref<const TensorTypeNode> make_scalar(DataType dtype) { return make({}, dtype); }
  bool has_shape() const { return shape.has_value(); }
  // Rank; an internal error when unknown.
  int ndim() const;
  // The static shape, or nullopt if any dim is symbolic or the rank unknown.
  std::optional<std::vector<int64_t>> static_shape() const;
};
using TensorType = Ref<const TensorTypeNode>;

struct TupleTypeNode : TypeNode {
  static constexpr TypeKind kKind = TypeKind::Tuple;
  std::vector<Type> fields;

  TupleTypeNode() : TypeNode(kKind) {}
  static Ref<const TupleTypeNode> make(std::vector<Type> fields);
};
using TupleType = Ref<const TupleTypeNode>;

struct FuncTypeNode : TypeNode {
  static constexpr TypeKind kKind = TypeKind::Func;
  std::vector<Type> params;
  Type ret;

  FuncTypeNode() : TypeNode(kKind) {}
  static Ref<const FuncTypeNode> make(std::vector<Type> params, Type ret);
};
using FuncType = Ref<const FuncTypeNode>;

// The node as T when its kind matches, else nullptr.
template <typename T>
const T* as(const Type& type) {
  return type && type->kind == T::kKind ? static_cast<const T*>(type.get()) : nullptr;
}

// Text form as in TVM's Relay: "Tensor[(1, 3), float32]", "float32" for a
// scalar, "(Tensor[...], Tensor[...])", "fn (T1, T2) -> T".
std::string type_to_string(const Type& type);

// Structural equality of types (dims compared in canonical form).
bool types_equal(const Type& a, const Type& b);

// The most precise type that holds values of both a and b (the type of an If whose branches
// have them): dims that differ become unknown (?), tensors of different rank have unknown rank,
// tuples join field by field. Null where no such type exists: different dtypes, tuple sizes or
// kinds, or functions of different types.
Type join_types(const Type& a, const Type& b);

// ---------------------------------------------------------------- expressions

enum class ExprKind : uint8_t {
#define ANVIL_EXPR_KIND(Name) Name,
#include "anvil/ir/expr_kinds.def"
};

// Name of an expression kind, e.g. "Call".
const char* expr_kind_name(ExprKind kind);

struct ExprNode : RefCounted {
  const ExprKind kind;
  // Filled by InferType; a cache that is not part of the node's identity.
  mutable Type checked_type;

  explicit ExprNode(ExprKind k) : kind(k) {}
};
using Expr = Ref<const ExprNode>;

template <typename T>
const T* as(const Expr& expr) {
  return expr && expr->kind == T::kKind ? static_cast<const T*>(expr.get()) : nullptr;
}
template <typename T>
Ref<const T> downcast(const Expr& expr) {
  return Ref<const T>(as<T>(expr));
}

// A local variable: a function parameter or a binding. Identity is the node;
// the name is a hint for printing. Dataflow vars live inside one dataflow block.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  Type annotation;  // may be null for bindings
  bool is_dataflow = false;

  VarNode() : ExprNode(kKind) {}
  static Ref<const VarNode> make(std::string name, Type annotation = nullptr,
                                 bool is_dataflow = false);
};
using Var = Ref<const VarNode>;

// A function of the module, by name (@main).
struct GlobalVarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::GlobalVar;
  std::string name;

  GlobalVarNode() : ExprNode(kKind) {}
  static Ref<const GlobalVarNode> make(std::string name);
};
using GlobalVar = Ref<const GlobalVarNode>;

// A tensor value known at compile time (a bound parameter, a folded constant).
struct ConstantNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Constant;
  Tensor data;

  ConstantNode() : ExprNode(kKind) {}
  static Ref<const ConstantNode> make(Tensor data);
};
using Constant = Ref<const ConstantNode>;

struct OpDef;

// An operator of the op table; one node per operator, shared by all calls.
struct OpNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Op;
  std::string name;
  const OpDef* def = nullptr;

  OpNode() : ExprNode(kKind) {}
  // The operator registered under name; throws Error naming it if unknown.
  static Ref<const OpNode> get(std::string_view name);
};
using Op = Ref<const OpNode>;

// A runtime function referred to by its registered name ("env.linear").
struct ExternFuncNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::ExternFunc;
  std::string symbol;

  ExternFuncNode() : ExprNode(kKind) {}
  static Ref<const ExternFuncNode> make(std::string symbol);
};
using ExternFunc = Ref<const ExternFuncNode>;

// A call of an Op, a Function, a GlobalVar or an ExternFunc. type_args carry
// the declared output type of call_tir / call_dps_packed.
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Expr callee;
  std::vector<Expr> args;
  Attrs attrs;  // may be null
  std::vector<Type> type_args;

  CallNode() : ExprNode(kKind) {}
  static Ref<const CallNode> make(Expr callee, std::vector<Expr> args, Attrs attrs = nullptr,
                                  std::vector<Type> type_args = {});
  // The callee as an operator, or nullptr.
  const OpNode* op() const { return as<OpNode>(callee); }
  // The attrs as T; an internal error if they are of another type.
  template <typename T>
  const T& attrs_as() const;
};
using Call = Ref<const CallNode>;

struct TupleNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Tuple;
  std::vector<Expr> fields;

  TupleNode() : ExprNode(kKind) {}
  static Ref<const TupleNode> make(std::vector<Expr> fields);
};
using Tuple = Ref<const TupleNode>;

struct TupleGetItemNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::TupleGetItem;
  Expr tuple;
  int index = 0;

  TupleGetItemNode() : ExprNode(kKind) {}
  static Ref<const TupleGetItemNode> make(Expr tuple, int index);
};
using TupleGetItem = Ref<const TupleGetItemNode>;

// What a module holds under a name: a graph Function or a tensor-IR PrimFunc.
struct BaseFuncNode : ExprNode {
  DictAttrs func_attrs;
  using ExprNode::ExprNode;
};
using BaseFunc = Ref<const BaseFuncNode>;

struct FunctionNode : BaseFuncNode {
  static constexpr ExprKind kKind = ExprKind::Function;
  std::vector<Var> params;
  Expr body;
  Type ret_type;  // may be null before InferType

  FunctionNode() : BaseFuncNode(kKind) {}
  static Ref<const FunctionNode> make(std::vector<Var> params, Expr body, Type ret_type = nullptr,
                                      DictAttrs attrs = {});
  // True for a fused group marked Primitive=1 (lowered as one kernel).
  bool is_primitive() const;
};
using Function = Ref<const FunctionNode>;

struct IfNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::If;
  Expr cond, then_branch, else_branch;

  IfNode() : ExprNode(kKind) {}
  static Ref<const IfNode> make(Expr cond, Expr then_branch, Expr else_branch);
};
using If = Ref<const IfNode>;

// A loop over carried values: vars take init on entry; while cond (a scalar bool over the vars)
// holds, they take body's values (a tuple of one value per var); the loop's value is the tuple
// of the vars' last values. Each var's annotation is its type on every iteration, so it holds
// what init and body give it (dims that change from one iteration to the next are ?). cond and
// body may read values from outside the loop; the vars are visible only in them.
struct WhileNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::While;
  std::vector<Var> vars;
  std::vector<Expr> init;
  Expr cond, body;

  WhileNode() : ExprNode(kKind) {}
  static Ref<const WhileNode> make(std::vector<Var> vars, std::vector<Expr> init, Expr cond,
                                   Expr body);
};
using While = Ref<const WhileNode>;

struct LetNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;
  Var var;
  Expr value, body;

  LetNode() : ExprNode(kKind) {}
  static Ref<const LetNode> make(Var var, Expr value, Expr body);
};
using Let = Ref<const LetNode>;

// var = value, inside a binding block.
struct Binding {
  Var var;
  Expr value;
};

// A run of bindings. In a dataflow block every value is side-effect free;
// its dataflow vars are local to it, its other vars are the block's outputs.
struct BindingBlock {
  std::vector<Binding> bindings;
  bool is_dataflow = false;
};

// Blocks of bindings followed by a result expression (Relax's SeqExpr).
struct SeqExprNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::SeqExpr;
  std::vector<BindingBlock> blocks;
  Expr body;

  SeqExprNode() : ExprNode(kKind) {}
  static Ref<const SeqExprNode> make(std::vector<BindingBlock> blocks, Expr body);
};
using SeqExpr = Ref<const SeqExprNode>;

// ---------------------------------------------------------------- calls

// A call of the named operator with the given attrs.
Call call_op(std::string_view op_name, std::vector<Expr> args, Attrs attrs = nullptr);

// call_tir(@func, (args...), out=type): call a PrimFunc of the module.
Call call_tir(GlobalVar func, std::vector<Expr> args, Type out_type);

// call_dps_packed("name", (args...), out=type): call a registered runtime
// function that writes its result into a destination tensor.
Call call_dps_packed(std::string symbol, std::vector<Expr> args, Type out_type);

// ---------------------------------------------------------------- module

// Named functions: graph Functions and PrimFuncs side by side. A value type;
// copying shares the (immutable) functions.
class IRModule {
 public:
  IRModule() = default;
  // Adds or replaces the function under name, keeping first-insertion order.
  void add(const std::string& name, BaseFunc func);
  // The function under name, or null.
  BaseFunc find(std::string_view name) const;
  // The function under name; throws Error naming it if absent.
  BaseFunc get(std::string_view name) const;
  // The graph function under name; throws Error if absent or not a Function.
  Function get_function(std::string_view name) const;
  void remove(std::string_view name);
  bool contains(std::string_view name) const { return bool(find(name)); }
  const std::vector<std::pair<std::string, BaseFunc>>& functions() const { return functions_; }
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, BaseFunc>> functions_;
};

template <typename T>
const T& CallNode::attrs_as() const {
  const T* typed = dynamic_cast<const T*>(attrs.get());
  ANVIL_ICHECK(typed != nullptr, "call expects attrs ", T::kTypeKey, ", has ",
               attrs ? attrs->type_key() : "none");
  return *typed;
}

}  // namespace anvil::ir
