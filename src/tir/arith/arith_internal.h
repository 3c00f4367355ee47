// Shared pieces of the arithmetic analyzer: the analyzer's state, the linear
// sum used for canonical forms, the structural order of terms, and the rule
// entry points each file of src/tir/arith/ implements. Every rule takes
// operands that are already simplified and returns a simplified result.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/tir/arith.h"
#include "anvil/tir/tir.h"

namespace anvil::tir::arith {

inline constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------- structural order

// A total order on expressions: kind, dtype, then fields; variables and
// buffers by name (then identity), so the order is stable between runs.
int compare_expr(const PrimExpr& a, const PrimExpr& b);
// Same tree with the same free variables.
bool expr_equal(const PrimExpr& a, const PrimExpr& b);

// ---------------------------------------------------------------- integer helpers

int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);
// a + b, a * b, or nullopt on int64 overflow.
std::optional<int64_t> checked_add(int64_t a, int64_t b);
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
int64_t gcd(int64_t a, int64_t b);
// The smallest and largest value of an integer dtype.
IntBound dtype_bound(DataType dtype);
// True for scalar signed integers: the types canonical sums apply to.
bool is_canonical_int(DataType dtype);
// The scalar integer immediate value of e, if e is one.
std::optional<int64_t> as_scalar_int(const PrimExpr& e);
// The operands of an EQ/NE/LT/LE/GT/GE node; false for anything else.
bool comparison_operands(const PrimExpr& e, PrimExpr& a, PrimExpr& b);

// ---------------------------------------------------------------- linear sums

// sum(coeff * term) + constant over one scalar signed-integer dtype. Terms are
// distinct (structurally) and no term is an Add, Sub, a Mul by a constant, or
// an immediate. `valid` is false after a coefficient overflowed int64.
struct LinearSum {
  DataType dtype = kIndexType;
  std::vector<std::pair<PrimExpr, int64_t>> terms;
  int64_t constant = 0;
  bool valid = true;

  bool is_const() const { return terms.empty(); }
  void add_term(const PrimExpr& term, int64_t coeff);
  void add_constant(int64_t value);
  void add(const LinearSum& other, int64_t scale);
  void scale(int64_t factor);
};

// The linear sum an (already simplified) expression denotes.
LinearSum to_sum(const PrimExpr& e);
// The canonical expression of a sum (see arith.h for the order of terms).
PrimExpr from_sum(const LinearSum& sum);

// ---------------------------------------------------------------- analyzer state

// What the analyzer knows of one variable.
struct VarInfo {
  Var var;  // keeps the node alive so its address is not reused
  IntBound bound{kNegInf, kPosInf};
  PrimExpr value;  // set by bind(var, value): simplify substitutes it
  // Inclusive symbolic endpoints from a range with non-constant min or
  // extent (e.g. [0, n - 1]); null when the range was constant.
  PrimExpr symbolic_min, symbolic_max;
};

}  // namespace anvil::tir::arith

namespace anvil::tir {

class Analyzer::Impl {
 public:
  using VarInfo = arith::VarInfo;

  // ---- bindings (analyzer.cpp)
  void bind_range(const Var& var, const Range& range);
  void bind_value(const Var& var, const PrimExpr& value);
  void unbind(const Var& var);
  const VarInfo* find(const VarNode* var) const;
  // Sets (or clears) what is known of var without undo logging; returns the
  // previous state so a caller can restore it on leaving a scope.
  std::optional<VarInfo> replace_info(const Var& var, std::optional<VarInfo> info);
  size_t push_constraint(const PrimExpr& cond);
  void pop_constraint(size_t token);
  // True when cond (simplified) was assumed by an enclosing constraint.
  bool is_known_fact(const PrimExpr& cond) const;
  static bool uses_var_node(const PrimExpr& e, const VarNode* var);

  // ---- entry points
  PrimExpr simplify(const PrimExpr& e);
  IntBound bound(const PrimExpr& e);  // const_int_bound.cpp
  bool can_prove(const PrimExpr& cond);
  // True when the integer expression is provably < 0 (<= 0, >= 0, ...):
  // constant bounds first, then symbolic ranges of the variables.
  bool prove_negative(const PrimExpr& diff);
  bool prove_nonnegative(const PrimExpr& diff);

