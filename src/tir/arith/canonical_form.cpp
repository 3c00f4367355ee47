// Canonical sums: integer +, - and * become sum(coeff * term) + constant, so
// equal linear combinations build identical trees and cancel ((i*4 + j) - j
// is i*4). Split and fused index forms (floordiv/floormod of one value) are
// merged back where they recombine: floordiv(x, 8)*8 + floormod(x, 8) is x, and so is
// n*floordiv(x, n) + floormod(x, n) for a size variable n.
#include <algorithm>

#include "anvil/support/error.h"
#include "tir/arith/arith_internal.h"

namespace anvil::tir {

namespace arith {

// ---------------------------------------------------------------- LinearSum

void LinearSum::add_term(const PrimExpr& term, int64_t coeff) {
  if (coeff == 0 || !valid) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!expr_equal(terms[i].first, term)) continue;
    auto merged = checked_add(terms[i].second, coeff);
    if (!merged) {
      valid = false;
      return;
    }
    if (*merged == 0)
      terms.erase(terms.begin() + std::ptrdiff_t(i));
    else
      terms[i].second = *merged;
    return;
  }
  terms.emplace_back(term, coeff);
}

void LinearSum::add_constant(int64_t value) {
  auto merged = checked_add(constant, value);
  if (!merged) {
    valid = false;
    return;
  }
  constant = *merged;
}

void LinearSum::add(const LinearSum& other, int64_t factor) {
  if (!other.valid) valid = false;
  for (const auto& [term, coeff] : other.terms) {
    auto scaled = checked_mul(coeff, factor);
    if (!scaled) {
      valid = false;
      return;
    }
    add_term(term, *scaled);
  }
  auto scaled = checked_mul(other.constant, factor);
  if (!scaled) {
    valid = false;
    return;
  }
  add_constant(*scaled);
}

void LinearSum::scale(int64_t factor) {
  if (factor == 0) {
    terms.clear();
    constant = 0;
    return;
  }
  for (auto& entry : terms) {
    auto scaled = checked_mul(entry.second, factor);
    if (!scaled) {
      valid = false;
      return;
    }
    entry.second = *scaled;
  }
  auto scaled = checked_mul(constant, factor);
  if (!scaled) {
    valid = false;
    return;
  }
  constant = *scaled;
}

namespace {

void accumulate(LinearSum& sum, const PrimExpr& e, int64_t factor) {
  if (!sum.valid) return;
  switch (e->kind) {
    case ExprKind::IntImm: {
      auto v = checked_mul(as<IntImmNode>(e)->value, factor);
      if (!v) {
        sum.valid = false;
        return;
      }
      sum.add_constant(*v);
      return;
    }
    case ExprKind::Add:
      accumulate(sum, as<AddNode>(e)->a, factor);
      accumulate(sum, as<AddNode>(e)->b, factor);
      return;
    case ExprKind::Sub: {
      accumulate(sum, as<SubNode>(e)->a, factor);
      auto negated = checked_mul(factor, -1);
      if (!negated) {
        sum.valid = false;
        return;
      }
      accumulate(sum, as<SubNode>(e)->b, *negated);
      return;
    }
    case ExprKind::Mul: {
      const auto* n = as<MulNode>(e);
      std::optional<int64_t> c = as_scalar_int(n->b);
      PrimExpr other = n->a;
      if (!c) {
        c = as_scalar_int(n->a);
        other = n->b;
      }
      if (c) {
        auto v = checked_mul(*c, factor);
        if (!v) {
          sum.valid = false;
          return;
        }
        accumulate(sum, other, *v);
        return;
      }
      break;
    }
    default:
      break;
  }
  sum.add_term(e, factor);
}

// Terms with a positive coefficient first (larger first), then negative ones
// (larger magnitude first), ties broken by the structural order.
bool term_before(const std::pair<PrimExpr, int64_t>& x, const std::pair<PrimExpr, int64_t>& y) {
  bool xp = x.second > 0, yp = y.second > 0;
  if (xp != yp) return xp;
  if (x.second != y.second) return xp ? x.second > y.second : x.second < y.second;
  return compare_expr(x.first, y.first) < 0;
}

}  // namespace

LinearSum to_sum(const PrimExpr& e) {
  LinearSum sum;
  sum.dtype = e.dtype();
  accumulate(sum, e, 1);
  return sum;
}

