// vectorize_loops: the widened IR of vectorizable loops, and the serial
// fallback for every pattern whose vectorization could change results.
// Expected forms are written by hand in a compact S-expression notation.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "anvil/support/str_cat.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"

namespace anvil::tir {
namespace {

using transform::vectorize_loops;

// The operands of a binary node (of any of the binary kinds).
std::pair<PrimExpr, PrimExpr> operands(const PrimExpr& e) {
  switch (e.kind()) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name) \
  case ExprKind::Name:         \
    return {as<Name##Node>(e)->a, as<Name##Node>(e)->b};
#include "anvil/tir/node_kinds.def"
    default:
      return {};
  }
}

// S-expression text of IR, just detailed enough to pin down vectorization:
// dtypes of loads, lets and calls are shown, variables by name.
std::string sx(const PrimExpr& e) {
  if (const auto* n = as<IntImmNode>(e)) return std::to_string(n->value);
  if (const auto* n = as<FloatImmNode>(e)) return str_cat(n->value, "f");
  if (const auto* n = as<VarNode>(e)) return n->name;
  if (const auto* n = as<RampNode>(e))
    return str_cat("ramp(", sx(n->base), ", ", sx(n->stride), ", ", n->lanes, ")");
  if (const auto* n = as<BroadcastNode>(e))
    return str_cat("bcast(", sx(n->value), ", ", n->lanes, ")");
  if (const auto* n = as<BufferLoadNode>(e)) {
    std::string s = str_cat(n->buffer->name, "[");
    for (size_t k = 0; k < n->indices.size(); ++k) s += (k ? ", " : "") + sx(n->indices[k]);
    return str_cat(s, "]:", n->dtype.to_string());
  }
  if (const auto* n = as<CastNode>(e)) return str_cat(n->dtype.to_string(), "(", sx(n->value), ")");
  if (const auto* n = as<SelectNode>(e))
    return str_cat("select(", sx(n->condition), ", ", sx(n->true_value), ", ", sx(n->false_value),
                   ")");
  if (const auto* n = as<CallNode>(e)) {
    std::string s = str_cat(n->op, ":", n->dtype.to_string(), "(");
    for (size_t k = 0; k < n->args.size(); ++k) s += (k ? ", " : "") + sx(n->args[k]);
    return s + ")";
  }
  if (const auto* n = as<NotNode>(e)) return str_cat("!", sx(n->a));
  if (const auto* n = as<LetNode>(e))
    return str_cat("(let ", n->var->name, ":", n->var->dtype.to_string(), " = ", sx(n->value),
                   " in ", sx(n->body), ")");
  if (is_binary(e.kind())) {
    auto [a, b] = operands(e);
    return str_cat("(", sx(a), " ", expr_kind_name(e.kind()), " ", sx(b), ")");
  }
  return expr_kind_name(e.kind());
}

std::string sx(const Stmt& s) {
  if (const auto* n = as<BufferStoreNode>(s)) {
    std::string text = str_cat(n->buffer->name, "[");
    for (size_t k = 0; k < n->indices.size(); ++k) text += (k ? ", " : "") + sx(n->indices[k]);
    return str_cat(text, "] = ", sx(n->value));
  }
  if (const auto* n = as<ForNode>(s))
    return str_cat("for ", n->loop_var->name, " in ", sx(n->min), "..+", sx(n->extent), " ",
                   for_kind_name(n->for_kind), " { ", sx(n->body), " }");
  if (const auto* n = as<LetStmtNode>(s))
    return str_cat("let ", n->var->name, ":", n->var->dtype.to_string(), " = ", sx(n->value), "; ",
                   sx(n->body));
  if (const auto* n = as<IfThenElseNode>(s))
    return str_cat("if ", sx(n->condition), " { ", sx(n->then_case), " }",
                   n->else_case ? str_cat(" else { ", sx(n->else_case), " }") : "");
  if (const auto* n = as<SeqStmtNode>(s)) {
    std::string text;
    for (const Stmt& x : n->seq) text += (text.empty() ? "" : "; ") + sx(x);
    return text;
  }
  if (const auto* n = as<AllocateNode>(s))
    return str_cat("alloc ", n->buffer->name, " { ", sx(n->body), " }");
  if (const auto* n = as<EvaluateNode>(s)) return str_cat("eval ", sx(n->value));
  return stmt_kind_name(s->kind);
}

// The body after vectorize_loops, as text.
std::string vectorized(const Stmt& body) {
  return sx(vectorize_loops(PrimFuncNode::make({}, {}, body))->body);
}

struct Buffers {
  Var n = VarNode::make("n");
  Var i = VarNode::make("i");
  Var j = VarNode::make("j");
  Var k = VarNode::make("k");
  Buffer a = BufferNode::make("A", DataType::float32(), {make_int(64)});
  Buffer b = BufferNode::make("B", DataType::float32(), {make_int(64)});
  Buffer c = BufferNode::make("C", DataType::float32(), {make_int(64)});
  Buffer ai = BufferNode::make("I", DataType::int32(), {make_int(64)});

