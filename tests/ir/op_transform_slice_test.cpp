// Type relations of the transform family: joining and slicing ops.
#include <gtest/gtest.h>

#include <limits>

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
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();
const Dim n = Dim::var("n");
const Dim m = Dim::var("m");

// The tensor types of a tuple type, or an empty list when it is no tuple.
std::vector<Type> tuple_fields(const Type& type) {
  const auto* tuple = as<TupleTypeNode>(type);
  return tuple ? tuple->fields : std::vector<Type>{};
}

Expr tuple_of(std::vector<Expr> fields) { return TupleNode::make(std::move(fields)); }

// ---------------------------------------------------------------- concatenate, split

Ref<ConcatenateAttrs> join_at(int64_t axis) {
  return attrs_of<ConcatenateAttrs>([&](ConcatenateAttrs& a) { a.axis = axis; });
}

TEST(TransformConcatenate, SumsTheJoinedAxis) {
  auto a = tensor_var("a", {n, 3});
  auto b = tensor_var("b", {n, 5});
  auto c = tensor_var("c", {m, 3});
  EXPECT_TRUE(is_tensor(infer_call("concatenate", {tuple_of({a, b})}, join_at(1)), {n, 8}, f32));
  EXPECT_TRUE(is_tensor(infer_call("concatenate", {tuple_of({a, b})}, join_at(-1)), {n, 8}, f32));
  EXPECT_TRUE(is_tensor(infer_call("concatenate", {tuple_of({a, c, a})}), {n * 2 + m, 3}, f32));
  // A static dim is kept over a symbolic one that must equal it.
  auto d = tensor_var("d", {4, 5});
  EXPECT_TRUE(is_tensor(infer_call("concatenate", {tuple_of({b, d})}), {n + 4, 5}, f32));
  EXPECT_TRUE(is_tensor(infer_call("concatenate", {tuple_of({a, d})}, join_at(1)), {4, 8}, f32));
  EXPECT_EQ(pattern_of("concatenate"), OpPattern::Injective);
}

TEST(TransformConcatenate, Errors) {
  auto a = tensor_var("a", {2, 3});
  auto b = tensor_var("b", {4, 5});
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {tuple_of({a, b})}),
                                  {"field 1", "Tensor[(4, 5), float32]", "dim 1", "axis 0"}));
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {tuple_of({a, tensor_var("r", {2})})}),
                                  {"field 1", "rank 1", "rank 2"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("concatenate", {tuple_of({a, tensor_var("i", {2, 3}, i32)})}),
                          {"field 1", "dtype int32", "float32"}));
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {tuple_of({a, a})}, join_at(2)),
                                  {"axis", "2", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {tuple_of({})}), {"at least one"}));
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {a}), {"data", "tuple of tensors"}));
  auto s = tensor_var("s", {});
  EXPECT_TRUE(type_error_mentions(call_op("concatenate", {tuple_of({s, s})}), {"scalar"}));
}

Ref<SplitAttrs> split_sections(int64_t sections, int64_t axis = 0) {
  return attrs_of<SplitAttrs>([&](SplitAttrs& a) {
    a.sections = sections;
    a.axis = axis;
  });
}

Ref<SplitAttrs> split_indices(std::vector<int64_t> indices, int64_t axis = 0) {
  return attrs_of<SplitAttrs>([&](SplitAttrs& a) {
    a.indices = std::move(indices);
    a.axis = axis;
  });
}

TEST(TransformSplit, SectionsAndIndices) {
  auto x = tensor_var("x", {6, n * 4});
  auto parts = tuple_fields(infer_call("split", {x}, split_sections(3)));
  ASSERT_EQ(parts.size(), 3u);
  for (const Type& part : parts) EXPECT_TRUE(is_tensor(part, {2, n * 4}, f32));
  parts = tuple_fields(infer_call("split", {x}, split_sections(2, -1)));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(is_tensor(parts[1], {6, n * 2}, f32));
  parts = tuple_fields(infer_call("split", {x}, split_indices({1, 4})));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(is_tensor(parts[0], {1, n * 4}, f32));
  EXPECT_TRUE(is_tensor(parts[1], {3, n * 4}, f32));
  EXPECT_TRUE(is_tensor(parts[2], {2, n * 4}, f32));
  parts = tuple_fields(infer_call("split", {x}, split_indices({1}, 1)));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(is_tensor(parts[1], {6, n * 4 - 1}, f32));
  parts = tuple_fields(infer_call("split", {x}));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(is_tensor(parts[0], {6, n * 4}, f32));
}

