// The tensor IR printer on hand-built IR: golden texts for names, operator
// precedence, immediates, intrinsic spellings, scoping statements, views,
// reductions, and the standalone statement and expression forms.
#include "anvil/tir/printer.h"

#include <gtest/gtest.h>

#include <limits>

namespace anvil::tir {
namespace {

DataType f32() { return DataType::float32(); }
PrimExpr f(double v) { return FloatImmNode::make(f32(), v); }
std::string pe(const PrimExpr& e) { return print(e); }

PrimFunc func_of(std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffers, Stmt body,
                 const std::string& name = "f") {
  ir::DictAttrs attrs;
  attrs.entries = {{"global_symbol", name}};
  return PrimFuncNode::make(std::move(params), std::move(buffers), body, attrs);
}

TEST(TirPrinter, SameNamesAreMadeUniqueAndReservedNamesRenamed) {
  Var i1 = VarNode::make("i"), i2 = VarNode::make("i"), odd = VarNode::make("a.b"),
      kw = VarNode::make("for"), digit = VarNode::make("0x");
  Buffer A = BufferNode::make("A", DataType::int64(), {make_int(4)});
  Stmt body = seq_stmt(
      {for_loop(i1, 0, 4, store(A, i1, {i1})), for_loop(i2, 0, 4, store(A, i2, {i2})),
       LetStmtNode::make(
           odd, make_int(1),
           LetStmtNode::make(kw, odd, LetStmtNode::make(digit, kw, store(A, digit, {0}))))});
  EXPECT_EQ(print(body), R"(for i in range(4):
    A[i] = i
for i_1 in range(4):
    A[i_1] = i_1
a_b: T.int64 = 1
for_: T.int64 = a_b
v0x: T.int64 = for_
A[0] = v0x
)");
}

TEST(TirPrinter, PrecedenceAndParentheses) {
  Var a = VarNode::make("a"), b = VarNode::make("b"), c = VarNode::make("c");
  EXPECT_EQ(pe(SubNode::make(a, SubNode::make(b, c))), "a - (b - c)");
  EXPECT_EQ(pe(SubNode::make(SubNode::make(a, b), c)), "a - b - c");
  EXPECT_EQ(pe(MulNode::make(AddNode::make(a, b), c)), "(a + b) * c");
  EXPECT_EQ(pe(AddNode::make(a, MulNode::make(b, c))), "a + b * c");
  EXPECT_EQ(pe(FloorModNode::make(FloorDivNode::make(a, b), c)), "a // b % c");
  EXPECT_EQ(pe(FloorDivNode::make(a, FloorModNode::make(b, c))), "a // (b % c)");
  EXPECT_EQ(pe(MulNode::make(a, make_int(-3))), "a * -3");
  EXPECT_EQ(pe(EQNode::make(LTNode::make(a, b), LTNode::make(b, c))), "(a < b) == (b < c)");
  PrimExpr lt = LTNode::make(a, b), gt = GTNode::make(b, c);
  EXPECT_EQ(pe(AndNode::make(OrNode::make(lt, gt), NotNode::make(lt))),
            "(a < b or b > c) and not a < b");
  EXPECT_EQ(pe(OrNode::make(lt, AndNode::make(gt, lt))), "a < b or b > c and a < b");
  EXPECT_EQ(pe(NotNode::make(AndNode::make(lt, gt))), "not (a < b and b > c)");
  EXPECT_EQ(pe(AndNode::make(lt, AndNode::make(gt, lt))), "a < b and (b > c and a < b)");
}

TEST(TirPrinter, ImmediatesAndCasts) {
  EXPECT_EQ(pe(make_int(7)), "7");
  EXPECT_EQ(pe(make_int(7, DataType::int32())), "T.int32(7)");
  EXPECT_EQ(pe(make_int(-1, DataType::uint64())), "T.uint64(18446744073709551615)");
  EXPECT_EQ(pe(const_true()), "True");
  EXPECT_EQ(pe(const_false()), "False");
  EXPECT_EQ(pe(f(0)), "T.float32(0)");
  EXPECT_EQ(pe(f(0.1)), "T.float32(0.1)");
  EXPECT_EQ(pe(FloatImmNode::make(DataType::float64(), 1e300)), "T.float64(1e+300)");
  EXPECT_EQ(pe(f(-std::numeric_limits<double>::infinity())), "T.float32(\"-inf\")");
  EXPECT_EQ(pe(StringImmNode::make("a \"b\"\n")), "\"a \\\"b\\\"\\n\"");
  Var x = VarNode::make("x", DataType::int32());
  EXPECT_EQ(pe(CastNode::make(f32(), x)), "T.Cast(\"float32\", x)");
  EXPECT_EQ(pe(SelectNode::make(LTNode::make(x, make_int(0, DataType::int32())), f(1), f(2))),
            "T.Select(x < T.int32(0), T.float32(1), T.float32(2))");
  EXPECT_EQ(pe(DivNode::make(x, x)), "T.truncdiv(x, x)");
  EXPECT_EQ(pe(ModNode::make(x, x)), "T.truncmod(x, x)");
  Var y = VarNode::make("y", f32());
  EXPECT_EQ(pe(DivNode::make(y, y)), "y / y");
  EXPECT_EQ(pe(MinNode::make(y, MaxNode::make(y, f(0)))), "T.min(y, T.max(y, T.float32(0)))");
}

TEST(TirPrinter, VectorsAndLets) {
  Var i = VarNode::make("i");
  EXPECT_EQ(pe(RampNode::make(i * 4, make_int(1), 4)), "T.Ramp(i * 4, 1, 4)");
  EXPECT_EQ(pe(BroadcastNode::make(f(2), 8)), "T.Broadcast(T.float32(2), 8)");
  Var t = VarNode::make("t");
  EXPECT_EQ(pe(LetNode::make(t, i + 1, t * t)), "T.Let(t, i + 1, t * t)");
}

TEST(TirPrinter, IntrinsicsUseTheirNameWhenTheTypeFollows) {
  Var y = VarNode::make("y", f32());
  EXPECT_EQ(pe(call_intrin(f32(), "exp", {y})), "T.exp(y)");
  EXPECT_EQ(pe(call_intrin(DataType::float64(), "exp", {y})),
            "T.call_intrin(\"float64\", \"exp\", y)");
  EXPECT_EQ(pe(call_intrin(DataType::boolean(), "isnan", {y})), "T.isnan(y)");
  EXPECT_EQ(pe(call_intrin(DataType::int32(), "reinterpret", {y})), "T.reinterpret(\"int32\", y)");
  Var h = VarNode::make("h", DataType::handle());
  EXPECT_EQ(pe(call_intrin(DataType::int64(), "anvil.dltensor_shape", {h, make_int(0)})),
            "T.call_intrin(\"int64\", \"anvil.dltensor_shape\", h, 0)");
  EXPECT_EQ(pe(call_extern(f32(), "expf", {y})), "T.call_extern(\"float32\", \"expf\", y)");
}

TEST(TirPrinter, ScopingStatementsUseWithUnlessLast) {
  Buffer A = BufferNode::make("A", f32(), {make_int(4)});
  Var x = VarNode::make("x");
  Stmt let = LetStmtNode::make(x, make_int(2), store(A, f(1), {x}));
  Stmt check = AssertStmtNode::make(LTNode::make(x, make_int(4)), "x too big", store(A, f(2), {x}));
  Buffer tmp = BufferNode::make("tmp", f32(), {make_int(2)}, "local");
  Stmt alloc = AllocateNode::make(tmp, store(tmp, f(3), {make_int(0)}));
  EXPECT_EQ(print(seq_stmt({let, store(A, f(0), {0})})), R"(with T.LetStmt(2) as x:
    A[x] = T.float32(1)
A[0] = T.float32(0)
)");
  EXPECT_EQ(print(seq_stmt({store(A, f(0), {0}), let})), R"(A[0] = T.float32(0)
x: T.int64 = 2
A[x] = T.float32(1)
)");
  Var x2 = VarNode::make("x");
  Stmt check2 =
      AssertStmtNode::make(LTNode::make(x2, make_int(4)), "x too big", store(A, f(2), {x2}));
  EXPECT_EQ(print(seq_stmt({check2, alloc})), R"(with T.Assert(x < 4, "x too big"):
    A[x] = T.float32(2)
tmp = T.decl_buffer((2,), "float32", scope="local")
tmp[0] = T.float32(3)
)");
  EXPECT_EQ(print(seq_stmt({alloc, evaluate(0)}), 1),
            R"(    with T.decl_buffer((2,), "float32", scope="local") as tmp:
        tmp[0] = T.float32(3)
    T.evaluate(0)
)");
  (void)check;
}

TEST(TirPrinter, ViewsAreDeclaredBeforeTheirFirstUse) {
  Var a = VarNode::make("a", DataType::handle());
  Buffer A = BufferNode::make("A", f32(), {make_int(2), make_int(3)});
  Buffer flat =
      BufferNode::make_full(A->data, f32(), {make_int(6)}, {}, make_int(0), "A_flat", "global", 64);
  Var i = VarNode::make("i");
  Stmt body = seq_stmt({for_loop(i, 0, 6, store(flat, f(0), {i})),
                        evaluate(call_extern(DataType::int32(), "use", {A->data}))});
  EXPECT_EQ(print(func_of({a}, {{a, A}}, body)), R"(@T.prim_func
def f(a: T.handle):
    T.func_attr({"global_symbol": "f"})
    A = T.match_buffer(a, (2, 3), "float32")
    for i in range(6):
        A_flat = T.Buffer((6,), "float32", data=A.data)
        A_flat[i] = T.float32(0)
    T.evaluate(T.call_extern("int32", "use", A.data))
)");
}

TEST(TirPrinter, FreeVariablesAreDeclaredAndPrivateFunctionsMarked) {
  Var n = VarNode::make("n", DataType::int32());
  Buffer A = BufferNode::make("A", DataType::int32(), {make_int(1)});
  Var a = VarNode::make("a", DataType::handle());
  PrimFunc func = PrimFuncNode::make({a}, {{a, A}}, store(A, n, {0}));
  EXPECT_EQ(print(func), R"(@T.prim_func(private=True)
def main(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (1,), "int32")
    A[0] = n
)");
  EXPECT_EQ(print(func, "kernel").substr(0, 44), "@T.prim_func(private=True)\ndef kernel(a: T.h");
}

TEST(TirPrinter, ReductionsPrintReadably) {
  Buffer A = BufferNode::make("A", f32(), {make_int(4), make_int(8)});
  Var i = VarNode::make("i");
  IterVar k = iter_var("k", 8, IterKind::Reduce);
  EXPECT_EQ(pe(sum(load(A, {i, k.var}), {k}, LTNode::make(k.var, make_int(6)))),
            "T.reduce(\"sum\", A[i, k], axis=[k in range(8)], where=k < 6)");
}

TEST(TirPrinter, LoopKindsAndAnnotations) {
  Buffer A = BufferNode::make("A", f32(), {make_int(16)});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  Stmt body = ForNode::make(
      i, make_int(0), make_int(4), ForKind::Parallel,
      ForNode::make(j, make_int(2), make_int(4), ForKind::Unrolled, store(A, f(1), {i * 4 + j}),
                    {{"pragma_unroll", int64_t(1)}, {"tag", std::string("x")}}));
  EXPECT_EQ(print(body), R"(for i in T.parallel(4):
    for j in T.unroll(2, 6, annotations={"pragma_unroll": 1, "tag": "x"}):
        A[i * 4 + j] = T.float32(1)
)");
}

}  // namespace
}  // namespace anvil::tir
