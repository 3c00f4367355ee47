// The elementwise computes (unary math, cast, clip, broadcasting binary ops, where) compiled
// and run against the reference kernels, on odd shapes and several dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor holding exactly `values` (shape {n}).
Tensor tensor_of(const std::vector<double>& values, DataType dtype) {
  Tensor t = Tensor::zeros({int64_t(values.size())}, dtype);
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
  return t;
}

struct UnaryCase {
  const char* op;
  double lo, hi;  // input range
};

std::string case_name(const ::testing::TestParamInfo<UnaryCase>& info) { return info.param.op; }

class ElemwiseFloatUnary : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(ElemwiseFloatUnary, MatchesReference) {
  const UnaryCase& c = GetParam();
  check_op(c.op, {random_tensor({3, 5, 7}, DataType::float32(), 1, c.lo, c.hi)});
  check_op(c.op, {random_tensor({1, 17}, DataType::float64(), 2, c.lo, c.hi)});
}

INSTANTIATE_TEST_SUITE_P(
    Elemwise, ElemwiseFloatUnary,
    ::testing::Values(UnaryCase{"exp", -5, 5}, UnaryCase{"log", 0.01, 10}, UnaryCase{"sqrt", 0, 9},
                      UnaryCase{"rsqrt", 0.1, 9}, UnaryCase{"sigmoid", -8, 8},
                      UnaryCase{"tanh", -4, 4}, UnaryCase{"erf", -3, 3}, UnaryCase{"floor", -4, 4},
                      UnaryCase{"ceil", -4, 4}, UnaryCase{"round", -4, 4},
                      UnaryCase{"trunc", -4, 4}, UnaryCase{"sin", -4, 4}, UnaryCase{"cos", -4, 4},
                      UnaryCase{"tan", -1, 1}, UnaryCase{"asin", -1, 1}, UnaryCase{"acos", -1, 1},
                      UnaryCase{"atan", -4, 4}, UnaryCase{"sinh", -3, 3}, UnaryCase{"cosh", -3, 3},
                      UnaryCase{"asinh", -4, 4}, UnaryCase{"acosh", 1, 5},
                      UnaryCase{"atanh", -0.9, 0.9}, UnaryCase{"reciprocal", 0.5, 4},
                      UnaryCase{"abs", -4, 4}, UnaryCase{"negative", -4, 4},
                      UnaryCase{"sign", -4, 4}, UnaryCase{"copy", -4, 4}, UnaryCase{"isnan", -4, 4},
                      UnaryCase{"isinf", -4, 4}, UnaryCase{"isfinite", -4, 4}),
    case_name);

TEST(ElemwiseUnary, EdgeValues) {
  Tensor edges = tensor_of({-2.0, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, kNaN, kInf, -kInf, 1e-30},
                           DataType::float32());
  for (const char* op : {"sqrt", "log", "rsqrt", "reciprocal", "round", "sign", "abs", "isnan",
                         "isinf", "isfinite", "floor", "exp", "negative"})
    check_op(op, {edges});
}

TEST(ElemwiseUnary, IntegerOps) {
  for (DataType dtype : {DataType::int32(), DataType::int64(), DataType::int8()}) {
    Tensor x = random_tensor({4, 9}, dtype, 3, -20, 20);
    for (const char* op : {"abs", "negative", "sign", "copy", "bitwise_not"}) check_op(op, {x});
  }
  Tensor u = random_tensor({2, 33}, DataType::uint8(), 4, 0, 250);
  for (const char* op : {"abs", "sign", "bitwise_not"}) check_op(op, {u});
}

TEST(ElemwiseUnary, BoolOps) {
  Tensor b = random_tensor({3, 7}, DataType::boolean(), 5);
  check_op("logical_not", {b});
  check_op("bitwise_not", {b});
  check_op("copy", {b});
}

TEST(ElemwiseCast, BetweenDtypes) {
  std::vector<DataType> dtypes = {DataType::float32(), DataType::float64(), DataType::int32(),
                                  DataType::int64(),   DataType::int8(),    DataType::uint8(),
                                  DataType::boolean()};
  for (DataType from : dtypes) {
    // Floats beyond the narrow integer ranges exercise saturation.
    Tensor x = random_tensor({3, 5, 7}, from, 6, -300, 300);
    for (DataType to : dtypes) {
      SCOPED_TRACE(from.to_string() + " -> " + to.to_string());
      check_op("cast", {x}, attrs("cast", {{"dtype", to}}));
    }
  }
}

TEST(ElemwiseCast, FloatEdgesToIntegers) {
  Tensor edges =
      tensor_of({kNaN, kInf, -kInf, 3e9, -3e9, 2.7, -2.7, 255.5, -0.5, 127.9}, DataType::float32());
  for (DataType to : {DataType::int32(), DataType::int8(), DataType::uint8(), DataType::int64(),
                      DataType::boolean(), DataType::float64()})
    check_op("cast", {edges}, attrs("cast", {{"dtype", to}}));
}

