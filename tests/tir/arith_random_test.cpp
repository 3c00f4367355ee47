// Randomized property tests of the simplifier: random integer expression
// trees over a few variables with bounded ranges are simplified, and the
// result is checked against the original at every point of the ranges by an
// independent evaluator (tests/tir/arith_test_util.h). Negative values,
// negative divisors and floor vs. truncating semantics are all exercised.
#include <gtest/gtest.h>

#include <random>

#include "anvil/tir/arith.h"
#include "tir/arith_test_util.h"

namespace anvil::tir {
namespace {

using testing::DivisionByZero;
using testing::Env;
using testing::evaluate;
using testing::show;

struct VarRange {
  Var var;
  int64_t min, extent;
};

class ExprGenerator {
 public:
  // index_like: leaves are split/fuse shaped (x*8 + y) and divisors powers
  // of two, so the rules for index arithmetic fire often.
  ExprGenerator(uint64_t seed, std::vector<VarRange> vars, bool index_like = false)
      : rng_(seed), vars_(std::move(vars)), index_like_(index_like) {}

  PrimExpr expr(int depth) {
    if (depth == 0 || pick(5) == 0) return leaf();
    switch (pick(16)) {
      case 0:
      case 1:
        return expr(depth - 1) + expr(depth - 1);
      case 2:
        return expr(depth - 1) - expr(depth - 1);
      case 3:
        return expr(depth - 1) * small_const();
      case 4:
        return expr(depth - 1) * leaf();
      case 5:
      case 6:
        return floordiv(expr(depth - 1), divisor());
      case 7:
      case 8:
        return floormod(expr(depth - 1), divisor());
      case 9:
        return min(expr(depth - 1), expr(depth - 1));
      case 10:
        return max(expr(depth - 1), expr(depth - 1));
      case 11:
        return select(condition(depth - 1), expr(depth - 1), expr(depth - 1));
      case 12:
        return truncdiv(expr(depth - 1), divisor());
      case 13:
        return truncmod(expr(depth - 1), divisor());
      case 14:
        // A symbolic divisor; points where it is zero are skipped.
        return pick(2) ? floordiv(expr(depth - 1), leaf()) : floormod(expr(depth - 1), leaf());
      default:
        return expr(depth - 1) + small_const();
    }
  }

  PrimExpr condition(int depth) {
    PrimExpr a = expr(depth), b = expr(depth);
    switch (pick(8)) {
      case 0:
        return a < b;
      case 1:
        return a <= b;
      case 2:
        return a > b;
      case 3:
        return a >= b;
      case 4:
        return eq(a, b);
      case 5:
        return ne(a, b);
      case 6:
        return logical_and(a < b, condition(depth > 0 ? depth - 1 : 0));
      default:
        return logical_or(a >= b, logical_not(condition(depth > 0 ? depth - 1 : 0)));
    }
  }

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  PrimExpr leaf() {
    if (pick(4) == 0) return small_const();
    PrimExpr v = var();
    if (index_like_ && pick(2)) {
      static const int64_t kScales[] = {2, 4, 8, 16, 3, 6};
      v = v * make_int(kScales[pick(int(std::size(kScales)))]) + var();
      if (pick(3) == 0) v = v + make_int(pick(9));
    }
    return v;
  }
  PrimExpr var() { return vars_[size_t(pick(int(vars_.size())))].var; }
  PrimExpr small_const() { return make_int(pick(21) - 10); }
  PrimExpr divisor() {
    static const int64_t kDivisors[] = {2, 3, 4, 8, 16, 5, 7, -2, -3, -4, 1, 6, 32, 64};
    static const int64_t kIndexDivisors[] = {2, 4, 8, 16, 32, 3, 6, 12};
    if (index_like_) return make_int(kIndexDivisors[pick(int(std::size(kIndexDivisors)))]);
    return make_int(kDivisors[pick(int(std::size(kDivisors)))]);
  }