PrimExpr from_sum(const LinearSum& sum) {
  ANVIL_ICHECK(sum.valid, "from_sum of an overflowed sum");
  DataType t = sum.dtype;
  auto terms = sum.terms;
  std::sort(terms.begin(), terms.end(), term_before);
  auto imm = [&](int64_t v) { return PrimExpr(IntImmNode::make(t, v)); };
  auto scaled = [&](const PrimExpr& term, int64_t c) {
    return c == 1 ? term : PrimExpr(MulNode::make(term, imm(c)));
  };
  PrimExpr acc;
  bool constant_used = false;
  for (const auto& [term, coeff] : terms) {
    if (coeff > 0) {
      acc = acc ? PrimExpr(AddNode::make(acc, scaled(term, coeff))) : scaled(term, coeff);
      continue;
    }
    if (!acc && sum.constant > 0) {
      acc = imm(sum.constant);
      constant_used = true;
    }
    if (!acc) {
      acc = scaled(term, coeff);
    } else if (coeff == kNegInf) {
      acc = AddNode::make(acc, scaled(term, coeff));
    } else {
      acc = SubNode::make(acc, scaled(term, -coeff));
    }
  }
  if (constant_used || sum.constant == 0) return acc ? acc : imm(0);
  if (!acc) return imm(sum.constant);
  if (sum.constant > 0 || sum.constant == kNegInf) return AddNode::make(acc, imm(sum.constant));
  return SubNode::make(acc, imm(-sum.constant));
}

}  // namespace arith

using arith::LinearSum;

namespace {

std::optional<double> as_scalar_float(const PrimExpr& e) {
  if (const auto* imm = as<FloatImmNode>(e)) return imm->value;
  return std::nullopt;
}

// A float immediate of dtype, rounded the way the type stores it.
PrimExpr float_imm(DataType dtype, double value) {
  if (dtype.bits == 32 && dtype.is_float()) value = double(float(value));
  return FloatImmNode::make(dtype, value);
}

// Folds two scalar immediates of a type canonical sums do not cover (floats,
// unsigned); null when an operand is not an immediate.
template <typename IntOp, typename FloatOp>
PrimExpr fold_scalar(const PrimExpr& a, const PrimExpr& b, IntOp int_op, FloatOp float_op) {
  if (a.dtype().lanes != 1) return nullptr;
  if (auto x = arith::as_scalar_int(a))
    if (auto y = arith::as_scalar_int(b))
      return IntImmNode::make(a.dtype(), int64_t(int_op(uint64_t(*x), uint64_t(*y))));
  if (auto x = as_scalar_float(a))
    if (auto y = as_scalar_float(b)) return float_imm(a.dtype(), float_op(*x, *y));
  return nullptr;
}

// The factors of a product term, flattened.
void gather_factors(const PrimExpr& e, std::vector<PrimExpr>& out) {
  if (const auto* m = as<MulNode>(e);
      m && !arith::as_scalar_int(m->a) && !arith::as_scalar_int(m->b)) {
    gather_factors(m->a, out);
    gather_factors(m->b, out);
    return;
  }
  out.push_back(e);
}

// x * y as one term with its factors in structural order, so i*j and j*i meet.
PrimExpr product_term(const PrimExpr& x, const PrimExpr& y) {
  std::vector<PrimExpr> factors;
  gather_factors(x, factors);
  gather_factors(y, factors);
  std::sort(factors.begin(), factors.end(),
            [](const PrimExpr& p, const PrimExpr& q) { return arith::compare_expr(p, q) < 0; });
  PrimExpr acc = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) acc = MulNode::make(acc, factors[i]);
  return acc;
}

// The monomials of a sum, the constant as a null term.
std::vector<std::pair<PrimExpr, int64_t>> monomials(const LinearSum& s) {
  auto out = s.terms;
  if (s.constant != 0) out.emplace_back(nullptr, s.constant);
  return out;
}

}  // namespace

PrimExpr Analyzer::Impl::add(const PrimExpr& a, const PrimExpr& b) {
  if (!arith::is_canonical_int(a.dtype())) {
    if (a.dtype().lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Add, a, b)) return r;
    if (PrimExpr r = fold_scalar(
            a, b, [](uint64_t x, uint64_t y) { return x + y; },
            [](double x, double y) { return x + y; }))
      return r;
    return AddNode::make(a, b);
  }
  LinearSum sum = arith::to_sum(a);
  sum.add(arith::to_sum(b), 1);
  if (!sum.valid || out_of_steps()) return AddNode::make(a, b);
  return normalize_sum(std::move(sum));
}

