// make_packed_api: turns a function with tensor and scalar parameters into a
// kernel of the packed calling convention (docs/kernel-abi.md, "Generated
// kernels"). Everything a caller can get wrong is checked on entry, because
// the body trusts the buffer declarations completely: a wrong rank or extent
// would otherwise read or write out of bounds.
//
// The entry is a chain of AssertStmt / LetStmt in three phases, so that every
// check only mentions variables bound before it:
//   1. argument count; per parameter (in order) its type code and its value
//      (the tensor handle, or the scalar converted to the parameter's type);
//   2. per tensor: not null, rank, dtype, device, and the binding of every
//      shape / stride / offset variable that appears bare in the buffer
//      declaration (the first tensor that mentions a variable defines it);
//   3. per tensor: the remaining extents, the strides, the byte offset, and
//      the binding of the buffer's data pointer.
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/support/str_cat.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

// Type codes of c_abi.h (kept numeric here: the compiler does not include the C header).
constexpr int64_t kTypeCodeInt = 0;
constexpr int64_t kTypeCodeFloat = 1;
constexpr int64_t kTypeCodeHandle = 2;
constexpr int64_t kTypeCodeDLTensor = 3;
constexpr int64_t kDLDeviceCPU = 1;  // DLDeviceType kDLCPU
constexpr int64_t kDLTypeCodeBool = 6;

const DataType kInt32 = DataType::int32();

PrimExpr builtin(DataType dtype, const char* name, std::vector<PrimExpr> args) {
  return call_intrin(dtype, name, std::move(args));
}

// A short readable form of a shape expression for error messages (the full
// printer is not needed for the sums and products shapes are made of).
// Nested binary operations are parenthesized; the outermost one is not.
std::string describe(const PrimExpr& e, bool nested = false) {
  if (const auto* imm = as<IntImmNode>(e)) return std::to_string(imm->value);
  if (const auto* var = as<VarNode>(e)) return var->name;
  if (const auto* c = as<CastNode>(e)) return describe(c->value, nested);
  auto binary = [nested](const PrimExpr& a, const char* op, const PrimExpr& b) {
    std::string text = str_cat(describe(a, true), " ", op, " ", describe(b, true));
    return nested ? str_cat("(", text, ")") : text;
  };
  auto call = [](const char* name, const PrimExpr& a, const PrimExpr& b) {
    return str_cat(name, "(", describe(a), ", ", describe(b), ")");
  };
  if (const auto* n = as<AddNode>(e)) return binary(n->a, "+", n->b);
  if (const auto* n = as<SubNode>(e)) return binary(n->a, "-", n->b);
  if (const auto* n = as<MulNode>(e)) return binary(n->a, "*", n->b);
  if (const auto* n = as<FloorDivNode>(e)) return binary(n->a, "//", n->b);
  if (const auto* n = as<FloorModNode>(e)) return binary(n->a, "%", n->b);
  if (const auto* n = as<MinNode>(e)) return call("min", n->a, n->b);
  if (const auto* n = as<MaxNode>(e)) return call("max", n->a, n->b);
  return "an expression";
}

class PackedApiBuilder {
 public:
  explicit PackedApiBuilder(const PrimFunc& func) : func_(func) {
    name_ = func->global_symbol();
    if (name_.empty()) name_ = "main";
    args_ = VarNode::make("args", DataType::handle());
    type_codes_ = VarNode::make("arg_type_codes", DataType::handle());
    num_args_ = VarNode::make("num_args", kInt32);
    ret_value_ = VarNode::make("ret_value", DataType::handle());
    ret_type_code_ = VarNode::make("ret_type_code", DataType::handle());
  }

