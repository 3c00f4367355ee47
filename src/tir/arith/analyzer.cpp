// The analyzer's state (variable ranges, let values, assumed facts) and the
// public entry points; the rules live in the other files of this folder.
#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "tir/arith/arith_internal.h"

namespace anvil::tir {

using arith::LinearSum;

// ---------------------------------------------------------------- bindings

const Analyzer::Impl::VarInfo* Analyzer::Impl::find(const VarNode* var) const {
  auto it = vars_.find(var);
  return it == vars_.end() ? nullptr : &it->second;
}

void Analyzer::Impl::set_info(const Var& var, std::optional<VarInfo> info, bool log_undo) {
  if (log_undo) {
    const VarInfo* old = find(var.get());
    undo_log_.push_back({var, old ? std::optional<VarInfo>(*old) : std::nullopt});
  }
  if (info)
    vars_[var.get()] = std::move(*info);
  else
    vars_.erase(var.get());
}

std::optional<Analyzer::Impl::VarInfo> Analyzer::Impl::replace_info(const Var& var,
                                                                    std::optional<VarInfo> info) {
  const VarInfo* old = find(var.get());
  std::optional<VarInfo> previous = old ? std::optional<VarInfo>(*old) : std::nullopt;
  set_info(var, std::move(info), false);
  return previous;
}

void Analyzer::Impl::bind_range(const Var& var, const Range& range) {
  ANVIL_ICHECK(var && range.min && range.extent, "Analyzer::bind of a null range");
  PrimExpr min = simplify(range.min);
  PrimExpr last = simplify(range.min + range.extent - make_int(1, range.min.dtype()));
  VarInfo info;
  info.var = var;
  info.bound = {bound(min).min_value, bound(last).max_value};
  bool symbolic = !as<IntImmNode>(min) || !as<IntImmNode>(last);
  bool self_referent = uses_var_node(min, var.get()) || uses_var_node(last, var.get());
  if (symbolic && !self_referent) {
    info.symbolic_min = min;
    info.symbolic_max = last;
  }
  set_info(var, std::move(info), !scopes_.empty());
}

void Analyzer::Impl::bind_value(const Var& var, const PrimExpr& value) {
  ANVIL_ICHECK(var && value, "Analyzer::bind of a null value");
  VarInfo info;
  info.var = var;
  info.value = simplify(value);
  if (uses_var_node(info.value, var.get())) return;  // x = x + 1 says nothing usable
  info.bound = bound(info.value);
  set_info(var, std::move(info), !scopes_.empty());
}

void Analyzer::Impl::unbind(const Var& var) { set_info(var, std::nullopt, !scopes_.empty()); }

bool Analyzer::Impl::uses_var_node(const PrimExpr& e, const VarNode* var) {
  return uses_var(e, [var](const VarNode* v) { return v == var; });
}

// ---------------------------------------------------------------- constraints

namespace {

// Splits a && b && c into its conjuncts.
void conjuncts(const PrimExpr& cond, std::vector<PrimExpr>& out) {
  if (const auto* n = as<AndNode>(cond)) {
    conjuncts(n->a, out);
    conjuncts(n->b, out);
    return;
  }
  out.push_back(cond);
}

}  // namespace

size_t Analyzer::Impl::push_constraint(const PrimExpr& cond) {
  scopes_.push_back({undo_log_.size(), facts_.size()});
  std::vector<PrimExpr> parts;
  conjuncts(simplify(cond), parts);
  for (const PrimExpr& part : parts) {
    if (as<IntImmNode>(part)) continue;
    facts_.push_back(part);
    tighten_from(part);
  }
  return scopes_.size() - 1;
}

void Analyzer::Impl::tighten_from(const PrimExpr& fact) {
  // Only "coeff*x + k  cmp  0" with coeff = +-1 narrows x's constant bound.
  if (fact->kind == ExprKind::NE) return;
  PrimExpr a, b;
  if (!arith::comparison_operands(fact, a, b)) return;
  if (!arith::is_canonical_int(a.dtype())) return;
  LinearSum diff = arith::to_sum(a);
  diff.add(arith::to_sum(b), -1);
  if (!diff.valid || diff.terms.size() != 1) return;
  const auto* var = as<VarNode>(diff.terms[0].first);
  int64_t coeff = diff.terms[0].second;
  if (!var || (coeff != 1 && coeff != -1)) return;
  // fact is "coeff*x + k  cmp  0"; turn it into lo <= x <= hi.
  int64_t k = diff.constant;
  int64_t lo = arith::kNegInf, hi = arith::kPosInf;
  auto at_most = [&](int64_t v) { hi = std::min(hi, v); };   // coeff*x + k <= 0
  auto at_least = [&](int64_t v) { lo = std::max(lo, v); };  // coeff*x + k >= 0
  auto le_zero = [&](int64_t slack) {                        // coeff*x + k + slack <= 0
    auto kk = arith::checked_add(k, slack);
    if (!kk) return;
    if (coeff == 1 && *kk != arith::kNegInf) at_most(-*kk);
    if (coeff == -1) at_least(*kk);
  };
  auto ge_zero = [&](int64_t slack) {  // coeff*x + k - slack >= 0
    auto kk = arith::checked_add(k, -slack);
    if (!kk) return;
    if (coeff == 1 && *kk != arith::kNegInf) at_least(-*kk);
    if (coeff == -1) at_most(*kk);
  };
  switch (fact->kind) {
    case ExprKind::LT:
      le_zero(1);
      break;
    case ExprKind::LE:
      le_zero(0);
      break;
    case ExprKind::GT:
      ge_zero(1);
      break;
    case ExprKind::GE:
      ge_zero(0);
      break;
    case ExprKind::EQ:
      le_zero(0);
      ge_zero(0);
      break;
    default:
      return;
  }
  Var var_ref(var);
  const VarInfo* old = find(var);
  VarInfo info;
  if (old) info = *old;
  info.var = var_ref;
  if (!old) info.bound = arith::dtype_bound(var->dtype);
  info.bound.min_value = std::max(info.bound.min_value, lo);
  info.bound.max_value = std::min(info.bound.max_value, hi);
  set_info(var_ref, std::move(info), true);
}

void Analyzer::Impl::pop_constraint(size_t token) {
  ANVIL_ICHECK(token + 1 == scopes_.size(), "constraint scopes ended out of order");
  ScopeMarker marker = scopes_.back();
  scopes_.pop_back();
  while (undo_log_.size() > marker.undo_size) {
    UndoEntry entry = std::move(undo_log_.back());
    undo_log_.pop_back();
    set_info(entry.var, std::move(entry.previous), false);
  }
  facts_.resize(marker.facts_size);
}

bool Analyzer::Impl::is_known_fact(const PrimExpr& cond) const {
  for (const PrimExpr& fact : facts_)
    if (arith::expr_equal(fact, cond)) return true;
  return false;
}

// ---------------------------------------------------------------- proving

PrimExpr Analyzer::Impl::simplify(const PrimExpr& e) {
  ANVIL_ICHECK(e, "simplify of a null expression");
  bool outermost = !active_;
  if (outermost) {
    active_ = true;
    steps_left = kStepBudget;
    depth = 0;
  }
  PrimExpr result;
  try {
    result = visit(e);
  } catch (...) {
    if (outermost) active_ = false;
    throw;
  }
  if (outermost) active_ = false;
  return result;
}

namespace {

// The sum with each variable that has a symbolic range and occurs only as a
// plain term replaced by the endpoint that maximizes (or minimizes) the sum.
std::optional<LinearSum> substitute_endpoints(const Analyzer::Impl& impl, const LinearSum& sum,
                                              bool maximize) {
  LinearSum out;
  out.dtype = sum.dtype;
  out.constant = sum.constant;
  bool replaced = false;
  for (size_t i = 0; i < sum.terms.size(); ++i) {
    const auto& [term, coeff] = sum.terms[i];
    const auto* var = as<VarNode>(term);
    const Analyzer::Impl::VarInfo* info = var ? impl.find(var) : nullptr;
    bool usable = info && info->symbolic_max;
    for (size_t j = 0; usable && j < sum.terms.size(); ++j)
      if (j != i && Analyzer::Impl::uses_var_node(sum.terms[j].first, var)) usable = false;
    if (!usable) {
      out.add_term(term, coeff);
      continue;
    }
    bool take_max = (coeff > 0) == maximize;
    out.add(arith::to_sum(take_max ? info->symbolic_max : info->symbolic_min), coeff);
    replaced = true;
  }
  if (!replaced || !out.valid) return std::nullopt;
  return out;
}

}  // namespace

bool Analyzer::Impl::prove_negative(const PrimExpr& diff) {
  if (bound(diff).max_value < 0) return true;
  if (!arith::is_canonical_int(diff.dtype())) return false;
  LinearSum sum = arith::to_sum(diff);
  // A few rounds: endpoints may refer to variables with symbolic ranges too.
  for (int round = 0; round < 3 && !out_of_steps(); ++round) {
    auto next = substitute_endpoints(*this, sum, /*maximize=*/true);
    if (!next) return false;
    arith::RuleStep step(*this);
    PrimExpr e = normalize_sum(*next);
    if (bound(e).max_value < 0) return true;
    sum = arith::to_sum(e);
  }
  return false;
}

bool Analyzer::Impl::prove_nonnegative(const PrimExpr& diff) {
  if (bound(diff).min_value >= 0) return true;
  if (!arith::is_canonical_int(diff.dtype())) return false;
  LinearSum sum = arith::to_sum(diff);
  for (int round = 0; round < 3 && !out_of_steps(); ++round) {
    auto next = substitute_endpoints(*this, sum, /*maximize=*/false);
    if (!next) return false;
    arith::RuleStep step(*this);
    PrimExpr e = normalize_sum(*next);
    if (bound(e).min_value >= 0) return true;
    sum = arith::to_sum(e);
  }
  return false;
}

bool Analyzer::Impl::can_prove(const PrimExpr& cond) {
  PrimExpr s = simplify(cond);
  if (auto v = arith::as_scalar_int(s)) return *v != 0;
  if (const auto* b = as<BroadcastNode>(s))
    if (auto v = arith::as_scalar_int(b->value)) return *v != 0;
  return is_known_fact(s);
}

// ---------------------------------------------------------------- public API

Analyzer::Analyzer() : impl_(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;

void Analyzer::bind(const Var& var, const Range& range) { impl_->bind_range(var, range); }
void Analyzer::bind(const Var& var, const PrimExpr& value) { impl_->bind_value(var, value); }
void Analyzer::unbind(const Var& var) { impl_->unbind(var); }
PrimExpr Analyzer::simplify(const PrimExpr& e) {
  PrimExpr result = impl_->simplify(e);
  // Callers rely on identity to see that nothing changed.
  return arith::expr_equal(result, e) ? e : result;
}
IntBound Analyzer::const_int_bound(const PrimExpr& e) { return impl_->bound(impl_->simplify(e)); }
bool Analyzer::can_prove(const PrimExpr& cond) { return impl_->can_prove(cond); }
bool Analyzer::can_prove_equal(const PrimExpr& a, const PrimExpr& b) {
  if (a.dtype() != b.dtype()) return false;
  if (a.dtype().is_float() || a.dtype().is_bfloat())
    return arith::expr_equal(impl_->simplify(a), impl_->simplify(b));
  return can_prove(eq(a, b));
}
bool Analyzer::can_prove_greater_equal(const PrimExpr& e, int64_t lower) {
  return can_prove(e >= make_int(lower, e.dtype()));
}
bool Analyzer::can_prove_less(const PrimExpr& e, int64_t upper) {
  return can_prove(e < make_int(upper, e.dtype()));
}

ConstraintScope::ConstraintScope(Analyzer& analyzer, const PrimExpr& cond)
    : analyzer_(analyzer), saved_token_(analyzer.impl().push_constraint(cond)) {}
ConstraintScope::~ConstraintScope() { analyzer_.impl().pop_constraint(saved_token_); }

PrimExpr simplify(const PrimExpr& e) {
  Analyzer analyzer;
  return analyzer.simplify(e);
}

}  // namespace anvil::tir
