// Type relations of the index family.
#include <gtest/gtest.h>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"
#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::attrs_of;
using testing::infer_call;
using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

const DataType f32 = DataType::float32();
const DataType f16 = DataType::float16();
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");
const Dim m = Dim::var("m");

// ---------------------------------------------------------------- take

Ref<TakeAttrs> take_along(std::optional<int64_t> axis, int64_t batch_dims = 0,
                          std::string mode = "clip") {
  return attrs_of<TakeAttrs>([&](TakeAttrs& a) {
    a.axis = axis;
    a.batch_dims = batch_dims;
    a.mode = std::move(mode);
  });
}

TEST(IndexTake, AlongAnAxisOrFlattened) {
  auto data = tensor_var("data", {n, 4, 5});
  auto idx = tensor_var("idx", {2, m}, i64);
  EXPECT_TRUE(is_tensor(infer_call("take", {data, idx}), {2, m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("take", {data, idx}, take_along(0)), {2, m, 4, 5}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("take", {data, idx}, take_along(-2, 0, "wrap")), {n, 2, m, 5}, f32));
  auto scalar = tensor_var("scalar", {}, i32);
  EXPECT_TRUE(is_tensor(infer_call("take", {data, scalar}, take_along(2, 0, "fast")), {n, 4}, f32));
  EXPECT_EQ(pattern_of("take"), OpPattern::Injective);
}

TEST(IndexTake, BatchDims) {
  auto data = tensor_var("data", {n, 4, 5});
  auto idx = tensor_var("idx", {n, 3}, i64);
  EXPECT_TRUE(is_tensor(infer_call("take", {data, idx}, take_along(1, 1)), {n, 3, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("take", {data, idx}, take_along(2, -1)), {n, 4, 3}, f32));
}

TEST(IndexTake, Errors) {
  auto data = tensor_var("data", {2, 4, 5});
  auto idx = tensor_var("idx", {3, 3}, i64);
  EXPECT_TRUE(type_error_mentions(call_op("take", {data, idx}, take_along(3)),
                                  {"take", "axis", "3", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("take", {data, idx}, take_along(0, 0, "nearest")),
                                  {"mode", "\"nearest\"", "\"clip\""}));
  EXPECT_TRUE(type_error_mentions(call_op("take", {data, tensor_var("f", {3}, f32)}),
                                  {"indices", "integer"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("take", {data, idx}, take_along(0, 1)), {"batch_dims", "1"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("take", {data, idx}, take_along(1, 3)), {"batch_dims", "3"}));
  EXPECT_TRUE(type_error_mentions(call_op("take", {data, idx}, take_along(1, 1)),
                                  {"batch dim 0", "Tensor[(3, 3), int64]", "Tensor[(2, 4, 5)"}));
  EXPECT_TRUE(type_error_mentions(call_op("take", {tensor_var("s", {}), idx}, take_along(0)),
                                  {"data", "rank >= 1"}));
}

// ---------------------------------------------------------------- gather, gather_nd

Ref<GatherAttrs> gather_axis(int64_t axis) {
  return attrs_of<GatherAttrs>([&](GatherAttrs& a) { a.axis = axis; });
}

TEST(IndexGather, OutputHasTheIndicesShape) {
  auto data = tensor_var("data", {n, 4});
  auto idx = tensor_var("idx", {n, 7}, i32);
  EXPECT_TRUE(is_tensor(infer_call("gather", {data, idx}, gather_axis(1)), {n, 7}, f32));
  EXPECT_TRUE(is_tensor(infer_call("gather", {data, idx}, gather_axis(-2)), {n, 7}, f32));
  EXPECT_TRUE(type_error_mentions(call_op("gather", {data, idx}, gather_axis(2)),
                                  {"axis", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("gather", {data, tensor_var("i1", {7}, i32)}),
                                  {"indices", "rank 2", "Tensor[(7), int32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("gather", {data, tensor_var("f", {n, 7}, f16)}),
                                  {"indices", "integer"}));
  EXPECT_EQ(pattern_of("gather"), OpPattern::Injective);
}

Ref<GatherNDAttrs> gather_nd(int64_t batch_dims, std::optional<int64_t> index_rank = {}) {
  return attrs_of<GatherNDAttrs>([&](GatherNDAttrs& a) {
    a.batch_dims = batch_dims;
    a.index_rank = index_rank;
  });
}

TEST(IndexGatherNd, IndexTuplesOnTheFirstAxis) {
  auto data = tensor_var("data", {3, 4, 5, 6});
  auto idx = tensor_var("idx", {2, m, 7}, i64);
  EXPECT_TRUE(is_tensor(infer_call("gather_nd", {data, idx}), {m, 7, 5, 6}, f32));
  auto full = tensor_var("full", {4, m}, i64);
  EXPECT_TRUE(is_tensor(infer_call("gather_nd", {data, full}), {m}, f32));
  // batch_dims: indices (M, B, Y), data (B, X...).
  auto bdata = tensor_var("bdata", {n, 4, 5});
  auto bidx = tensor_var("bidx", {1, n, 7}, i64);
  EXPECT_TRUE(is_tensor(infer_call("gather_nd", {bdata, bidx}, gather_nd(1)), {n, 7, 5}, f32));
  auto sym = tensor_var("sym", {Dim::var("k"), 7}, i64);
  EXPECT_TRUE(is_tensor(infer_call("gather_nd", {data, sym}, gather_nd(0, 3)), {7, 6}, f32));
  EXPECT_EQ(pattern_of("gather_nd"), OpPattern::Injective);
}

TEST(IndexGatherNd, Errors) {
  auto data = tensor_var("data", {3, 4});
  EXPECT_TRUE(type_error_mentions(call_op("gather_nd", {data, tensor_var("i", {3, 5}, i64)}),
                                  {"indices", "indexes 3 dims", "Tensor[(3, 4), float32]"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("gather_nd", {data, tensor_var("s", {Dim::var("k"), 5}, i64)}),
                          {"indices", "symbolic", "index_rank"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("gather_nd", {data, tensor_var("i2", {2, 5}, i64)}, gather_nd(0, 1)),
      {"index_rank", "disagrees"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("gather_nd", {data, tensor_var("i3", {1, 5}, i64)}, gather_nd(2)),
                          {"batch_dims", "2"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("gather_nd", {data, tensor_var("i4", {1, 2, 5}, i64)}, gather_nd(1)),
      {"batch dim 0", "Tensor[(1, 2, 5), int64]"}));
  EXPECT_TRUE(type_error_mentions(call_op("gather_nd", {data, tensor_var("i5", {}, i64)}),
                                  {"indices", "rank >= 1"}));
  EXPECT_TRUE(type_error_mentions(call_op("gather_nd", {data, tensor_var("i6", {1, 5}, f32)}),
                                  {"indices", "integer"}));
}

// ---------------------------------------------------------------- scatter

TEST(IndexScatterElements, OutputIsTheData) {
  auto data = tensor_var("data", {n, 4});
  auto idx = tensor_var("idx", {2, 4}, i64);
  auto upd = tensor_var("upd", {2, 4});
  auto add = attrs_of<ScatterElementsAttrs>([](ScatterElementsAttrs& a) {
    a.axis = -2;
    a.reduction = "add";
  });
  EXPECT_TRUE(is_tensor(infer_call("scatter_elements", {data, idx, upd}), {n, 4}, f32));
  EXPECT_TRUE(is_tensor(infer_call("scatter_elements", {data, idx, upd}, add), {n, 4}, f32));
  EXPECT_EQ(pattern_of("scatter_elements"), OpPattern::Opaque);
}

TEST(IndexScatterElements, Errors) {
  auto data = tensor_var("data", {3, 4});
  auto idx = tensor_var("idx", {2, 4}, i64);
  auto upd = tensor_var("upd", {2, 4});
  auto with = [](int64_t axis, std::string reduction) {
    return attrs_of<ScatterElementsAttrs>([&](ScatterElementsAttrs& a) {
      a.axis = axis;
      a.reduction = reduction;
    });
  };
  EXPECT_TRUE(type_error_mentions(call_op("scatter_elements", {data, idx, upd}, with(2, "add")),
                                  {"axis", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("scatter_elements", {data, idx, upd}, with(0, "sub")),
                                  {"reduction", "\"sub\""}));
  EXPECT_TRUE(
      type_error_mentions(call_op("scatter_elements", {data, idx, tensor_var("u2", {2, 3})}),
                          {"updates", "Tensor[(2, 3), float32]", "shape of", "indices"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("scatter_elements", {data, tensor_var("i1", {8}, i64), tensor_var("u1", {8})}),
      {"indices", "rank 2"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("scatter_elements", {data, idx, tensor_var("uh", {2, 4}, f16)}),
                          {"updates", "float16", "float32"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("scatter_elements", {data, tensor_var("fi", {2, 4}, f32), upd}),
                          {"indices", "integer"}));
}

TEST(IndexScatterNd, TvmLayout) {
  auto data = tensor_var("data", {n, 4, 5});
  auto idx = tensor_var("idx", {2, m}, i64);
  auto upd = tensor_var("upd", {m, 5});
  EXPECT_TRUE(is_tensor(infer_call("scatter_nd", {data, idx, upd}), {n, 4, 5}, f32));
  auto add = attrs_of<ScatterNDAttrs>([](ScatterNDAttrs& a) { a.mode = "add"; });
  EXPECT_TRUE(is_tensor(infer_call("scatter_nd", {data, idx, upd}, add), {n, 4, 5}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("scatter_nd", {data, idx, tensor_var("bad", {m, 4})}),
                          {"updates", "Tensor[(m, 4), float32]", "must have shape (m, 5)"}));
  EXPECT_TRUE(type_error_mentions(
      call_op("scatter_nd", {data, tensor_var("big", {4, 2}, i64), tensor_var("u", {2})}),
      {"indices", "indexes 4 dims"}));
  auto bad_mode = attrs_of<ScatterNDAttrs>([](ScatterNDAttrs& a) { a.mode = "none"; });
  EXPECT_TRUE(
      type_error_mentions(call_op("scatter_nd", {data, idx, upd}, bad_mode), {"mode", "\"none\""}));
  EXPECT_TRUE(type_error_mentions(call_op("scatter_nd", {data, idx, tensor_var("uh", {m, 5}, f16)}),
                                  {"updates", "float16"}));
  EXPECT_EQ(pattern_of("scatter_nd"), OpPattern::Opaque);
}

// ---------------------------------------------------------------- one_hot

Ref<OneHotAttrs> one_hot(int64_t depth, int64_t axis = -1, std::optional<DataType> dtype = {}) {
  return attrs_of<OneHotAttrs>([&](OneHotAttrs& a) {
    a.depth = depth;
    a.axis = axis;
    a.dtype = dtype;
  });
}

TEST(IndexOneHot, InsertsTheDepthAxis) {
  auto idx = tensor_var("idx", {n, 3}, i64);
  auto on = tensor_var("on", {}, f32);
  auto off = tensor_var("off", {}, f32);
  EXPECT_TRUE(is_tensor(infer_call("one_hot", {idx, on, off}, one_hot(10)), {n, 3, 10}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("one_hot", {idx, on, off}, one_hot(10, 0, i32)), {10, n, 3}, i32));
  EXPECT_TRUE(is_tensor(infer_call("one_hot", {idx, on, off}, one_hot(10, -2)), {n, 10, 3}, f32));
  EXPECT_EQ(pattern_of("one_hot"), OpPattern::OutEWiseFusable);
}

TEST(IndexOneHot, Errors) {
  auto idx = tensor_var("idx", {3}, i64);
  auto on = tensor_var("on", {}, f32);
  auto off = tensor_var("off", {}, f32);
  EXPECT_TRUE(
      type_error_mentions(call_op("one_hot", {idx, on, off}, one_hot(0)), {"depth", "0", ">= 1"}));
  EXPECT_TRUE(type_error_mentions(call_op("one_hot", {idx, on, off}, one_hot(4, 2)),
                                  {"axis", "2", "out of range", "-2 to 1"}));
  EXPECT_TRUE(type_error_mentions(call_op("one_hot", {idx, tensor_var("v", {2}), off}, one_hot(4)),
                                  {"on_value", "scalar", "Tensor[(2), float32]"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("one_hot", {idx, on, tensor_var("h", {}, f16)}, one_hot(4)),
                          {"off_value", "float16", "float32"}));
  EXPECT_TRUE(type_error_mentions(call_op("one_hot", {tensor_var("f", {3}), on, off}, one_hot(4)),
                                  {"indices", "integer"}));
}

// ---------------------------------------------------------------- topk, sort, argsort

Ref<TopKAttrs> topk(int64_t k, int64_t axis = -1, std::string ret_type = "both",
                    DataType dtype = i64) {
  return attrs_of<TopKAttrs>([&](TopKAttrs& a) {
    a.k = k;
    a.axis = axis;
    a.ret_type = std::move(ret_type);
    a.dtype = dtype;
  });
}

TEST(IndexTopk, ValuesAndIndices) {
  auto x = tensor_var("x", {n, 10});
  Type both = infer_call("topk", {x}, topk(3));
  const auto* tuple = as<TupleTypeNode>(both);
  ASSERT_NE(tuple, nullptr);
  ASSERT_EQ(tuple->fields.size(), 2u);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {n, 3}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {n, 3}, i64));
  EXPECT_TRUE(is_tensor(infer_call("topk", {x}, topk(2, 0, "values")), {2, 10}, f32));
  EXPECT_TRUE(is_tensor(infer_call("topk", {x}, topk(4, -1, "indices", i32)), {n, 4}, i32));
  // k < 1 selects the whole axis, as in TVM.
  EXPECT_TRUE(is_tensor(infer_call("topk", {x}, topk(0, 1, "values")), {n, 10}, f32));
  EXPECT_EQ(pattern_of("topk"), OpPattern::Opaque);
}

TEST(IndexTopk, DynamicK) {
  auto x = tensor_var("x", {n, 10});
  auto k = tensor_var("k", {1}, i64);
  Type both = infer_call("dyn.topk", {x, k}, topk(1));
  const auto* tuple = as<TupleTypeNode>(both);
  ASSERT_NE(tuple, nullptr);
  EXPECT_TRUE(is_tensor(tuple->fields[0], {n, Dim::any()}, f32));
  EXPECT_TRUE(is_tensor(tuple->fields[1], {n, Dim::any()}, i64));
  EXPECT_TRUE(
      type_error_mentions(call_op("dyn.topk", {x, tensor_var("k2", {2}, i64)}), {"'k'", "scalar"}));
}

TEST(IndexTopk, Errors) {
  auto x = tensor_var("x", {4, 10});
  EXPECT_TRUE(type_error_mentions(call_op("topk", {x}, topk(11)),
                                  {"'k'", "11", "larger than axis 1", "Tensor[(4, 10), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("topk", {x}, topk(1, 2)), {"axis", "out of range"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("topk", {x}, topk(1, -1, "all")), {"ret_type", "\"all\""}));
  EXPECT_TRUE(type_error_mentions(call_op("topk", {x}, topk(1, -1, "both", f32)),
                                  {"dtype", "float32", "integer"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("topk", {tensor_var("s", {})}, topk(1)), {"data", "rank >= 1"}));
}

TEST(IndexSort, SortAndArgsort) {
  auto x = tensor_var("x", {n, 10});
  EXPECT_TRUE(is_tensor(infer_call("sort", {x}), {n, 10}, f32));
  EXPECT_TRUE(is_tensor(infer_call("argsort", {x}), {n, 10}, i64));
  auto by_rows = attrs_of<ArgsortAttrs>([](ArgsortAttrs& a) {
    a.axis = -2;
    a.is_ascend = false;
    a.dtype = i32;
  });
  EXPECT_TRUE(is_tensor(infer_call("argsort", {x}, by_rows), {n, 10}, i32));
  auto far = attrs_of<SortAttrs>([](SortAttrs& a) { a.axis = 2; });
  EXPECT_TRUE(type_error_mentions(call_op("sort", {x}, far), {"sort", "axis", "out of range"}));
  auto far_arg = attrs_of<ArgsortAttrs>([](ArgsortAttrs& a) { a.axis = -3; });
  EXPECT_TRUE(type_error_mentions(call_op("argsort", {x}, far_arg), {"axis", "-3"}));
  auto float_idx = attrs_of<ArgsortAttrs>([](ArgsortAttrs& a) { a.dtype = f32; });
  EXPECT_TRUE(type_error_mentions(call_op("argsort", {x}, float_idx), {"dtype", "integer"}));
  EXPECT_TRUE(type_error_mentions(call_op("sort", {tensor_var("s", {})}), {"rank >= 1"}));
  EXPECT_TRUE(type_error_mentions(call_op("argsort", {tensor_var("s2", {})}), {"rank >= 1"}));
  EXPECT_EQ(pattern_of("sort"), OpPattern::Opaque);
  EXPECT_EQ(pattern_of("argsort"), OpPattern::Opaque);
}

// ---------------------------------------------------------------- nonzero, scans

TEST(IndexNonzero, OneRowPerDim) {
  EXPECT_TRUE(is_tensor(infer_call("nonzero", {tensor_var("x", {n, 3, 4})}), {3, Dim::any()}, i64));
  EXPECT_TRUE(is_tensor(infer_call("nonzero", {tensor_var("b", {5}, DataType::boolean())}),
                        {1, Dim::any()}, i64));
  auto u = VarNode::make("u", TensorTypeNode::make_unknown_rank(f32));
  EXPECT_TRUE(is_tensor(infer_call("nonzero", {u}), {Dim::any(), Dim::any()}, i64));
  EXPECT_EQ(pattern_of("nonzero"), OpPattern::Opaque);
}

Ref<ScanopAttrs> scan(std::optional<int64_t> axis, std::optional<DataType> dtype = {}) {
  return attrs_of<ScanopAttrs>([&](ScanopAttrs& a) {
    a.axis = axis;
    a.dtype = dtype;
    a.exclusive = true;
    a.reverse = true;
  });
}

TEST(IndexCumsum, AlongAnAxisOrFlattened) {
  auto x = tensor_var("x", {n, 3, 4}, i32);
  for (const char* op : {"cumsum", "cumprod"}) {
    EXPECT_TRUE(is_tensor(infer_call(op, {x}), {n * 12}, i32)) << op;
    EXPECT_TRUE(is_tensor(infer_call(op, {x}, scan(-1)), {n, 3, 4}, i32)) << op;
    EXPECT_TRUE(is_tensor(infer_call(op, {x}, scan(1, i64)), {n, 3, 4}, i64)) << op;
    EXPECT_TRUE(type_error_mentions(call_op(op, {x}, scan(3)), {op, "axis", "out of range"}));
    EXPECT_TRUE(type_error_mentions(call_op(op, {tensor_var("s", {})}, scan(0)), {"rank >= 1"}));
    EXPECT_EQ(pattern_of(op), OpPattern::Opaque);
  }
}

// ---------------------------------------------------------------- text form

// Succeeds when the printed call parses back to an equal call.
::testing::AssertionResult round_trips(const Expr& call) {
  std::string text = print_expr(call);
  Expr back = parse_expr(text);
  if (structural_equal(call, back, true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " parses back as " << print_expr(back);
}

TEST(IndexAttrsText, ParseBack) {
  auto x = tensor_var("x", {n, 10});
  auto idx = tensor_var("idx", {2, 3}, i64);
  auto on = tensor_var("on", {}, f32);
  auto off = tensor_var("off", {}, f32);
  std::vector<Expr> calls = {
      call_op("take", {x, idx}, take_along(1, 0, "wrap")),
      call_op("topk", {x}, topk(3, 0, "values", i32)),
      call_op("one_hot", {idx, on, off}, one_hot(5, 1, i32)),
      call_op("cumsum", {x}, scan(1, i64)),
      call_op("gather_nd", {x, idx}, gather_nd(0, 2)),
  };
  for (const Expr& call : calls) EXPECT_TRUE(round_trips(call));
}

}  // namespace
}  // namespace anvil::ir