  PrimFunc run() {
    const std::vector<Var>& params = func_->params;
    int n = int(params.size());
    add_assert(eq(num_args_, make_int(n, kInt32)),
               str_cat(name_, ": expected ", n, n == 1 ? " argument" : " arguments"));
    for (int i = 0; i < n; ++i) bind_param(params[i], i);
    for (int i = 0; i < n; ++i)
      if (Buffer buffer = func_->buffer_of(params[i])) bind_tensor_header(params[i], buffer);
    for (int i = 0; i < n; ++i)
      if (Buffer buffer = func_->buffer_of(params[i])) check_tensor_layout(params[i], buffer);

    Stmt body = func_->body;
    for (size_t k = entry_.size(); k-- > 0;) {
      const EntryStep& step = entry_[k];
      if (step.var)
        body = LetStmtNode::make(step.var, step.value, body);
      else
        body = AssertStmtNode::make(step.value, step.message, body);
    }
    ir::DictAttrs attrs = func_->func_attrs.with("calling_conv", std::string("packed"));
    return PrimFuncNode::make({args_, type_codes_, num_args_, ret_value_, ret_type_code_}, {}, body,
                              std::move(attrs));
  }

 private:
  // One link of the entry chain: a LetStmt when var is set, else an AssertStmt.
  struct EntryStep {
    Var var;
    PrimExpr value;
    std::string message;
  };

  void add_assert(PrimExpr condition, std::string message) {
    if (is_one(condition)) return;
    entry_.push_back({nullptr, std::move(condition), std::move(message)});
  }
  void add_let(const Var& var, PrimExpr value) {
    bound_.insert(var.get());
    entry_.push_back({var, cast(var->dtype, std::move(value)), ""});
  }

  std::string arg_label(const Var& param) const {
    return str_cat(name_, ": argument '", param->name, "'");
  }

  PrimExpr type_code(int i) const {
    return builtin(kInt32, "anvil.arg_type_code", {type_codes_, make_int(i)});
  }

  void bind_param(const Var& param, int i) {
    DataType t = param->dtype;
    Buffer buffer = func_->buffer_of(param);
    if (buffer || t.is_handle()) {
      int64_t code = buffer ? kTypeCodeDLTensor : kTypeCodeHandle;
      add_assert(eq(type_code(i), make_int(code, kInt32)),
                 str_cat(arg_label(param), buffer ? " must be a tensor" : " must be a handle"));
      add_let(param, builtin(DataType::handle(), "anvil.arg_handle", {args_, make_int(i)}));
      return;
    }
    ANVIL_ICHECK(t.is_scalar(), "packed parameter '", param->name, "' of vector type");
    if (t.is_float() || t.is_bfloat()) {
      add_assert(eq(type_code(i), make_int(kTypeCodeFloat, kInt32)),
                 str_cat(arg_label(param), " must be a float"));
      add_let(param, builtin(DataType::float64(), "anvil.arg_float64", {args_, make_int(i)}));
      return;
    }
    add_assert(eq(type_code(i), make_int(kTypeCodeInt, kInt32)),
               str_cat(arg_label(param), " must be an integer"));
    PrimExpr value = builtin(DataType::int64(), "anvil.arg_int64", {args_, make_int(i)});
    if (t.is_bool()) value = ne(value, make_int(0));
    add_let(param, value);
  }

  // What a declaration slot of a tensor is: a dimension, a stride or the element offset.
  enum class Slot { Dim, Stride, ElemOffset };
  using SlotKey = std::tuple<const VarNode*, Slot, int>;

  // Binds the variable declared bare at (param, slot, d) from value, unless bound already.
  void bind_slot(const Var& param, Slot slot, int d, const PrimExpr& declared, PrimExpr value,
                 std::string origin) {
    const auto* var = as<VarNode>(declared);
    if (!var || bound_.count(var)) return;
    add_let(Var(var), std::move(value));
    origin_.emplace(var, std::move(origin));
    defined_at_.insert({param.get(), slot, d});
  }
  bool defines(const Var& param, Slot slot, int d) const {
    return defined_at_.count({param.get(), slot, d}) > 0;
  }