  std::mt19937_64 rng_;
  std::vector<VarRange> vars_;
  bool index_like_ = false;
};

// Checks e and its simplified form agree at every point of the ranges.
void check_everywhere(const PrimExpr& e, const PrimExpr& simplified,
                      const std::vector<VarRange>& vars, int lanes = 1) {
  std::vector<int64_t> point(vars.size());
  for (size_t d = 0; d < vars.size(); ++d) point[d] = vars[d].min;
  while (true) {
    Env env;
    for (size_t d = 0; d < vars.size(); ++d) env[vars[d].var.get()] = point[d];
    for (int lane = 0; lane < lanes; ++lane) {
      int64_t expected;
      try {
        expected = evaluate(e, env, lane);
      } catch (const DivisionByZero&) {
        continue;  // the original is undefined here
      }
      int64_t actual = 0;
      try {
        actual = evaluate(simplified, env, lane);
      } catch (const DivisionByZero&) {
        ADD_FAILURE() << "simplified form divides by zero where the original does not\n  "
                      << show(e) << "\n  -> " << show(simplified);
        return;
      }
      if (actual != expected) {
        std::string where;
        for (size_t d = 0; d < vars.size(); ++d)
          where += " " + vars[d].var->name + "=" + std::to_string(point[d]);
        ADD_FAILURE() << "value differs at" << where << " lane " << lane << ": expected "
                      << expected << ", got " << actual << "\n  " << show(e) << "\n  -> "
                      << show(simplified);
        return;
      }
    }
    size_t d = 0;
    while (d < vars.size() && ++point[d] == vars[d].min + vars[d].extent) {
      point[d] = vars[d].min;
      ++d;
    }
    if (d == vars.size()) break;
  }
}

std::vector<VarRange> random_ranges(std::mt19937_64& rng, int count, int max_extent) {
  static const char* kNames[] = {"x", "y", "z"};
  std::vector<VarRange> out;
  for (int d = 0; d < count; ++d) {
    int64_t lo = std::uniform_int_distribution<int64_t>(-9, 6)(rng);
    int64_t extent = std::uniform_int_distribution<int64_t>(1, max_extent)(rng);
    out.push_back({VarNode::make(kNames[d]), lo, extent});
  }
  return out;
}

TEST(ArithRandom, SimplifiedEqualsOriginalUnderRanges) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 1500; ++trial) {
    int count = trial % 3 == 2 ? 3 : 2;
    std::vector<VarRange> vars = random_ranges(rng, count, count == 3 ? 6 : 12);
    ExprGenerator gen(rng(), vars);
    PrimExpr e = gen.expr(4);
    Analyzer analyzer;
    for (const VarRange& v : vars)
      analyzer.bind(v.var, Range::from_min_extent(make_int(v.min), make_int(v.extent)));
    PrimExpr s = analyzer.simplify(e);
    check_everywhere(e, s, vars);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ArithRandom, IndexArithmeticUnderRanges) {
  // Loop-nest shaped ranges: mostly [0, extent), sometimes shifted negative.
  std::mt19937_64 rng(4242);
  static const char* kNames[] = {"x", "y", "z"};
  for (int trial = 0; trial < 2000; ++trial) {
    int count = trial % 4 == 3 ? 3 : 2;
    std::vector<VarRange> vars;
    for (int d = 0; d < count; ++d) {
      static const int64_t kExtents[] = {1, 2, 3, 4, 8, 16, 6, 12, 5};
      int64_t extent = kExtents[std::uniform_int_distribution<int>(0, 8)(rng)];
      if (count == 3) extent = std::min<int64_t>(extent, 8);
      int64_t lo = std::uniform_int_distribution<int>(0, 5)(rng) == 0
                       ? std::uniform_int_distribution<int64_t>(-9, 3)(rng)
                       : 0;
      vars.push_back({VarNode::make(kNames[d]), lo, extent});
    }
    ExprGenerator gen(rng(), vars, /*index_like=*/true);
    PrimExpr e = gen.expr(3);
    // Also recombinations of splits: digits of e with matching or
    // mismatching scales, so merges must check their coefficients.
    if (trial % 3 == 0) {
      PrimExpr c = make_int(int64_t(1) << gen.pick(5));
      PrimExpr k = make_int(gen.pick(3) + 1);
      PrimExpr k2 = gen.pick(2) ? k : make_int(gen.pick(5) - 2);
      e = floordiv(e, c) * c * k + floormod(e, c) * k2;
    } else if (trial % 3 == 1) {
      static const int64_t kFactors[] = {2, 3, 4, 6, 8, 12, 16};
      auto factor = [&] { return make_int(kFactors[gen.pick(int(std::size(kFactors)))]); };
      PrimExpr lower = factor(), upper = factor();
      PrimExpr digit = floordiv(floormod(e, upper), lower);
      PrimExpr digit_scale = gen.pick(2) ? lower : make_int(1);
      e = floordiv(e, upper) * (upper / lower) + digit * digit_scale +
          floormod(e, lower) * gen.pick(2);
    }
    Analyzer analyzer;
    for (const VarRange& v : vars)
      analyzer.bind(v.var, Range::from_min_extent(make_int(v.min), make_int(v.extent)));
    PrimExpr s = analyzer.simplify(e);
    check_everywhere(e, s, vars);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ArithRandom, BoundsContainEveryValue) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 800; ++trial) {
    std::vector<VarRange> vars = random_ranges(rng, 2, 10);
    ExprGenerator gen(rng(), vars);
    PrimExpr e = gen.expr(3);
    Analyzer analyzer;
    for (const VarRange& v : vars)
      analyzer.bind(v.var, Range::from_min_extent(make_int(v.min), make_int(v.extent)));
    IntBound b = analyzer.const_int_bound(e);
    for (int64_t x = vars[0].min; x < vars[0].min + vars[0].extent; ++x) {
      for (int64_t y = vars[1].min; y < vars[1].min + vars[1].extent; ++y) {
        Env env{{vars[0].var.get(), x}, {vars[1].var.get(), y}};
        int64_t v;
        try {
          v = evaluate(e, env);
        } catch (const DivisionByZero&) {
          continue;
        }
        if (v < b.min_value || v > b.max_value) {
          ADD_FAILURE() << show(e) << " = " << v << " at x=" << x << " y=" << y << " outside ["
                        << b.min_value << ", " << b.max_value << "]";
          return;
        }
      }
    }
  }
}

