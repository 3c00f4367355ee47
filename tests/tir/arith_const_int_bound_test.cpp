// Interval bounds of integer expressions under variable ranges. Expected
// bounds are derived by hand from the ranges.
#include <gtest/gtest.h>

#include <limits>

#include "anvil/tir/arith.h"

namespace anvil::tir {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

class Bounds : public ::testing::Test {
 protected:
  Var x = VarNode::make("x"), y = VarNode::make("y"), n = VarNode::make("n");
  Analyzer analyzer;
  void SetUp() override {
    analyzer.bind(x, Range::from_min_extent(0, 8));   // [0, 7]
    analyzer.bind(y, Range::from_min_extent(-3, 6));  // [-3, 2]
  }
  void expect_bound(const PrimExpr& e, int64_t lo, int64_t hi) {
    IntBound b = analyzer.const_int_bound(e);
    EXPECT_EQ(b.min_value, lo);
    EXPECT_EQ(b.max_value, hi);
  }
};

TEST_F(Bounds, Constants) { expect_bound(make_int(5), 5, 5); }

TEST_F(Bounds, VariablesFromTheirRanges) {
  expect_bound(x, 0, 7);
  expect_bound(y, -3, 2);
  IntBound unknown = analyzer.const_int_bound(n);
  EXPECT_TRUE(unknown.has_no_lower());
  EXPECT_TRUE(unknown.has_no_upper());
}

TEST_F(Bounds, AddSubMul) {
  expect_bound(x + y, -3, 9);
  expect_bound(x - y, -2, 10);
  expect_bound(x * y, -21, 14);
  expect_bound(y * y, -6, 9);  // y*y is one product term: corners of the interval product
  expect_bound(x * 4 + 3, 3, 31);
}

TEST_F(Bounds, FloorDivisionAndModulo) {
  expect_bound(floordiv(x, 2), 0, 3);
  expect_bound(floordiv(y, 2), -2, 1);  // floor(-3/2) = -2
  expect_bound(floormod(y, 4), 0, 3);
  expect_bound(floormod(x, 16), 0, 7);
  expect_bound(floordiv(x, -2), -4, 0);  // floor(7 / -2) = -4
}

TEST_F(Bounds, TruncatingDivisionAndModulo) {
  expect_bound(truncdiv(y, 2), -1, 1);
  expect_bound(truncmod(y, 4), -3, 3);
  expect_bound(truncmod(x, 4), 0, 3);
}

TEST_F(Bounds, MinMaxSelect) {
  expect_bound(min(x, y), -3, 2);
  expect_bound(max(x, y), 0, 7);
  expect_bound(select(x < 3, y, x + 10), -3, 17);
}

TEST_F(Bounds, Casts) {
  Var a = VarNode::make("a", DataType::int32());
  analyzer.bind(
      a, Range::from_min_extent(make_int(0, DataType::int32()), make_int(100, DataType::int32())));
  expect_bound(cast(kIndexType, a), 0, 99);
  // A value that may not fit wraps: only the type's range is known.
  PrimExpr narrowed = cast(DataType::int8(), cast(kIndexType, a) * 10);
  expect_bound(narrowed, -128, 127);
  Var u = VarNode::make("u", DataType::uint8());
  expect_bound(u, 0, 255);
}

TEST_F(Bounds, UnknownDivisorGivesUnknown) {
  IntBound b = analyzer.const_int_bound(floordiv(x, y));
  EXPECT_EQ(b.min_value, kMin);
  EXPECT_EQ(b.max_value, kMax);
}

// The tiles of a size variable n: ceildiv(n, 4) * 4 has no upper bound when n has none (an
// int64 limit means "unbounded"; dividing it must not make it a finite, huge value), and the
// exact one when n has a range.
TEST_F(Bounds, DividingAnUnboundedValueKeepsItUnbounded) {
  PrimExpr tiles = floordiv(n + 3, 4) * 4;
  EXPECT_TRUE(analyzer.const_int_bound(tiles).has_no_upper());
  analyzer.bind(n, Range::from_min_extent(0, 101));  // [0, 100]
  expect_bound(tiles, 0, 100);
}

TEST_F(Bounds, SaturatesInsteadOfOverflowing) {
  analyzer.bind(n, Range::from_min_extent(0, kMax));
  IntBound b = analyzer.const_int_bound(n * 4 + 4);
  EXPECT_EQ(b.min_value, 4);
  EXPECT_EQ(b.max_value, kMax);
}

TEST_F(Bounds, SymbolicRangeUsesBoundsOfItsEnds) {
  Var m = VarNode::make("m");
  analyzer.bind(m, Range::from_min_extent(1, 10));  // [1, 10]
  Var i = VarNode::make("i");
  analyzer.bind(i, Range::from_min_extent(0, m));  // [0, m - 1] so [0, 9]
  expect_bound(i, 0, 9);
}

TEST_F(Bounds, VectorsCoverEveryLane) {
  expect_bound(ramp(x * 4, 1, 4), 0, 31);
  expect_bound(broadcast(y, 8), -3, 2);
}

TEST_F(Bounds, LetValuesBoundTheirVariable) {
  Var t = VarNode::make("t");
  expect_bound(let(t, x * 2, t + 1), 1, 15);
  Var bound_var = VarNode::make("v");
  analyzer.bind(bound_var, x + 100);
  expect_bound(bound_var, 100, 107);
}

TEST_F(Bounds, ConstraintScopesNarrowAndRestore) {
  {
    ConstraintScope scope(analyzer, x < 3);
    expect_bound(x, 0, 2);
    {
      ConstraintScope inner(analyzer, logical_and(x >= 1, eq(y, 0)));
      expect_bound(x, 1, 2);
      expect_bound(y, 0, 0);
    }
    expect_bound(x, 0, 2);
    expect_bound(y, -3, 2);
  }
  expect_bound(x, 0, 7);
}

}  // namespace
}  // namespace anvil::tir
