// Compiled index-family and creation kernels (take, gather, gather_nd, one_hot, arange, full,
// zeros/ones, shape_of, ndarray_size) against their reference kernels.
#include <gtest/gtest.h>

#include <algorithm>

#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_group;
using topi_test::check_op;
using topi_test::random_tensor;
using I64s = std::vector<int64_t>;

DataType f32() { return DataType::float32(); }
DataType i32() { return DataType::int32(); }
DataType i64() { return DataType::int64(); }

Tensor values(std::vector<int64_t> shape, DataType dtype, const std::vector<double>& data) {
  Tensor t = Tensor::zeros(std::move(shape), dtype);
  for (size_t i = 0; i < data.size(); ++i) t.set_from_double(int64_t(i), data[i]);
  return t;
}

TEST(IndexTest, TakeModes) {
  Tensor data = random_tensor({4, 5, 3}, f32(), 1);
  // Out of range both ways: clip clamps, wrap takes the index modulo the dim.
  Tensor wild = values({2, 3}, i32(), {-7, -1, 0, 4, 5, 12});
  for (const char* mode : {"clip", "wrap"}) {
    check_op("take", {data, wild},
             attrs("take", {{"axis", int64_t(1)}, {"mode", std::string(mode)}}));
    check_op("take", {data, wild}, attrs("take", {{"mode", std::string(mode)}}));
  }
  // fast: in range, negative ones counting from the end.
  Tensor in_range = values({4}, i64(), {-5, -1, 0, 4});
  check_op("take", {data, in_range},
           attrs("take", {{"axis", int64_t(-2)}, {"mode", std::string("fast")}}));
  check_op("take", {data, values({}, i64(), {-2})},
           attrs("take", {{"axis", int64_t(0)}, {"mode", std::string("fast")}}));
}

TEST(IndexTest, TakeBatchDims) {
  Tensor data = random_tensor({3, 4, 5}, i32(), 2, -99, 99);
  Tensor indices = random_tensor({3, 2}, i64(), 3, -6, 6);
  check_op("take", {data, indices},
           attrs("take", {{"axis", int64_t(2)}, {"batch_dims", int64_t(1)}}));
  check_op(
      "take", {data, indices},
      attrs("take",
            {{"axis", int64_t(1)}, {"batch_dims", int64_t(-1)}, {"mode", std::string("wrap")}}));
}

TEST(IndexTest, Gather) {
  Tensor data = random_tensor({3, 4, 5}, f32(), 4);
  check_op("gather", {data, random_tensor({3, 2, 5}, i64(), 5, -4, 3)},
           attrs("gather", {{"axis", int64_t(1)}}));
  check_op("gather", {data, random_tensor({2, 4, 7}, i32(), 6, -5, 4)},
           attrs("gather", {{"axis", int64_t(-1)}}));
}

TEST(IndexTest, GatherND) {
  Tensor data = random_tensor({4, 5, 6}, f32(), 7);
  Tensor pairs = values({2, 3}, i64(), {0, 3, -1, 4, -2, 1});
  check_op("gather_nd", {data, pairs});
  check_op("gather_nd", {random_tensor({4, 5, 6}, i32(), 8, -9, 9), values({1, 2}, i32(), {3, 0})});
  // batch_dims 1: indices (M=1, B=4, Y=2) pick along the second axis of each batch entry.
  Tensor batched = random_tensor({1, 4, 2}, i64(), 9, -5, 4);
  check_op("gather_nd", {data, batched}, attrs("gather_nd", {{"batch_dims", int64_t(1)}}));
}

TEST(IndexTest, OneHot) {
  Tensor indices = values({2, 3}, i32(), {0, 2, -1, 4, -5, 3});
  Tensor on = values({}, f32(), {2.5}), off = values({}, f32(), {-1});
  check_op("one_hot", {indices, on, off}, attrs("one_hot", {{"depth", int64_t(4)}}));
  check_op("one_hot", {indices, on, off},
           attrs("one_hot", {{"depth", int64_t(5)}, {"axis", int64_t(0)}}));
  // Float on/off values converted to an integer dtype truncate, as the reference does.
  check_op("one_hot", {values({4}, i64(), {1, 0, -2, 3}), values({}, f32(), {3.7}), off},
           attrs("one_hot", {{"depth", int64_t(3)}, {"axis", int64_t(1)}, {"dtype", i32()}}));
}

TEST(IndexTest, Arange) {
  check_op("arange", {}, attrs("arange", {{"start", 1.5}, {"stop", 7.0}, {"step", 0.5}}));
  check_op("arange", {},
           attrs("arange", {{"start", 10.0}, {"stop", -3.0}, {"step", -1.5}, {"dtype", i32()}}));
  check_op("arange", {}, attrs("arange", {{"stop", 5.0}, {"dtype", i64()}}));
}

TEST(IndexTest, FullZerosOnes) {
  check_op("full", {values({}, f32(), {2.7})},
           attrs("full", {{"shape", I64s{3, 5}}, {"dtype", i32()}}));
  check_op("full", {values({}, f32(), {-1.25})}, attrs("full", {{"shape", I64s{2, 3, 4}}}));
  check_op("full", {values({}, i64(), {-3})},
           attrs("full", {{"shape", I64s{7}}, {"dtype", f32()}}));
  check_op("full", {values({}, f32(), {0.5})},
           attrs("full", {{"shape", I64s{3}}, {"dtype", DataType::boolean()}}));
  check_op("zeros", {}, attrs("zeros", {{"shape", I64s{3, 5}}}));
  check_op("ones", {}, attrs("ones", {{"shape", I64s{2, 7}}, {"dtype", i64()}}));
  check_op("ones", {}, attrs("ones", {{"shape", I64s{5}}, {"dtype", DataType::boolean()}}));
  Tensor data = random_tensor({3, 5}, i32(), 10, -9, 9);
  check_op("full_like", {data, values({}, f32(), {-4.9})});
  check_op("zeros_like", {random_tensor({3, 5}, f32(), 11)});
  check_op("ones_like", {data});
}

