// Test helpers for the arithmetic analyzer: a small infix printer for
// hand-written expectations and an integer evaluator used as the oracle of
// the randomized tests. Both are written independently of src/tir/arith.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "anvil/tir/tir.h"

namespace anvil::tir::testing {

// Infix text with the usual precedences: "i * 4 + j", "floordiv(x, 8)",
// "x < 4 && y >= 2", "select(c, a, b)". Vectors print as ramp(b, s, n) and
// broadcast(v, n).
inline std::string show(const PrimExpr& e);

namespace detail {

inline int precedence(ExprKind kind) {
  switch (kind) {
    case ExprKind::Or:
      return 1;
    case ExprKind::And:
      return 2;
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      return 3;
    case ExprKind::Add:
    case ExprKind::Sub:
      return 4;
    case ExprKind::Mul:
      return 5;
    default:
      return 10;
  }
}

inline const char* infix_symbol(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add:
      return " + ";
    case ExprKind::Sub:
      return " - ";
    case ExprKind::Mul:
      return " * ";
    case ExprKind::EQ:
      return " == ";
    case ExprKind::NE:
      return " != ";
    case ExprKind::LT:
      return " < ";
    case ExprKind::LE:
      return " <= ";
    case ExprKind::GT:
      return " > ";
    case ExprKind::GE:
      return " >= ";
    case ExprKind::And:
      return " && ";
    case ExprKind::Or:
      return " || ";
    default:
      return nullptr;
  }
}

inline const char* call_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::Div:
      return "truncdiv";
    case ExprKind::Mod:
      return "truncmod";
    case ExprKind::FloorDiv:
      return "floordiv";
    case ExprKind::FloorMod:
      return "floormod";
    case ExprKind::Min:
      return "min";
    case ExprKind::Max:
      return "max";
    default:
      return nullptr;
  }
}

template <typename Node>
std::pair<PrimExpr, PrimExpr> operands(const PrimExpr& e) {
  const auto* n = static_cast<const Node*>(e.get());
  return {n->a, n->b};
}

inline std::pair<PrimExpr, PrimExpr> binary_operands(const PrimExpr& e) {
  switch (e->kind) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name) \
  case ExprKind::Name:         \
    return operands<Name##Node>(e);
#include "anvil/tir/node_kinds.def"
    default:
      return {};
  }
}

inline std::string wrap_if(const PrimExpr& e, bool paren) {
  std::string s = show(e);
  return paren ? "(" + s + ")" : s;
}

}  // namespace detail

inline std::string show(const PrimExpr& e) {
  if (!e) return "<null>";
  switch (e->kind) {
    case ExprKind::IntImm: {
      const auto* n = as<IntImmNode>(e);
      if (n->dtype.is_bool()) return n->value ? "true" : "false";
      return std::to_string(n->value);
    }
    case ExprKind::FloatImm: {
      std::string s = std::to_string(as<FloatImmNode>(e)->value);
      return s + "f";
    }
    case ExprKind::Var:
      return as<VarNode>(e)->name;
    case ExprKind::Not:
      return "!" + detail::wrap_if(as<NotNode>(e)->a, true);
    case ExprKind::Select: {
      const auto* n = as<SelectNode>(e);
      return "select(" + show(n->condition) + ", " + show(n->true_value) + ", " +
             show(n->false_value) + ")";
    }
    case ExprKind::Cast:
      return as<CastNode>(e)->dtype.to_string() + "(" + show(as<CastNode>(e)->value) + ")";
    case ExprKind::Ramp: {
      const auto* n = as<RampNode>(e);
      return "ramp(" + show(n->base) + ", " + show(n->stride) + ", " + std::to_string(n->lanes) +
             ")";
    }
    case ExprKind::Broadcast: {
      const auto* n = as<BroadcastNode>(e);
      return "broadcast(" + show(n->value) + ", " + std::to_string(n->lanes) + ")";
    }
    case ExprKind::BufferLoad: {
      const auto* n = as<BufferLoadNode>(e);
      std::string s = n->buffer->name + "[";
      for (size_t i = 0; i < n->indices.size(); ++i) s += (i ? ", " : "") + show(n->indices[i]);
      return s + "]";
    }
    case ExprKind::Call: {
      const auto* n = as<CallNode>(e);
      std::string s = n->op + "(";
      for (size_t i = 0; i < n->args.size(); ++i) s += (i ? ", " : "") + show(n->args[i]);
      return s + ")";
    }
    case ExprKind::Let: {
      const auto* n = as<LetNode>(e);
      return "let " + n->var->name + " = " + show(n->value) + " in " + show(n->body);
    }
    default:
      break;
  }
  auto [a, b] = detail::binary_operands(e);
  if (!a) return std::string("<") + expr_kind_name(e->kind) + ">";
  if (const char* name = detail::call_name(e->kind))
    return std::string(name) + "(" + show(a) + ", " + show(b) + ")";
  int p = detail::precedence(e->kind);
  bool left_paren = detail::precedence(a->kind) < p;
  bool right_paren = detail::precedence(b->kind) <= p;
  return detail::wrap_if(a, left_paren) + detail::infix_symbol(e->kind) +
         detail::wrap_if(b, right_paren);
}

