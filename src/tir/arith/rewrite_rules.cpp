// Rules for min/max, comparisons, logic, select and cast. Integer rules
// decide with bounds of differences (min(x, y) is x when x - y <= 0 is
// provable); float rules only fold constants, since reordering float
// arithmetic changes results.
#include <cmath>

#include "tir/arith/arith_internal.h"

namespace anvil::tir {

using arith::LinearSum;

namespace {

PrimExpr imm(DataType t, int64_t v) { return IntImmNode::make(t, v); }

bool is_float_type(DataType t) { return t.is_float() || t.is_bfloat(); }

// The truth value of a constant condition (scalar or broadcast), if constant.
std::optional<bool> const_truth(const PrimExpr& e) {
  if (auto v = arith::as_scalar_int(e)) return *v != 0;
  if (const auto* b = as<BroadcastNode>(e))
    if (auto v = arith::as_scalar_int(b->value)) return *v != 0;
  return std::nullopt;
}

PrimExpr bool_const(bool value, int lanes) {
  return value ? const_true(lanes) : const_false(lanes);
}

// Compares two immediates of any scalar type; nullopt when either is not one.
std::optional<bool> fold_compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
  auto decide = [kind](auto x, auto y) {
    switch (kind) {
      case ExprKind::EQ:
        return x == y;
      case ExprKind::NE:
        return x != y;
      case ExprKind::LT:
        return x < y;
      case ExprKind::LE:
        return x <= y;
      case ExprKind::GT:
        return x > y;
      default:
        return x >= y;
    }
  };
  auto x = arith::as_scalar_int(a), y = arith::as_scalar_int(b);
  if (x && y) {
    if (a.dtype().is_uint()) return decide(uint64_t(*x), uint64_t(*y));
    return decide(*x, *y);
  }
  const auto *fx = as<FloatImmNode>(a), *fy = as<FloatImmNode>(b);
  if (fx && fy) return decide(fx->value, fy->value);
  return std::nullopt;
}

PrimExpr make_compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
  switch (kind) {
    case ExprKind::EQ:
      return EQNode::make(a, b);
    case ExprKind::NE:
      return NENode::make(a, b);
    case ExprKind::LT:
      return LTNode::make(a, b);
    case ExprKind::LE:
      return LENode::make(a, b);
    case ExprKind::GT:
      return GTNode::make(a, b);
    default:
      return GENode::make(a, b);
  }
}

// The comparison that is true exactly when kind is false (integers only:
// with NaN, !(x < y) is not x >= y).
ExprKind negated_compare(ExprKind kind) {
  switch (kind) {
    case ExprKind::EQ:
      return ExprKind::NE;
    case ExprKind::NE:
      return ExprKind::EQ;
    case ExprKind::LT:
      return ExprKind::GE;
    case ExprKind::LE:
      return ExprKind::GT;
    case ExprKind::GT:
      return ExprKind::LE;
    default:
      return ExprKind::LT;
  }
}

// The comparison with its operands swapped: a < b is b > a.
ExprKind swapped_compare(ExprKind kind) {
  switch (kind) {
    case ExprKind::LT:
      return ExprKind::GT;
    case ExprKind::LE:
      return ExprKind::GE;
    case ExprKind::GT:
      return ExprKind::LT;
    case ExprKind::GE:
      return ExprKind::LE;
    default:
      return kind;
  }
}

bool is_int_compare(const PrimExpr& e) {
  PrimExpr a, b;
  return arith::comparison_operands(e, a, b) && arith::is_canonical_int(a.dtype());
}

}  // namespace

// ---------------------------------------------------------------- min / max

PrimExpr Analyzer::Impl::min(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (arith::expr_equal(a, b)) return a;
  if (!arith::is_canonical_int(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Min, a, b)) return r;
    if (auto lt = fold_compare(ExprKind::LT, a, b)) {
      if (is_float_type(t))
        return FloatImmNode::make(
            t, std::fmin(as<FloatImmNode>(a)->value, as<FloatImmNode>(b)->value));
      return *lt ? a : b;
    }
    return MinNode::make(a, b);
  }
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (ca && cb) return imm(t, std::min(*ca, *cb));
  if (ca) return min(b, a);  // constants second
  if (out_of_steps()) return MinNode::make(a, b);
  arith::RuleStep step(*this);
  IntBound ba = bound(a), bb = bound(b);
  if (ba.max_value <= bb.min_value) return a;
  if (bb.max_value <= ba.min_value) return b;
  PrimExpr diff = sub(a, b);
  if (prove_nonnegative(diff)) return b;
  if (prove_negative(sub(diff, imm(t, 1)))) return a;
  // min(min(x, c1), c2) = min(x, min(c1, c2)).
  if (const auto* inner = as<MinNode>(a); inner && cb)
    if (auto c1 = arith::as_scalar_int(inner->b)) return min(inner->a, imm(t, std::min(*c1, *cb)));
  return MinNode::make(a, b);
}