  // Phase 2: what must hold before any extent can be read, and the bare variables.
  void bind_tensor_header(const Var& param, const Buffer& buffer) {
    std::string label = arg_label(param);
    add_assert(logical_not(builtin(DataType::boolean(), "anvil.is_null", {param})),
               str_cat(label, " must not be null"));
    int rank = buffer->ndim();
    add_assert(eq(builtin(kInt32, "anvil.dltensor_ndim", {param}), make_int(rank, kInt32)),
               str_cat(label, " must have rank ", rank));
    add_assert(dtype_matches(param, buffer->dtype),
               str_cat(label, " must be ", buffer->dtype.to_string()));
    add_assert(
        eq(builtin(kInt32, "anvil.dltensor_device_type", {param}), make_int(kDLDeviceCPU, kInt32)),
        str_cat(label, " must be a CPU tensor"));
    for (int d = 0; d < rank; ++d)
      bind_slot(param, Slot::Dim, d, buffer->shape[d], shape_of(param, d),
                str_cat(param->name, " dim ", d));
    for (int d = 0; d < int(buffer->strides.size()); ++d)
      bind_slot(param, Slot::Stride, d, buffer->strides[d], actual_stride(param, rank, d),
                str_cat(param->name, " stride ", d));
    bind_slot(param, Slot::ElemOffset, 0, buffer->elem_offset,
              truncdiv(builtin(DataType::int64(), "anvil.dltensor_byte_offset", {param}),
                       make_int(buffer->dtype.bytes())),
              str_cat(param->name, " element offset"));
  }

  // Phase 3: extents that are expressions or repeat a variable, strides, offset, data.
  void check_tensor_layout(const Var& param, const Buffer& buffer) {
    std::string label = arg_label(param);
    int rank = buffer->ndim();
    for (int d = 0; d < rank; ++d) {
      const PrimExpr& dim = buffer->shape[d];
      // The dimension that defined the variable needs no check against itself.
      if (defines(param, Slot::Dim, d)) continue;
      require_bound(dim, param, str_cat("dim ", d));
      add_assert(eq(shape_of(param, d), cast(DataType::int64(), dim)),
                 str_cat(label, " dim ", d, " must be ", explain(dim)));
    }
    check_strides(param, buffer);
    bind_data(param, buffer);
  }

  void check_strides(const Var& param, const Buffer& buffer) {
    std::string label = arg_label(param);
    int rank = buffer->ndim();
    if (buffer->strides.empty()) {
      // Strides of extent-1 dimensions are never used, and frameworks report anything there.
      PrimExpr all_compact = const_true();
      std::vector<PrimExpr> compact = buffer->effective_strides();
      for (int d = 0; d < rank; ++d) {
        if (is_one(buffer->shape[d])) continue;
        PrimExpr ok = eq(actual_stride(param, rank, d), cast(DataType::int64(), compact[d]));
        all_compact = is_one(all_compact) ? ok : logical_and(all_compact, ok);
      }
      add_assert(all_compact, str_cat(label, " must be compact (row-major strides)"));
      return;
    }
    for (int d = 0; d < rank; ++d) {
      const PrimExpr& stride = buffer->strides[d];
      if (defines(param, Slot::Stride, d)) continue;
      require_bound(stride, param, str_cat("stride ", d));
      add_assert(eq(actual_stride(param, rank, d), cast(DataType::int64(), stride)),
                 str_cat(label, " stride ", d, " must be ", explain(stride)));
    }
  }

  void bind_data(const Var& param, const Buffer& buffer) {
    std::string label = arg_label(param);
    PrimExpr data = builtin(DataType::handle(), "anvil.dltensor_data", {param});
    PrimExpr byte_offset = builtin(DataType::int64(), "anvil.dltensor_byte_offset", {param});
    int64_t elem_bytes = buffer->dtype.bytes();
    if (!is_zero(buffer->elem_offset)) {
      // The body indexes from the allocation's start plus elem_offset, so the
      // pointer handed over must be the untouched data pointer.
      require_bound(buffer->elem_offset, param, "element offset");
      if (defines(param, Slot::ElemOffset, 0)) {
        add_assert(eq(truncmod(byte_offset, make_int(elem_bytes)), make_int(0)),
                   str_cat(label, " byte offset must be a multiple of ", elem_bytes));
      } else {
        add_assert(eq(byte_offset, cast(DataType::int64(), buffer->elem_offset) * elem_bytes),
                   str_cat(label, " element offset must be ", explain(buffer->elem_offset)));
      }
    } else {
      data = builtin(DataType::handle(), "anvil.handle_add_bytes", {data, byte_offset});
    }
    if (bound_.count(buffer->data.get())) return;  // two parameters viewing one buffer
    add_let(buffer->data, data);
  }