// Raised by evaluate() on division by zero.
struct DivisionByZero : std::runtime_error {
  DivisionByZero() : std::runtime_error("division by zero") {}
};

using Env = std::map<const VarNode*, int64_t>;

inline int64_t wrap_to_type(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t bits = uint64_t(v) & mask;
  if (t.is_int() && ((bits >> (t.bits - 1)) & 1)) bits |= ~mask;
  return int64_t(bits);
}

// The value of an integer or bool expression with vars taken from env, in
// vector lane `lane` (ramps and broadcasts give each lane its value). Floor
// division rounds toward negative infinity; trunc toward zero.
inline int64_t evaluate(const PrimExpr& e, const Env& env, int lane = 0) {
  auto fdiv = [](int64_t a, int64_t b) {
    if (b == 0) throw DivisionByZero();
    int64_t q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) --q;
    return q;
  };
  DataType t = e.dtype().element_of();
  switch (e->kind) {
    case ExprKind::IntImm:
      return as<IntImmNode>(e)->value;
    case ExprKind::Var: {
      auto it = env.find(as<VarNode>(e));
      if (it == env.end()) throw std::runtime_error("unbound variable " + as<VarNode>(e)->name);
      return it->second;
    }
    case ExprKind::Not:
      return !evaluate(as<NotNode>(e)->a, env, lane);
    case ExprKind::Select: {
      const auto* n = as<SelectNode>(e);
      // Both sides are evaluated, as the IR defines.
      int64_t tv = evaluate(n->true_value, env, lane), fv = evaluate(n->false_value, env, lane);
      int cond_lane = n->condition.dtype().lanes == 1 ? 0 : lane;
      return evaluate(n->condition, env, cond_lane) ? tv : fv;
    }
    case ExprKind::Cast:
      return wrap_to_type(t, evaluate(as<CastNode>(e)->value, env, lane));
    case ExprKind::Let: {
      const auto* n = as<LetNode>(e);
      Env inner = env;
      inner[n->var.get()] = evaluate(n->value, env, 0);
      return evaluate(n->body, inner, lane);
    }
    case ExprKind::Ramp: {
      const auto* n = as<RampNode>(e);
      return evaluate(n->base, env) + lane * evaluate(n->stride, env);
    }
    case ExprKind::Broadcast:
      return evaluate(as<BroadcastNode>(e)->value, env);
    default:
      break;
  }
  auto [a_expr, b_expr] = detail::binary_operands(e);
  if (!a_expr) throw std::runtime_error(std::string("cannot evaluate ") + expr_kind_name(e->kind));
  int64_t a = evaluate(a_expr, env, lane), b = evaluate(b_expr, env, lane);
  switch (e->kind) {
    case ExprKind::Add:
      return wrap_to_type(t, int64_t(uint64_t(a) + uint64_t(b)));
    case ExprKind::Sub:
      return wrap_to_type(t, int64_t(uint64_t(a) - uint64_t(b)));
    case ExprKind::Mul:
      return wrap_to_type(t, int64_t(uint64_t(a) * uint64_t(b)));
    case ExprKind::Div:
      if (b == 0) throw DivisionByZero();
      return a / b;
    case ExprKind::Mod:
      if (b == 0) throw DivisionByZero();
      return a % b;
    case ExprKind::FloorDiv:
      return fdiv(a, b);
    case ExprKind::FloorMod:
      return a - fdiv(a, b) * b;
    case ExprKind::Min:
      return std::min(a, b);
    case ExprKind::Max:
      return std::max(a, b);
    case ExprKind::EQ:
      return a == b;
    case ExprKind::NE:
      return a != b;
    case ExprKind::LT:
      return a < b;
    case ExprKind::LE:
      return a <= b;
    case ExprKind::GT:
      return a > b;
    case ExprKind::GE:
      return a >= b;
    case ExprKind::And:
      return a && b;
    case ExprKind::Or:
      return a || b;
    default:
      throw std::runtime_error("cannot evaluate");
  }
}

}  // namespace anvil::tir::testing
