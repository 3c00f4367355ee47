// Expressions of the C back end: each tensor-IR expression becomes one C expression; a vector
// expression is printed as its value at one lane (see c_function.h).
#include <string_view>
#include <utility>

#include "anvil/support/error.h"
#include "anvil/tir/intrinsics.h"
#include "c_function.h"

namespace anvil::codegen::c_backend {

using namespace tir;

namespace {

std::string paren(const std::string& s) { return "(" + s + ")"; }

// The operands of a binary node (every kind listed with ANVIL_TIR_BINARY).
std::pair<const PrimExpr*, const PrimExpr*> binary_operands(const PrimExprNode* node) {
  const PrimExpr *a = nullptr, *b = nullptr;
  tir::binary_operands(node, a, b);
  ANVIL_ICHECK(a && b, "C back end: ", expr_kind_name(node->kind), " is not binary");
  return {a, b};
}

bool is_narrow_int(DataType t) { return (t.is_int() || t.is_uint()) && t.bits < 32; }

// The tensor-IR math intrinsics that are <math.h> functions of the same name.
bool is_libm_function(std::string_view op) {
  static const char* const kNames[] = {
      "exp",   "exp2", "log",   "log2", "log10", "sqrt", "tanh",     "erf",   "sin",   "cos",
      "tan",   "asin", "acos",  "atan", "sinh",  "cosh", "asinh",    "acosh", "atanh", "fabs",
      "floor", "ceil", "trunc", "pow",  "atan2", "fmod", "copysign", "fma"};
  for (const char* name : kNames)
    if (op == name) return true;
  return false;
}

}  // namespace

std::string FunctionEmitter::print(const PrimExpr& e, const std::string& lane) {
  ANVIL_ICHECK(e, "C back end: null expression");
  ANVIL_ICHECK(e.dtype().lanes == 1 || !lane.empty(),
               "C back end: vector expression outside a lane loop");
  switch (e.kind()) {
    case ExprKind::IntImm:
      return int_literal(e.dtype(), as<IntImmNode>(e)->value);
    case ExprKind::FloatImm:
      return float_literal(e.dtype(), as<FloatImmNode>(e)->value);
    case ExprKind::StringImm:
      return string_literal(as<StringImmNode>(e)->value);
    case ExprKind::Var:
      return print_var(as<VarNode>(e), lane);
    case ExprKind::Not:
      return paren("!" + print(as<NotNode>(e)->a, lane));
    case ExprKind::Select: {
      const auto* s = as<SelectNode>(e);
      return paren(print(s->condition, lane) + " ? " + print(s->true_value, lane) + " : " +
                   print(s->false_value, lane));
    }
    case ExprKind::Cast: {
      const auto* c = as<CastNode>(e);
      return print_cast(c->dtype, c->value, lane);
    }
    case ExprKind::BufferLoad:
      return print_load(as<BufferLoadNode>(e), lane);
    case ExprKind::Ramp: {
      const auto* r = as<RampNode>(e);
      DataType t = r->dtype.element_of();
      std::string offset = "(" + value_type(t) + ")" + lane;
      if (!is_one(r->stride)) offset += " * " + print(r->stride);
      return fit(t, paren(print(r->base) + " + " + offset));
    }
    case ExprKind::Broadcast:
      return print(as<BroadcastNode>(e)->value);
    case ExprKind::Let: {
      const auto* let = as<LetNode>(e);
      if (hoisted_lets_.count(let)) return print(let->body, lane);
      // Under a lazily evaluated branch: the value is substituted where the variable is read.
      bind(let->var.get(), Binding{"", false, let->value});
      std::string text = print(let->body, lane);
      unbind(let->var.get());
      return text;
    }
    case ExprKind::Call:
      return print_call(as<CallNode>(e), lane);
    case ExprKind::Reduce:
      throw_error("C back end: function '", func_name_,
                  "' is not lowered: it holds a reduction expression");
    default:
      ANVIL_ICHECK(is_binary(e.kind()), "C back end: unexpected expression ",
                   expr_kind_name(e.kind()));
      return print_binary(e.get(), lane);
  }
}

std::string FunctionEmitter::print_var(const VarNode* var, const std::string& lane) {
  const Binding& b = lookup(var);
  if (b.inlined) {
    // The value is read in the scope of its Let, where the variable itself is not yet bound.
    Binding substituted = b;
    unbind(var);
    std::string text = print(substituted.inlined, lane);
    bindings_[var].push_back(std::move(substituted));
    return paren(text);
  }
  if (b.is_array) {
    ANVIL_ICHECK(!lane.empty(), "C back end: vector variable '", var->name, "' read as a scalar");
    return b.name + "[" + lane + "]";
  }
  return b.name;
}

std::string FunctionEmitter::fit(DataType dtype, const std::string& value) {
  dtype = dtype.element_of();
  if (is_half_like(dtype)) return file_.helpers.use("round", dtype) + paren(value);
  if (is_narrow_int(dtype)) return paren("(" + value_type(dtype) + ")" + value);
  return value;
}

std::string FunctionEmitter::print_binary(const PrimExprNode* node, const std::string& lane) {
  auto [lhs, rhs] = binary_operands(node);
  DataType t = lhs->dtype().element_of();
  std::string a = print(*lhs, lane);
  std::string b = print(*rhs, lane);
  // Narrow unsigned operands would promote to (signed) int, where a product may overflow.
  if (t.is_uint() && t.bits < 32) {
    a = "(uint32_t)" + a;
    b = "(uint32_t)" + b;
  }
  auto arith = [&](const char* op) { return fit(t, paren(a + " " + op + " " + b)); };
  auto compare = [&](const char* op) { return paren(a + " " + op + " " + b); };
  auto helper = [&](const char* op) {
    return fit(t, file_.helpers.use(op, t) + "(" + a + ", " + b + ")");
  };
  bool is_float = t.is_float() || t.is_bfloat();
  switch (node->kind) {
    case ExprKind::Add:
      return arith("+");
    case ExprKind::Sub:
      return arith("-");
    case ExprKind::Mul:
      return arith("*");
    case ExprKind::Div:
      return arith("/");
    case ExprKind::Mod:
      if (is_float) return fit(t, (t.bits == 64 ? "fmod(" : "fmodf(") + a + ", " + b + ")");
      return arith("%");
    case ExprKind::FloorDiv:
      return t.is_uint() ? arith("/") : helper("floordiv");
    case ExprKind::FloorMod:
      return t.is_uint() ? arith("%") : helper("floormod");
    case ExprKind::Min:
      return helper("min");
    case ExprKind::Max:
      return helper("max");
    case ExprKind::EQ:
      return compare("==");
    case ExprKind::NE:
      return compare("!=");
    case ExprKind::LT:
      return compare("<");
    case ExprKind::LE:
      return compare("<=");
    case ExprKind::GT:
      return compare(">");
    case ExprKind::GE:
      return compare(">=");
    case ExprKind::And:
      return compare("&&");
    case ExprKind::Or:
      return compare("||");
    default:
      ANVIL_ICHECK(false, "C back end: unexpected binary kind ", expr_kind_name(node->kind));
  }
  return "";
}

std::string FunctionEmitter::print_cast(DataType to, const PrimExpr& value,
                                        const std::string& lane) {
  DataType from = value.dtype().element_of();
  to = to.element_of();
  std::string v = print(value, lane);
  if (from == to) return v;
  if (to.is_bool()) return paren(v + (from.is_handle() ? " != NULL" : " != 0"));
  if (to.is_handle()) return paren("(void*)(intptr_t)" + v);
  if (from.is_handle()) return paren("(" + value_type(to) + ")(intptr_t)" + v);
  if (is_half_like(to)) return file_.helpers.use("round", to) + "((float)" + v + ")";
  return paren("(" + value_type(to) + ")" + v);
}

std::string FunctionEmitter::element_lvalue(const Buffer& buffer, const std::string& index) {
  if (buffer->dtype.lanes != 1)
    throw_error("C back end: buffer '", buffer->name, "' of vector type ",
                buffer->dtype.to_string(), " is not supported");
  return "((" + storage_type(buffer->dtype) + "*)" + print_var(buffer->data.get(), "") + ")[" +
         index + "]";
}

std::string FunctionEmitter::to_storage(DataType dtype, const std::string& value) {
  dtype = dtype.element_of();
  if (dtype.is_bool()) return "(uint8_t)" + value;
  if (is_half_like(dtype)) return file_.helpers.use("to_bits", dtype) + paren(value);
  return value;
}

std::string FunctionEmitter::print_load(const BufferLoadNode* load, const std::string& lane) {
  if (load->indices.size() != 1)
    throw_error("C back end: function '", func_name_, "' is not flattened: buffer '",
                load->buffer->name, "' is read with ", load->indices.size(), " indices");
  std::string element = element_lvalue(load->buffer, print(load->indices[0], lane));
  DataType t = load->buffer->dtype;
  if (t.is_bool()) return paren(element + " != 0");
  if (is_half_like(t)) return file_.helpers.use("from_bits", t) + paren(element);
  return element;
}

std::string FunctionEmitter::print_call(const CallNode* call, const std::string& lane) {
  if (call->call_kind == CallKind::Extern) {
    std::string args, types;
    for (const PrimExpr& a : call->args) {
      if (!args.empty()) args += ", ";
      if (!types.empty()) types += ", ";
      args += print(a, lane);
      types += a.kind() == ExprKind::StringImm ? "const char*" : value_type(a.dtype());
    }
    // Functions of <math.h> (and this file's own plain functions) are declared already.
    if (!file_.extern_prototypes.count(call->op) && !file_.declared_functions.count(call->op))
      file_.extern_prototypes[call->op] = str_cat("extern ", value_type(call->dtype), " ", call->op,
                                                  "(", types.empty() ? "void" : types, ");");
    return call->op + "(" + args + ")";
  }
  const IntrinsicInfo* info = find_intrinsic(call->op);
  ANVIL_ICHECK(info, "C back end: unknown intrinsic ", call->op);
  switch (info->intrinsic_class) {
    case IntrinsicClass::FloatMath:
      return print_math(call, lane);
    case IntrinsicClass::FloatTest:
      return paren(call->op + "(" + print(call->args[0], lane) + ") != 0");
    case IntrinsicClass::Builtin:
      return print_builtin(call, lane);
  }
  return "";
}

std::string FunctionEmitter::print_math(const CallNode* call, const std::string& lane) {
  DataType t = call->dtype.element_of();
  if (!(t.is_float() || t.is_bfloat()))
    throw_error("C back end: math intrinsic '", call->op, "' of non-float type ", t.to_string());
  std::vector<std::string> args;
  for (const PrimExpr& a : call->args) args.push_back(print(a, lane));
  // double functions are unsuffixed; float, float16 and bfloat16 compute in float.
  std::string suffix = t.bits == 64 ? "" : "f";
  std::string one = t.bits == 64 ? "1.0" : "1.0f";
  std::string result;
  if (call->op == "rsqrt") {
    result = paren(one + " / sqrt" + suffix + "(" + args[0] + ")");
  } else if (call->op == "sigmoid") {
    result = paren(one + " / (" + one + " + exp" + suffix + "(-" + args[0] + "))");
  } else if (call->op == "mul_unfused") {
    // The generated C is compiled as ISO C99, which does not contract a * b + c.
    result = paren(args[0] + " * " + args[1]);
  } else if (call->op == "round") {
    // nearbyint rounds halfway cases to even in the default rounding mode (round() would not).
    result = "nearbyint" + suffix + "(" + args[0] + ")";
  } else {
    ANVIL_ICHECK(is_libm_function(call->op), "C back end: no C function for intrinsic ", call->op);
    result = call->op + suffix + "(";
    for (size_t i = 0; i < args.size(); ++i) result += (i ? ", " : "") + args[i];
    result += ")";
  }
  return is_half_like(t) ? fit(t, result) : result;
}

std::string FunctionEmitter::print_builtin(const CallNode* call, const std::string& lane) {
  const std::string& op = call->op;
  auto arg = [&](size_t i) { return print(call->args[i], lane); };
  auto tensor = [&]() { return "((DLTensor*)" + arg(0) + ")"; };
  auto typed = [&](const std::string& value) {
    return paren("(" + value_type(call->dtype) + ")" + value);
  };
  if (op == "likely") return arg(0);
  if (op == "if_then_else")  // C's ?: evaluates only the side taken, as required
    return paren(arg(0) + " ? " + arg(1) + " : " + arg(2));
  if (op == "prefetch") return "((void)0)";
  if (op == "address_of") {
    const auto* load = as<BufferLoadNode>(call->args[0]);
    if (!load || load->indices.size() != 1)
      throw_error("C back end: address_of in function '", func_name_,
                  "' needs a one-dimensional buffer element");
    // The address of a vector access is the address of its first lane.
    const PrimExpr& index = load->indices[0];
    std::string first;
    if (const auto* r = as<RampNode>(index))
      first = print(r->base);
    else
      first = print(index, index.dtype().lanes > 1 ? "0" : "");
    return paren("(void*)&" + element_lvalue(load->buffer, first));
  }
  if (op == "round_to_int32")  // nearbyint: ties to even in the default rounding mode
    return paren("(int32_t)nearbyint" + std::string(call->args[0].dtype().bits == 64 ? "" : "f") +
                 "(" + arg(0) + ")");
  if (op == "reinterpret") {
    DataType from = call->args[0].dtype().element_of();
    DataType to = call->dtype.element_of();
    if (from.bits != to.bits)
      throw_error("C back end: reinterpret of ", from.to_string(), " as ", to.to_string(),
                  " changes the element width");
    if (from == to) return arg(0);
    return file_.helpers.use_reinterpret(from, to) + "(" + arg(0) + ")";
  }
  if (op == "u8i8_dot4_accumulate") {
    // Lane l: acc[l] + sum over k of a[k] * b[4l + k], wrapping as int32 (unsigned arithmetic
    // in C, where signed overflow is undefined).
    std::string sum = "(uint32_t)" + arg(0);
    for (int k = 0; k < 4; ++k) {
      std::string b_lane =
          lane.empty() ? std::to_string(k) : "(" + lane + ") * 4 + " + std::to_string(k);
      sum += " + (uint32_t)((int32_t)" + print(call->args[1], std::to_string(k)) + " * (int32_t)" +
             print(call->args[2], b_lane) + ")";
    }
    return paren("(int32_t)(" + sum + ")");
  }
  if (op == "bf16_dot2_accumulate") {
    // Lane l: acc[l] + a[1] * b[2l + 1], then + a[0] * b[2l], each a fused multiply-add of the
    // widened values (the products are exact in float).
    auto b_lane = [&](int k) {
      return lane.empty() ? std::to_string(k) : "(" + lane + ") * 2 + " + std::to_string(k);
    };
    std::string odd = "fmaf(" + print(call->args[1], "1") + ", " + print(call->args[2], b_lane(1)) +
                      ", " + arg(0) + ")";
    return "fmaf(" + print(call->args[1], "0") + ", " + print(call->args[2], b_lane(0)) + ", " +
           odd + ")";
  }
  if (op == "anvil.arg_int64")
    return paren("((const AnvilValue*)" + arg(0) + ")[" + arg(1) + "].v_int64");
  if (op == "anvil.arg_float64")
    return paren("((const AnvilValue*)" + arg(0) + ")[" + arg(1) + "].v_float64");
  if (op == "anvil.arg_handle")
    return paren("((const AnvilValue*)" + arg(0) + ")[" + arg(1) + "].v_handle");
  if (op == "anvil.arg_type_code") return typed("((const int32_t*)" + arg(0) + ")[" + arg(1) + "]");
  if (op == "anvil.dltensor_data") return paren(tensor() + "->data");
  if (op == "anvil.dltensor_byte_offset") return typed(tensor() + "->byte_offset");
  if (op == "anvil.dltensor_ndim") return typed(tensor() + "->ndim");
  if (op == "anvil.dltensor_shape") return typed(tensor() + "->shape[" + arg(1) + "]");
  if (op == "anvil.dltensor_has_strides") return paren(tensor() + "->strides != NULL");
  if (op == "anvil.dltensor_stride") return typed(tensor() + "->strides[" + arg(1) + "]");
  if (op == "anvil.dltensor_dtype_code") return typed(tensor() + "->dtype.code");
  if (op == "anvil.dltensor_dtype_bits") return typed(tensor() + "->dtype.bits");
  if (op == "anvil.dltensor_dtype_lanes") return typed(tensor() + "->dtype.lanes");
  if (op == "anvil.dltensor_device_type") return typed(tensor() + "->device.device_type");
  if (op == "anvil.handle_add_bytes")
    return paren("(void*)((char*)" + arg(0) + " + " + arg(1) + ")");
  if (op == "anvil.is_null") return paren(arg(0) + " == NULL");
  throw_error("C back end: intrinsic '", op, "' is not supported");
}

// ---------------------------------------------------------------- Let hoisting

void FunctionEmitter::hoist_lets(const PrimExpr& e, Hoisted& bound, bool lazily_evaluated) {
  if (!e || lazily_evaluated) return;  // lets under a lazy branch are substituted when printed
  switch (e.kind()) {
    case ExprKind::Let: {
      const auto* let = as<LetNode>(e);
      hoist_lets(let->value, bound);
      declare_var(let->var, let->value);
      bound.vars.push_back(let->var.get());
      bound.lets.push_back(let);
      hoisted_lets_.insert(let);
      hoist_lets(let->body, bound);
      return;
    }
    case ExprKind::Not:
      return hoist_lets(as<NotNode>(e)->a, bound);
    case ExprKind::Select: {
      const auto* s = as<SelectNode>(e);
      hoist_lets(s->condition, bound);
      hoist_lets(s->true_value, bound);
      return hoist_lets(s->false_value, bound);
    }
    case ExprKind::Cast:
      return hoist_lets(as<CastNode>(e)->value, bound);
    case ExprKind::BufferLoad:
      for (const PrimExpr& i : as<BufferLoadNode>(e)->indices) hoist_lets(i, bound);
      return;
    case ExprKind::Ramp:
      hoist_lets(as<RampNode>(e)->base, bound);
      return hoist_lets(as<RampNode>(e)->stride, bound);
    case ExprKind::Broadcast:
      return hoist_lets(as<BroadcastNode>(e)->value, bound);
    case ExprKind::Call: {
      const auto* call = as<CallNode>(e);
      bool lazy_branches = call->call_kind == CallKind::Intrinsic && call->op == "if_then_else";
      for (size_t i = 0; i < call->args.size(); ++i)
        hoist_lets(call->args[i], bound, lazy_branches && i > 0);
      return;
    }
    default:
      if (is_binary(e.kind())) {
        auto [lhs, rhs] = binary_operands(e.get());
        // The right side of && and || runs only when the left side lets it.
        bool lazy_right = e.kind() == ExprKind::And || e.kind() == ExprKind::Or;
        hoist_lets(*lhs, bound);
        hoist_lets(*rhs, bound, lazy_right);
      }
      return;
  }
}

}  // namespace anvil::codegen::c_backend
