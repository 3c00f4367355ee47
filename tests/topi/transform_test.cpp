// Compiled transform-family kernels (reshape, transpose, slicing, joining, layouts, padding,
// einsum) against their reference kernels, on odd shapes and several dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

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
DataType boolean() { return DataType::boolean(); }

Tensor values(std::vector<int64_t> shape, DataType dtype, const std::vector<double>& data) {
  Tensor t = Tensor::zeros(std::move(shape), dtype);
  for (size_t i = 0; i < data.size(); ++i) t.set_from_double(int64_t(i), data[i]);
  return t;
}

TEST(TransformTest, Reshape) {
  check_op("reshape", {random_tensor({3, 4, 5}, f32(), 1)},
           attrs("reshape", {{"newshape", I64s{5, -1, 3}}}));
  check_op("reshape", {random_tensor({3, 4, 5}, i64(), 2, -100, 100)},
           attrs("reshape", {{"newshape", I64s{0, -1}}}));
  check_op("reshape", {random_tensor({3, 4, 5}, i32(), 3, -100, 100)},
           attrs("reshape", {{"newshape", I64s{-3, 5}}}));
  check_op("reshape", {random_tensor({2, 3, 5}, boolean(), 4)},
           attrs("reshape", {{"newshape", I64s{5, 6}}}));
  // Runs of dims that merge or split independently, and a run spanning everything.
  check_op("reshape", {random_tensor({4, 1, 6, 5}, f32(), 50)},
           attrs("reshape", {{"newshape", I64s{2, 2, -1}}}));
  check_op("reshape", {random_tensor({2, 3, 4}, f32(), 51)},
           attrs("reshape", {{"newshape", I64s{4, 6}}}));
  check_op("reshape", {random_tensor({6, 5, 7}, i32(), 52, -9, 9)},
           attrs("reshape", {{"newshape", I64s{-4, 2, -1, -2}}}));
  // Only unit dims change: the index map needs no division.
  check_op("reshape", {random_tensor({3, 1, 7}, f32(), 5)},
           attrs("reshape", {{"newshape", I64s{1, 3, 7, 1}}}));
}

TEST(TransformTest, SqueezeExpandDimsFlatten) {
  check_op("squeeze", {random_tensor({3, 1, 5, 1}, i32(), 6, -9, 9)},
           attrs("squeeze", {{"axis", I64s{-1}}}));
  check_op("squeeze", {random_tensor({1, 3, 1, 5}, f32(), 7)}, attrs("squeeze", {}));
  check_op("expand_dims", {random_tensor({3, 5}, f32(), 8)},
           attrs("expand_dims", {{"axis", int64_t(-1)}, {"num_newaxis", int64_t(2)}}));
  check_op("expand_dims", {random_tensor({3, 5}, boolean(), 9)},
           attrs("expand_dims", {{"axis", int64_t(1)}}));
  check_op("flatten", {random_tensor({2, 3, 5, 7}, f32(), 10)},
           attrs("flatten", {{"axis", int64_t(2)}}));
  check_op("flatten", {random_tensor({2, 3, 5}, i64(), 11, -50, 50)},
           attrs("flatten", {{"axis", int64_t(-1)}}));
  check_op("nn.batch_flatten", {random_tensor({3, 2, 5, 7}, f32(), 12)});
}

TEST(TransformTest, Transpose) {
  check_op("transpose", {random_tensor({2, 3, 5}, f32(), 13)},
           attrs("transpose", {{"axes", I64s{2, 0, 1}}}));
  check_op("transpose", {random_tensor({2, 3, 5, 7}, f32(), 14)}, attrs("transpose", {}));
  check_op("transpose", {random_tensor({3, 7, 5}, i64(), 15, -1000, 1000)},
           attrs("transpose", {{"axes", I64s{-1, 0, 1}}}));
  check_op("transpose", {random_tensor({3, 5}, boolean(), 16)}, attrs("transpose", {}));
}

TEST(TransformTest, BroadcastTileRepeatReverse) {
  check_op("broadcast_to", {random_tensor({3, 1}, f32(), 17)},
           attrs("broadcast_to", {{"shape", I64s{2, 3, 5}}}));
  check_op("broadcast_to", {random_tensor({1, 5}, boolean(), 18)},
           attrs("broadcast_to", {{"shape", I64s{3, 5}}}));
  check_op("tile", {random_tensor({3, 5}, f32(), 19)}, attrs("tile", {{"reps", I64s{2, 1, 3}}}));
  check_op("tile", {random_tensor({2, 3, 5}, i32(), 20, -9, 9)},
           attrs("tile", {{"reps", I64s{2}}}));
  check_op("repeat", {random_tensor({3, 5}, f32(), 21)},
           attrs("repeat", {{"repeats", int64_t(3)}, {"axis", int64_t(-1)}}));
  check_op("repeat", {random_tensor({3, 5}, i64(), 22, -9, 9)},
           attrs("repeat", {{"repeats", int64_t(2)}, {"axis", int64_t(0)}}));
  check_op("reverse", {random_tensor({3, 5, 7}, f32(), 23)},
           attrs("reverse", {{"axis", int64_t(1)}}));
  check_op("reverse", {random_tensor({3, 5}, boolean(), 24)},
           attrs("reverse", {{"axis", int64_t(-1)}}));
}