TEST(TransformSplit, Errors) {
  auto x = tensor_var("x", {6, 4});
  EXPECT_TRUE(type_error_mentions(call_op("split", {x}, split_sections(4)),
                                  {"sections", "4", "does not divide", "(6)"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("split", {x}, split_sections(0)), {"sections", "positive"}));
  EXPECT_TRUE(type_error_mentions(call_op("split", {x}, split_indices({3, 2})),
                                  {"indices", "[3, 2]", "ascending"}));
  EXPECT_TRUE(type_error_mentions(call_op("split", {x}, split_indices({2, 7})),
                                  {"indices", "past axis 0"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("split", {x}, split_sections(2, 2)), {"axis", "out of range"}));
  auto both = split_sections(2);
  both->indices = {1};
  EXPECT_TRUE(type_error_mentions(call_op("split", {x}, both), {"sections", "indices", "both"}));
}

// ---------------------------------------------------------------- strided_slice

Ref<StridedSliceAttrs> slice(std::vector<int64_t> begin, std::vector<int64_t> end,
                             std::vector<int64_t> strides = {}, std::vector<int64_t> axes = {},
                             std::string mode = "end") {
  return attrs_of<StridedSliceAttrs>([&](StridedSliceAttrs& a) {
    a.begin = std::move(begin);
    a.end = std::move(end);
    a.strides = std::move(strides);
    a.axes = std::move(axes);
    a.slice_mode = std::move(mode);
  });
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(TransformStridedSlice, StaticClamping) {
  auto x = tensor_var("x", {10, 8, 6});
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({1, 2}, {9, 7}, {2})), {4, 5, 6}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({-3}, {kMax})), {3, 8, 6}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({-100}, {100})), {10, 8, 6}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({5}, {2})), {0, 8, 6}, f32));
  // Negative steps walk backwards; INT64_MIN as end means "past the front".
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({-1}, {kMin}, {-1})), {10, 8, 6}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({8}, {1}, {-3})), {3, 8, 6}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({kMax}, {-100}, {-4})), {3, 8, 6}, f32));
  // Extreme steps take one element without overflowing.
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({0}, {kMax}, {kMax})), {1, 8, 6}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({kMax}, {kMin}, {kMin})), {1, 8, 6}, f32));
  EXPECT_EQ(pattern_of("strided_slice"), OpPattern::Injective);
}

TEST(TransformStridedSlice, AxesAndSizeMode) {
  auto x = tensor_var("x", {10, 8, 6});
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({1}, {4}, {}, {-1})), {10, 8, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({0, 2}, {3, 4}, {1, 2}, {2, 0})),
                        {1, 8, 3}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({2, 3}, {5, -1}, {}, {}, "size")),
                        {5, 5, 6}, f32));
}

TEST(TransformStridedSlice, SymbolicDims) {
  auto x = tensor_var("x", {n, m});
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({0}, {kMax})), {n, m}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({0}, {5})), {min(Dim(5), n), m}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({2}, {kMax})), {max(n - 2, 0), m}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({-1}, {kMax})), {min(Dim(1), n), m}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({0}, {-1})), {max(n - 1, 0), m}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({-1}, {0}, {-1})), {max(n - 1, 0), m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({2}, {kMin}, {-2})),
                        {floordiv(min(Dim(3), n) + 1, 2), m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({0}, {kMax}, {kMax})),
                        {min(Dim(1), n), m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({-1}, {kMin}, {kMin})),
                        {min(Dim(1), n), m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({1}, {3})),
                        {max(min(Dim(3), n) - min(Dim(1), n), 0), m}, f32));

  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({-1}, {kMin}, {-1})), {n, m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({0}, {kMax}, {2}, {1})),
                        {n, floordiv(m + 1, 2)}, f32));
  EXPECT_TRUE(
      is_tensor(infer_call("strided_slice", {x}, slice({1}, {3}, {}, {}, "size")), {3, m}, f32));
  EXPECT_TRUE(is_tensor(infer_call("strided_slice", {x}, slice({1}, {-1}, {}, {}, "size")),
                        {n - 1, m}, f32));
}

TEST(TransformStridedSlice, Errors) {
  auto x = tensor_var("x", {10, 8});
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0, 0}, {1})),
                                  {"begin", "end", "same length"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {1}, {1, 1})),
                                  {"strides", "longer"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {1}, {0})),
                                  {"strides", "zero"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {1}, {}, {0, 1})),
                                  {"axes", "length"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {1}, {}, {2})),
                                  {"axes", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0, 0}, {1, 1}, {}, {1, -1})),
                                  {"axes", "twice"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0, 0, 0}, {1, 1, 1})),
                                  {"begin", "more entries", "Tensor[(10, 8), float32]"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {1}, {}, {}, "step")),
                                  {"slice_mode", "\"step\""}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({0}, {-2}, {}, {}, "size")),
                                  {"end", "-2"}));
  EXPECT_TRUE(type_error_mentions(call_op("strided_slice", {x}, slice({12}, {-1}, {}, {}, "size")),
                                  {"begin", "past the end"}));
}