PrimExpr Analyzer::Impl::sub(const PrimExpr& a, const PrimExpr& b) {
  if (!arith::is_canonical_int(a.dtype())) {
    if (a.dtype().lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Sub, a, b)) return r;
    if (PrimExpr r = fold_scalar(
            a, b, [](uint64_t x, uint64_t y) { return x - y; },
            [](double x, double y) { return x - y; }))
      return r;
    return SubNode::make(a, b);
  }
  LinearSum sum = arith::to_sum(a);
  sum.add(arith::to_sum(b), -1);
  if (!sum.valid || out_of_steps()) return SubNode::make(a, b);
  return normalize_sum(std::move(sum));
}

PrimExpr Analyzer::Impl::mul(const PrimExpr& a, const PrimExpr& b) {
  if (!arith::is_canonical_int(a.dtype())) {
    if (a.dtype().lanes > 1)
      if (PrimExpr r = vector_binary(ExprKind::Mul, a, b)) return r;
    if (PrimExpr r = fold_scalar(
            a, b, [](uint64_t x, uint64_t y) { return x * y; },
            [](double x, double y) { return x * y; }))
      return r;
    return MulNode::make(a, b);
  }
  if (out_of_steps()) return MulNode::make(a, b);
  LinearSum sa = arith::to_sum(a), sb = arith::to_sum(b);
  if (!sa.valid || !sb.valid) return MulNode::make(a, b);
  if (sb.is_const() || sa.is_const()) {
    LinearSum& scaled = sb.is_const() ? sa : sb;
    scaled.scale(sb.is_const() ? sb.constant : sa.constant);
    if (!scaled.valid) return MulNode::make(a, b);
    return normalize_sum(std::move(scaled));
  }
  // Small products are expanded so they cancel against other terms; large
  // ones stay one product term, which keeps the size linear.
  auto ma = monomials(sa), mb = monomials(sb);
  LinearSum product;
  product.dtype = a.dtype();
  if (ma.size() * mb.size() <= 4) {
    for (const auto& [ta, ca] : ma) {
      for (const auto& [tb, cb] : mb) {
        auto c = arith::checked_mul(ca, cb);
        if (!c) return MulNode::make(a, b);
        if (!ta && !tb)
          product.add_constant(*c);
        else if (!ta || !tb)
          product.add_term(ta ? ta : tb, *c);
        else
          product.add_term(product_term(ta, tb), *c);
      }
    }
  } else {
    product.add_term(product_term(a, b), 1);
  }
  if (!product.valid) return MulNode::make(a, b);
  return normalize_sum(std::move(product));
}

// ---------------------------------------------------------------- split merging

namespace {

// A term read as floordiv(floormod(x, upper), lower) (upper 0: no modulo).
struct Split {
  PrimExpr x;
  int64_t lower = 1, upper = 0;
};

Split as_split(const PrimExpr& term) {
  if (const auto* d = as<FloorDivNode>(term)) {
    auto lower = arith::as_scalar_int(d->b);
    if (lower && *lower > 0) {
      if (const auto* m = as<FloorModNode>(d->a)) {
        auto upper = arith::as_scalar_int(m->b);
        if (upper && *upper > 0 && *upper % *lower == 0) return {m->a, *lower, *upper};
      }
      return {d->a, *lower, 0};
    }
  }
  if (const auto* m = as<FloorModNode>(term)) {
    auto upper = arith::as_scalar_int(m->b);
    if (upper && *upper > 0) return {m->a, 1, *upper};
  }
  return {term, 1, 0};
}

}  // namespace

