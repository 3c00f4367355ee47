// Canonical forms of integer expressions: equal linear combinations print the
// same, terms cancel, split/fuse index forms recombine. Expected strings are
// written by hand in the order arith.h documents.
#include <gtest/gtest.h>

#include "anvil/tir/arith.h"
#include "tir/arith_test_util.h"

namespace anvil::tir {
namespace {

using testing::show;

class Canonical : public ::testing::Test {
 protected:
  Var i = VarNode::make("i"), j = VarNode::make("j"), k = VarNode::make("k");
  Var n = VarNode::make("n"), m = VarNode::make("m");
  Analyzer analyzer;
  std::string simp(const PrimExpr& e) { return show(analyzer.simplify(e)); }
};

TEST_F(Canonical, LikeTermsCancel) {
  EXPECT_EQ(simp((i * 4 + j) - j), "i * 4");
  EXPECT_EQ(simp(i - i), "0");
  EXPECT_EQ(simp(i * 3 - i * 3 + 7), "7");
  EXPECT_EQ(simp((j + i * 4) - j + i * 2), "i * 6");
  EXPECT_EQ(simp((i + 1) - (i - 1)), "2");
}

TEST_F(Canonical, TermsOrderedByCoefficientThenName) {
  EXPECT_EQ(simp(k + 1 + j * 8 + i * 64), "i * 64 + j * 8 + k + 1");
  EXPECT_EQ(simp(j + i), "i + j");
  EXPECT_EQ(simp(i + j), "i + j");
  EXPECT_EQ(simp(2 + i), "i + 2");
  EXPECT_EQ(simp(j - i), "j - i");
  EXPECT_EQ(simp(0 - i + j * 2), "j * 2 - i");
}

TEST_F(Canonical, NegativeOnlySums) {
  EXPECT_EQ(simp(3 - i), "3 - i");
  EXPECT_EQ(simp(0 - i * 4 - 3), "i * -4 - 3");
  EXPECT_EQ(simp(0 - i), "i * -1");
  EXPECT_EQ(simp(i - 5), "i - 5");
}

TEST_F(Canonical, ConstantFactorsDistribute) {
  EXPECT_EQ(simp((i + 2) * 3), "i * 3 + 6");
  EXPECT_EQ(simp(3 * (i - j)), "i * 3 - j * 3");
  EXPECT_EQ(simp((i * 2) * 4), "i * 8");
  EXPECT_EQ(simp((i + j) * 0), "0");
}

TEST_F(Canonical, ProductsOfVariables) {
  EXPECT_EQ(simp(i * j - j * i), "0");
  EXPECT_EQ(simp(n * m + m * n), "m * n * 2");
  EXPECT_EQ(simp((n + 1) * m - n * m), "m");
  EXPECT_EQ(simp((i + 1) * (j + 1) - i * j), "i + j + 1");
}

TEST_F(Canonical, EqualCombinationsPrintTheSame) {
  PrimExpr a = analyzer.simplify((i + j) * 2 + k - j);
  PrimExpr b = analyzer.simplify(k + j + i * 2);
  EXPECT_EQ(show(a), show(b));
  EXPECT_EQ(show(a), "i * 2 + j + k");
}

TEST_F(Canonical, SplitAndFuseRecombine) {
  // fuse then split back: floordiv(f, 8)*8 + floormod(f, 8) is f.
  Var f = VarNode::make("f");
  EXPECT_EQ(simp(floordiv(f, 8) * 8 + floormod(f, 8)), "f");
  EXPECT_EQ(simp(floormod(f, 8) + floordiv(f, 8) * 8 + 1), "f + 1");
  // Three digits of one number.
  EXPECT_EQ(simp(floordiv(f, 64) * 64 + floordiv(floormod(f, 64), 8) * 8 + floormod(f, 8)), "f");
  // The sum form of x inside the division.
  PrimExpr x = i * 16 + j;
  EXPECT_EQ(simp(floordiv(x, 4) * 4 + floormod(x, 4)), "i * 16 + j");
  // Subtracting the quotient part leaves the remainder.
  EXPECT_EQ(simp(f - floordiv(f, 8) * 8), "floormod(f, 8)");
  EXPECT_EQ(simp(x - floordiv(x, 8) * 8), "floormod(j, 8)");
  PrimExpr y = i * 3 + j;
  EXPECT_EQ(simp(y - floordiv(y, 8) * 8), "floormod(i * 3 + j, 8)");
  // Scaled by a common factor.
  EXPECT_EQ(simp(floordiv(f, 8) * 24 + floormod(f, 8) * 3), "f * 3");
  // Split by a size variable (fused symbolic dims cut again), scaled or not; a different
  // divisor or coefficient stays.
  Var n = VarNode::make("n");
  EXPECT_EQ(simp(n * floordiv(f, n) + floormod(f, n)), "f");
  EXPECT_EQ(simp(n * floordiv(x, n) * 1152 + floormod(x, n) * 1152 + 3),
            "i * 18432 + j * 1152 + 3");
  EXPECT_NE(simp(n * floordiv(f, n) + floormod(f, n) * 2), "f");
  EXPECT_NE(simp(k * floordiv(f, n) + floormod(f, n)), "f");
}

TEST_F(Canonical, IntegerTypesKeepTheirType) {
  Var a = VarNode::make("a", DataType::int32());
  PrimExpr e = analyzer.simplify((a + 2) * 3 - a);
  EXPECT_EQ(e.dtype(), DataType::int32());
  EXPECT_EQ(show(e), "a * 2 + 6");
}

TEST_F(Canonical, FloatsAreOnlyFolded) {
  Var x = VarNode::make("x", DataType::float32());
  // No reassociation: (x + 1) - 1 is not x for floats.
  PrimExpr one = make_const(DataType::float32(), 1);
  EXPECT_EQ(simp((x + one) - one), show((x + one) - one));
  EXPECT_EQ(simp(x - x), "x - x");
  PrimExpr folded = analyzer.simplify(FloatImmNode::make(DataType::float32(), 0.5) *
                                      make_const(DataType::float32(), 4));
  ASSERT_TRUE(as<FloatImmNode>(folded));
  EXPECT_EQ(as<FloatImmNode>(folded)->value, 2.0);
}

TEST_F(Canonical, UnchangedExpressionIsTheSameNode) {
  PrimExpr e = i * 4 + j;
  EXPECT_EQ(analyzer.simplify(e).get(), e.get());
  PrimExpr load_index = floordiv(i, 3);
  EXPECT_EQ(analyzer.simplify(load_index).get(), load_index.get());
}

TEST_F(Canonical, OverflowingCoefficientsAreLeftAlone) {
  PrimExpr big = make_int(int64_t(1) << 62);
  PrimExpr e = (i * big) * 4;
  // The product overflows int64: the form stays as written rather than wrap.
  PrimExpr s = analyzer.simplify(e);
  EXPECT_EQ(show(s), show(e));
}

}  // namespace
}  // namespace anvil::tir
