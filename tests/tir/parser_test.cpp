// The tensor IR parser: the MLC examples against hand-built functions,
// round trips of programs covering every node kind, inferred block regions,
// and the messages of semantic errors.
#include "anvil/tir/parser.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/structural_equal.h"
#include "text_corpus.h"

namespace anvil::tir {
namespace {

using testing::canonical_programs;
using testing::kLinear0;
using testing::kRelu0;

DataType f32() { return DataType::float32(); }
PrimExpr f32_zero() { return FloatImmNode::make(f32(), 0); }
Range point(PrimExpr e) { return {e, make_int(1)}; }
Range upto(PrimExpr extent) { return {make_int(0), extent}; }

// linear0 built node by node, as the text means it.
PrimFunc linear0_reference(bool text_regions) {
  Var x = VarNode::make("x", DataType::handle()), w = VarNode::make("w", DataType::handle());
  Var b = VarNode::make("b", DataType::handle()), z = VarNode::make("z", DataType::handle());
  Var m = VarNode::make("m"), n = VarNode::make("n");
  Buffer X = BufferNode::make("X", f32(), {make_int(1), m});
  Buffer W = BufferNode::make("W", f32(), {n, m});
  Buffer B = BufferNode::make("B", f32(), {n});
  Buffer Z = BufferNode::make("Z", f32(), {make_int(1), n});
  Buffer Y = BufferNode::make("Y", f32(), {make_int(1), n});

  Var i = VarNode::make("i"), j = VarNode::make("j"), k = VarNode::make("k");
  IterVar vi{VarNode::make("vi"), upto(make_int(1)), IterKind::Spatial};
  IterVar vj{VarNode::make("vj"), upto(n), IterKind::Spatial};
  IterVar vk{VarNode::make("vk"), upto(m), IterKind::Reduce};
  Stmt init = BufferStoreNode::make(Y, f32_zero(), {vi.var, vj.var});
  PrimExpr product = MulNode::make(load(X, {vi.var, vk.var}), load(W, {vj.var, vk.var}));
  Stmt update =
      BufferStoreNode::make(Y, AddNode::make(load(Y, {vi.var, vj.var}), product), {vi.var, vj.var});
  Block block_y = BlockNode::make(
      {vi, vj, vk},
      {BufferRegion{X, {point(vi.var), upto(m)}}, BufferRegion{W, {point(vj.var), upto(m)}}},
      {BufferRegion{Y, {point(vi.var), point(vj.var)}}}, "Y", update, init);
  Stmt nest_y = ForNode::make(
      i, make_int(0), make_int(1), ForKind::Serial,
      ForNode::make(j, make_int(0), n, ForKind::Serial,
                    ForNode::make(k, make_int(0), m, ForKind::Serial,
                                  BlockRealizeNode::make({i, j, k}, const_true(), block_y))));

  Var i2 = VarNode::make("i"), j2 = VarNode::make("j");
  IterVar vi2{VarNode::make("vi"), upto(make_int(1)), IterKind::Spatial};
  IterVar vj2{VarNode::make("vj"), upto(n), IterKind::Spatial};
  Stmt store_z = BufferStoreNode::make(
      Z, AddNode::make(load(Y, {vi2.var, vj2.var}), load(B, {vj2.var})), {vi2.var, vj2.var});
  // Without T.reads/T.writes the parser reads whole buffers and writes the stored point.
  std::vector<BufferRegion> reads_z = {BufferRegion::full(Y), BufferRegion::full(B)};
  if (text_regions)
    reads_z = {BufferRegion{Y, {point(vi2.var), point(vj2.var)}},
               BufferRegion{B, {point(vj2.var)}}};
  Block block_z = BlockNode::make(
      {vi2, vj2}, reads_z, {BufferRegion{Z, {point(vi2.var), point(vj2.var)}}}, "Z", store_z);
  Stmt nest_z =
      ForNode::make(i2, make_int(0), make_int(1), ForKind::Serial,
                    ForNode::make(j2, make_int(0), n, ForKind::Serial,
                                  BlockRealizeNode::make({i2, j2}, const_true(), block_z)));
  Block root =
      BlockNode::make({}, {}, {}, "root", SeqStmtNode::make({nest_y, nest_z}), nullptr, {Y});
  ir::DictAttrs attrs;
  attrs.entries = {{"global_symbol", std::string("linear0")}, {"tir.noalias", true}};
  return PrimFuncNode::make({x, w, b, z}, {{x, X}, {w, W}, {b, B}, {z, Z}},
                            BlockRealizeNode::make({}, const_true(), root), attrs);
}

TEST(TirParser, Linear0MatchesTheHandBuiltFunction) {
  PrimFunc parsed = parse_prim_func(kLinear0, "linear0.py");
  EXPECT_TRUE(structural_equal(parsed, linear0_reference(false))) << print(parsed);
  EXPECT_FALSE(structural_equal(parsed, linear0_reference(true)));
}

TEST(TirParser, Linear0PrintsWithInferredRegionsAndUniqueNames) {
  EXPECT_EQ(print(parse_prim_func(kLinear0)), R"(@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    m, n = T.int64(), T.int64()
    X = T.match_buffer(x, (1, m), "float32")
    W = T.match_buffer(w, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    Z = T.match_buffer(z, (1, n), "float32")
    Y = T.alloc_buffer((1, n), "float32")
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(X[vi, 0:m], W[vj, 0:m])
            T.writes(Y[vi, vj])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i_1, j_1 in T.grid(1, n):
        with T.block("Z"):
            vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
            T.reads(Y[0, 0:n], B[0:n])
            T.writes(Z[vi_1, vj_1])
            Z[vi_1, vj_1] = Y[vi_1, vj_1] + B[vj_1]
)");
}

TEST(TirParser, Relu0MatchesTheHandBuiltFunction) {
  Var x = VarNode::make("x", DataType::handle()), y = VarNode::make("y", DataType::handle());
  Var n = VarNode::make("n");
  Buffer X = BufferNode::make("X", f32(), {n, make_int(128)});
  Buffer Y = BufferNode::make("Y", f32(), {n, make_int(128)});
  Var i = VarNode::make("i"), j = VarNode::make("j");
  IterVar vi{VarNode::make("vi"), upto(n), IterKind::Spatial};
  IterVar vj{VarNode::make("vj"), upto(make_int(128)), IterKind::Spatial};
  Stmt body = BufferStoreNode::make(Y, MaxNode::make(load(X, {vi.var, vj.var}), f32_zero()),
                                    {vi.var, vj.var});
  Block block = BlockNode::make({vi, vj}, {BufferRegion::full(X)},
                                {BufferRegion{Y, {point(vi.var), point(vj.var)}}}, "Y", body);
  Stmt nest = ForNode::make(i, make_int(0), n, ForKind::Serial,
                            ForNode::make(j, make_int(0), make_int(128), ForKind::Serial,
                                          BlockRealizeNode::make({i, j}, const_true(), block)));
  Block root = BlockNode::make({}, {}, {}, "root", nest);
  ir::DictAttrs attrs;
  attrs.entries = {{"global_symbol", std::string("relu0")}};
  PrimFunc expected = PrimFuncNode::make({x, y}, {{x, X}, {y, Y}},
                                         BlockRealizeNode::make({}, const_true(), root), attrs);
  EXPECT_TRUE(structural_equal(parse_prim_func(kRelu0), expected));
}

TEST(TirParser, CanonicalProgramsPrintBackExactly) {
  for (const std::string& text : canonical_programs()) {
    PrimFunc func = parse_prim_func(text, "corpus");
    std::string printed = print(func);
    EXPECT_EQ(printed, text);
    PrimFunc again = parse_prim_func(printed, "printed");
    EXPECT_TRUE(structural_equal(func, again)) << printed;
    EXPECT_EQ(structural_hash(func), structural_hash(again));
  }
}

TEST(TirParser, SeveralFunctionsAndImportLines) {
  std::string text = std::string("from tvm.script import tir as T\n\n") + kLinear0 + "\n" + kRelu0;
  std::vector<PrimFunc> funcs = parse_prim_funcs(text, "kernels.py");
  ASSERT_EQ(funcs.size(), 2u);
  EXPECT_EQ(funcs[0]->global_symbol(), "linear0");
  EXPECT_EQ(funcs[1]->global_symbol(), "relu0");
  EXPECT_TRUE(parse_prim_funcs("\n# nothing here\n").empty());
}

TEST(TirParser, PlainLiteralsAdaptToTheOtherOperand) {
  PrimFunc func = parse_prim_func(R"(@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8,), "float32")
    for i in range(T.int32(8)):
        A[i] = A[i] * 2 + 0.5
        A[i + 1 - n] = 1
)");
  EXPECT_EQ(print(func), R"(@T.prim_func
def f(a: T.handle, n: T.int32):
    T.func_attr({"global_symbol": "f"})
    A = T.match_buffer(a, (8,), "float32")
    for i in range(T.int32(8)):
        A[i] = A[i] * T.float32(2) + T.float32(0.5)
        A[i + T.int32(1) - n] = T.float32(1)
)");
}

TEST(TirParser, SugarForLoopsLetsAndElif) {
  PrimFunc func = parse_prim_func(R"(@T.prim_func(private=True)
def f(a: T.handle):
    A = T.match_buffer(a, (8,), "int32")
    for i in T.serial(0, 8):
        t = i * 2
        if t < 4:
            A[i] = T.int32(0)
        elif t < 8:
            A[i] = T.int32(1)
        else:
            pass
            T.call_extern("int32", "g")
)");
  EXPECT_EQ(print(func), R"(@T.prim_func(private=True)
def main(a: T.handle):
    A = T.match_buffer(a, (8,), "int32")
    for i in range(8):
        t: T.int64 = i * 2
        if t < 4:
            A[i] = T.int32(0)
        else:
            if t < 8:
                A[i] = T.int32(1)
            else:
                T.evaluate(T.call_extern("int32", "g"))
)");
}

TEST(TirParser, InferredWritesFallBackToTheWholeBuffer) {
  PrimFunc func = parse_prim_func(R"(@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4, 4), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            for j in range(4):
                A[vi, j] = T.float32(0)
)");
  EXPECT_NE(print(func).find("T.writes(A[0:4, 0:4])"), std::string::npos) << print(func);
}

std::string parse_error(const std::string& text) {
  try {
    parse_prim_func(text, "k.py");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const char* const kHeader = "@T.prim_func\ndef f(a: T.handle, n: T.int32):\n";

TEST(TirParserErrors, SemanticProblemsNameTheLineAndColumn) {
  std::string h = kHeader;
  std::string buf = "    A = T.match_buffer(a, (4, 4), \"float32\")\n";
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = q\n"), "k.py:4:15: undefined name 'q'");
  EXPECT_EQ(parse_error(h + buf + "    A[0] = T.float32(1)\n"),
            "k.py:4:6: buffer 'A' has 2 dimensions but is indexed with 1");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.float32(1) + T.float64(1)\n"),
            "k.py:4:28: operands of '+' have different types float32 and float64");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.frobnicate(1)\n"),
            "k.py:4:17: unknown function T.frobnicate");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.call_intrin(\"float32\", \"nope\")\n"),
            "k.py:4:40: unknown intrinsic 'nope'");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.exp(A[0, 0], A[0, 0])\n"),
            "k.py:4:17: T.exp takes 1 arguments, got 2");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = n\n"),
            "k.py:4:13: the stored value has type int32 but float32 is expected");
  EXPECT_EQ(parse_error(h + buf + "    if n:\n        A[0, 0] = T.float32(0)\n"),
            "k.py:4:8: if condition must be a bool, got int32");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.int8(300)\n"),
            "k.py:4:22: 300 does not fit int8");
  EXPECT_EQ(parse_error(h + buf + "    A[0, 0] = T.float32(1) < T.float32(2) < T.float32(3)\n"),
            "k.py:4:43: chained comparisons are not supported; join them with 'and'");
  EXPECT_EQ(parse_error(h + buf + "    T.reads(A[0, 0])\n"),
            "k.py:4:5: T.reads is allowed only inside a block");
  EXPECT_EQ(parse_error(h + "    B = T.match_buffer(q, (4,))\n"), "k.py:3:24: undefined name 'q'");
}

