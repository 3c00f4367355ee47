// Floor and truncating division and modulo. The index expressions that split
// and fuse produce live here: floordiv(i_o*8 + i_i, 8) is i_o when
// 0 <= i_i < 8, floormod of the same is i_i, and nested divisions collapse.
// Every rule is exact for all integers (negative ones included) given the
// bounds it checks.
#include <algorithm>

#include "anvil/tir/functor.h"
#include "tir/arith/arith_internal.h"

namespace anvil::tir {

using arith::LinearSum;

namespace {

PrimExpr imm(DataType t, int64_t v) { return IntImmNode::make(t, v); }

LinearSum empty_sum(DataType t) {
  LinearSum s;
  s.dtype = t;
  return s;
}

// Divisors g of c (1 < g < c) worth trying: gcd(c, coeff) of each term,
// largest first.
std::vector<int64_t> common_factors(const LinearSum& rem, int64_t c) {
  std::vector<int64_t> out;
  for (const auto& entry : rem.terms) {
    int64_t g = arith::gcd(entry.second, c);
    if (g > 1 && g < c && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

// rem split into g*A + R, with the multiples of g in A and the rest in R.
void split_by_factor(const LinearSum& rem, int64_t g, LinearSum& a, LinearSum& r) {
  a = empty_sum(rem.dtype);
  r = empty_sum(rem.dtype);
  for (const auto& [term, coeff] : rem.terms) {
    if (coeff % g == 0)
      a.add_term(term, coeff / g);
    else
      r.add_term(term, coeff);
  }
  a.add_constant(arith::floor_div(rem.constant, g));
  r.add_constant(arith::floor_mod(rem.constant, g));
}

bool is_scalar_int_type(DataType t) { return (t.is_int() || t.is_uint()) && t.lanes == 1; }

// Folds a op b on unsigned immediates (plain unsigned division); null otherwise.
PrimExpr fold_unsigned(const PrimExpr& a, const PrimExpr& b, bool div) {
  if (!a.dtype().is_uint() || a.dtype().lanes != 1) return nullptr;
  auto x = arith::as_scalar_int(a), y = arith::as_scalar_int(b);
  if (!x || !y || *y == 0) return nullptr;
  uint64_t ux = uint64_t(*x), uy = uint64_t(*y);
  return imm(a.dtype(), int64_t(div ? ux / uy : ux % uy));
}

bool contains_floor_ops(const PrimExpr& e) {
  bool found = false;
  pre_order_visit(e, [&](const PrimExpr& x) {
    if (x->kind == ExprKind::FloorDiv || x->kind == ExprKind::FloorMod) found = true;
  });
  return found;
}

}  // namespace

// ---------------------------------------------------------------- floordiv

PrimExpr Analyzer::Impl::floordiv(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (!arith::is_canonical_int(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::FloorDiv, a, b)) return r;
    if (PrimExpr r = fold_unsigned(a, b, true)) return r;
    return FloorDivNode::make(a, b);
  }
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (ca && cb && *cb != 0 && !(*ca == arith::kNegInf && *cb == -1))
    return imm(t, arith::floor_div(*ca, *cb));
  if (cb && *cb == 1) return a;
  if (out_of_steps()) return FloorDivNode::make(a, b);
  arith::RuleStep step(*this);
  if (cb && *cb > 0) {
    int64_t c = *cb;
    LinearSum s = arith::to_sum(a);
    if (!s.valid) return FloorDivNode::make(a, b);
    // Multiples of c leave the division exactly: floordiv(x*c + r, c) = x + floordiv(r, c).
    LinearSum quotient = empty_sum(t), rem = empty_sum(t);
    for (const auto& [term, coeff] : s.terms) {
      if (coeff % c == 0)
        quotient.add_term(term, coeff / c);
      else
        rem.add_term(term, coeff);
    }
    quotient.add_constant(arith::floor_div(s.constant, c));
    rem.add_constant(arith::floor_mod(s.constant, c));
    PrimExpr rest = divide_remainder(rem, c);
    if (quotient.is_const() && quotient.constant == 0) return rest;
    quotient.add(arith::to_sum(rest), 1);
    if (!quotient.valid) return FloorDivNode::make(a, b);
    return normalize_sum(std::move(quotient));
  }
  // A symbolic divisor: only what bounds decide.
  IntBound bb = bound(b);
  if (bb.min_value > 0 && prove_nonnegative(a) && prove_negative(sub(a, b))) return imm(t, 0);
  if ((bb.min_value > 0 || bb.max_value < 0) && arith::expr_equal(a, b)) return imm(t, 1);
  return FloorDivNode::make(a, b);
}

PrimExpr Analyzer::Impl::divide_remainder(const LinearSum& rem, int64_t c) {
  DataType t = rem.dtype;
  // rem's constant is in [0, c), so with no terms the quotient is 0.
  if (rem.is_const()) return imm(t, 0);
  PrimExpr r = arith::from_sum(rem);
  IntBound br = bound(r);
  if (br.min_value != arith::kNegInf && br.max_value != arith::kPosInf) {
    int64_t lo = arith::floor_div(br.min_value, c), hi = arith::floor_div(br.max_value, c);
    if (lo == hi) return imm(t, lo);
  }
  // floordiv(g*A + R, g*d) = floordiv(A, d) when 0 <= R < g.
  for (int64_t g : common_factors(rem, c)) {
    LinearSum a_part, r_part;
    split_by_factor(rem, g, a_part, r_part);
    if (a_part.is_const()) continue;
    IntBound bound_r = bound(arith::from_sum(r_part));
    if (bound_r.min_value >= 0 && bound_r.max_value < g)
      return floordiv(arith::from_sum(a_part), imm(t, c / g));
  }
  // floordiv(floordiv(x, c1) + k, c) = floordiv(x + k*c1, c1*c).
  if (rem.terms.size() == 1 && rem.terms[0].second == 1) {
    if (const auto* inner = as<FloorDivNode>(rem.terms[0].first)) {
      auto c1 = arith::as_scalar_int(inner->b);
      if (c1 && *c1 > 0) {
        auto divisor = arith::checked_mul(*c1, c);
        auto offset = arith::checked_mul(rem.constant, *c1);
        if (divisor && offset) return floordiv(add(inner->a, imm(t, *offset)), imm(t, *divisor));
      }
    }
  }
  return FloorDivNode::make(r, imm(t, c));
}

// ---------------------------------------------------------------- floormod

PrimExpr Analyzer::Impl::floormod(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (!arith::is_canonical_int(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::FloorMod, a, b)) return r;
    if (PrimExpr r = fold_unsigned(a, b, false)) return r;
    return FloorModNode::make(a, b);
  }
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (ca && cb && *cb != 0 && !(*ca == arith::kNegInf && *cb == -1))
    return imm(t, arith::floor_mod(*ca, *cb));
  if (cb && (*cb == 1 || *cb == -1)) return imm(t, 0);
  if (out_of_steps()) return FloorModNode::make(a, b);
  arith::RuleStep step(*this);
  if (cb && *cb > 0) {
    int64_t c = *cb;
    LinearSum s = arith::to_sum(a);
    if (!s.valid) return FloorModNode::make(a, b);
    // Multiples of c vanish; a coefficient keeps its sign so x - y stays x - y.
    LinearSum rem = empty_sum(t);
    for (const auto& [term, coeff] : s.terms) rem.add_term(term, coeff % c);
    rem.add_constant(arith::floor_mod(s.constant, c));
    return reduce_remainder(rem, c);
  }
  IntBound bb = bound(b);
  if (bb.min_value > 0 && prove_nonnegative(a) && prove_negative(sub(a, b))) return a;
  if ((bb.min_value > 0 || bb.max_value < 0) && arith::expr_equal(a, b)) return imm(t, 0);
  return FloorModNode::make(a, b);
}

PrimExpr Analyzer::Impl::reduce_remainder(const LinearSum& rem, int64_t c) {
  DataType t = rem.dtype;
  if (rem.is_const()) return imm(t, rem.constant);
  PrimExpr r = arith::from_sum(rem);
  IntBound br = bound(r);
  if (br.min_value != arith::kNegInf && br.max_value != arith::kPosInf) {
    int64_t lo = arith::floor_div(br.min_value, c), hi = arith::floor_div(br.max_value, c);
    if (lo == hi) {
      auto shift = arith::checked_mul(lo, c);
      if (shift) return sub(r, imm(t, *shift));
    }
  }
  // floormod(g*A + R, g*d) = floormod(A, d)*g + R when 0 <= R < g.
  for (int64_t g : common_factors(rem, c)) {
    LinearSum a_part, r_part;
    split_by_factor(rem, g, a_part, r_part);
    if (a_part.is_const()) continue;
    PrimExpr r_expr = arith::from_sum(r_part);
    IntBound bound_r = bound(r_expr);
    if (bound_r.min_value >= 0 && bound_r.max_value < g) {
      PrimExpr inner = floormod(arith::from_sum(a_part), imm(t, c / g));
      return add(mul(inner, imm(t, g)), r_expr);
    }
  }
  if (rem.terms.size() == 1 && rem.terms[0].second == 1 && rem.constant == 0) {
    const PrimExpr& term = rem.terms[0].first;
    // floormod(floormod(x, c1), c) = floormod(x, c) when c divides c1.
    if (const auto* inner = as<FloorModNode>(term)) {
      auto c1 = arith::as_scalar_int(inner->b);
      if (c1 && *c1 > 0 && *c1 % c == 0) return floormod(inner->a, imm(t, c));
    }
    // floormod(floordiv(x, l), c) = floordiv(floormod(x, l*c), l): the one
    // normal form of a digit of x.
    if (const auto* inner = as<FloorDivNode>(term)) {
      auto l = arith::as_scalar_int(inner->b);
      if (l && *l > 0) {
        // l*c must fit the expression's own type, not just int64.
        auto upper = arith::checked_mul(*l, c);
        bool fits = upper && (t.bits >= 64 || *upper < (int64_t(1) << (t.bits - 1)));
        if (fits) return floordiv(floormod(inner->a, imm(t, *upper)), imm(t, *l));
      }
    }
  }
  return FloorModNode::make(r, imm(t, c));
}

// ---------------------------------------------------------------- truncating

PrimExpr Analyzer::Impl::truncdiv(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (t.is_float() || t.is_bfloat()) {
    const auto *x = as<FloatImmNode>(a), *y = as<FloatImmNode>(b);
    if (x && y && y->value != 0) {
      double v = x->value / y->value;
      if (t.bits == 32 && t.is_float()) v = double(float(v));
      return FloatImmNode::make(t, v);
    }
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Div, a, b)) return r;
    return DivNode::make(a, b);
  }
  if (!is_scalar_int_type(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Div, a, b)) return r;
    return DivNode::make(a, b);
  }
  if (PrimExpr r = fold_unsigned(a, b, true)) return r;
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (t.is_int() && ca && cb && *cb != 0 && !(*ca == arith::kNegInf && *cb == -1))
    return imm(t, *ca / *cb);
  if (cb && *cb == 1) return a;
  if (!t.is_int() || out_of_steps()) return DivNode::make(a, b);
  // With both operands non-negative, truncation is floor: use the floor
  // rules when they remove the division entirely.
  if (bound(a).min_value >= 0 && bound(b).min_value > 0) {
    PrimExpr r = floordiv(a, b);
    if (!contains_floor_ops(r)) return r;
  }
  return DivNode::make(a, b);
}

PrimExpr Analyzer::Impl::truncmod(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (!is_scalar_int_type(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Mod, a, b)) return r;
    return ModNode::make(a, b);
  }
  if (PrimExpr r = fold_unsigned(a, b, false)) return r;
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (t.is_int() && ca && cb && *cb != 0 && !(*ca == arith::kNegInf && *cb == -1))
    return imm(t, *ca % *cb);
  if (cb && *cb == 1) return imm(t, 0);
  if (!t.is_int() || out_of_steps()) return ModNode::make(a, b);
  if (bound(a).min_value >= 0 && bound(b).min_value > 0) {
    PrimExpr r = floormod(a, b);
    if (!contains_floor_ops(r)) return r;
  }
  return ModNode::make(a, b);
}

}  // namespace anvil::tir
