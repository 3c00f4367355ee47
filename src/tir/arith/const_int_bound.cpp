// Interval bounds of integer expressions under the analyzer's variable
// ranges. Arithmetic is done in 128 bits and clamped, so a bound is always
// sound (assuming the expression itself does not overflow its type) even when
// an operand is unbounded; int64 limits stand for "unknown".
#include <algorithm>
#include <initializer_list>

#include "tir/arith/arith_internal.h"

namespace anvil::tir {

namespace {

using arith::kNegInf;
using arith::kPosInf;
using Wide = __int128;

int64_t clamp_wide(Wide v) {
  if (v < Wide(kNegInf)) return kNegInf;
  if (v > Wide(kPosInf)) return kPosInf;
  return int64_t(v);
}

IntBound intersect(IntBound a, IntBound b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

IntBound hull(std::initializer_list<Wide> values) {
  Wide lo = *std::min_element(values.begin(), values.end());
  Wide hi = *std::max_element(values.begin(), values.end());
  return {clamp_wide(lo), clamp_wide(hi)};
}

bool unbounded_below(IntBound b) { return b.min_value == kNegInf; }
bool unbounded_above(IntBound b) { return b.max_value == kPosInf; }

IntBound add_bounds(IntBound a, IntBound b) {
  int64_t lo = unbounded_below(a) || unbounded_below(b)
                   ? kNegInf
                   : clamp_wide(Wide(a.min_value) + b.min_value);
  int64_t hi = unbounded_above(a) || unbounded_above(b)
                   ? kPosInf
                   : clamp_wide(Wide(a.max_value) + b.max_value);
  return {lo, hi};
}

IntBound negate(IntBound a) {
  return {unbounded_above(a) ? kNegInf : clamp_wide(-Wide(a.max_value)),
          unbounded_below(a) ? kPosInf : clamp_wide(-Wide(a.min_value))};
}

IntBound mul_bounds(IntBound a, IntBound b) {
  Wide a0 = a.min_value, a1 = a.max_value, b0 = b.min_value, b1 = b.max_value;
  return hull({a0 * b0, a0 * b1, a1 * b0, a1 * b1});
}

Wide floor_div_wide(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Division is monotone in each operand while the divisor keeps its sign, so
// the corners bound it.
IntBound div_bounds(IntBound a, IntBound b, bool floor) {
  auto div = [&](Wide x, Wide y) -> Wide {
    // An int64 limit stands for "unbounded", not for a value: divided, it stays unbounded
    // (else floordiv(n + 3, 4) * 4 of a size variable n would get a finite, huge bound).
    if (x == Wide(kPosInf) || x == Wide(kNegInf))
      return (x > 0) == (y > 0) ? Wide(kPosInf) : Wide(kNegInf);
    return floor ? floor_div_wide(x, y) : x / y;
  };
  Wide a0 = a.min_value, a1 = a.max_value, b0 = b.min_value, b1 = b.max_value;
  return hull({div(a0, b0), div(a0, b1), div(a1, b0), div(a1, b1)});
}

Wide max_magnitude(IntBound b) { return std::max(-Wide(b.min_value), Wide(b.max_value)); }

}  // namespace

namespace {

class BoundEvaluator {
 public:
  explicit BoundEvaluator(Analyzer::Impl& impl) : impl_(impl) {}

  IntBound eval(const PrimExpr& e) {
    IntBound type_range = arith::dtype_bound(e.dtype());
    if (!(e.dtype().is_int() || e.dtype().is_uint() || e.dtype().is_bool())) return type_range;
    return intersect(eval_node(e), type_range);
  }

 private:
  IntBound eval_node(const PrimExpr& e) {
    switch (e->kind) {
      case ExprKind::IntImm: {
        int64_t v = as<IntImmNode>(e)->value;
        return {v, v};
      }
      case ExprKind::Var: {
        const auto* var = as<VarNode>(e);
        if (auto it = let_bounds_.find(var); it != let_bounds_.end()) return it->second;
        if (const auto* info = impl_.find(var)) return info->bound;
        return arith::dtype_bound(e.dtype());
      }
      case ExprKind::Add:
        return add_bounds(eval(as<AddNode>(e)->a), eval(as<AddNode>(e)->b));
      case ExprKind::Sub:
        return add_bounds(eval(as<SubNode>(e)->a), negate(eval(as<SubNode>(e)->b)));
      case ExprKind::Mul:
        return mul_bounds(eval(as<MulNode>(e)->a), eval(as<MulNode>(e)->b));
      case ExprKind::FloorDiv:
        return div_or_unknown(e, eval(as<FloorDivNode>(e)->a), eval(as<FloorDivNode>(e)->b), true);
      case ExprKind::Div:
        return div_or_unknown(e, eval(as<DivNode>(e)->a), eval(as<DivNode>(e)->b), false);
      case ExprKind::FloorMod:
        return floor_mod_bound(eval(as<FloorModNode>(e)->a), eval(as<FloorModNode>(e)->b));
      case ExprKind::Mod:
        return trunc_mod_bound(eval(as<ModNode>(e)->a), eval(as<ModNode>(e)->b));
      case ExprKind::Min: {
        IntBound a = eval(as<MinNode>(e)->a), b = eval(as<MinNode>(e)->b);
        return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
      }
      case ExprKind::Max: {
        IntBound a = eval(as<MaxNode>(e)->a), b = eval(as<MaxNode>(e)->b);
        return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
      }
      case ExprKind::Select: {
        const auto* n = as<SelectNode>(e);
        IntBound t = eval(n->true_value), f = eval(n->false_value);
        return {std::min(t.min_value, f.min_value), std::max(t.max_value, f.max_value)};
      }
      case ExprKind::Cast: {
        const auto* n = as<CastNode>(e);
        DataType from = n->value.dtype();
        if (from.is_int() || from.is_uint() || from.is_bool()) {
          IntBound v = eval(n->value), target = arith::dtype_bound(e.dtype());
          // A value that does not fit wraps: then only the type's range is known.
          if (v.min_value >= target.min_value && v.max_value <= target.max_value) return v;
        }
        return arith::dtype_bound(e.dtype());
      }
      case ExprKind::Ramp: {
        const auto* n = as<RampNode>(e);
        IntBound base = eval(n->base), stride = eval(n->stride);
        IntBound steps = mul_bounds(stride, IntBound{0, n->lanes - 1});
        return add_bounds(base, steps);
      }
      case ExprKind::Broadcast:
        return eval(as<BroadcastNode>(e)->value);
      case ExprKind::Let: {
        const auto* n = as<LetNode>(e);
        IntBound value = eval(n->value);
        auto saved = let_bounds_.find(n->var.get());
        std::optional<IntBound> previous;
        if (saved != let_bounds_.end()) previous = saved->second;
        let_bounds_[n->var.get()] = value;
        IntBound body = eval(n->body);
        if (previous)
          let_bounds_[n->var.get()] = *previous;
        else
          let_bounds_.erase(n->var.get());
        return body;
      }
      case ExprKind::Call: {
        const auto* n = as<CallNode>(e);
        if (n->op == "likely" && n->args.size() == 1) return eval(n->args[0]);
        if (n->op == "if_then_else" && n->args.size() == 3) {
          IntBound t = eval(n->args[1]), f = eval(n->args[2]);
          return {std::min(t.min_value, f.min_value), std::max(t.max_value, f.max_value)};
        }
        return arith::dtype_bound(e.dtype());
      }
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Not:
        return {0, 1};
      default:
        return arith::dtype_bound(e.dtype());
    }
  }

  static IntBound div_or_unknown(const PrimExpr& e, IntBound a, IntBound b, bool floor) {
    if (b.min_value > 0 || b.max_value < 0) return div_bounds(a, b, floor);
    return arith::dtype_bound(e.dtype());
  }

  static IntBound floor_mod_bound(IntBound a, IntBound b) {
    if (b.min_value > 0) {
      if (a.min_value >= 0 && a.max_value < b.min_value) return a;
      int64_t top = clamp_wide(Wide(b.max_value) - 1);
      if (a.min_value >= 0) return {0, std::min(a.max_value, top)};
      return {0, top};
    }
    if (b.max_value < 0) return {clamp_wide(Wide(b.min_value) + 1), 0};
    int64_t m = clamp_wide(max_magnitude(b) - 1);
    return {-m, m};
  }

  static IntBound trunc_mod_bound(IntBound a, IntBound b) {
    int64_t m = clamp_wide(max_magnitude(b) - 1);
    if (a.min_value >= 0) return {0, std::min(a.max_value, m)};
    if (a.max_value <= 0) return {std::max(a.min_value, -m), 0};
    return {-m, m};
  }

  Analyzer::Impl& impl_;
  std::unordered_map<const VarNode*, IntBound> let_bounds_;
};

}  // namespace

IntBound Analyzer::Impl::bound(const PrimExpr& e) {
  ANVIL_ICHECK(e, "const_int_bound of a null expression");
  return BoundEvaluator(*this).eval(e);
}

}  // namespace anvil::tir