TEST(TirParserErrors, BlockProblems) {
  std::string h = std::string(kHeader) + "    A = T.match_buffer(a, (4,), \"float32\")\n";
  std::string block = "        with T.block(\"B\"):\n";
  EXPECT_EQ(
      parse_error(h + "    for i in range(4):\n" + block +
                  "            vi = T.axis.remap(\"S\", [n])\n            A[vi] = T.float32(0)\n"),
      "k.py:6:37: T.axis.remap takes variables of enclosing loops");
  EXPECT_EQ(
      parse_error(h + "    for i in range(4):\n" + block + "            A[i] = T.float32(0)\n" +
                  "    for j in range(4):\n" + block + "            A[j] = T.float32(0)\n"),
      "k.py:8:22: two blocks are named 'B'");
  EXPECT_EQ(
      parse_error(h + "    for i in range(4):\n" + block + "            for j in range(2):\n" +
                  "                vi = T.axis.spatial(4, i)\n"),
      "k.py:7:22: T.axis.spatial must be directly inside its block, not in a nested statement");
}

TEST(TirParserErrors, SyntaxProblems) {
  EXPECT_EQ(parse_error(""), "k.py:1:1: expected '@T.prim_func', got end of input");
  EXPECT_EQ(parse_error("@T.prim_func\ndef f(:\n"), "k.py:2:7: expected a parameter name, got ':'");
  EXPECT_EQ(parse_error(std::string(kHeader) + "  pass\n    pass\n"),
            "k.py:4:5: unexpected indentation");
  EXPECT_EQ(parse_error(std::string(kHeader) + "    pass\n  pass\n"),
            "k.py:4:3: unindent does not match any outer indentation level");
  EXPECT_EQ(parse_error(std::string(kHeader) + "    T.evaluate(\"abc)\n"),
            "k.py:3:16: unterminated string");
  EXPECT_EQ(parse_error(std::string(kHeader) + "    T.evaluate(1 $ 2)\n"),
            "k.py:3:18: unexpected character '$'");
  EXPECT_EQ(parse_error(std::string(kHeader) + "    pass\nx = 1\n"),
            "k.py:4:1: unexpected text after the function");
}

TEST(TirParserErrors, DeepNestingIsAnErrorNotACrash) {
  std::string deep = std::string(kHeader) + "    T.evaluate(" + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + ")\n";
  // Each parenthesis is two levels (the bracket and the expression in it).
  EXPECT_EQ(parse_error(deep), "k.py:3:79: nesting deeper than 128 levels");
  std::string chain = std::string(kHeader) + "    T.evaluate(1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(parse_error(chain + ")\n").find("nesting deeper than 128 levels"), std::string::npos);
  std::string nested = kHeader;
  for (int depth = 1; depth < 300; ++depth)
    nested += std::string(size_t(depth) * 4, ' ') + "if True:\n";
  nested += std::string(300 * 4, ' ') + "pass\n";
  EXPECT_NE(parse_error(nested).find("nesting deeper than 128 levels"), std::string::npos);
  // Well below the limit parses.
  std::string ok = std::string(kHeader) + "    T.evaluate(" + std::string(60, '(') + "1" +
                   std::string(60, ')') + ")\n";
  EXPECT_EQ(parse_error(ok), "no error");
}

}  // namespace
}  // namespace anvil::tir
