// Reference kernels of the creation family, checked against hand-computed values.
#include <gtest/gtest.h>

#include <cstdint>

#include "tensor_kernel_test_util.h"

namespace anvil::reference {
namespace {

using testing::fails_with;
using testing::ints;
using testing::ints_of;
using testing::make_ints;
using testing::make_tensor;
using testing::run1;
using testing::values_of;
using V = std::vector<double>;
using I = std::vector<int64_t>;

TEST(CreationKernels, Arange) {
  Tensor out = run1("arange", {}, {{"start", 1.0}, {"stop", 2.0}, {"step", 0.25}});
  EXPECT_EQ(values_of(out), (V{1, 1.25, 1.5, 1.75}));
  Tensor down = run1("arange", {},
                     {{"start", 5.0}, {"stop", 0.0}, {"step", -2.0}, {"dtype", DataType::int32()}});
  EXPECT_EQ(down.dtype(), DataType::int32());
  EXPECT_EQ(ints_of(down), (I{5, 3, 1}));
}

TEST(CreationKernels, RangeCountsLikeOnnx) {
  // ceil((limit - start) / delta) elements: (1 - 10) / -3 -> 3.
  auto scalar = [](int64_t v) { return make_ints({}, {v}, DataType::int32()); };
  Tensor out = run1("range", {scalar(10), scalar(1), scalar(-3)});
  EXPECT_EQ(out.dtype(), DataType::int32());
  EXPECT_EQ(ints_of(out), (I{10, 7, 4}));
  EXPECT_EQ(run1("range", {scalar(3), scalar(1), scalar(1)}).numel(), 0);
  auto real = [](double v) { return make_tensor({}, {v}); };
  EXPECT_EQ(values_of(run1("range", {real(1), real(2), real(0.5)})), (V{1, 1.5}));
  EXPECT_TRUE(fails_with("range", {scalar(0), scalar(1), scalar(0)}, {}, "delta"));
}

TEST(CreationKernels, FullConvertsTheFillValue) {
  Tensor out =
      run1("full", {make_tensor({}, {2.75})}, {{"shape", I{2, 2}}, {"dtype", DataType::int64()}});
  EXPECT_EQ(ints_of(out), (I{2, 2, 2, 2}));
  // Without a dtype the fill value's is kept, bit for bit.
  int64_t big = (int64_t(1) << 60) + 3;
  EXPECT_EQ(ints_of(run1("full", {make_ints({}, {big})}, {{"shape", I{2}}})), (I{big, big}));
  Tensor dynamic = run1("dyn.full", {make_tensor({}, {1.5}), ints({3, 0})});
  EXPECT_EQ(dynamic.shape_vector(), (I{3, 0}));
  EXPECT_EQ(values_of(run1("dyn.full", {make_tensor({}, {1.5}), ints({2})})), (V{1.5, 1.5}));
}

TEST(CreationKernels, ZerosOnesAndLikes) {
  Tensor ones = run1("ones", {}, {{"shape", I{2}}, {"dtype", DataType::boolean()}});
  EXPECT_EQ(ones.dtype(), DataType::boolean());
  EXPECT_EQ(ints_of(ones), (I{1, 1}));
  EXPECT_EQ(values_of(run1("zeros", {}, {{"shape", I{3}}})), (V{0, 0, 0}));
  Tensor x = make_ints({2, 1}, {7, 8}, DataType::int8());
  Tensor like = run1("ones_like", {x});
  EXPECT_EQ(like.dtype(), DataType::int8());
  EXPECT_EQ(ints_of(like), (I{1, 1}));
  EXPECT_EQ(ints_of(run1("zeros_like", {x})), (I{0, 0}));
  EXPECT_EQ(ints_of(run1("full_like", {x, make_tensor({}, {-3.5})})), (I{-3, -3}));
}

TEST(CreationKernels, ShapeOfAndSize) {
  Tensor x = make_tensor({2, 0, 3}, {});
  EXPECT_EQ(ints_of(run1("shape_of", {x})), (I{2, 0, 3}));
  Tensor shape32 = run1("shape_of", {x}, {{"dtype", DataType::int32()}});
  EXPECT_EQ(shape32.dtype(), DataType::int32());
  Tensor size = run1("ndarray_size", {make_tensor({2, 3}, {0, 0, 0, 0, 0, 0})});
  EXPECT_EQ(size.ndim(), 0);
  EXPECT_EQ(ints_of(size), (I{6}));
}

}  // namespace
}  // namespace anvil::reference