TEST(ElemwiseClip, FloatAndInteger) {
  check_op("clip", {random_tensor({5, 11}, DataType::float32(), 7, -3, 3)},
           attrs("clip", {{"a_min", -1.5}, {"a_max", 0.25}}));
  check_op("clip", {tensor_of({kNaN, -5, 5, 0.1}, DataType::float32())},
           attrs("clip", {{"a_min", -1.0}, {"a_max", 1.0}}));
  check_op("clip", {random_tensor({5, 11}, DataType::float64(), 8, -3, 3)},
           attrs("clip", {{"a_max", 0.5}}));
  check_op("clip", {random_tensor({5, 11}, DataType::int32(), 9, -30, 30)},
           attrs("clip", {{"a_min", -7.5}, {"a_max", 12.2}}));
  check_op("clip", {random_tensor({5, 11}, DataType::int8(), 10, -100, 100)},
           attrs("clip", {{"a_min", -1000.0}, {"a_max", 50.0}}));
}

// ---------------------------------------------------------------- binary

class ElemwiseBinary : public ::testing::TestWithParam<const char*> {};

TEST_P(ElemwiseBinary, FloatBroadcast) {
  const char* op = GetParam();
  bool positive_base = std::string(op) == "power";
  double lo = positive_base ? 0.1 : -4;
  check_op(op, {random_tensor({4, 1, 6}, DataType::float32(), 11, lo, 4),
                random_tensor({5, 1}, DataType::float32(), 12, -4, 4)});
  check_op(op, {random_tensor({3, 5, 7}, DataType::float64(), 13, lo, 4),
                random_tensor({7}, DataType::float64(), 14, -4, 4)});
}

TEST_P(ElemwiseBinary, IntegerBroadcast) {
  const char* op = GetParam();
  // Small values so zero divisors and negative operands both occur.
  for (DataType dtype : {DataType::int32(), DataType::int64(), DataType::uint8()}) {
    SCOPED_TRACE(dtype.to_string());
    double lo = dtype.is_uint() ? 0 : -9;
    check_op(op, {random_tensor({4, 1, 6}, dtype, 15, lo, 9),
                  random_tensor({5, 1}, dtype, 16, dtype.is_uint() ? 0 : -4, 4)});
  }
}

