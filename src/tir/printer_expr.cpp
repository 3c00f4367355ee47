// Expressions of the tensor IR text: Python operators at Python precedence,
// typed immediates, T.* calls, and the names of variables and buffers.
#include <charconv>
#include <cmath>

#include "anvil/support/error.h"
#include "anvil/tir/intrinsics.h"
#include "tir/text_lexer.h"
#include "tir/text_printer.h"

namespace anvil::tir::text {

std::optional<DataType> natural_intrinsic_dtype(std::string_view name,
                                                const std::vector<PrimExpr>& args) {
  const IntrinsicInfo* info = find_intrinsic(name);
  if (!info || name.find('.') != std::string_view::npos) return std::nullopt;
  if (info->num_args >= 0 && int(args.size()) != info->num_args) return std::nullopt;
  switch (info->intrinsic_class) {
    case IntrinsicClass::FloatMath:
      return args.empty() ? std::nullopt : std::optional(args[0].dtype());
    case IntrinsicClass::FloatTest:
      return args.empty() ? std::nullopt
                          : std::optional(DataType::boolean().with_lanes(args[0].dtype().lanes));
    case IntrinsicClass::Builtin:
      if (name == "likely") return args[0].dtype();
      if (name == "address_of") return DataType::handle();
      if (name == "if_then_else") return args[1].dtype();
      return std::nullopt;
  }
  return std::nullopt;
}

std::string format_double(double value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

// ---------------------------------------------------------------- names

std::string TirPrinter::fresh_name(const std::string& hint) {
  std::string base = sanitize_name(hint);
  std::string name = base;
  for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  used_names_.insert(name);
  return name;
}

std::string TirPrinter::define_var(const VarNode* var) {
  defined_vars_.insert(var);
  auto it = var_names_.find(var);
  if (it != var_names_.end()) return it->second;
  return var_names_[var] = fresh_name(var->name);
}

std::string TirPrinter::var_name(const VarNode* var) {
  auto it = var_names_.find(var);
  if (it != var_names_.end()) return it->second;
  free_vars_.push_back(var);
  return var_names_[var] = fresh_name(var->name);
}

std::string TirPrinter::define_buffer(const BufferNode* buffer) {
  declared_buffers_.insert(buffer);
  auto it = buffer_names_.find(buffer);
  std::string name =
      it != buffer_names_.end() ? it->second : (buffer_names_[buffer] = fresh_name(buffer->name));
  if (!var_names_.count(buffer->data.get())) {
    var_names_[buffer->data.get()] = name + ".data";
    defined_vars_.insert(buffer->data.get());
  }
  return name;
}

std::string TirPrinter::buffer_name(const BufferNode* buffer) {
  auto it = buffer_names_.find(buffer);
  if (it != buffer_names_.end()) return it->second;
  return buffer_names_[buffer] = fresh_name(buffer->name);
}

// ---------------------------------------------------------------- expressions

std::string TirPrinter::expr_at(const PrimExpr& e, int min_prec) {
  int prec = kPrecAtom;
  std::string text = expr_prec(e, prec);
  return prec < min_prec ? "(" + text + ")" : text;
}

std::string TirPrinter::immediate(const PrimExpr& e, int& prec) {
  DataType t = e.dtype();
  if (const auto* imm = as<IntImmNode>(e)) {
    if (t.is_bool()) return imm->value ? "True" : "False";
    std::string digits = t.is_uint() && t.bits == 64 ? std::to_string(uint64_t(imm->value))
                                                     : std::to_string(imm->value);
    if (t == kIndexType) {
      if (imm->value < 0) prec = kPrecUnary;
      return digits;
    }
    return dtype_ref(t) + "(" + digits + ")";
  }
  if (const auto* imm = as<FloatImmNode>(e)) {
    std::string value;
    if (std::isnan(imm->value))
      value = "\"nan\"";
    else if (std::isinf(imm->value))
      value = imm->value > 0 ? "\"inf\"" : "\"-inf\"";
    else
      value = format_double(imm->value);
    return dtype_ref(t) + "(" + value + ")";
  }
  return quote_string(as<StringImmNode>(e)->value);
}

std::string TirPrinter::binary(const PrimExprNode* node, int& prec) {
  const PrimExpr* operand_a = nullptr;
  const PrimExpr* operand_b = nullptr;
  binary_operands(node, operand_a, operand_b);
  const PrimExpr& a = *operand_a;
  const PrimExpr& b = *operand_b;
  auto call2 = [&](const char* fn) {
    return std::string(fn) + "(" + expr(a) + ", " + expr(b) + ")";
  };
  auto infix = [&](const char* op, int p, bool non_associative) {
    prec = p;
    return expr_at(a, non_associative ? p + 1 : p) + " " + op + " " + expr_at(b, p + 1);
  };
  bool is_float = node->dtype.is_float() || node->dtype.is_bfloat();
  switch (node->kind) {
    case ExprKind::Add:
      return infix("+", kPrecAdd, false);
    case ExprKind::Sub:
      return infix("-", kPrecAdd, false);
    case ExprKind::Mul:
      return infix("*", kPrecMul, false);
    case ExprKind::Div:
      return is_float ? infix("/", kPrecMul, false) : call2("T.truncdiv");
    case ExprKind::Mod:
      return call2("T.truncmod");
    case ExprKind::FloorDiv:
      return infix("//", kPrecMul, false);
    case ExprKind::FloorMod:
      return infix("%", kPrecMul, false);
    case ExprKind::Min:
      return call2("T.min");
    case ExprKind::Max:
      return call2("T.max");
    case ExprKind::EQ:
      return infix("==", kPrecCompare, true);
    case ExprKind::NE:
      return infix("!=", kPrecCompare, true);
    case ExprKind::LT:
      return infix("<", kPrecCompare, true);
    case ExprKind::LE:
      return infix("<=", kPrecCompare, true);
    case ExprKind::GT:
      return infix(">", kPrecCompare, true);
    case ExprKind::GE:
      return infix(">=", kPrecCompare, true);
    case ExprKind::And:
      return infix("and", kPrecAnd, false);
    case ExprKind::Or:
      return infix("or", kPrecOr, false);
    default:
      ANVIL_ICHECK(false, "not a binary node: ", expr_kind_name(node->kind));
  }
  return "";
}

std::string TirPrinter::call(const CallNode* node) {
  std::string args;
  for (const PrimExpr& a : node->args) args += ", " + expr(a);
  std::string dtype = quote_string(node->dtype.to_string());
  if (node->call_kind == CallKind::Extern)
    return "T.call_extern(" + dtype + ", " + quote_string(node->op) + args + ")";
  if (node->op == "reinterpret" && node->args.size() == 1)
    return "T.reinterpret(" + dtype + args + ")";
  std::optional<DataType> natural = natural_intrinsic_dtype(node->op, node->args);
  if (natural && *natural == node->dtype)
    return "T." + node->op + "(" + (args.empty() ? args : args.substr(2)) + ")";
  return "T.call_intrin(" + dtype + ", " + quote_string(node->op) + args + ")";
}

std::string TirPrinter::reduce(const ReduceNode* node) {
  static const char* kCombiners[] = {"sum", "prod", "min", "max"};
  std::string axes;
  for (const IterVar& iv : node->axis) {
    std::string range = dom_text(iv.dom);
    if (!axes.empty()) axes += ", ";
    axes += define_var(iv.var.get()) + " in range(" +
            (range[0] == '(' ? range.substr(1, range.size() - 2) : range) + ")";
  }
  std::string text = "T.reduce(\"" + std::string(kCombiners[int(node->combiner)]) + "\", " +
                     expr(node->source) + ", axis=[" + axes + "]";
  if (node->condition) text += ", where=" + expr(node->condition);
  return text + ")";
}

std::string TirPrinter::expr_prec(const PrimExpr& e, int& prec) {
  prec = kPrecAtom;
  ANVIL_ICHECK(e, "printing a null expression");
  switch (e->kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::StringImm:
      return immediate(e, prec);
    case ExprKind::Var:
      return var_name(as<VarNode>(e));
    case ExprKind::Not:
      prec = kPrecNot;
      return "not " + expr_at(as<NotNode>(e)->a, kPrecNot);
    case ExprKind::Select: {
      const auto* n = as<SelectNode>(e);
      return "T.Select(" + expr(n->condition) + ", " + expr(n->true_value) + ", " +
             expr(n->false_value) + ")";
    }
    case ExprKind::Cast: {
      const auto* n = as<CastNode>(e);
      return "T.Cast(" + quote_string(n->dtype.to_string()) + ", " + expr(n->value) + ")";
    }
    case ExprKind::BufferLoad: {
      const auto* n = as<BufferLoadNode>(e);
      std::string text = buffer_name(n->buffer.get()) + "[";
      if (n->indices.empty()) text += "()";
      for (size_t i = 0; i < n->indices.size(); ++i) text += (i ? ", " : "") + expr(n->indices[i]);
      return text + "]";
    }
    case ExprKind::Ramp: {
      const auto* n = as<RampNode>(e);
      return "T.Ramp(" + expr(n->base) + ", " + expr(n->stride) + ", " + std::to_string(n->lanes) +
             ")";
    }
    case ExprKind::Broadcast: {
      const auto* n = as<BroadcastNode>(e);
      return "T.Broadcast(" + expr(n->value) + ", " + std::to_string(n->lanes) + ")";
    }
    case ExprKind::Let: {
      const auto* n = as<LetNode>(e);
      std::string value = expr(n->value);
      std::string name = define_var(n->var.get());
      return "T.Let(" + name + ", " + value + ", " + expr(n->body) + ")";
    }
    case ExprKind::Call:
      return call(as<CallNode>(e));
    case ExprKind::Reduce:
      return reduce(as<ReduceNode>(e));
    default:
      return binary(e.get(), prec);
  }
}

}  // namespace anvil::tir::text
