// The ordering computes (sort, argsort, topk) compiled and run against the reference kernels'
// stable sort: odd shapes, every axis (negative ones too), both directions, ties (in integer
// and float data, -0 and +0 among them), NaN and infinities, k below the axis length, every
// ret_type and the dtype of the indices.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "anvil/runtime/tensor.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Integer-valued data in a small range, so most lines hold repeated values.
Tensor tied_tensor(std::vector<int64_t> shape, DataType dtype, uint64_t seed) {
  Tensor t = random_tensor(std::move(shape), dtype, seed, -3, 3);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, std::round(t.get_as_double(i)));
  return t;
}

// Float data whose lines hold NaNs (several in one line), infinities and both zeros.
Tensor special_floats(DataType dtype) {
  Tensor t = tied_tensor({3, 7}, dtype, 7);
  const std::vector<std::pair<int64_t, double>> specials = {
      {1, kNaN}, {4, kNaN},  {5, kInf},   {8, -kInf}, {9, kNaN},  {10, -0.0}, {12, 0.0},
      {13, 0.0}, {15, kInf}, {16, -kInf}, {17, kNaN}, {19, kInf}, {20, -0.0}};
  for (const auto& [at, value] : specials) t.set_from_double(at, value);
  return t;
}

TEST(Sort, EveryAxisBothDirections) {
  Tensor x = random_tensor({3, 5, 4}, DataType::float32(), 1);
  for (int64_t axis : {0, 1, 2, -1, -3})
    for (bool ascend : {true, false}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (ascend ? " ascending" : " descending"));
      check_op("sort", {x}, attrs("sort", {{"axis", axis}, {"is_ascend", ascend}}));
      check_op("argsort", {x}, attrs("argsort", {{"axis", axis}, {"is_ascend", ascend}}));
    }
}

TEST(Sort, TiesKeepIndexOrder) {
  for (DataType dtype : {DataType::int32(), DataType::int64(), DataType::float32()}) {
    SCOPED_TRACE(dtype.to_string());
    Tensor x = tied_tensor({4, 9}, dtype, 2);
    for (bool ascend : {true, false}) {
      check_op("sort", {x}, attrs("sort", {{"is_ascend", ascend}}));
      check_op("argsort", {x}, attrs("argsort", {{"axis", int64_t(0)}, {"is_ascend", ascend}}));
      check_op("argsort", {x}, attrs("argsort", {{"is_ascend", ascend}}));
    }
  }
}

TEST(Sort, NaNSortsAboveEveryNumber) {
  for (DataType dtype : {DataType::float32(), DataType::float64(), DataType::float16()}) {
    SCOPED_TRACE(dtype.to_string());
    Tensor x = special_floats(dtype);
    for (bool ascend : {true, false}) {
      check_op("sort", {x}, attrs("sort", {{"is_ascend", ascend}}));
      check_op("argsort", {x}, attrs("argsort", {{"is_ascend", ascend}}));
      check_op("topk", {x}, attrs("topk", {{"k", int64_t(3)}, {"is_ascend", ascend}}));
    }
  }
}

TEST(Sort, NarrowIntegersAndIndexDtypes) {
  Tensor bytes = tied_tensor({5, 6}, DataType::int8(), 3);
  Tensor flags = random_tensor({2, 7}, DataType::boolean(), 4);
  for (DataType index : {DataType::int32(), DataType::int64(), DataType::uint8()}) {
    SCOPED_TRACE(index.to_string());
    check_op("argsort", {bytes}, attrs("argsort", {{"dtype", index}}));
    check_op("argsort", {flags}, attrs("argsort", {{"dtype", index}, {"is_ascend", false}}));
  }
  check_op("sort", {flags}, attrs("sort", {}));
}

TEST(TopK, KBelowTheAxisEveryRetType) {
  Tensor x = tied_tensor({3, 11, 2}, DataType::float32(), 5);
  for (const char* ret : {"both", "values", "indices"})
    for (bool ascend : {false, true}) {
      SCOPED_TRACE(std::string(ret) + (ascend ? " smallest" : " largest"));
      check_op("topk", {x},
               attrs("topk", {{"k", int64_t(4)},
                              {"axis", int64_t(1)},
                              {"ret_type", std::string(ret)},
                              {"is_ascend", ascend},
                              {"dtype", DataType::int32()}}));
    }
}

TEST(TopK, NegativeAxisWholeAxisAndOne) {
  Tensor x = tied_tensor({4, 3, 5}, DataType::int32(), 6);
  check_op("topk", {x}, attrs("topk", {{"k", int64_t(2)}, {"axis", int64_t(-2)}}));
  check_op("topk", {x}, attrs("topk", {{"k", int64_t(0)}, {"axis", int64_t(-1)}}));
  check_op("topk", {x}, attrs("topk", {{"k", int64_t(1)}, {"axis", int64_t(0)}}));
  check_op("topk", {x}, attrs("topk", {{"k", int64_t(5)}, {"is_ascend", true}}));
}

}  // namespace
}  // namespace anvil