TEST(ArithRandom, SimplifiedEqualsOriginalWithoutRanges) {
  // No ranges known: only rules valid for every integer may fire.
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 800; ++trial) {
    std::vector<VarRange> vars = {{VarNode::make("x"), -17, 35}, {VarNode::make("y"), -17, 35}};
    ExprGenerator gen(rng(), vars);
    PrimExpr e = gen.expr(4);
    PrimExpr s = simplify(e);
    check_everywhere(e, s, vars);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ArithRandom, ConditionsUnderConstraints) {
  // Inside "cond", the simplified form only needs to agree where cond holds.
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<VarRange> vars = random_ranges(rng, 2, 10);
    ExprGenerator gen(rng(), vars);
    PrimExpr cond = gen.condition(1);
    PrimExpr e = gen.expr(3);
    Analyzer analyzer;
    for (const VarRange& v : vars)
      analyzer.bind(v.var, Range::from_min_extent(make_int(v.min), make_int(v.extent)));
    PrimExpr s;
    {
      ConstraintScope scope(analyzer, cond);
      s = analyzer.simplify(e);
    }
    // select(cond, e, 0) vs select(cond, s, 0): equal everywhere.
    check_everywhere(select(cond, e, 0), select(cond, s, 0), vars);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ArithRandom, VectorExpressionsLaneByLane) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<VarRange> vars = random_ranges(rng, 2, 8);
    ExprGenerator gen(rng(), vars);
    int lanes = 4;
    PrimExpr base = gen.expr(2);
    PrimExpr stride = make_int(gen.pick(9) - 4);
    PrimExpr v = ramp(base, stride, lanes);
    switch (gen.pick(5)) {
      case 0:
        v = v + broadcast(gen.expr(2), lanes);
        break;
      case 1:
        v = floordiv(v, broadcast(make_int(gen.pick(2) ? 4 : 3), lanes));
        break;
      case 2:
        v = floormod(v, broadcast(make_int(gen.pick(2) ? 8 : 5), lanes));
        break;
      case 3:
        v = v * broadcast(make_int(gen.pick(7) - 3), lanes);
        break;
      default:
        v = select(v < broadcast(gen.expr(1), lanes), v, broadcast(gen.expr(1), lanes));
        break;
    }
    Analyzer analyzer;
    for (const VarRange& r : vars)
      analyzer.bind(r.var, Range::from_min_extent(make_int(r.min), make_int(r.extent)));
    PrimExpr s = analyzer.simplify(v);
    ASSERT_EQ(s.dtype(), v.dtype()) << show(v) << " -> " << show(s);
    check_everywhere(v, s, vars, lanes);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(ArithRandom, DeepExpressionsStayFast) {
  // A long chain of nested divisions and sums must not blow up.
  Var x = VarNode::make("x");
  Analyzer analyzer;
  analyzer.bind(x, Range::from_min_extent(0, 1000));
  PrimExpr e = x;
  for (int d = 0; d < 200; ++d) e = min(floordiv(e * 3 + d, 2), x + 4000) + floormod(x, 7);
  PrimExpr s = analyzer.simplify(e);
  ASSERT_TRUE(s);
  std::vector<VarRange> vars = {{x, 0, 3}};
  check_everywhere(e, s, vars);
}

}  // namespace
}  // namespace anvil::tir
