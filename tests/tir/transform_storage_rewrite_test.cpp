// storage_rewrite: allocations leave serial loops but never parallel ones;
// buffers whose lifetimes do not meet share one allocation. Expected forms
// are written by hand in a compact statement notation.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "anvil/support/str_cat.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir {
namespace {

using transform::storage_rewrite;

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

// Accesses print as buffer[index] with the data Var's name, so two buffers
// sharing one allocation show the same name.
std::string sx(const PrimExpr& e) {
  if (const auto* n = as<IntImmNode>(e)) return std::to_string(n->value);
  if (const auto* n = as<FloatImmNode>(e)) return str_cat(n->value, "f");
  if (const auto* n = as<VarNode>(e)) return n->name;
  if (const auto* n = as<BufferLoadNode>(e))
    return str_cat(n->buffer->data->name, "[", sx(n->indices[0]), "]");
  if (is_binary(e.kind())) {
    auto [a, b] = operands(e);
    return str_cat("(", sx(a), " ", expr_kind_name(e.kind()), " ", sx(b), ")");
  }
  return expr_kind_name(e.kind());
}

std::string sx(const Stmt& s) {
  if (const auto* n = as<BufferStoreNode>(s))
    return str_cat(n->buffer->data->name, "[", sx(n->indices[0]), "] = ", sx(n->value));
  if (const auto* n = as<ForNode>(s))
    return str_cat("for ", n->loop_var->name, " < ", sx(n->extent), " ", for_kind_name(n->for_kind),
                   " { ", sx(n->body), " }");
  if (const auto* n = as<SeqStmtNode>(s)) {
    std::string text;
    for (const Stmt& x : n->seq) text += (text.empty() ? "" : "; ") + sx(x);
    return text;
  }
  if (const auto* n = as<AllocateNode>(s))
    return str_cat("alloc ", n->buffer->data->name, "[", sx(n->buffer->shape[0]),
                   "]:", n->buffer->dtype.to_string(), " ", n->buffer->scope, " { ", sx(n->body),
                   " }");
  if (const auto* n = as<IfThenElseNode>(s))
    return str_cat("if ", sx(n->condition), " { ", sx(n->then_case), " }");
  return stmt_kind_name(s->kind);
}

std::string rewritten(const Stmt& body) {
  return sx(storage_rewrite(PrimFuncNode::make({}, {}, body))->body);
}

struct Kernel {
  Var i = VarNode::make("i");
  Var j = VarNode::make("j");
  Var n = VarNode::make("n");
  Buffer a = BufferNode::make("A", DataType::float32(), {make_int(1024)});
  Buffer b = BufferNode::make("B", DataType::float32(), {make_int(1024)});

