// The structural order of expressions and small integer helpers. Canonical
// sums sort their terms with this order, so it must not depend on where
// nodes happen to live in memory: variables and buffers compare by name
// first, and only same-named distinct ones fall back to identity.
#include <bit>
#include <cstring>

#include "tir/arith/arith_internal.h"

namespace anvil::tir::arith {

namespace {

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_dtype(DataType a, DataType b) {
  if (int c = three_way(a.code, b.code)) return c;
  if (int c = three_way(a.bits, b.bits)) return c;
  return three_way(a.lanes, b.lanes);
}

int compare_named(const std::string& name_a, const void* a, const std::string& name_b,
                  const void* b) {
  if (a == b) return 0;
  if (int c = name_a.compare(name_b)) return c < 0 ? -1 : 1;
  return std::less<const void*>()(a, b) ? -1 : 1;
}

int compare_all(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (int c = three_way(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = compare_expr(a[i], b[i])) return c;
  return 0;
}

template <typename Node>
int compare_binary(const PrimExpr& a, const PrimExpr& b) {
  const auto* x = static_cast<const Node*>(a.get());
  const auto* y = static_cast<const Node*>(b.get());
  if (int c = compare_expr(x->a, y->a)) return c;
  return compare_expr(x->b, y->b);
}

}  // namespace

int compare_expr(const PrimExpr& a, const PrimExpr& b) {
  if (a.get() == b.get()) return 0;
  if (!a) return -1;
  if (!b) return 1;
  if (int c = three_way(a->kind, b->kind)) return c;
  if (int c = compare_dtype(a.dtype(), b.dtype())) return c;
  switch (a->kind) {
    case ExprKind::IntImm:
      return three_way(as<IntImmNode>(a)->value, as<IntImmNode>(b)->value);
    case ExprKind::FloatImm: {
      // Bit patterns, so NaNs and signed zeros order consistently.
      return three_way(std::bit_cast<uint64_t>(as<FloatImmNode>(a)->value),
                       std::bit_cast<uint64_t>(as<FloatImmNode>(b)->value));
    }
    case ExprKind::StringImm:
      return three_way(as<StringImmNode>(a)->value, as<StringImmNode>(b)->value);
    case ExprKind::Var:
      return compare_named(as<VarNode>(a)->name, a.get(), as<VarNode>(b)->name, b.get());
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name) \
  case ExprKind::Name:         \
    return compare_binary<Name##Node>(a, b);
#include "anvil/tir/node_kinds.def"
    case ExprKind::Not:
      return compare_expr(as<NotNode>(a)->a, as<NotNode>(b)->a);
    case ExprKind::Select: {
      const auto *x = as<SelectNode>(a), *y = as<SelectNode>(b);
      if (int c = compare_expr(x->condition, y->condition)) return c;
      if (int c = compare_expr(x->true_value, y->true_value)) return c;
      return compare_expr(x->false_value, y->false_value);
    }
    case ExprKind::Cast:
      return compare_expr(as<CastNode>(a)->value, as<CastNode>(b)->value);
    case ExprKind::BufferLoad: {
      const auto *x = as<BufferLoadNode>(a), *y = as<BufferLoadNode>(b);
      if (int c = compare_named(x->buffer->name, x->buffer.get(), y->buffer->name, y->buffer.get()))
        return c;
      return compare_all(x->indices, y->indices);
    }
    case ExprKind::Ramp: {
      const auto *x = as<RampNode>(a), *y = as<RampNode>(b);
      if (int c = compare_expr(x->base, y->base)) return c;
      if (int c = compare_expr(x->stride, y->stride)) return c;
      return three_way(x->lanes, y->lanes);
    }
    case ExprKind::Broadcast: {
      const auto *x = as<BroadcastNode>(a), *y = as<BroadcastNode>(b);
      if (int c = compare_expr(x->value, y->value)) return c;
      return three_way(x->lanes, y->lanes);
    }
    case ExprKind::Let: {
      const auto *x = as<LetNode>(a), *y = as<LetNode>(b);
      if (int c = compare_expr(x->var, y->var)) return c;
      if (int c = compare_expr(x->value, y->value)) return c;
      return compare_expr(x->body, y->body);
    }
    case ExprKind::Call: {
      const auto *x = as<CallNode>(a), *y = as<CallNode>(b);
      if (int c = x->op.compare(y->op)) return c < 0 ? -1 : 1;
      if (int c = three_way(x->call_kind, y->call_kind)) return c;
      return compare_all(x->args, y->args);
    }
    case ExprKind::Reduce:
      // Reductions never meet in index arithmetic; identity is enough.
      return std::less<const void*>()(a.get(), b.get()) ? -1 : 1;
  }
  return 0;
}

bool expr_equal(const PrimExpr& a, const PrimExpr& b) { return compare_expr(a, b) == 0; }

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

int64_t gcd(int64_t a, int64_t b) {
  // Magnitudes as unsigned so INT64_MIN does not overflow.
  uint64_t x = a < 0 ? uint64_t(0) - uint64_t(a) : uint64_t(a);
  uint64_t y = b < 0 ? uint64_t(0) - uint64_t(b) : uint64_t(b);
  while (y != 0) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > uint64_t(kPosInf) ? kPosInf : int64_t(x);
}

IntBound dtype_bound(DataType dtype) {
  DataType e = dtype.element_of();
  if (e.is_bool()) return {0, 1};
  if (e.is_uint()) {
    if (e.bits >= 63) return {0, kPosInf};
    return {0, int64_t((uint64_t(1) << e.bits) - 1)};
  }
  if (e.is_int() && e.bits < 64) {
    int64_t hi = int64_t((uint64_t(1) << (e.bits - 1)) - 1);
    return {-hi - 1, hi};
  }
  return {kNegInf, kPosInf};
}

bool is_canonical_int(DataType dtype) { return dtype.is_int() && dtype.lanes == 1; }

std::optional<int64_t> as_scalar_int(const PrimExpr& e) {
  if (const auto* imm = as<IntImmNode>(e)) return imm->value;
  return std::nullopt;
}

bool comparison_operands(const PrimExpr& e, PrimExpr& a, PrimExpr& b) {
  switch (e->kind) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                               \
  case ExprKind::Name:                                                       \
    if (!is_comparison(ExprKind::Name) || ExprKind::Name == ExprKind::And || \
        ExprKind::Name == ExprKind::Or)                                      \
      return false;                                                          \
    a = static_cast<const Name##Node*>(e.get())->a;                          \
    b = static_cast<const Name##Node*>(e.get())->b;                          \
    return true;
#include "anvil/tir/node_kinds.def"
    default:
      return false;
  }
}

}  // namespace anvil::tir::arith
