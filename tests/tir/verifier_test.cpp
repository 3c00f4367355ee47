// The tensor IR verifier: well-formed functions pass, each broken rule is an
// InternalError naming the culprit, and the lowered form adds its own rules.
#include "anvil/tir/verifier.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "text_corpus.h"

namespace anvil::tir {
namespace {

ir::DictAttrs named(const std::string& name) {
  ir::DictAttrs attrs;
  attrs.entries = {{"global_symbol", name}};
  return attrs;
}

// f(a) with A = buffer_map[a] of shape (n,), and body built from A, n and a loop var i.
struct Fixture {
  Var a = VarNode::make("a", DataType::handle());
  Var n = VarNode::make("n");
  Buffer A = BufferNode::make("A", DataType::float32(), {n});
  Var i = VarNode::make("i");
  PrimFunc func(Stmt body) const { return PrimFuncNode::make({a}, {{a, A}}, body, named("f")); }
  Stmt loop(Stmt body) const { return for_loop(i, 0, n, body); }
};

std::string violation_of(const PrimFunc& func, IrForm form = IrForm::Scheduled) {
  try {
    verify(func, form);
  } catch (const InternalError& e) {
    std::string message = e.what();
    size_t at = message.find("tir verifier: ");
    return at == std::string::npos ? message : message.substr(at);
  }
  return "ok";
}

TEST(TirVerifier, ParsedProgramsAreWellFormed) {
  for (const std::string& text : testing::canonical_programs())
    EXPECT_EQ(violation_of(parse_prim_func(text)), "ok") << text;
  EXPECT_EQ(violation_of(parse_prim_func(testing::kLinear0)), "ok");
}

TEST(TirVerifier, VariableOutsideItsScope) {
  Fixture t;
  Stmt body = seq_stmt({t.loop(store(t.A, FloatImmNode::make(DataType::float32(), 0), {t.i})),
                        store(t.A, FloatImmNode::make(DataType::float32(), 1), {t.i})});
  EXPECT_EQ(violation_of(t.func(body)),
            "tir verifier: @f: variable 'i' is used outside its definition's scope");
}

TEST(TirVerifier, UnknownBufferAndWrongRank) {
  Fixture t;
  Buffer stray = BufferNode::make("S", DataType::float32(), {make_int(4)});
  EXPECT_EQ(violation_of(t.func(t.loop(store(stray, load(t.A, {t.i}), {t.i})))),
            "tir verifier: @f: store of buffer 'S', which is neither a parameter nor allocated in "
            "scope");
  EXPECT_EQ(violation_of(t.func(t.loop(store(t.A, load(t.A, {t.i, t.i}), {t.i})))),
            "tir verifier: @f: load of buffer 'A' with 2 indices, but it has 1 dimensions");
  // A flattened view of a parameter shares its data pointer and is accepted.
  Buffer view = BufferNode::make_full(t.A->data, DataType::float32(), {t.n}, {}, make_int(0),
                                      "A_flat", "global", 64);
  EXPECT_EQ(violation_of(t.func(t.loop(store(view, load(t.A, {t.i}), {t.i})))), "ok");
}

TEST(TirVerifier, BlockNamesAndBindings) {
  Fixture t;
  auto block = [&](const std::string& name, PrimExpr value) {
    IterVar vi{VarNode::make("vi", value.dtype()),
               {make_int(0, value.dtype()), make_int(4, value.dtype())},
               IterKind::Spatial};
    Block b = BlockNode::make({vi}, {}, {}, name, evaluate(0));
    return BlockRealizeNode::make({value}, const_true(), b);
  };
  EXPECT_EQ(violation_of(t.func(seq_stmt({t.loop(block("B", t.i)), t.loop(block("B", t.i))}))),
            "tir verifier: @f: two blocks are named 'B'");
  IterVar vi{VarNode::make("vi", DataType::int32()), {make_int(0), make_int(4)}, IterKind::Spatial};
  Stmt mismatched =
      BlockRealizeNode::make({t.i}, const_true(), BlockNode::make({vi}, {}, {}, "C", evaluate(0)));
  EXPECT_EQ(violation_of(t.func(t.loop(mismatched))),
            "tir verifier: @f: block 'C' binds vi of type int32 to a value of type int64");
}

TEST(TirVerifier, LoweredFormHasNoBlocksAndFlatAccesses) {
  Fixture t;
  Stmt block =
      BlockRealizeNode::make({}, const_true(), BlockNode::make({}, {}, {}, "root", evaluate(0)));
  EXPECT_EQ(violation_of(t.func(block)), "ok");
  EXPECT_EQ(violation_of(t.func(block), IrForm::Lowered),
            "tir verifier: @f: block 'root' in the lowered form");
  Buffer matrix = BufferNode::make("M", DataType::float32(), {make_int(2), make_int(2)});
  Stmt two_d = AllocateNode::make(matrix, store(matrix, FloatImmNode::make(DataType::float32(), 0),
                                                {make_int(0), make_int(1)}));
  EXPECT_EQ(violation_of(t.func(two_d)), "ok");
  EXPECT_EQ(violation_of(t.func(two_d), IrForm::Lowered),
            "tir verifier: @f: store of buffer 'M' is 2-dimensional in the lowered form");
  EXPECT_EQ(find_ir_violation(t.func(two_d), IrForm::Lowered),
            "tir verifier: @f: store of buffer 'M' is 2-dimensional in the lowered form");
  EXPECT_EQ(find_ir_violation(t.func(two_d)), "");
}

TEST(TirVerifier, ParserReportsViolationsAsUserErrors) {
  try {
    parse_prim_func(R"(@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    for i in range(4):
        X = T.Buffer((i + 1,), "float32", data=A.data)
        X[0] = T.float32(0)
    X[0] = T.float32(1)
)",
                    "v.py");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "v.py:2:1: tir verifier: @f: variable 'i' is used outside its definition's scope");
  }
}

}  // namespace
}  // namespace anvil::tir