  Stmt vloop(PrimExpr extent, Stmt body) {
    return for_loop(j, 0, std::move(extent), std::move(body), ForKind::Vectorized);
  }
};

TEST(VectorizeLoops, ElementwiseBody) {
  Buffers t;
  Stmt body = t.vloop(8, store(t.c, load(t.a, {t.j}) + load(t.b, {t.j}) * 2, {t.j}));
  EXPECT_EQ(vectorized(body),
            "C[ramp(0, 1, 8)] = (A[ramp(0, 1, 8)]:float32x8 Add (B[ramp(0, 1, 8)]:float32x8 Mul "
            "bcast(2f, 8)))");
}

TEST(VectorizeLoops, IndexArithmeticStaysARamp) {
  Buffers t;
  Stmt inner = t.vloop(8, store(t.c, load(t.a, {t.i * 8 + t.j}), {t.i * 8 + t.j}));
  Stmt body = for_loop(t.i, 0, 8, inner);
  EXPECT_EQ(vectorized(body),
            "for i in 0..+8 serial { C[ramp((i Mul 8), 1, 8)] = A[ramp((i Mul 8), 1, "
            "8)]:float32x8 }");
  // (j * 2 + 1) with j from 4: base 9, stride 2.
  Stmt strided =
      for_loop(t.j, 4, 4, store(t.c, load(t.a, {t.j * 2 + 1}), {t.j * 2}), ForKind::Vectorized);
  EXPECT_EQ(vectorized(strided), "C[ramp(8, 2, 4)] = A[ramp(9, 2, 4)]:float32x4");
}

TEST(VectorizeLoops, NonConstantExtentStaysSerial) {
  Buffers t;
  Stmt body = t.vloop(t.n, store(t.c, load(t.a, {t.j}), {t.j}));
  EXPECT_EQ(vectorized(body), "for j in 0..+n serial { C[j] = A[j]:float32 }");
}

TEST(VectorizeLoops, ExtentOneSubstitutesTheMinimum) {
  Buffers t;
  Stmt body = for_loop(t.j, 5, 1, store(t.c, load(t.a, {t.j}), {t.j}), ForKind::Vectorized);
  EXPECT_EQ(vectorized(body), "C[5] = A[5]:float32");
}

TEST(VectorizeLoops, ReductionIntoOneElementStaysSerial) {
  Buffers t;
  Stmt body = t.vloop(8, store(t.c, load(t.c, {0}) + load(t.a, {t.j}), {0}));
  EXPECT_EQ(vectorized(body), "for j in 0..+8 serial { C[0] = (C[0]:float32 Add A[j]:float32) }");
}

TEST(VectorizeLoops, LaneDependentConditionStaysSerial) {
  Buffers t;
  Stmt guarded = IfThenElseNode::make(t.j < t.n, store(t.c, load(t.a, {t.j}), {t.j}));
  EXPECT_EQ(vectorized(t.vloop(8, guarded)),
            "for j in 0..+8 serial { if (j LT n) { C[j] = A[j]:float32 } }");
  PrimExpr padded = call_intrin(DataType::float32(), "if_then_else",
                                {t.j < t.n, load(t.a, {t.j}), make_const(DataType::float32(), 0)});
  EXPECT_EQ(
      sx(vectorize_loops(PrimFuncNode::make({}, {}, t.vloop(8, store(t.c, padded, {t.j}))))->body)
          .substr(0, 22),
      "for j in 0..+8 serial ");
}

TEST(VectorizeLoops, InvariantConditionIsKept) {
  Buffers t;
  Stmt guarded = IfThenElseNode::make(t.n > 0, store(t.c, load(t.a, {t.j}), {t.j}));
  EXPECT_EQ(vectorized(t.vloop(4, guarded)),
            "if (n GT 0) { C[ramp(0, 1, 4)] = A[ramp(0, 1, 4)]:float32x4 }");
  PrimExpr safe = call_intrin(DataType::float32(), "if_then_else",
                              {t.n > 0, load(t.a, {t.j}), make_const(DataType::float32(), 0)});
  EXPECT_EQ(vectorized(t.vloop(4, store(t.c, safe, {t.j}))),
            "C[ramp(0, 1, 4)] = if_then_else:float32x4((n GT 0), A[ramp(0, 1, 4)]:float32x4, "
            "bcast(0f, 4))");
}

TEST(VectorizeLoops, LaneDependentSelectIsVectorized) {
  Buffers t;
  PrimExpr zero = make_const(DataType::float32(), 0);
  Stmt body =
      t.vloop(4, store(t.c, select(load(t.a, {t.j}) > zero, load(t.a, {t.j}), zero), {t.j}));
  EXPECT_EQ(vectorized(body),
            "C[ramp(0, 1, 4)] = select((A[ramp(0, 1, 4)]:float32x4 GT bcast(0f, 4)), A[ramp(0, 1, "
            "4)]:float32x4, bcast(0f, 4))");
}

TEST(VectorizeLoops, InnerSerialLoopWithInvariantBounds) {
  Buffers t;
  Stmt update = store(t.c, load(t.c, {t.j}) + load(t.a, {t.k * 8 + t.j}), {t.j});
  Stmt body = t.vloop(8, for_loop(t.k, 0, t.n, update));
  EXPECT_EQ(vectorized(body),
            "for k in 0..+n serial { C[ramp(0, 1, 8)] = (C[ramp(0, 1, 8)]:float32x8 Add "
            "A[ramp((k Mul 8), 1, 8)]:float32x8) }");
  // An inner loop whose extent depends on the lane cannot be vectorized.
  Stmt triangular = t.vloop(8, for_loop(t.k, 0, t.j, update));
  EXPECT_EQ(vectorized(triangular).substr(0, 22), "for j in 0..+8 serial ");
}

TEST(VectorizeLoops, LoopCarriedDependenceStaysSerial) {
  Buffers t;
  Stmt shift = t.vloop(8, store(t.c, load(t.c, {t.j}) + 1, {t.j + 1}));
  EXPECT_EQ(vectorized(shift), "for j in 0..+8 serial { C[(j Add 1)] = (C[j]:float32 Add 1f) }");
  // The written index uses an inner loop's variable: lanes would overlap.
  Stmt overlap = t.vloop(8, for_loop(t.k, 0, 4, store(t.c, load(t.a, {t.j}), {t.j + t.k})));
  EXPECT_EQ(vectorized(overlap).substr(0, 22), "for j in 0..+8 serial ");
  // Two lanes writing one element (j // 2) are not a vector store.
  Stmt collide = t.vloop(8, store(t.c, load(t.a, {t.j}), {floordiv(t.j, 2)}));
  EXPECT_EQ(vectorized(collide).substr(0, 22), "for j in 0..+8 serial ");
}

TEST(VectorizeLoops, LetsThatVaryAreWidened) {
  Buffers t;
  Var x = VarNode::make("x", DataType::float32());
  Var s = VarNode::make("s", DataType::float32());
  Stmt body = t.vloop(
      4, LetStmtNode::make(s, cast(DataType::float32(), t.n),
                           LetStmtNode::make(x, load(t.a, {t.j}) * s, store(t.c, x + x, {t.j}))));
  EXPECT_EQ(vectorized(body),
            "let s:float32 = float32(n); let x:float32x4 = (A[ramp(0, 1, 4)]:float32x4 Mul "
            "bcast(s, 4)); C[ramp(0, 1, 4)] = (x Add x)");
}

TEST(VectorizeLoops, MathCastsAndGathers) {
  Buffers t;
  PrimExpr value = call_intrin(DataType::float32(), "exp", {load(t.a, {t.j})}) +
                   cast(DataType::float32(), load(t.ai, {t.j * 3}));
  EXPECT_EQ(vectorized(t.vloop(4, store(t.c, value, {t.j}))),
            "C[ramp(0, 1, 4)] = (exp:float32x4(A[ramp(0, 1, 4)]:float32x4) Add "
            "float32x4(I[ramp(0, 3, 4)]:int32x4))");
  // A load at a computed vector index is a gather.
  PrimExpr gathered = load(t.a, {cast(DataType::int64(), load(t.ai, {t.j}))});
  EXPECT_EQ(vectorized(t.vloop(4, store(t.c, gathered, {t.j}))),
            "C[ramp(0, 1, 4)] = A[int64x4(I[ramp(0, 1, 4)]:int32x4)]:float32x4");
}

TEST(VectorizeLoops, ReinterpretIsLaneByLane) {
  // The bits of each lane read as another type of the same width (the minifloat codecs and
  // BitCast are built on it).
  Buffers t;
  PrimExpr bits = call_intrin(DataType::int32(), "reinterpret", {load(t.a, {t.j})});
  EXPECT_EQ(vectorized(t.vloop(8, store(t.ai, bits, {t.j}))),
            "I[ramp(0, 1, 8)] = reinterpret:int32x8(A[ramp(0, 1, 8)]:float32x8)");
}

TEST(VectorizeLoops, OpaqueCallsStaySerial) {
  Buffers t;
  PrimExpr value = call_extern(DataType::float32(), "my_func", {load(t.a, {t.j})});
  EXPECT_EQ(vectorized(t.vloop(4, store(t.c, value, {t.j}))),
            "for j in 0..+4 serial { C[j] = my_func:float32(A[j]:float32) }");
}

TEST(VectorizeLoops, NestedVectorLoopsVectorizeTheInnerOnly) {
  Buffers t;
  Stmt inner = for_loop(t.j, 0, 4, store(t.c, load(t.a, {t.i * 4 + t.j}), {t.i * 4 + t.j}),
                        ForKind::Vectorized);
  Stmt outer = for_loop(t.i, 0, 2, inner, ForKind::Vectorized);
  EXPECT_EQ(vectorized(outer),
            "for i in 0..+2 serial { C[ramp((i Mul 4), 1, 4)] = A[ramp((i Mul 4), 1, "
            "4)]:float32x4 }");
}

TEST(VectorizeLoops, UnchangedFunctionIsReturnedAsIs) {
  Buffers t;
  PrimFunc func =
      PrimFuncNode::make({}, {}, for_loop(t.j, 0, 4, store(t.c, load(t.a, {t.j}), {t.j})));
  EXPECT_EQ(vectorize_loops(func).get(), func.get());
}

TEST(VectorizeLoops, PrintedGolden) {
  Buffers t;
  Var handle = VarNode::make("A", DataType::handle());
  Buffer b = BufferNode::make("B", DataType::float32(), {make_int(64)});
  PrimExpr x = load(b, {t.i * 8 + t.j});
  Stmt body = for_loop(
      t.i, 0, 8,
      t.vloop(8, store(b, call_intrin(DataType::float32(), "exp", {x}) + 1, {t.i * 8 + t.j})));
  PrimFunc func =
      PrimFuncNode::make({handle}, {{handle, b}}, body,
                         ir::DictAttrs{}.with("global_symbol", std::string("exp_plus_one")));
  EXPECT_EQ(print(vectorize_loops(func)),
            "@T.prim_func\n"
            "def exp_plus_one(A: T.handle):\n"
            "    T.func_attr({\"global_symbol\": \"exp_plus_one\"})\n"
            "    B = T.match_buffer(A, (64,), \"float32\")\n"
            "    for i in range(8):\n"
            "        B[T.Ramp(i * 8, 1, 8)] = T.exp(B[T.Ramp(i * 8, 1, 8)]) + "
            "T.Broadcast(T.float32(1), 8)\n");
}

}  // namespace
}  // namespace anvil::tir

namespace anvil::tir {
namespace {

TEST(VectorizeLoopsScalarSelects, DeepInvariantSelectChainIsVisitedOnce) {
  // Forty nested selects that do not depend on the vectorized loop: each level used to be
  // visited twice, 2^40 visits in all.
  Buffers t;
  PrimExpr chain = make_const(DataType::float32(), 0);
  for (int level = 0; level < 40; ++level)
    chain = select(t.i < make_int(level), make_const(DataType::float32(), level), chain);
  Stmt body = for_loop(t.i, 0, 4, t.vloop(8, store(t.c, load(t.a, {t.j}) + chain, {t.j})));
  std::string text = vectorized(body);
  EXPECT_NE(text.find("A[ramp(0, 1, 8)]"), std::string::npos) << text;
}

}  // namespace
}  // namespace anvil::tir