// ---------------------------------------------------------------- trilu, reverse_sequence

TEST(TransformTrilu, KeepsTheDataType) {
  auto x = tensor_var("x", {n, 4, 4});
  auto k = tensor_var("k", {}, i64);
  EXPECT_TRUE(is_tensor(infer_call("trilu", {x, k}), {n, 4, 4}, f32));
  auto lower = attrs_of<TriluAttrs>([](TriluAttrs& a) { a.upper = false; });
  EXPECT_TRUE(
      is_tensor(infer_call("trilu", {x, tensor_var("k1", {1}, i32)}, lower), {n, 4, 4}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("trilu", {tensor_var("v", {4}), k}), {"data", "rank >= 2"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("trilu", {x, tensor_var("kf", {}, f32)}), {"'k'", "integer"}));
  EXPECT_TRUE(
      type_error_mentions(call_op("trilu", {x, tensor_var("k2", {2}, i64)}), {"'k'", "scalar"}));
  EXPECT_TRUE(type_error_mentions(call_op("trilu", {x}), {"expects 2 arguments"}));
  EXPECT_EQ(pattern_of("trilu"), OpPattern::Injective);
}

TEST(TransformReverseSequence, ChecksTheLengths) {
  auto x = tensor_var("x", {n, 5, 3});
  auto lengths = tensor_var("lengths", {n}, i64);
  EXPECT_TRUE(is_tensor(infer_call("reverse_sequence", {x, lengths}), {n, 5, 3}, f32));
  auto swapped = attrs_of<ReverseSequenceAttrs>([](ReverseSequenceAttrs& a) {
    a.seq_axis = 0;
    a.batch_axis = -2;
  });
  auto five = tensor_var("five", {5}, i32);
  EXPECT_TRUE(is_tensor(infer_call("reverse_sequence", {x, five}, swapped), {n, 5, 3}, f32));
  EXPECT_TRUE(
      type_error_mentions(call_op("reverse_sequence", {x, tensor_var("l", {4}, i64)}, swapped),
                          {"seq_lengths", "must be 5", "got 4"}));
  auto same = attrs_of<ReverseSequenceAttrs>([](ReverseSequenceAttrs& a) { a.seq_axis = 0; });
  EXPECT_TRUE(type_error_mentions(call_op("reverse_sequence", {x, lengths}, same),
                                  {"seq_axis", "batch_axis", "same axis"}));
  auto far = attrs_of<ReverseSequenceAttrs>([](ReverseSequenceAttrs& a) { a.seq_axis = 3; });
  EXPECT_TRUE(type_error_mentions(call_op("reverse_sequence", {x, lengths}, far),
                                  {"seq_axis", "out of range"}));
  EXPECT_TRUE(type_error_mentions(call_op("reverse_sequence", {x, tensor_var("lf", {n}, f32)}),
                                  {"seq_lengths", "integer"}));
  EXPECT_TRUE(type_error_mentions(call_op("reverse_sequence", {tensor_var("v", {4}), five}),
                                  {"data", "rank >= 2"}));
}

// ---------------------------------------------------------------- text form

// Succeeds when the printed call parses back to an equal call.
::testing::AssertionResult round_trips(const Expr& call) {
  std::string text = print_expr(call);
  Expr back = parse_expr(text);
  if (structural_equal(call, back, true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text << " parses back as " << print_expr(back);
}

TEST(TransformSliceAttrsText, PrintOnlyNonDefaultsAndParseBack) {
  auto x = tensor_var("x", {n, 4, 6});
  Expr split = call_op("split", {x}, split_sections(2, -1));
  EXPECT_NE(print_expr(split).find("sections=2, axis=-1)"), std::string::npos) << print_expr(split);
  std::vector<Expr> calls = {
      split,
      call_op("split", {x}, split_indices({1, 3}, 1)),
      call_op("strided_slice", {x}, slice({1}, {-1}, {2}, {2})),
      call_op("strided_slice", {x}, slice({0, 1}, {2, -1}, {}, {}, "size")),
      call_op("concatenate", {tuple_of({x, x})}, join_at(-1)),
  };
  for (const Expr& call : calls) EXPECT_TRUE(round_trips(call));
}

}  // namespace
}  // namespace anvil::ir