PrimExpr Analyzer::Impl::normalize_sum(LinearSum sum) {
  ANVIL_ICHECK(sum.valid, "normalize_sum of an overflowed sum");
  // Each merge removes a term, so this ends after at most terms.size() rounds.
  bool merged = true;
  while (merged && sum.valid && sum.terms.size() >= 1 && !out_of_steps()) {
    merged = false;
    arith::RuleStep step(*this);
    std::vector<Split> splits;
    splits.reserve(sum.terms.size());
    for (const auto& entry : sum.terms) splits.push_back(as_split(entry.first));
    // The split (x, lower, upper) as a simplified expression times coeff.
    auto add_split = [&](LinearSum& into, const Split& s, int64_t coeff) {
      if (s.lower == 1 && s.upper == 0) {
        into.add(arith::to_sum(s.x), coeff);
        return;
      }
      PrimExpr e = s.x;
      if (s.upper != 0) e = floormod(e, IntImmNode::make(sum.dtype, s.upper));
      if (s.lower != 1) e = floordiv(e, IntImmNode::make(sum.dtype, s.lower));
      into.add(arith::to_sum(e), coeff);
    };
    for (size_t i = 0; i < sum.terms.size() && !merged; ++i) {
      const Split& si = splits[i];
      int64_t ci = sum.terms[i].second;
      for (size_t j = 0; j < sum.terms.size() && !merged; ++j) {
        if (i == j) continue;
        const Split& sj = splits[j];
        int64_t cj = sum.terms[j].second;
        if (!arith::expr_equal(si.x, sj.x)) continue;
        // (x, M, U)*k*(M/L) + (x, L, M)*k  ->  (x, L, U)*k
        if (sj.upper != 0 && sj.upper == si.lower && si.lower % sj.lower == 0) {
          auto expected = arith::checked_mul(cj, si.lower / sj.lower);
          if (expected && *expected == ci) {
            LinearSum next = sum;
            next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::max(i, j)));
            next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::min(i, j)));
            add_split(next, {si.x, sj.lower, si.upper}, cj);
            if (next.valid) sum = std::move(next), merged = true;
            continue;
          }
        }
        // (x, L, U)*k - (x, M, U)*k*(M/L)  ->  (x, L, M)*k
        if (si.upper == sj.upper && sj.lower > si.lower && sj.lower % si.lower == 0 &&
            (si.upper == 0 || si.upper % sj.lower == 0)) {
          auto expected = arith::checked_mul(ci, -(sj.lower / si.lower));
          if (expected && *expected == cj) {
            LinearSum next = sum;
            next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::max(i, j)));
            next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::min(i, j)));
            add_split(next, {si.x, si.lower, sj.lower}, ci);
            if (next.valid) sum = std::move(next), merged = true;
            continue;
          }
        }
      }
    }
    // d * floordiv(x, d) * k + floormod(x, d) * k -> x * k for a divisor that is not a
    // constant: symbolic dims fused into one loop and split again by a size variable.
    for (size_t i = 0; i < sum.terms.size() && !merged; ++i) {
      std::vector<PrimExpr> factors;
      gather_factors(sum.terms[i].first, factors);
      if (factors.size() != 2) continue;
      for (size_t a = 0; a < 2 && !merged; ++a) {
        const auto* div = as<FloorDivNode>(factors[a]);
        if (!div || arith::as_scalar_int(div->b) || !arith::expr_equal(factors[1 - a], div->b))
          continue;
        for (size_t j = 0; j < sum.terms.size() && !merged; ++j) {
          const auto* mod = as<FloorModNode>(sum.terms[j].first);
          if (j == i || !mod || sum.terms[j].second != sum.terms[i].second ||
              !arith::expr_equal(mod->a, div->a) || !arith::expr_equal(mod->b, div->b))
            continue;
          LinearSum next = sum;
          next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::max(i, j)));
          next.terms.erase(next.terms.begin() + std::ptrdiff_t(std::min(i, j)));
          next.add(arith::to_sum(div->a), sum.terms[i].second);
          if (next.valid) sum = std::move(next), merged = true;
        }
      }
    }
    // x - floordiv(x, M)*M -> floormod(x, M) when x is itself a sum whose
    // terms all appear in this one.
    for (size_t i = 0; i < sum.terms.size() && !merged; ++i) {
      const Split& si = splits[i];
      int64_t ci = sum.terms[i].second;
      if (si.upper != 0 || si.lower == 1 || ci % si.lower != 0) continue;
      LinearSum x = arith::to_sum(si.x);
      if (x.terms.size() < 2 || !x.valid) continue;
      int64_t c = -(ci / si.lower);
      LinearSum next = sum;
      next.terms.erase(next.terms.begin() + std::ptrdiff_t(i));
      next.add(x, -c);
      bool all_cancelled = next.valid;
      for (const auto& [t, coeff] : x.terms) {
        for (const auto& entry : next.terms)
          if (arith::expr_equal(entry.first, t)) all_cancelled = false;
      }
      if (!all_cancelled) continue;
      add_split(next, {si.x, 1, si.lower}, c);
      if (next.valid) sum = std::move(next), merged = true;
    }
  }
  // Merges only ever replace sum by a valid one.
  return arith::from_sum(sum);
}

}  // namespace anvil::tir
