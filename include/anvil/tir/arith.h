// The arithmetic simplifier and analyzer (src/tir/arith/, one file per concern):
// constant folding, canonical linear forms (sum of scaled terms), floor
// division/modulo with known bounds, integer bound propagation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "anvil/tir/tir.h"

namespace anvil::tir {

// Inclusive integer bounds of an expression; min/max saturate at int64 limits
// when unknown.
struct IntBound {
  int64_t min_value, max_value;
  bool is_const() const { return min_value == max_value; }
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
  // var equals value (a let binding).
  void bind(const Var& var, const PrimExpr& value);
  // The simplified form; integer results are canonical (equal linear
  // combinations print the same), floats only constant-folded.
  PrimExpr simplify(const PrimExpr& e);
  // Bounds of an integer expression under the bindings.
  IntBound const_int_bound(const PrimExpr& e);
  // True when cond is provably true for every binding.
  bool can_prove(const PrimExpr& cond);
  bool can_prove_equal(const PrimExpr& a, const PrimExpr& b);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// simplify with no knowledge of variables.
PrimExpr simplify(const PrimExpr& e);

}  // namespace anvil::tir
