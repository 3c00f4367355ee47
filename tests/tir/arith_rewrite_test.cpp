// Rewrite rules of the analyzer: floor division/modulo under known bounds
// (the index forms split and fuse produce), min/max, comparisons, logic,
// select, casts and vectors. Expectations are derived by hand.
#include <gtest/gtest.h>

#include "anvil/tir/arith.h"
#include "tir/arith_test_util.h"

namespace anvil::tir {
namespace {

using testing::show;

class Rewrite : public ::testing::Test {
 protected:
  Var i = VarNode::make("i"), j = VarNode::make("j"), n = VarNode::make("n");
  Var io = VarNode::make("i_o"), ii = VarNode::make("i_i");
  Analyzer analyzer;
  std::string simp(const PrimExpr& e) { return show(analyzer.simplify(e)); }
};

TEST_F(Rewrite, SplitIndexFormsCollapse) {
  analyzer.bind(io, Range::from_min_extent(0, 16));
  analyzer.bind(ii, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(floordiv(io * 8 + ii, 8)), "i_o");
  EXPECT_EQ(simp(floormod(io * 8 + ii, 8)), "i_i");
  EXPECT_EQ(simp(floordiv(io * 8 + ii + 16, 8)), "i_o + 2");
  // A second split of the inner part: factor 4 of 8.
  EXPECT_EQ(simp(floordiv(io * 8 + ii, 4)), "i_o * 2 + floordiv(i_i, 4)");
  EXPECT_EQ(simp(floormod(io * 8 + ii, 4)), "floormod(i_i, 4)");
}

TEST_F(Rewrite, DivisionByACommonFactor) {
  // fuse(i, j) with j of extent 16, then split by 4: i = floordiv(fo*4 + fi, 16).
  Var fo = VarNode::make("fo"), fi = VarNode::make("fi");
  analyzer.bind(fo, Range::from_min_extent(0, 64));
  analyzer.bind(fi, Range::from_min_extent(0, 4));
  EXPECT_EQ(simp(floordiv(fo * 4 + fi, 16)), "floordiv(fo, 4)");
  EXPECT_EQ(simp(floormod(fo * 4 + fi, 16)), "floormod(fo, 4) * 4 + fi");
  EXPECT_EQ(simp(floordiv(i * 4, 8)), "floordiv(i, 2)");
  EXPECT_EQ(simp(floormod(i * 4, 8)), "floormod(i, 2) * 4");
}

TEST_F(Rewrite, DivisionWithoutBoundsKeepsExactForms) {
  // Nothing known about j: only the multiple of 8 leaves the division.
  EXPECT_EQ(simp(floordiv(i * 8 + j, 8)), "i + floordiv(j, 8)");
  EXPECT_EQ(simp(floormod(i * 8 + j, 8)), "floormod(j, 8)");
  EXPECT_EQ(simp(floordiv(j + 9, 8)), "floordiv(j + 1, 8) + 1");
  EXPECT_EQ(simp(floormod(j + 9, 8)), "floormod(j + 1, 8)");
}

TEST_F(Rewrite, NestedDivisionAndModulo) {
  EXPECT_EQ(simp(floordiv(floordiv(i, 4), 8)), "floordiv(i, 32)");
  EXPECT_EQ(simp(floormod(floormod(i, 32), 8)), "floormod(i, 8)");
  EXPECT_EQ(simp(floormod(floordiv(i, 16), 8)), "floordiv(floormod(i, 128), 16)");
  EXPECT_EQ(simp(floordiv(floordiv(i, 4) + 1, 2)), "floordiv(i + 4, 8)");
}

TEST_F(Rewrite, DivisionOfBoundedValues) {
  analyzer.bind(i, Range::from_min_extent(0, 7));
  EXPECT_EQ(simp(floordiv(i, 8)), "0");
  EXPECT_EQ(simp(floormod(i, 8)), "i");
  EXPECT_EQ(simp(floordiv(i + 8, 8)), "1");
  EXPECT_EQ(simp(floormod(i + 8, 8)), "i");
  analyzer.bind(j, Range::from_min_extent(-8, 8));  // [-8, -1]
  EXPECT_EQ(simp(floordiv(j, 8)), "-1");
  EXPECT_EQ(simp(floormod(j, 8)), "j + 8");
}

TEST_F(Rewrite, SymbolicDivisor) {
  analyzer.bind(n, Range::from_min_extent(4, 10));
  analyzer.bind(i, Range::from_min_extent(0, 4));
  EXPECT_EQ(simp(floordiv(i, n)), "0");
  EXPECT_EQ(simp(floormod(i, n)), "i");
  EXPECT_EQ(simp(floordiv(n, n)), "1");
}

TEST_F(Rewrite, TruncatingDivisionOfNonNegatives) {
  analyzer.bind(io, Range::from_min_extent(0, 16));
  analyzer.bind(ii, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(truncdiv(io * 8 + ii, 8)), "i_o");
  EXPECT_EQ(simp(truncmod(io * 8 + ii, 8)), "i_i");
  // Sign unknown: stays truncating.
  EXPECT_EQ(simp(truncdiv(j, 8)), "truncdiv(j, 8)");
  EXPECT_EQ(simp(truncdiv(make_int(-7), make_int(2))), "-3");
}

TEST_F(Rewrite, MinMaxWithProvableOrder) {
  analyzer.bind(i, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(min(i, 10)), "i");
  EXPECT_EQ(simp(max(i, 10)), "10");
  EXPECT_EQ(simp(min(i + 1, i)), "i");
  EXPECT_EQ(simp(max(j * 2 + 3, j * 2 + 1)), "j * 2 + 3");
  EXPECT_EQ(simp(min(j, n)), "min(j, n)");
  EXPECT_EQ(simp(min(5, j)), "min(j, 5)");
  EXPECT_EQ(simp(min(min(j, 7), 3)), "min(j, 3)");
}

TEST_F(Rewrite, ComparisonsProvableFromBounds) {
  analyzer.bind(i, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(i < 8), "true");
  EXPECT_EQ(simp(i >= 8), "false");
  EXPECT_EQ(simp(i < 7), "i < 7");
  // Bounds [1, 15] contain 4, but 2i + 1 is odd.
  EXPECT_EQ(simp(eq(i * 2 + 1, 4)), "false");
  EXPECT_EQ(simp(ne(i * 2 + 1, 4)), "true");
  EXPECT_EQ(simp(eq(i * 2, 4)), "i == 2");
}

TEST_F(Rewrite, ComparisonsNormalizeConstantsAndSharedTerms) {
  EXPECT_EQ(simp(j + 1 < 5), "j < 4");
  EXPECT_EQ(simp(j * 4 + n < j * 4 + 8), "n < 8");
  EXPECT_EQ(simp(3 < j + 1), "j > 2");
  EXPECT_EQ(simp(j < n), "j < n");
}

TEST_F(Rewrite, ComparisonsWithSymbolicRanges) {
  analyzer.bind(i, Range::from_min_extent(0, n));
  EXPECT_EQ(simp(i < n), "true");
  EXPECT_EQ(simp(i >= n), "false");
  analyzer.bind(j, Range::from_min_extent(0, 4));
  EXPECT_TRUE(analyzer.can_prove(i * 4 + j < n * 4));
  EXPECT_FALSE(analyzer.can_prove(i * 4 + j < n * 4 - 1));
}

TEST_F(Rewrite, LogicalSimplifications) {
  PrimExpr c = j < n;
  EXPECT_EQ(simp(logical_and(c, c)), "j < n");
  EXPECT_EQ(simp(logical_or(c, c)), "j < n");
  EXPECT_EQ(simp(logical_and(c, logical_not(c))), "false");
  EXPECT_EQ(simp(logical_or(c, logical_not(c))), "true");
  EXPECT_EQ(simp(logical_not(j < n)), "j >= n");
  EXPECT_EQ(simp(logical_not(logical_not(c))), "j < n");
  EXPECT_EQ(simp(logical_and(j < 5, j < 3)), "j < 3");
  EXPECT_EQ(simp(logical_and(j<3, j> 5)), "false");
}

TEST_F(Rewrite, SelectWithProvableCondition) {
  analyzer.bind(i, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(select(i < 8, j, n)), "j");
  EXPECT_EQ(simp(select(i > 9, j, n)), "n");
  EXPECT_EQ(simp(select(j < n, i + 1, 1 + i)), "i + 1");
  EXPECT_EQ(simp(select(j < n, j, n)), "select(j < n, j, n)");
}

TEST_F(Rewrite, Casts) {
  EXPECT_EQ(simp(cast(DataType::int32(), make_int(300))), "300");
  PrimExpr wrapped = analyzer.simplify(CastNode::make(DataType::int8(), make_int(300)));
  EXPECT_EQ(show(wrapped), "44");
  EXPECT_EQ(wrapped.dtype(), DataType::int8());
  PrimExpr to_float = analyzer.simplify(CastNode::make(DataType::float32(), make_int(3)));
  ASSERT_TRUE(as<FloatImmNode>(to_float));
  EXPECT_EQ(as<FloatImmNode>(to_float)->value, 3.0);
  Var a = VarNode::make("a", DataType::int32());
  PrimExpr round_trip = CastNode::make(DataType::int32(), CastNode::make(kIndexType, a));
  EXPECT_EQ(analyzer.simplify(round_trip).get(), a.get());
}

TEST_F(Rewrite, IntegerIdentities) {
  EXPECT_EQ(simp(MulNode::make(i, make_int(0))), "0");
  EXPECT_EQ(simp(SubNode::make(i, i)), "0");
  Var x = VarNode::make("x", DataType::float32());
  // x * 0 is not 0 for floats (NaN, infinities, -0).
  PrimExpr fzero = MulNode::make(x, make_const(DataType::float32(), 0));
  EXPECT_EQ(analyzer.simplify(fzero).get(), fzero.get());
}

TEST_F(Rewrite, Vectors) {
  PrimExpr r = ramp(i * 4, 1, 4);
  EXPECT_EQ(simp(r + broadcast(j, 4)), "ramp(i * 4 + j, 1, 4)");
  EXPECT_EQ(simp(ramp(i, 2, 4) + ramp(j, 1, 4)), "ramp(i + j, 3, 4)");
  EXPECT_EQ(simp(ramp(i, 1, 4) * broadcast(make_int(3), 4)), "ramp(i * 3, 3, 4)");
  EXPECT_EQ(simp(broadcast(i, 4) + broadcast(i, 4)), "broadcast(i * 2, 4)");
  EXPECT_EQ(simp(ramp(i, 0, 4)), "broadcast(i, 4)");
  // floordiv of a ramp of 4 lanes starting at a multiple of 4, by 4: one value.
  EXPECT_EQ(simp(floordiv(ramp(i * 4, 1, 4), broadcast(make_int(4), 4))), "broadcast(i, 4)");
  EXPECT_EQ(simp(floormod(ramp(i * 4, 1, 4), broadcast(make_int(4), 4))), "ramp(0, 1, 4)");
  EXPECT_EQ(simp(floordiv(ramp(i * 8, 4, 4), broadcast(make_int(4), 4))), "ramp(i * 2, 1, 4)");
  // Lanes may cross a multiple of 4: left alone.
  PrimExpr crossing = floordiv(ramp(i, 1, 4), broadcast(make_int(4), 4));
  EXPECT_EQ(simp(crossing), show(crossing));
  analyzer.bind(j, Range::from_min_extent(0, 4));
  EXPECT_EQ(simp(ramp(j, 1, 4) < broadcast(make_int(8), 4)), "broadcast(true, 4)");
}

TEST_F(Rewrite, CanProveHelpers) {
  analyzer.bind(i, Range::from_min_extent(0, 8));
  EXPECT_TRUE(analyzer.can_prove_greater_equal(i, 0));
  EXPECT_FALSE(analyzer.can_prove_greater_equal(i, 1));
  EXPECT_TRUE(analyzer.can_prove_less(i * 2, 15));
  EXPECT_FALSE(analyzer.can_prove_less(i * 2, 14));
  EXPECT_TRUE(analyzer.can_prove_equal(floordiv(i * 8 + 3, 8), i));
  EXPECT_FALSE(analyzer.can_prove_equal(j, n));
}

TEST_F(Rewrite, ConstraintScopeMakesItsConditionTrue) {
  PrimExpr c = j < n;
  {
    ConstraintScope scope(analyzer, c);
    EXPECT_EQ(simp(j < n), "true");
  }
  EXPECT_EQ(simp(j < n), "j < n");
}

TEST_F(Rewrite, LetBindings) {
  Var t = VarNode::make("t");
  EXPECT_EQ(simp(let(t, make_int(3), t * 2 + j)), "j + 6");
  analyzer.bind(i, Range::from_min_extent(0, 8));
  // The value bounds the variable inside the body.
  EXPECT_EQ(simp(let(t, i * 2, floordiv(t, 16) + t)), "let t = i * 2 in t");
  Var v = VarNode::make("v");
  analyzer.bind(v, j + 1);
  EXPECT_EQ(simp(v * 2), "j * 2 + 2");
}

}  // namespace
}  // namespace anvil::tir

namespace anvil::tir {
namespace {

TEST(RewriteDigits, DigitRuleStaysInsideTheExpressionType) {
  // floormod(floordiv(x, 2^30), 2) is bit 30 of x. Rewriting it as
  // floordiv(floormod(x, 2^31), 2^30) would need 2^31, which int32 cannot hold.
  Var x = VarNode::make("x", DataType::int32());
  PrimExpr bit30 = floormod(floordiv(x, make_int(1073741824, DataType::int32())),
                            make_int(2, DataType::int32()));
  Analyzer analyzer;
  EXPECT_EQ(testing::show(analyzer.simplify(bit30)), "floormod(floordiv(x, 1073741824), 2)");
  // In int64 the normal form is fine.
  Var y = VarNode::make("y");
  EXPECT_EQ(testing::show(analyzer.simplify(floormod(floordiv(y, 1073741824), 2))),
            "floordiv(floormod(y, 2147483648), 1073741824)");
}

}  // namespace
}  // namespace anvil::tir
