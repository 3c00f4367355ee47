// The arithmetic simplifier and analyzer (src/tir/arith/, one file per concern):
// constant folding, canonical linear forms (sum of scaled terms), floor
// division/modulo with known bounds, integer bound propagation.
//
// Canonical form of a scalar signed-integer expression: a sum of distinct
// terms times nonzero coefficients plus a constant. Terms with a positive
// coefficient come first (larger coefficient first, then a fixed structural
// order with variables ordered by name), then terms with a negative
// coefficient (subtracted), then the constant: (j + i*4) - j + 2*i prints as
// i*6, and k + 1 + j*8 + i*64 as i*64 + j*8 + k + 1. Split/fuse index forms are
// normalized to floordiv(x, c) and floordiv(floormod(x, u), l).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir {

// Inclusive integer bounds of an expression; min/max saturate at int64 limits
// when unknown.
struct IntBound {
  int64_t min_value, max_value;
  bool is_const() const { return min_value == max_value; }
  // True when nothing is known below / above.
  bool has_no_lower() const { return min_value == std::numeric_limits<int64_t>::min(); }
  bool has_no_upper() const { return max_value == std::numeric_limits<int64_t>::max(); }
};

// Knows variable ranges and simplifies and proves facts under them.
class Analyzer {
 public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // var takes values in range (e.g. a loop variable); replaces an earlier binding.
  void bind(const Var& var, const Range& range);
  // var equals value (a let binding): simplify replaces var by value.
  void bind(const Var& var, const PrimExpr& value);
  // Forgets what bind said about var.
  void unbind(const Var& var);
  // The simplified form; integer results are canonical (equal linear
  // combinations print the same), floats only constant-folded.
  PrimExpr simplify(const PrimExpr& e);
  // Bounds of an integer expression under the bindings.
  IntBound const_int_bound(const PrimExpr& e);
  // True when cond is provably true for every binding.
  bool can_prove(const PrimExpr& cond);
  bool can_prove_equal(const PrimExpr& a, const PrimExpr& b);
  // True when e >= lower (e < upper) for every binding.
  bool can_prove_greater_equal(const PrimExpr& e, int64_t lower);
  bool can_prove_less(const PrimExpr& e, int64_t upper);

  class Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// While alive, the analyzer assumes cond holds (e.g. inside the then branch
// of an if): bounds of variables compared with constants are tightened and
// cond itself simplifies to true. Scopes must end in reverse order; bindings
// made while a scope is alive are undone when it ends.
class ConstraintScope {
 public:
  ConstraintScope(Analyzer& analyzer, const PrimExpr& cond);
  ~ConstraintScope();
  ConstraintScope(const ConstraintScope&) = delete;
  ConstraintScope& operator=(const ConstraintScope&) = delete;

 private:
  Analyzer& analyzer_;
  size_t saved_token_;
};

// simplify with no knowledge of variables.
PrimExpr simplify(const PrimExpr& e);

}  // namespace anvil::tir