INSTANTIATE_TEST_SUITE_P(Elemwise, ElemwiseBinary,
                         ::testing::Values("add", "subtract", "multiply", "divide", "floor_divide",
                                           "mod", "floor_mod", "power", "maximum", "minimum",
                                           "equal", "not_equal", "less", "less_equal", "greater",
                                           "greater_equal"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(ElemwiseBinaryEdges, FloatSpecialValues) {
  Tensor a = tensor_of({1, -1, 0, kNaN, 2, kInf, -3, 5.5, -5.5, 0}, DataType::float32());
  Tensor b = tensor_of({0, 0, 0, 1, kNaN, 2, kInf, 2, 2, -2}, DataType::float32());
  for (const char* op : {"divide", "floor_divide", "mod", "floor_mod", "maximum", "minimum",
                         "equal", "not_equal", "less", "greater_equal", "power"})
    check_op(op, {a, b});
}

TEST(ElemwiseBinaryEdges, IntegerDivisionByZeroAndMinusOne) {
  double lowest = -2147483648.0;
  Tensor a = tensor_of({7, -7, 7, -7, lowest, lowest, 5, 0, -1}, DataType::int32());
  Tensor b = tensor_of({2, 2, -2, -2, -1, 0, 0, 3, -1}, DataType::int32());
  for (const char* op : {"divide", "floor_divide", "mod", "floor_mod"}) check_op(op, {a, b});
}

TEST(ElemwiseBinaryEdges, IntegerPower) {
  Tensor base = tensor_of({2, -3, 1, -1, -1, 0, 5, 7, 2, 3}, DataType::int32());
  Tensor exponent = tensor_of({10, 3, -4, -3, -2, 0, 0, 2, 31, 25}, DataType::int32());
  check_op("power", {base, exponent});
  check_op("power", {random_tensor({6, 7}, DataType::int64(), 17, -5, 5),
                     random_tensor({7}, DataType::int64(), 18, -2, 12)});
}

TEST(ElemwiseLogic, BoolOps) {
  Tensor a = random_tensor({4, 1, 6}, DataType::boolean(), 19);
  Tensor b = random_tensor({5, 1}, DataType::boolean(), 20);
  for (const char* op : {"logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                         "bitwise_xor", "equal", "not_equal", "less", "greater_equal"})
    check_op(op, {a, b});
}

TEST(ElemwiseLogic, IntegerBitwise) {
  for (DataType dtype :
       {DataType::int32(), DataType::int64(), DataType::int8(), DataType::uint8()}) {
    SCOPED_TRACE(dtype.to_string());
    double lo = dtype.is_uint() ? 0 : -120, hi = dtype.is_uint() ? 255 : 120;
    Tensor a = random_tensor({3, 1, 5}, dtype, 21, lo, hi);
    Tensor b = random_tensor({4, 1}, dtype, 22, lo, hi);
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) check_op(op, {a, b});
  }
}

TEST(ElemwiseLogic, Shifts) {
  for (DataType dtype :
       {DataType::int32(), DataType::int64(), DataType::int8(), DataType::uint8()}) {
    SCOPED_TRACE(dtype.to_string());
    double lo = dtype.is_uint() ? 0 : -100;
    Tensor x = random_tensor({3, 1, 5}, dtype, 23, lo, 100);
    // Counts past the width and negative counts included.
    Tensor y = tensor_of({0, 1, 3, 7, 8, 31, 33, 63, 70, -1}, dtype);
    Tensor y_column = Tensor::zeros({10, 1}, dtype);
    for (int64_t i = 0; i < 10; ++i)
      y_column.set_from_double(i, dtype.is_uint() && i == 9 ? 200 : y.get_as_double(i));
    for (const char* op : {"left_shift", "right_shift"}) check_op(op, {x, y_column});
  }
}

TEST(ElemwiseWhere, ThreeWayBroadcast) {
  check_op("where", {random_tensor({4, 1, 1}, DataType::boolean(), 24),
                     random_tensor({1, 5, 1}, DataType::float32(), 25),
                     random_tensor({6}, DataType::float32(), 26)});
  check_op("where", {random_tensor({2, 3}, DataType::boolean(), 27),
                     random_tensor({2, 3}, DataType::int64(), 28, -50, 50),
                     random_tensor({1}, DataType::int64(), 29, -50, 50)});
  check_op("where", {random_tensor({7}, DataType::boolean(), 30),
                     random_tensor({3, 7}, DataType::boolean(), 31),
                     random_tensor({3, 1}, DataType::boolean(), 32)});
}

TEST(ElemwiseCoverage, EveryOpOfTheFamilyHasACompute) {
  std::vector<std::string> missing = topi::ops_without_compute();
  std::vector<std::string> ours = {"exp",
                                   "log",
                                   "sqrt",
                                   "rsqrt",
                                   "sigmoid",
                                   "tanh",
                                   "erf",
                                   "abs",
                                   "negative",
                                   "floor",
                                   "ceil",
                                   "round",
                                   "sign",
                                   "trunc",
                                   "sin",
                                   "cos",
                                   "tan",
                                   "asin",
                                   "acos",
                                   "atan",
                                   "sinh",
                                   "cosh",
                                   "asinh",
                                   "acosh",
                                   "atanh",
                                   "reciprocal",
                                   "logical_not",
                                   "bitwise_not",
                                   "copy",
                                   "isnan",
                                   "isinf",
                                   "isfinite",
                                   "add",
                                   "subtract",
                                   "multiply",
                                   "divide",
                                   "power",
                                   "maximum",
                                   "minimum",
                                   "mod",
                                   "floor_mod",
                                   "floor_divide",
                                   "equal",
                                   "not_equal",
                                   "less",
                                   "less_equal",
                                   "greater",
                                   "greater_equal",
                                   "logical_and",
                                   "logical_or",
                                   "logical_xor",
                                   "bitwise_and",
                                   "bitwise_or",
                                   "bitwise_xor",
                                   "left_shift",
                                   "right_shift",
                                   "where",
                                   "clip",
                                   "cast",
                                   "nn.relu",
                                   "nn.leaky_relu",
                                   "nn.prelu",
                                   "nn.elu",
                                   "nn.selu",
                                   "nn.gelu",
                                   "nn.softplus",
                                   "nn.hard_sigmoid",
                                   "nn.hard_swish",
                                   "nn.mish",
                                   "nn.bias_add",
                                   "sum",
                                   "mean",
                                   "prod",
                                   "max",
                                   "min",
                                   "all",
                                   "any",
                                   "logsumexp",
                                   "l1_norm",
                                   "l2_norm",
                                   "sum_square",
                                   "argmax",
                                   "argmin",
                                   "variance",
                                   "std",
                                   "nn.softmax",
                                   "nn.log_softmax",
                                   "nn.hardmax"};
  for (const std::string& op : ours)
    EXPECT_EQ(std::count(missing.begin(), missing.end(), op), 0) << op << " has no compute";
}

}  // namespace
}  // namespace anvil
