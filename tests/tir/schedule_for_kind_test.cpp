// parallel, vectorize, unroll and annotate: the loop's kind and annotations
// change, nothing else does.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_loop_programs.h"

namespace anvil::tir {
namespace {

using namespace loop_testing;

ForKind kind_of(const Schedule& sch, const LoopRV& loop) {
  return loop_of(sch.func(), loop.var)->for_kind;
}

TEST(ForKind, ParallelOuterVectorizeInnerUnrollReduction) {
  PrimFunc func = matmul(37, 53, 19);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> j = sch.split(loops[1], {nullptr, 16});
  sch.reorder({loops[0], j[0], loops[2], j[1]});
  sch.parallel(loops[0]);
  sch.vectorize(j[1]);
  sch.unroll(loops[2]);
  EXPECT_EQ(kind_of(sch, loops[0]), ForKind::Parallel);
  EXPECT_EQ(kind_of(sch, j[0]), ForKind::Serial);
  EXPECT_EQ(kind_of(sch, loops[2]), ForKind::Unrolled);
  EXPECT_EQ(kind_of(sch, j[1]), ForKind::Vectorized);
  EXPECT_EQ(loop_names(sch, "C"), (std::vector<std::string>{"i", "j_0", "k", "j_1"}));
  expect_same_results(func, sch.func(), 2);
}

TEST(ForKind, ParallelAfterFuse) {
  PrimFunc func = multiply3d(5, 7, 9);
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  sch.parallel(fused);
  sch.vectorize(loops[2]);
  EXPECT_EQ(kind_of(sch, fused), ForKind::Parallel);
  EXPECT_EQ(kind_of(sch, loops[2]), ForKind::Vectorized);
  expect_same_results(func, sch.func(), 2);
}

TEST(ForKind, UnrollAnyLoopEvenAReduction) {
  PrimFunc func = matmul(3, 4, 5);
  Schedule sch(func);
  LoopRV k = sch.get_loops(sch.get_block("C"))[2];
  sch.unroll(k);
  EXPECT_EQ(kind_of(sch, k), ForKind::Unrolled);
}

TEST(ForKind, SerialLoopsKeepTheirOtherFields) {
  PrimFunc func = add_one(100);
  Schedule sch(func);
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  For before = loop_of(sch.func(), i.var);
  sch.parallel(i);
  For after = loop_of(sch.func(), i.var);
  EXPECT_EQ(after->body.get(), before->body.get());
  EXPECT_EQ(after->extent.get(), before->extent.get());
  EXPECT_EQ(after->min.get(), before->min.get());
}

TEST(Annotate, AddsAndReplaces) {
  PrimFunc func = add_one(100);
  Schedule sch(func);
  LoopRV i = sch.get_loops(sch.get_block("B"))[0];
  sch.annotate(i, "pragma_unroll_explicit", int64_t(0));
  sch.annotate(i, "note", std::string("hot"));
  sch.annotate(i, "pragma_unroll_explicit", int64_t(1));
  const Annotations& a = loop_of(sch.func(), i.var)->annotations;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(a.at("pragma_unroll_explicit")), 1);
  EXPECT_EQ(std::get<std::string>(a.at("note")), "hot");
  // Annotations survive a later change of kind.
  sch.vectorize(i);
  EXPECT_EQ(loop_of(sch.func(), i.var)->annotations.size(), 2u);
}

TEST(ForKindGolden, TiledMatmul) {
  Schedule sch(matmul(37, 53, 19));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> i = sch.split(l[0], {nullptr, 8});
  std::vector<LoopRV> j = sch.split(l[1], {nullptr, 16});
  sch.reorder({i[0], j[0], l[2], i[1], j[1]});
  sch.decompose_reduction(sch.get_block("C"), l[2]);
  sch.parallel(i[0]);
  sch.vectorize(j[1]);
  sch.annotate(l[2], "pragma_x", std::string("y"));
  EXPECT_EQ(body_text(sch.func()), R"(for i_0 in T.parallel(5):
    for j_0 in range(4):
        for i_1_init, j_1_init in T.grid(8, 16):
            with T.block("C_init"):
                vi_init = T.axis.spatial(37, i_0 * 8 + i_1_init)
                vj_init = T.axis.spatial(53, j_0 * 16 + j_1_init)
                T.where(i_0 * 8 + i_1_init < 37 and j_0 * 16 + j_1_init < 53)
                T.reads()
                T.writes(C[vi_init, vj_init])
                C[vi_init, vj_init] = T.float32(0)
        for k in T.serial(19, annotations={"pragma_x": "y"}):
            for i_1 in range(8):
                for j_1 in T.vectorized(16):
                    with T.block("C"):
                        vi = T.axis.spatial(37, i_0 * 8 + i_1)
                        vj = T.axis.spatial(53, j_0 * 16 + j_1)
                        vk = T.axis.reduce(19, k)
                        T.where(i_0 * 8 + i_1 < 37 and j_0 * 16 + j_1 < 53)
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

}  // namespace
}  // namespace anvil::tir