TEST(TransformTest, StridedSlice) {
  Tensor data = random_tensor({7, 9, 5}, f32(), 25);
  auto slice = [](I64s begin, I64s end, I64s strides, I64s axes = {}) {
    return attrs("strided_slice",
                 {{"begin", begin}, {"end", end}, {"strides", strides}, {"axes", axes}});
  };
  check_op("strided_slice", {data}, slice({1, -2}, {6, 0}, {2, -3}));
  check_op("strided_slice", {data}, slice({-100, 3}, {100, 4}, {}, {2, 0}));
  // ONNX's "to the end" markers, forwards and backwards.
  int64_t big = std::numeric_limits<int64_t>::max();
  check_op("strided_slice", {data}, slice({2}, {big}, {3}, {-2}));
  check_op("strided_slice", {data}, slice({-1}, {-big - 1}, {-1}, {1}));
  check_op("strided_slice", {random_tensor({7, 9}, i32(), 26, -50, 50)},
           slice({5, 1}, {-9, 8}, {-2, 3}));
  check_op(
      "strided_slice", {data},
      attrs("strided_slice",
            {{"begin", I64s{1, -4}}, {"end", I64s{3, -1}}, {"slice_mode", std::string("size")}}));
}

TEST(TransformTest, Concatenate) {
  check_group(
      "fn (%a: Tensor[(2, 3, 5), float32], %b: Tensor[(2, 3, 1), float32], "
      "%c: Tensor[(2, 3, 4), float32]) { concatenate((%a, %b, %c), axis=-1) }");
  check_group(
      "fn (%a: Tensor[(3, 5), int32], %b: Tensor[(4, 5), int32]) { "
      "concatenate((%a, %b), axis=0) }");
  check_group("fn (%a: Tensor[(3, 5), bool]) { concatenate((%a,), axis=1) }");
}

TEST(TransformTest, Split) {
  check_op("split", {random_tensor({6, 5}, f32(), 27)}, attrs("split", {{"sections", int64_t(3)}}));
  check_op("split", {random_tensor({3, 9}, i64(), 28, -50, 50)},
           attrs("split", {{"indices", I64s{2, 5}}, {"axis", int64_t(-1)}}));
  // Parts of a split feeding other ops of the same group.
  check_group(
      "fn (%x: Tensor[(4, 7), float32]) { %0 = split(%x, indices=[3], axis=1); "
      "%1 = transpose(%0.1); %2 = reshape(%0.0, newshape=[3, 4]); (%1, %2) }");
}

TEST(TransformTest, ReverseSequence) {
  Tensor lengths = values({4}, i32(), {1, 5, 0, 3});
  check_op("reverse_sequence", {random_tensor({4, 5, 3}, f32(), 29), lengths},
           attrs("reverse_sequence", {{"seq_axis", int64_t(1)}, {"batch_axis", int64_t(0)}}));
  Tensor lengths64 = values({3}, i64(), {2, 7, 4});
  check_op("reverse_sequence", {random_tensor({5, 3, 2}, i32(), 30, -9, 9), lengths64},
           attrs("reverse_sequence", {{"seq_axis", int64_t(0)}, {"batch_axis", int64_t(-2)}}));
}

TEST(TransformTest, Trilu) {
  Tensor data = random_tensor({2, 4, 5}, f32(), 31);
  check_op("trilu", {data, values({}, i64(), {-1})}, attrs("trilu", {}));
  check_op("trilu", {data, values({}, i64(), {2})}, attrs("trilu", {{"upper", false}}));
  check_op("trilu", {random_tensor({5, 3}, i32(), 32, -9, 9), values({1}, i32(), {0})},
           attrs("trilu", {{"upper", false}}));
}

TEST(TransformTest, LayoutTransform) {
  auto layouts = [](const char* src, const char* dst) {
    return attrs("layout_transform",
                 {{"src_layout", std::string(src)}, {"dst_layout", std::string(dst)}});
  };
  check_op("layout_transform", {random_tensor({1, 16, 5, 7}, f32(), 33)},
           layouts("NCHW", "NCHW8c"));
  check_op("layout_transform", {random_tensor({2, 2, 3, 3, 16}, f32(), 34)},
           layouts("NCHW16c", "NCHW"));
  check_op("layout_transform", {random_tensor({32, 16, 3, 3}, f32(), 35)},
           layouts("OIHW", "OIHW16i16o"));
  check_op("layout_transform", {random_tensor({2, 3, 5, 4}, i32(), 36, -99, 99)},
           layouts("NCHW", "NHWC"));
  check_op("layout_transform", {random_tensor({1, 4, 3, 3, 8}, f32(), 37)},
           layouts("NCHW8c", "NCHW16c"));
  check_group(
      "fn (%x: Tensor[(1, 24, 5, 3), float32]) { "
      "%0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\"); "
      "layout_transform(%0, src_layout=\"NCHW8c\", dst_layout=\"NCHW\") }");
}

