#include "anvil/ir/dim.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"

namespace anvil::ir {
namespace {

TEST(Dim, IntegerArithmeticFolds) {
  EXPECT_EQ((Dim(3) + 4).int_value(), 7);
  EXPECT_EQ((Dim(3) * 4 - 2).int_value(), 10);
  EXPECT_EQ(floordiv(Dim(-7), 2).int_value(), -4);
  EXPECT_EQ(floormod(Dim(-7), 2).int_value(), 1);
  EXPECT_EQ(min(Dim(3), 9).int_value(), 3);
  EXPECT_EQ(max(Dim(3), 9).int_value(), 9);
}

TEST(Dim, CanonicalFormMakesEquivalentExpressionsEqual) {
  Dim n = Dim::var("n"), m = Dim::var("m");
  EXPECT_EQ(n + n, n * 2);
  EXPECT_EQ(floordiv(n * 4, 1) + 0, n * 4);
  EXPECT_EQ(floordiv(n * 4, 2), n * 2);
  EXPECT_EQ((n + 1) * 2, n * 2 + 2);
  EXPECT_EQ(n * m, m * n);
  EXPECT_EQ(n - n, Dim(0));
  EXPECT_TRUE((n - n).is_int());
  EXPECT_EQ(floormod(n * 6, 3), Dim(0));
  EXPECT_NE(n + 1, n);
  EXPECT_NE(n, m);
}

TEST(Dim, PrintsReadably) {
  Dim n = Dim::var("n");
  EXPECT_EQ((n * 2).to_string(), "n * 2");
  EXPECT_EQ((n * 2 + 1).to_string(), "n * 2 + 1");
  EXPECT_EQ((n - 3).to_string(), "n - 3");
  EXPECT_EQ(floordiv(n, 2).to_string(), "floordiv(n, 2)");
  EXPECT_EQ(floordiv(n + 1, 2).to_string(), "floordiv(n + 1, 2)");
  EXPECT_EQ(Dim::any().to_string(), "?");
  EXPECT_EQ(dims_to_string({1, n, 4}), "(1, n, 4)");
}

TEST(Dim, NonLinearTermsStayOpaqueButCanonical) {
  Dim n = Dim::var("n"), m = Dim::var("m");
  EXPECT_EQ(min(n, m), min(m, n));
  EXPECT_EQ(floordiv(n, 2) * 2, floordiv(n, 2) + floordiv(n, 2));
  EXPECT_EQ(floordiv(n - 3, 2) + 1, floordiv(n + -3, 2) + 1);
  EXPECT_EQ(max(n, n), n);
}

// numpy's broadcast of two dims: folded where either is 1, they are equal, or both are known;
// kept (canonically ordered) between different size variables, and substituted to its value.
TEST(Dim, BroadcastFoldsWhatIsKnown) {
  Dim n = Dim::var("n"), m = Dim::var("m");
  EXPECT_EQ(broadcast(n, 1), n);
  EXPECT_EQ(broadcast(1, n), n);
  EXPECT_EQ(broadcast(n, n), n);
  EXPECT_EQ(broadcast(Dim(3), Dim(3)).int_value(), 3);
  EXPECT_EQ(broadcast(Dim(3), Dim(4)).int_value(), -1);
  EXPECT_TRUE(broadcast(n, Dim::any()).is_any());
  EXPECT_EQ(broadcast(n, m), broadcast(m, n));
  EXPECT_EQ(broadcast(n, m).to_string(), "broadcast(m, n)");
  EXPECT_EQ(broadcast(n, m).free_vars(), (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(substitute(broadcast(n, m), {{"n", Dim(1)}, {"m", Dim(7)}}).int_value(), 7);
  EXPECT_EQ(substitute(broadcast(n, m), {{"n", Dim(2)}, {"m", Dim(7)}}).int_value(), -1);
  EXPECT_EQ(substitute(broadcast(n, m) * 2, {{"m", n}}), n * 2);
}

// Broadcasting is associative, commutative and idempotent: a broadcast with operands the other
// side already has is that side, so a residual stream's size does not nest once per layer.
TEST(Dim, NestedBroadcastsKeepOneCopyOfEachOperand) {
  Dim n = Dim::var("n"), m = Dim::var("m"), k = Dim::var("k");
  const Dim nm = broadcast(n, m);
  EXPECT_EQ(broadcast(nm, n), nm);
  EXPECT_EQ(broadcast(m, nm), nm);
  EXPECT_EQ(broadcast(nm, broadcast(m, n)), nm);
  Dim nmk = broadcast(nm, k);
  EXPECT_EQ(broadcast(nmk, nm), nmk);
  EXPECT_EQ(broadcast(broadcast(nmk, n), m), nmk);
  EXPECT_NE(broadcast(nm, k), nm);  // a new operand still counts
  for (int64_t vn : {1, 3})
    for (int64_t vm : {1, 3, 4})
      for (int64_t vk : {1, 3}) {
        const std::vector<std::pair<std::string, Dim>> at = {
            {"n", Dim(vn)}, {"m", Dim(vm)}, {"k", Dim(vk)}};
        // The folded form has the value of the nest it stands for.
        EXPECT_EQ(
            substitute(broadcast(broadcast(nmk, n), m), at).int_value(),
            substitute(broadcast(broadcast(broadcast(broadcast(n, m), k), n), m), at).int_value())
            << vn << " " << vm << " " << vk;
      }
}

// A reshape's -1 divides the element count by the product of the other dims: when that
// product is one term dividing every term of the count, the quotient is exact.
TEST(Dim, DivisionByAMonomialThatDividesEveryTermIsExact) {
  Dim n = Dim::var("n"), b = Dim::var("batch");
  EXPECT_EQ(floordiv(n * b * 384, n * 64), b * 6);
  EXPECT_EQ(floordiv(b * n, b), n);
  EXPECT_EQ(floordiv(n * n * 2 + n * 4, n * 2), n + 2);
  EXPECT_EQ(floormod(n * b * 384, n * 64), Dim(0));
  // Not exact: a constant term, a coefficient that does not divide, a missing variable, a sum.
  EXPECT_EQ(floordiv(n * 64 + 1, n * 64).kind(), DimKind::FloorDiv);
  EXPECT_EQ(floordiv(n * 6, n * 4).kind(), DimKind::FloorDiv);
  EXPECT_EQ(floordiv(n * 6, b * 2).kind(), DimKind::FloorDiv);
  EXPECT_EQ(floordiv(n * b, n + b).kind(), DimKind::FloorDiv);
  EXPECT_EQ(floormod(n * 6, n * 4).kind(), DimKind::FloorMod);
}

TEST(Dim, AnyAbsorbs) {
  Dim n = Dim::var("n");
  EXPECT_TRUE((Dim::any() + n).is_any());
  EXPECT_TRUE((Dim::any() * 2).is_any());
  EXPECT_EQ(Dim::any(), Dim::any());
}

TEST(Dim, DivisionByZeroIsAnError) {
  EXPECT_THROW(floordiv(Dim::var("n"), 0), Error);
  EXPECT_THROW(floormod(Dim(4), 0), Error);
}

TEST(Dim, SubstituteAndFreeVars) {
  Dim n = Dim::var("n"), b = Dim::var("batch");
  Dim e = n * b + floordiv(n, 2);
  EXPECT_EQ(e.free_vars(), (std::vector<std::string>{"batch", "n"}));
  Dim v = substitute(e, {{"n", Dim(10)}, {"batch", Dim(3)}});
  ASSERT_TRUE(v.is_int());
  EXPECT_EQ(v.int_value(), 35);
  EXPECT_EQ(dims_product({2, n, 3}), n * 6);
}

}  // namespace
}  // namespace anvil::ir