PrimExpr Analyzer::Impl::max(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (arith::expr_equal(a, b)) return a;
  if (!arith::is_canonical_int(t)) {
    if (t.lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Max, a, b)) return r;
    if (auto gt = fold_compare(ExprKind::GT, a, b)) {
      if (is_float_type(t))
        return FloatImmNode::make(
            t, std::fmax(as<FloatImmNode>(a)->value, as<FloatImmNode>(b)->value));
      return *gt ? a : b;
    }
    return MaxNode::make(a, b);
  }
  auto ca = arith::as_scalar_int(a), cb = arith::as_scalar_int(b);
  if (ca && cb) return imm(t, std::max(*ca, *cb));
  if (ca) return max(b, a);
  if (out_of_steps()) return MaxNode::make(a, b);
  arith::RuleStep step(*this);
  IntBound ba = bound(a), bb = bound(b);
  if (ba.min_value >= bb.max_value) return a;
  if (bb.min_value >= ba.max_value) return b;
  PrimExpr diff = sub(a, b);
  if (prove_nonnegative(diff)) return a;
  if (prove_negative(sub(diff, imm(t, 1)))) return b;
  if (const auto* inner = as<MaxNode>(a); inner && cb)
    if (auto c1 = arith::as_scalar_int(inner->b)) return max(inner->a, imm(t, std::max(*c1, *cb)));
  return MaxNode::make(a, b);
}

// ---------------------------------------------------------------- comparisons