  // ---- rules on simplified operands (the files named beside each)
  PrimExpr visit(const PrimExpr& e);                                     // simplifier.cpp
  PrimExpr binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b);  // simplifier.cpp
  PrimExpr visit_let(const LetNode* node, const PrimExpr& self);         // simplifier.cpp
  PrimExpr add(const PrimExpr& a, const PrimExpr& b);                    // canonical_form.cpp
  PrimExpr sub(const PrimExpr& a, const PrimExpr& b);                    // canonical_form.cpp
  PrimExpr mul(const PrimExpr& a, const PrimExpr& b);                    // canonical_form.cpp
  PrimExpr normalize_sum(arith::LinearSum sum);                          // canonical_form.cpp
  PrimExpr floordiv(const PrimExpr& a, const PrimExpr& b);               // div_mod_rules.cpp
  PrimExpr floormod(const PrimExpr& a, const PrimExpr& b);               // div_mod_rules.cpp
  // floordiv / floormod of a sum whose constant is in [0, c) and whose
  // coefficients are not multiples of c, by the constant c > 0.
  PrimExpr divide_remainder(const arith::LinearSum& rem, int64_t c);      // div_mod_rules.cpp
  PrimExpr reduce_remainder(const arith::LinearSum& rem, int64_t c);      // div_mod_rules.cpp
  PrimExpr truncdiv(const PrimExpr& a, const PrimExpr& b);                // div_mod_rules.cpp
  PrimExpr truncmod(const PrimExpr& a, const PrimExpr& b);                // div_mod_rules.cpp
  PrimExpr min(const PrimExpr& a, const PrimExpr& b);                     // rewrite_rules.cpp
  PrimExpr max(const PrimExpr& a, const PrimExpr& b);                     // rewrite_rules.cpp
  PrimExpr compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b);  // rewrite_rules.cpp
  PrimExpr logical_and(const PrimExpr& a, const PrimExpr& b);             // rewrite_rules.cpp
  PrimExpr logical_or(const PrimExpr& a, const PrimExpr& b);              // rewrite_rules.cpp
  PrimExpr logical_not(const PrimExpr& a);                                // rewrite_rules.cpp
  // True when b is exactly the negation of a (x < y and x >= y).
  bool are_complements(const PrimExpr& a, const PrimExpr& b);                // rewrite_rules.cpp
  PrimExpr select(const PrimExpr& c, const PrimExpr& t, const PrimExpr& f);  // rewrite_rules.cpp
  PrimExpr cast(DataType dtype, const PrimExpr& value);                      // rewrite_rules.cpp
  // Vector forms (vector_rules.cpp): the result, or null when no rule applies.
  PrimExpr vector_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b);

  // Rules call each other; past this depth they stop rewriting and build
  // plain nodes, so no input can make the simplifier loop or blow up.
  static constexpr int kMaxDepth = 48;
  int depth = 0;
  // Rewrite steps left for the current top-level simplify call.
  int64_t steps_left = 0;
  static constexpr int64_t kStepBudget = 20000;
  bool out_of_steps() const { return depth > kMaxDepth || steps_left <= 0; }

 private:
  std::unordered_map<const VarNode*, VarInfo> vars_;
  struct UndoEntry {
    Var var;
    std::optional<VarInfo> previous;
  };
  std::vector<UndoEntry> undo_log_;
  std::vector<PrimExpr> facts_;
  struct ScopeMarker {
    size_t undo_size, facts_size;
  };
  std::vector<ScopeMarker> scopes_;
  void set_info(const Var& var, std::optional<VarInfo> info, bool log_undo);
  // Narrows the bound of x from a fact of the form "x + k cmp 0".
  void tighten_from(const PrimExpr& fact);
  bool active_ = false;  // inside a top-level simplify call
};

}  // namespace anvil::tir

namespace anvil::tir::arith {

// Counts one rule application for the duration of its scope.
class RuleStep {
 public:
  explicit RuleStep(Analyzer::Impl& impl) : impl_(impl) {
    ++impl_.depth;
    --impl_.steps_left;
  }
  ~RuleStep() { --impl_.depth; }
  RuleStep(const RuleStep&) = delete;
  RuleStep& operator=(const RuleStep&) = delete;

 private:
  Analyzer::Impl& impl_;
};

}  // namespace anvil::tir::arith