  PrimExpr dtype_matches(const Var& param, DataType dtype) {
    PrimExpr code = builtin(kInt32, "anvil.dltensor_dtype_code", {param});
    PrimExpr bits = builtin(kInt32, "anvil.dltensor_dtype_bits", {param});
    PrimExpr lanes = builtin(kInt32, "anvil.dltensor_dtype_lanes", {param});
    auto exact = [&](int64_t c, int64_t b) {
      return logical_and(eq(code, make_int(c, kInt32)), eq(bits, make_int(b, kInt32)));
    };
    PrimExpr ok = exact(dtype.code, dtype.bits);
    // bool arrives as TVM's uint1 or as DLPack's own one-byte bool.
    if (dtype.is_bool()) ok = logical_or(ok, exact(kDLTypeCodeBool, 8));
    return logical_and(ok, eq(lanes, make_int(dtype.lanes, kInt32)));
  }

  PrimExpr shape_of(const Var& param, int d) const {
    return builtin(DataType::int64(), "anvil.dltensor_shape", {param, make_int(d)});
  }

  // The tensor's stride d in elements; a tensor without strides is compact,
  // and its strides pointer must not be read.
  PrimExpr actual_stride(const Var& param, int rank, int d) const {
    PrimExpr compact = make_int(1);
    for (int k = d + 1; k < rank; ++k) compact = compact * shape_of(param, k);
    PrimExpr has_strides = builtin(DataType::boolean(), "anvil.dltensor_has_strides", {param});
    return builtin(
        DataType::int64(), "if_then_else",
        {has_strides, builtin(DataType::int64(), "anvil.dltensor_stride", {param, make_int(d)}),
         compact});
  }

  // A shape expression whose variables never appear bare cannot be solved for.
  // Variables a Let inside the expression binds (a broadcast's compound operands) are its own.
  void require_bound(const PrimExpr& e, const Var& param, const std::string& where) const {
    std::set<const VarNode*> let_bound;
    pre_order_visit(e, [&](const PrimExpr& sub) {
      if (const auto* let = as<LetNode>(sub)) let_bound.insert(let->var.get());
    });
    pre_order_visit(e, [&](const PrimExpr& sub) {
      const auto* var = as<VarNode>(sub);
      if (!var || bound_.count(var) || let_bound.count(var)) return;
      throw_error("make_packed_api: ", name_, ": variable '", var->name, "' in ", where,
                  " of argument '", param->name,
                  "' is not defined: it must appear alone as some argument's dimension");
    });
  }

  // "n (= A dim 1)", "16", "(n * 2) (n = A dim 1)".
  std::string explain(const PrimExpr& e) const {
    if (const auto* var = as<VarNode>(e)) {
      auto it = origin_.find(var);
      if (it != origin_.end()) return str_cat(var->name, " (= ", it->second, ")");
      return var->name;
    }
    std::string text = describe(e);
    std::vector<std::string> notes;
    std::unordered_set<const VarNode*> seen;
    pre_order_visit(e, [&](const PrimExpr& sub) {
      const auto* var = as<VarNode>(sub);
      if (!var || !seen.insert(var).second) return;
      auto it = origin_.find(var);
      if (it != origin_.end()) notes.push_back(str_cat(var->name, " = ", it->second));
    });
    if (notes.empty()) return text;
    std::string joined;
    for (const std::string& note : notes) joined += (joined.empty() ? "" : ", ") + note;
    return str_cat(text, " (", joined, ")");
  }

  const PrimFunc& func_;
  std::string name_;
  Var args_, type_codes_, num_args_, ret_value_, ret_type_code_;
  std::vector<EntryStep> entry_;
  std::unordered_set<const VarNode*> bound_;
  std::unordered_map<const VarNode*, std::string> origin_;
  std::set<SlotKey> defined_at_;
};

}  // namespace

PrimFunc make_packed_api(const PrimFunc& func) {
  if (const ir::AttrValue* conv = func->func_attrs.find("calling_conv")) {
    const auto* text = std::get_if<std::string>(conv);
    if (text && *text == "packed") return func;
  }
  return PackedApiBuilder(func).run();
}

}  // namespace anvil::tir::transform