PrimExpr Analyzer::Impl::compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  int lanes = t.lanes;
  if (auto v = fold_compare(kind, a, b)) return bool_const(*v, 1);
  if (!arith::is_canonical_int(t)) {
    if (lanes > 1) {
      if (PrimExpr r = vector_binary(kind, a, b)) return r;
      // Integer vectors: bounds over all lanes can still decide.
      if (t.is_int() && !out_of_steps()) {
        IntBound d = bound(SubNode::make(a, b));
        std::optional<bool> decided;
        switch (kind) {
          case ExprKind::LT:
            if (d.max_value < 0) decided = true;
            if (d.min_value >= 0) decided = false;
            break;
          case ExprKind::LE:
            if (d.max_value <= 0) decided = true;
            if (d.min_value > 0) decided = false;
            break;
          case ExprKind::GT:
            if (d.min_value > 0) decided = true;
            if (d.max_value <= 0) decided = false;
            break;
          case ExprKind::GE:
            if (d.min_value >= 0) decided = true;
            if (d.max_value < 0) decided = false;
            break;
          case ExprKind::EQ:
            if (d.min_value > 0 || d.max_value < 0) decided = false;
            break;
          default:
            if (d.min_value > 0 || d.max_value < 0) decided = true;
            break;
        }
        if (decided) return bool_const(*decided, lanes);
      }
    }
    if (!is_float_type(t) && arith::expr_equal(a, b))
      return bool_const(kind == ExprKind::EQ || kind == ExprKind::LE || kind == ExprKind::GE,
                        lanes);
    return make_compare(kind, a, b);
  }
  if (out_of_steps()) return make_compare(kind, a, b);
  arith::RuleStep step(*this);
  PrimExpr diff = sub(a, b);
  if (arith::as_scalar_int(diff)) return bool_const(*fold_compare(kind, diff, imm(t, 0)), 1);
  PrimExpr diff_minus_one = sub(diff, imm(t, 1));
  std::optional<bool> decided;
  switch (kind) {
    case ExprKind::LT:  // diff < 0
      if (prove_negative(diff))
        decided = true;
      else if (prove_nonnegative(diff))
        decided = false;
      break;
    case ExprKind::LE:  // diff - 1 < 0
      if (prove_negative(diff_minus_one))
        decided = true;
      else if (prove_nonnegative(diff_minus_one))
        decided = false;
      break;
    case ExprKind::GT:  // diff - 1 >= 0
      if (prove_nonnegative(diff_minus_one))
        decided = true;
      else if (prove_negative(diff_minus_one))
        decided = false;
      break;
    case ExprKind::GE:
      if (prove_nonnegative(diff))
        decided = true;
      else if (prove_negative(diff))
        decided = false;
      break;
    case ExprKind::EQ:
      if (prove_negative(diff) || prove_nonnegative(diff_minus_one)) decided = false;
      break;
    default:
      if (prove_negative(diff) || prove_nonnegative(diff_minus_one)) decided = true;
      break;
  }
  if (!decided && (kind == ExprKind::EQ || kind == ExprKind::NE)) {
    // A sum whose coefficients share a factor g never equals a constant
    // that g does not divide (2i + 1 is never 4).
    LinearSum d = arith::to_sum(diff);
    int64_t g = 0;
    for (const auto& entry : d.terms) g = arith::gcd(g, entry.second);
    if (d.valid && g > 1 && d.constant % g != 0) decided = kind == ExprKind::NE;
  }
  if (decided) return bool_const(*decided, 1);
  if (kind == ExprKind::EQ || kind == ExprKind::NE) {
    // Equalities divide out a common factor: i*2 == 4 is i == 2.
    LinearSum d = arith::to_sum(diff);
    int64_t g = d.constant;
    for (const auto& entry : d.terms) g = arith::gcd(g, entry.second);
    if (d.valid && g > 1) {
      LinearSum left, right;
      left.dtype = right.dtype = t;
      for (const auto& [term, coeff] : d.terms) {
        if (coeff > 0)
          left.add_term(term, coeff / g);
        else
          right.add_term(term, -(coeff / g));
      }
      right.add_constant(-(d.constant / g));
      if (left.is_const()) std::swap(left, right);
      PrimExpr node = make_compare(kind, arith::from_sum(left), arith::from_sum(right));
      return is_known_fact(node) ? const_true() : node;
    }
  }
  // Normal form: constants gathered on the right, terms both sides share
  // cancelled (i*4 + j < i*4 + 8 is j < 8).
  LinearSum sa = arith::to_sum(a), sb = arith::to_sum(b);
  PrimExpr lhs = a, rhs = b;
  bool shared = false;
  for (const auto& entry : sa.terms)
    for (const auto& other : sb.terms)
      if (arith::expr_equal(entry.first, other.first)) shared = true;
  if (shared || (sb.is_const() && sa.constant != 0) || (sa.is_const() && sb.constant != 0)) {
    // diff = left - right + k, so "diff cmp 0" is "left cmp right - k".
    LinearSum d = arith::to_sum(diff);
    LinearSum left, right;
    left.dtype = right.dtype = t;
    for (const auto& [term, coeff] : d.terms) {
      if (coeff > 0)
        left.add_term(term, coeff);
      else if (coeff != arith::kNegInf)
        right.add_term(term, -coeff);
      else
        right.valid = false;
    }
    auto neg_k = arith::checked_mul(d.constant, -1);
    if (neg_k && d.valid && left.valid && right.valid) {
      if (left.is_const()) {
        // "0 cmp right - k" reads better as "right cmp' k".
        lhs = arith::from_sum(right);
        rhs = imm(t, d.constant);
        kind = swapped_compare(kind);
      } else {
        right.add_constant(*neg_k);
        lhs = arith::from_sum(left);
        rhs = arith::from_sum(right);
      }
    }
  }
  PrimExpr node = make_compare(kind, lhs, rhs);
  if (is_known_fact(node)) return const_true();
  if (is_known_fact(make_compare(negated_compare(kind), lhs, rhs))) return const_false();
  return node;
}

// ---------------------------------------------------------------- logic

bool Analyzer::Impl::are_complements(const PrimExpr& a, const PrimExpr& b) {
  if (const auto* na = as<NotNode>(a); na && arith::expr_equal(na->a, b)) return true;
  if (const auto* nb = as<NotNode>(b); nb && arith::expr_equal(nb->a, a)) return true;
  PrimExpr x, y, u, v;
  if (!arith::comparison_operands(a, x, y) || !arith::comparison_operands(b, u, v)) return false;
  if (is_float_type(x.dtype()) && a->kind != ExprKind::EQ && a->kind != ExprKind::NE) return false;
  ExprKind negated = negated_compare(a->kind);
  if (b->kind == negated && arith::expr_equal(x, u) && arith::expr_equal(y, v)) return true;
  return b->kind == swapped_compare(negated) && arith::expr_equal(x, v) && arith::expr_equal(y, u);
}

