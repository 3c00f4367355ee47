// Vector (lanes > 1) forms: lane-wise operations on broadcasts become one
// scalar operation; ramps absorb additions and scalings, and floor division
// or modulo of a ramp stays a ramp or a broadcast when bounds show that no
// lane crosses a multiple of the divisor. Anything else is left as it is.
#include "tir/arith/arith_internal.h"

namespace anvil::tir {

namespace {

PrimExpr imm(DataType t, int64_t v) { return IntImmNode::make(t, v); }

// A ramp, or a broadcast when the stride is zero.
PrimExpr make_ramp(const PrimExpr& base, const PrimExpr& stride, int lanes) {
  if (arith::as_scalar_int(stride) == int64_t(0)) return BroadcastNode::make(base, lanes);
  return RampNode::make(base, stride, lanes);
}

}  // namespace

PrimExpr Analyzer::Impl::vector_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
  const auto* ba = as<BroadcastNode>(a);
  const auto* bb = as<BroadcastNode>(b);
  if (ba && bb && ba->lanes == bb->lanes && ba->value.dtype() == bb->value.dtype()) {
    PrimExpr scalar = binary(kind, ba->value, bb->value);
    return BroadcastNode::make(scalar, ba->lanes);
  }
  const auto* ra = as<RampNode>(a);
  const auto* rb = as<RampNode>(b);
  if (!(ra || rb) || !a.dtype().is_int()) return nullptr;
  int lanes = a.dtype().lanes;
  switch (kind) {
    case ExprKind::Add:
      if (ra && rb) return make_ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), lanes);
      if (ra && bb) return make_ramp(add(ra->base, bb->value), ra->stride, lanes);
      if (ba && rb) return make_ramp(add(ba->value, rb->base), rb->stride, lanes);
      return nullptr;
    case ExprKind::Sub:
      if (ra && rb) return make_ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), lanes);
      if (ra && bb) return make_ramp(sub(ra->base, bb->value), ra->stride, lanes);
      if (ba && rb)
        return make_ramp(sub(ba->value, rb->base), sub(imm(rb->stride.dtype(), 0), rb->stride),
                         lanes);
      return nullptr;
    case ExprKind::Mul:
      if (ra && bb) return make_ramp(mul(ra->base, bb->value), mul(ra->stride, bb->value), lanes);
      if (ba && rb) return make_ramp(mul(ba->value, rb->base), mul(ba->value, rb->stride), lanes);
      return nullptr;
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod: {
      if (!ra || !bb || out_of_steps()) return nullptr;
      auto c = arith::as_scalar_int(bb->value);
      auto s = arith::as_scalar_int(ra->stride);
      if (!c || *c <= 0 || !s || !arith::is_canonical_int(ra->base.dtype())) return nullptr;
      DataType t = ra->base.dtype();
      bool is_div = kind == ExprKind::FloorDiv;
      if (*s % *c == 0) {
        // Every lane moves by whole multiples of c.
        if (is_div) return make_ramp(floordiv(ra->base, bb->value), imm(t, *s / *c), lanes);
        return BroadcastNode::make(floormod(ra->base, bb->value), lanes);
      }
      if (*s > 0) {
        // No lane crosses a multiple of c when base mod c + s*(lanes-1) < c.
        PrimExpr base_mod = floormod(ra->base, bb->value);
        auto span = arith::checked_mul(*s, lanes - 1);
        auto top = span ? arith::checked_add(bound(base_mod).max_value, *span) : std::nullopt;
        if (top && *top < *c) {
          if (is_div) return BroadcastNode::make(floordiv(ra->base, bb->value), lanes);
          return make_ramp(base_mod, ra->stride, lanes);
        }
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

}  // namespace anvil::tir