  Buffer local(const char* name, int64_t size, DataType dtype = DataType::float32(),
               const char* scope = "local") {
    return BufferNode::make(name, dtype, {make_int(size)}, scope);
  }
  // for j < size: t[j] = A[j]
  Stmt fill(const Buffer& t, int64_t size) {
    return for_loop(j, 0, size, store(t, load(a, {j}), {j}));
  }
  // for j < size: B[j] = t[j]
  Stmt drain(const Buffer& t, int64_t size) {
    return for_loop(j, 0, size, store(b, load(t, {j}), {j}));
  }
};

TEST(StorageRewrite, AllocationLeavesSerialLoops) {
  Kernel s;
  Buffer t = s.local("t", 16);
  Stmt body = for_loop(s.i, 0, 4, AllocateNode::make(t, seq_stmt({s.fill(t, 16), s.drain(t, 16)})));
  EXPECT_EQ(rewritten(body),
            "alloc t[16]:float32 local { for i < 4 serial { for j < 16 serial { t[j] = A[j] }; for "
            "j < 16 serial { B[j] = t[j] } } }");
}

TEST(StorageRewrite, AllocationStaysInsideParallelLoops) {
  Kernel s;
  Buffer t = s.local("t", 16);
  Stmt inner =
      for_loop(s.n, 0, 2, AllocateNode::make(t, seq_stmt({s.fill(t, 16), s.drain(t, 16)})));
  Stmt body = for_loop(s.i, 0, 4, inner, ForKind::Parallel);
  // Out of the serial loop n, but not out of the parallel loop i.
  EXPECT_EQ(rewritten(body),
            "for i < 4 parallel { alloc t[16]:float32 local { for n < 2 serial { for j < 16 serial "
            "{ t[j] = A[j] }; for j < 16 serial { B[j] = t[j] } } } }");
  // Already at the top of the parallel body: the function is returned unchanged.
  Stmt top = for_loop(s.i, 0, 4, AllocateNode::make(t, s.fill(t, 16)), ForKind::Parallel);
  PrimFunc func = PrimFuncNode::make({}, {}, top);
  EXPECT_EQ(storage_rewrite(func).get(), func.get());
}

TEST(StorageRewrite, DisjointLifetimesShareTheLargestAllocation) {
  Kernel s;
  Buffer t1 = s.local("t1", 16);
  Buffer t2 = s.local("t2", 32);
  Stmt body = seq_stmt({AllocateNode::make(t1, seq_stmt({s.fill(t1, 16), s.drain(t1, 16)})),
                        AllocateNode::make(t2, seq_stmt({s.fill(t2, 32), s.drain(t2, 32)}))});
  EXPECT_EQ(rewritten(body),
            "alloc t1[32]:float32 local { for j < 16 serial { t1[j] = A[j] }; for j < 16 serial { "
            "B[j] = t1[j] }; for j < 32 serial { t1[j] = A[j] }; for j < 32 serial { B[j] = t1[j] "
            "} }");
}

TEST(StorageRewrite, OverlappingLifetimesKeepSeparateAllocations) {
  Kernel s;
  Buffer t1 = s.local("t1", 16);
  Buffer t2 = s.local("t2", 16);
  Stmt both = for_loop(s.j, 0, 16, store(s.b, load(t1, {s.j}) + load(t2, {s.j}), {s.j}));
  Stmt body = AllocateNode::make(
      t1, AllocateNode::make(t2, seq_stmt({s.fill(t1, 16), s.fill(t2, 16), both})));
  EXPECT_EQ(rewritten(body),
            "alloc t1[16]:float32 local { alloc t2[16]:float32 local { for j < 16 serial { t1[j] = "
            "A[j] }; for j < 16 serial { t2[j] = A[j] }; for j < 16 serial { B[j] = (t1[j] Add "
            "t2[j]) } } }");
}

TEST(StorageRewrite, DifferentDtypesOrScopesDoNotShare) {
  Kernel s;
  Buffer t1 = s.local("t1", 16);
  Buffer t2 = s.local("t2", 16, DataType::int32());
  Buffer t3 = s.local("t3", 16, DataType::float32(), "global");
  Stmt fill_int = for_loop(s.j, 0, 16, store(t2, make_int(1, DataType::int32()), {s.j}));
  Stmt body = seq_stmt({AllocateNode::make(t1, s.fill(t1, 16)), AllocateNode::make(t2, fill_int),
                        AllocateNode::make(t3, s.fill(t3, 16))});
  EXPECT_EQ(rewritten(body),
            "alloc t1[16]:float32 local { alloc t2[16]:int32 local { alloc t3[16]:float32 global { "
            "for j < 16 serial { t1[j] = A[j] }; for j < 16 serial { t2[j] = 1 }; for j < 16 "
            "serial { t3[j] = A[j] } } } }");
}

TEST(StorageRewrite, SharingInsideAParallelLoop) {
  Kernel s;
  Buffer t1 = s.local("t1", 8);
  Buffer t2 = s.local("t2", 4);
  Stmt task =
      seq_stmt({AllocateNode::make(t1, s.fill(t1, 8)), AllocateNode::make(t2, s.drain(t2, 4))});
  EXPECT_EQ(rewritten(for_loop(s.i, 0, 2, task, ForKind::Parallel)),
            "for i < 2 parallel { alloc t1[8]:float32 local { for j < 8 serial { t1[j] = A[j] }; "
            "for j < 4 serial { B[j] = t1[j] } } }");
}

TEST(StorageRewrite, SymbolicSizesStayInPlace) {
  Kernel s;
  Buffer t = BufferNode::make("t", DataType::float32(), {s.n}, "local");
  Stmt body = for_loop(s.i, 0, 4, AllocateNode::make(t, s.fill(t, 4)));
  PrimFunc func = PrimFuncNode::make({}, {}, body);
  EXPECT_EQ(storage_rewrite(func).get(), func.get());
}

TEST(StorageRewrite, CopiesOfOneAllocationBecomeOne) {
  Kernel s;
  Buffer t = s.local("t", 4);
  Stmt copy = AllocateNode::make(t, s.fill(t, 4));
  EXPECT_EQ(rewritten(seq_stmt({copy, copy})),
            "alloc t[4]:float32 local { for j < 4 serial { t[j] = A[j] }; for j < 4 serial { t[j] "
            "= A[j] } }");
}

TEST(StorageRewrite, SiblingsInsideALoopShareThenLeaveIt) {
  Kernel s;
  Buffer t1 = s.local("t1", 8);
  Buffer t2 = s.local("t2", 8);
  Stmt body =
      for_loop(s.i, 0, 4,
               seq_stmt({AllocateNode::make(t1, seq_stmt({s.fill(t1, 8), s.drain(t1, 8)})),
                         AllocateNode::make(t2, seq_stmt({s.fill(t2, 8), s.drain(t2, 8)}))}));
  EXPECT_EQ(rewritten(body),
            "alloc t1[8]:float32 local { for i < 4 serial { for j < 8 serial { t1[j] = A[j] }; for "
            "j < 8 serial { B[j] = t1[j] }; for j < 8 serial { t1[j] = A[j] }; for j < 8 serial { "
            "B[j] = t1[j] } } }");
}

TEST(StorageRewrite, BuffersOfConsecutiveLoopNestsShare) {
  Kernel s;
  Buffer t1 = s.local("t1", 8);
  Buffer t2 = s.local("t2", 12);
  Buffer t3 = s.local("t3", 4);
  // t1 lives in the first nest, t2 and t3 together in the second: t2 (the first of the
  // second nest) takes t1's place, grown to 12 elements.
  Stmt first =
      for_loop(s.i, 0, 2, AllocateNode::make(t1, seq_stmt({s.fill(t1, 8), s.drain(t1, 8)})));
  Stmt both = for_loop(s.j, 0, 4, store(t3, load(t2, {s.j}), {s.j}));
  Stmt second =
      for_loop(s.i, 0, 2,
               AllocateNode::make(
                   t2, AllocateNode::make(t3, seq_stmt({s.fill(t2, 12), both, s.drain(t3, 4)}))));
  EXPECT_EQ(rewritten(seq_stmt({first, second})),
            "alloc t1[12]:float32 local { alloc t3[4]:float32 local { for i < 2 serial { for j < 8 "
            "serial { t1[j] = A[j] }; for j < 8 serial { B[j] = t1[j] } }; for i < 2 serial { for "
            "j < 12 serial { t1[j] = A[j] }; for j < 4 serial { t3[j] = t1[j] }; for j < 4 serial "
            "{ B[j] = t3[j] } } } }");
}

}  // namespace
}  // namespace anvil::tir