TEST(TransformTest, Pad) {
  Tensor data = random_tensor({2, 3, 4}, f32(), 38);
  Tensor value = values({}, f32(), {-7.5});
  check_op("nn.pad", {data, value}, attrs("nn.pad", {{"pad_width", I64s{0, 0, 1, 2, 3, 0}}}));
  check_op(
      "nn.pad", {data, value},
      attrs("nn.pad", {{"pad_width", I64s{1, 1, 2, 2, 3, 3}}, {"pad_mode", std::string("edge")}}));
  check_op("nn.pad", {data, value},
           attrs("nn.pad",
                 {{"pad_width", I64s{1, 0, 2, 2, 3, 3}}, {"pad_mode", std::string("reflect")}}));
  check_op("nn.pad", {random_tensor({3, 5}, i32(), 39, -9, 9), values({}, i32(), {42})},
           attrs("nn.pad", {{"pad_width", I64s{2, 1, 0, 3}}}));
  // A pad value computed in the same group.
  check_group(
      "fn (%x: Tensor[(3, 5), float32], %v: Tensor[(1), float32]) { "
      "%0 = reshape(%v, newshape=[]); nn.pad(%x, %0, pad_width=[1, 1, 1, 1]) }");
}

TEST(TransformTest, DepthToSpaceSpaceToDepth) {
  for (const char* mode : {"DCR", "CRD"}) {
    check_op("nn.depth_to_space", {random_tensor({2, 12, 3, 5}, f32(), 40)},
             attrs("nn.depth_to_space", {{"block_size", int64_t(2)}, {"mode", std::string(mode)}}));
  }
  check_op("nn.space_to_depth", {random_tensor({2, 3, 6, 9}, f32(), 41)},
           attrs("nn.space_to_depth", {{"block_size", int64_t(3)}}));
  check_op("nn.depth_to_space", {random_tensor({1, 3, 5, 18}, i32(), 42, -9, 9)},
           attrs("nn.depth_to_space", {{"block_size", int64_t(3)},
                                       {"layout", std::string("NHWC")},
                                       {"mode", std::string("CRD")}}));
  check_op(
      "nn.space_to_depth", {random_tensor({1, 4, 6, 3}, f32(), 43)},
      attrs("nn.space_to_depth", {{"block_size", int64_t(2)}, {"layout", std::string("NHWC")}}));
}

TEST(TransformTest, Einsum) {
  topi_test::Tolerance tol{1e-5, 1e-5};
  check_group(
      "fn (%a: Tensor[(3, 5), float32], %b: Tensor[(5, 4), float32]) { "
      "einsum((%a, %b), equation=\"ij,jk->ik\") }",
      {}, tol);
  check_group(
      "fn (%a: Tensor[(2, 3, 5), float32], %b: Tensor[(2, 5, 4), float32]) { "
      "einsum((%a, %b), equation=\"bij,bjk->bik\") }",
      {}, tol);
  check_group("fn (%a: Tensor[(4, 4), float32]) { einsum((%a,), equation=\"ii->i\") }", {}, tol);
  check_group("fn (%a: Tensor[(3, 5), int32]) { einsum((%a,), equation=\"ij->ji\") }");
  check_group(
      "fn (%a: Tensor[(2, 3, 5), float32], %b: Tensor[(5, 4), float32]) { "
      "einsum((%a, %b), equation=\"...j,jk\") }",
      {}, tol);
}

TEST(TransformTest, ReshapeThenTranspose) {
  check_group(
      "fn (%x: Tensor[(6, 35), float32]) { %0 = reshape(%x, newshape=[2, 3, 5, 7]); "
      "%1 = transpose(%0, axes=[0, 2, 3, 1]); reshape(%1, newshape=[-1, 3]) }");
}

TEST(TransformTest, ReshapeLike) {
  check_group(
      "fn (%x: Tensor[(6, 35), float32], %y: Tensor[(3, 2, 7, 5), int32]) { "
      "reshape_like(%x, %y) }");
  check_group(
      "fn (%x: Tensor[(6, 35), float32], %y: Tensor[(2, 3, 9), float32]) { "
      "reshape_like(%x, %y, lhs_end=1, rhs_end=2) }");
}

TEST(TransformTest, EveryTransformOpHasACompute) {
  std::vector<std::string> missing = topi::ops_without_compute();
  for (const char* op : {"reshape",
                         "reshape_like",
                         "transpose",
                         "squeeze",
                         "expand_dims",
                         "flatten",
                         "nn.batch_flatten",
                         "broadcast_to",
                         "tile",
                         "repeat",
                         "reverse",
                         "concatenate",
                         "split",
                         "strided_slice",
                         "reverse_sequence",
                         "trilu",
                         "layout_transform",
                         "nn.pad",
                         "nn.depth_to_space",
                         "nn.space_to_depth",
                         "einsum"})
    EXPECT_EQ(std::count(missing.begin(), missing.end(), op), 0) << op;
}

}  // namespace
}  // namespace anvil