TEST(IndexTest, ShapeOfNdarraySize) {
  Tensor data = random_tensor({3, 1, 5, 7}, f32(), 12);
  check_op("shape_of", {data});
  check_op("shape_of", {data}, attrs("shape_of", {{"dtype", i32()}}));
  check_op("ndarray_size", {data});
  check_op("ndarray_size", {data}, attrs("ndarray_size", {{"dtype", i32()}}));
}

TEST(IndexTest, ScatterElements) {
  Tensor data = random_tensor({4, 5}, f32(), 13);
  // Duplicate targets (the last "update" wins) and negative indices; updates cover part of data.
  Tensor indices = values({3, 3}, i64(), {1, -1, 1, 1, 0, 4, -5, 2, 2});
  Tensor updates = random_tensor({3, 3}, f32(), 14);
  for (const char* reduction : {"update", "add", "mul", "mean", "min", "max"})
    check_op(
        "scatter_elements", {data, indices, updates},
        attrs("scatter_elements", {{"axis", int64_t(-1)}, {"reduction", std::string(reduction)}}));
  Tensor rows = values({2, 5}, i32(), {0, 3, 3, -1, 2, 3, 3, 0, 1, 2});
  check_op("scatter_elements",
           {random_tensor({4, 5}, i32(), 15, -9, 9), rows, random_tensor({2, 5}, i32(), 16, -9, 9)},
           attrs("scatter_elements", {{"reduction", std::string("mean")}}));
}

TEST(IndexTest, ScatterND) {
  Tensor data = random_tensor({4, 3, 2}, f32(), 17);
  // Index pairs (M = 2) for 3 updates of data rows (2 elements each), one target twice.
  Tensor indices = values({2, 3}, i64(), {1, -1, 1, 2, 0, 2});
  Tensor updates = random_tensor({3, 2}, f32(), 18);
  for (const char* mode : {"update", "add", "mul", "min", "max"})
    check_op("scatter_nd", {data, indices, updates},
             attrs("scatter_nd", {{"mode", std::string(mode)}}));
  check_op("scatter_nd",
           {random_tensor({5}, i64(), 19, -9, 9), values({1, 2, 2}, i32(), {4, 0, -1, 4}),
            random_tensor({2, 2}, i64(), 20, -9, 9)},
           attrs("scatter_nd", {{"mode", std::string("add")}}));
}

TEST(IndexTest, CumsumCumprod) {
  Tensor data = random_tensor({3, 5, 4}, f32(), 21);
  check_op("cumsum", {data}, attrs("cumsum", {{"axis", int64_t(1)}}));
  check_op("cumsum", {data},
           attrs("cumsum", {{"axis", int64_t(-1)}, {"exclusive", true}, {"reverse", true}}));
  check_op("cumsum", {data}, attrs("cumsum", {{"reverse", true}}));
  // Each float element truncates to the integer output dtype before the sum, as the
  // reference converts them.
  check_op("cumsum", {random_tensor({4, 6}, f32(), 22, -5, 5)},
           attrs("cumsum", {{"axis", int64_t(0)}, {"dtype", i32()}, {"exclusive", true}}));
  check_op("cumprod", {random_tensor({3, 6}, i64(), 23, -3, 3)},
           attrs("cumprod", {{"axis", int64_t(1)}}));
  check_op("cumprod", {random_tensor({2, 7}, f32(), 24, 0.5, 1.5)},
           attrs("cumprod", {{"axis", int64_t(-1)}, {"exclusive", true}}));
}

TEST(IndexTest, Col2Im) {
  // 2 channels of 2x3 blocks over a 5x7 image with stride (1, 2), padding and dilation.
  ir::Attrs col2im = attrs("col2im", {{"image_shape", I64s{5, 7}},
                                      {"block_shape", I64s{2, 3}},
                                      {"dilations", I64s{2, 1}},
                                      {"pads", I64s{1, 0, 0, 2}},
                                      {"strides", I64s{1, 2}}});
  // Blocks: (5 + 1 - 3) / 1 + 1 = 4 rows, (7 + 2 - 3) / 2 + 1 = 4 columns.
  check_op("col2im", {random_tensor({2, 12, 16}, f32(), 25)}, col2im, {1e-5, 1e-5});
  check_op("col2im", {random_tensor({1, 6, 18}, i32(), 26, -9, 9)},
           attrs("col2im", {{"image_shape", I64s{5, 7}}, {"block_shape", I64s{3, 2}}}));
}

TEST(IndexTest, TakeOfTransposed) {
  check_group(
      "fn (%x: Tensor[(4, 6), float32], %i: Tensor[(3), int64]) { "
      "%0 = transpose(%x); take(%0, %i, axis=1, mode=\"wrap\") }");
}

TEST(IndexTest, EveryIndexAndCreationOpHasACompute) {
  std::vector<std::string> missing = topi::ops_without_compute();
  for (const char* op : {"take", "gather", "gather_nd", "one_hot", "scatter_elements", "scatter_nd",
                         "cumsum", "cumprod", "col2im", "arange", "full", "full_like", "zeros",
                         "zeros_like", "ones", "ones_like", "shape_of", "ndarray_size"})
    EXPECT_EQ(std::count(missing.begin(), missing.end(), op), 0) << op;
}

}  // namespace
}  // namespace anvil