PrimExpr Analyzer::Impl::logical_and(const PrimExpr& a, const PrimExpr& b) {
  int lanes = a.dtype().lanes;
  if (auto va = const_truth(a)) return *va ? b : bool_const(false, lanes);
  if (auto vb = const_truth(b)) return *vb ? a : bool_const(false, lanes);
  if (arith::expr_equal(a, b)) return a;
  if (are_complements(a, b)) return bool_const(false, lanes);
  // Two integer comparisons: one may imply or contradict the other
  // (i < 5 && i < 3 is i < 3).
  if (lanes == 1 && is_int_compare(a) && is_int_compare(b) && !out_of_steps()) {
    arith::RuleStep step(*this);
    auto under = [&](const PrimExpr& assumed, const PrimExpr& e) {
      size_t token = push_constraint(assumed);
      PrimExpr a2, b2;
      arith::comparison_operands(e, a2, b2);
      PrimExpr r = compare(e->kind, a2, b2);
      pop_constraint(token);
      return const_truth(r);
    };
    if (auto v = under(a, b)) return *v ? a : bool_const(false, 1);
    if (auto v = under(b, a)) return *v ? b : bool_const(false, 1);
  }
  return AndNode::make(a, b);
}

PrimExpr Analyzer::Impl::logical_or(const PrimExpr& a, const PrimExpr& b) {
  int lanes = a.dtype().lanes;
  if (auto va = const_truth(a)) return *va ? bool_const(true, lanes) : b;
  if (auto vb = const_truth(b)) return *vb ? bool_const(true, lanes) : a;
  if (arith::expr_equal(a, b)) return a;
  if (are_complements(a, b)) return bool_const(true, lanes);
  return OrNode::make(a, b);
}

PrimExpr Analyzer::Impl::logical_not(const PrimExpr& a) {
  if (auto v = arith::as_scalar_int(a)) return bool_const(*v == 0, 1);
  if (const auto* bc = as<BroadcastNode>(a))
    if (auto v = arith::as_scalar_int(bc->value)) return bool_const(*v == 0, bc->lanes);
  if (const auto* n = as<NotNode>(a)) return n->a;
  PrimExpr x, y;
  if (arith::comparison_operands(a, x, y)) {
    bool is_float = is_float_type(x.dtype());
    if (!is_float || a->kind == ExprKind::EQ || a->kind == ExprKind::NE)
      return compare(negated_compare(a->kind), x, y);
  }
  return NotNode::make(a);
}

PrimExpr Analyzer::Impl::select(const PrimExpr& c, const PrimExpr& t, const PrimExpr& f) {
  if (auto v = const_truth(c)) return *v ? t : f;
  if (arith::expr_equal(t, f)) return t;
  if (const auto* n = as<NotNode>(c)) return SelectNode::make(n->a, f, t);
  return SelectNode::make(c, t, f);
}

// ---------------------------------------------------------------- cast

PrimExpr Analyzer::Impl::cast(DataType dtype, const PrimExpr& value) {
  DataType from = value.dtype();
  if (from == dtype) return value;
  if (const auto* bc = as<BroadcastNode>(value); bc && dtype.lanes == bc->lanes)
    return BroadcastNode::make(cast(dtype.element_of(), bc->value), bc->lanes);
  if (dtype.lanes == 1) {
    if (auto v = arith::as_scalar_int(value)) {
      int64_t x = *v;
      if (from.is_uint() && from.bits == 64 && x < 0 && is_float_type(dtype))
        return FloatImmNode::make(dtype, double(uint64_t(x)));
      if (is_float_type(dtype)) {
        double d = double(x);
        if (dtype.is_float() && dtype.bits == 32) d = double(float(d));
        return FloatImmNode::make(dtype, d);
      }
      if (dtype.is_bool()) return imm(dtype, x != 0);
      if (dtype.is_int() || dtype.is_uint()) return imm(dtype, x);
    }
    if (const auto* f = as<FloatImmNode>(value)) {
      if (is_float_type(dtype)) {
        double d = f->value;
        if (dtype.is_float() && dtype.bits == 32) d = double(float(d));
        return FloatImmNode::make(dtype, d);
      }
      if (dtype.is_bool()) return imm(dtype, f->value != 0);
      IntBound range = arith::dtype_bound(dtype);
      // Only values the target holds: the conversion is otherwise undefined.
      if (std::isfinite(f->value) && f->value > double(range.min_value) - 1.0 &&
          f->value < double(range.max_value) + 1.0 && std::fabs(f->value) < 9.2e18)
        return imm(dtype, int64_t(f->value));
    }
  }
  // int -> wider int -> original int is the value itself.
  if (const auto* inner = as<CastNode>(value)) {
    DataType mid = inner->dtype;
    DataType src = inner->value.dtype();
    bool all_int = (src.is_int() || src.is_uint()) && (mid.is_int() || mid.is_uint());
    if (all_int && src == dtype && !out_of_steps()) {
      IntBound b = bound(inner->value), mid_range = arith::dtype_bound(mid);
      if (b.min_value >= mid_range.min_value && b.max_value <= mid_range.max_value)
        return inner->value;
    }
  }
  return CastNode::make(dtype, value);
}

}  // namespace anvil::tir
