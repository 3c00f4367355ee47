// Structural equality and hashing of tensor IR: names and node identity do not
// matter, structure, types, constants, attributes and annotations do.
#include "anvil/tir/structural_equal.h"

#include <gtest/gtest.h>

#include <limits>

#include "anvil/tir/parser.h"

namespace anvil::tir {
namespace {

// A copy loop over fresh nodes, with the given names and knobs.
PrimFunc copy_func(const std::string& loop_name, int64_t extent, ForKind kind = ForKind::Serial,
                   Annotations annotations = {}, const std::string& symbol = "copy") {
  Var a = VarNode::make("a", DataType::handle()), b = VarNode::make("b", DataType::handle());
  Var n = VarNode::make("n_" + loop_name);
  Buffer A = BufferNode::make("A_" + loop_name, DataType::float32(), {n});
  Buffer B = BufferNode::make("B_" + loop_name, DataType::float32(), {n});
  Var i = VarNode::make(loop_name);
  Stmt body = ForNode::make(i, make_int(0), make_int(extent), kind,
                            BufferStoreNode::make(B, load(A, {i}), {i}), annotations);
  ir::DictAttrs attrs;
  attrs.entries = {{"global_symbol", symbol}};
  return PrimFuncNode::make({a, b}, {{a, A}, {b, B}}, body, attrs);
}

TEST(TirStructuralEqual, NamesAndIdentityDoNotMatter) {
  PrimFunc x = copy_func("i", 8), y = copy_func("k", 8);
  EXPECT_TRUE(structural_equal(x, y));
  EXPECT_EQ(structural_hash(x), structural_hash(y));
}

TEST(TirStructuralEqual, StructureConstantsKindsAndAnnotationsMatter) {
  PrimFunc base = copy_func("i", 8);
  EXPECT_FALSE(structural_equal(base, copy_func("i", 9)));
  EXPECT_FALSE(structural_equal(base, copy_func("i", 8, ForKind::Parallel)));
  EXPECT_FALSE(
      structural_equal(base, copy_func("i", 8, ForKind::Serial, {{"pragma", int64_t(1)}})));
  EXPECT_FALSE(structural_equal(base, copy_func("i", 8, ForKind::Serial, {}, "other")));
  EXPECT_NE(structural_hash(base), structural_hash(copy_func("i", 9)));
  EXPECT_NE(structural_hash(base), structural_hash(copy_func("i", 8, ForKind::Parallel)));
}

TEST(TirStructuralEqual, VariablesMatchByDefinitionNotByName) {
  // for i: for j: A[i] = j   versus   for i: for j: A[j] = i  (same names, swapped uses).
  auto make = [](bool swapped) {
    Buffer A = BufferNode::make("A", DataType::int64(), {make_int(4)});
    Var i = VarNode::make("i"), j = VarNode::make("j");
    PrimExpr index = swapped ? PrimExpr(j) : PrimExpr(i);
    PrimExpr value = swapped ? PrimExpr(i) : PrimExpr(j);
    return for_loop(i, 0, 4, for_loop(j, 0, 4, store(A, value, {index})));
  };
  // A statement's free buffers must be the very same: these two have separate A's.
  EXPECT_FALSE(structural_equal(make(false), make(false)));
  Buffer shared = BufferNode::make("A", DataType::int64(), {make_int(4)});
  auto with_buffer = [&](bool swapped) {
    Var i = VarNode::make("x"), j = VarNode::make("y");
    PrimExpr index = swapped ? PrimExpr(j) : PrimExpr(i);
    PrimExpr value = swapped ? PrimExpr(i) : PrimExpr(j);
    return for_loop(i, 0, 4, for_loop(j, 0, 4, store(shared, value, {index})));
  };
  EXPECT_TRUE(structural_equal(with_buffer(false), with_buffer(false)));
  EXPECT_FALSE(structural_equal(with_buffer(false), with_buffer(true)));
}

TEST(TirStructuralEqual, FreeVariablesOfExpressionsMustBeTheSame) {
  Var x = VarNode::make("x"), y = VarNode::make("x");
  EXPECT_TRUE(structural_equal(x + 1, x + 1));
  EXPECT_FALSE(structural_equal(x + 1, y + 1));
  EXPECT_FALSE(structural_equal(PrimExpr(x), PrimExpr(VarNode::make("x", DataType::int32()))));
  Var t = VarNode::make("t"), u = VarNode::make("u");
  EXPECT_TRUE(structural_equal(let(t, x, t * 2), let(u, x, u * 2)));
  EXPECT_FALSE(structural_equal(let(t, x, t * 2), let(u, x, x * 2)));
}

TEST(TirStructuralEqual, FloatsCompareByBitsAndTypes) {
  PrimExpr zero = FloatImmNode::make(DataType::float32(), 0.0);
  EXPECT_TRUE(structural_equal(zero, FloatImmNode::make(DataType::float32(), 0.0)));
  EXPECT_FALSE(structural_equal(zero, FloatImmNode::make(DataType::float32(), -0.0)));
  EXPECT_FALSE(structural_equal(zero, FloatImmNode::make(DataType::float64(), 0.0)));
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(structural_equal(PrimExpr(FloatImmNode::make(DataType::float32(), nan)),
                               PrimExpr(FloatImmNode::make(DataType::float32(), nan))));
}

TEST(TirStructuralEqual, BlocksCompareNamesRegionsAndBuffers) {
  const char* text = R"(@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    T_1 = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi])
            T.writes(T_1[vi])
            T_1[vi] = A[vi]
)";
  PrimFunc f = parse_prim_func(text);
  EXPECT_TRUE(structural_equal(f, parse_prim_func(text)));
  EXPECT_EQ(structural_hash(f), structural_hash(parse_prim_func(text)));
  std::string renamed = text;
  renamed.replace(renamed.find("\"B\""), 3, "\"C\"");
  EXPECT_FALSE(structural_equal(f, parse_prim_func(renamed)));
  std::string region = text;
  region.replace(region.find("T.reads(A[vi])"), 14, "T.reads(A[0:4])");
  EXPECT_FALSE(structural_equal(f, parse_prim_func(region)));
  std::string scope = text;
  scope.replace(scope.find("\"float32\")\n    for"), 9, "\"float32\", scope=\"local\"");
  EXPECT_FALSE(structural_equal(f, parse_prim_func(scope)));
}

}  // namespace
}  // namespace anvil::tir
