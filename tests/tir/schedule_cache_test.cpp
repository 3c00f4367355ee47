// cache_read and cache_write: the copy blocks, where they go, which block
// uses the new buffer, and (with compute_at) the packed panels and register
// tiles they are meant for.
#include <gtest/gtest.h>

#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "schedule_dataflow_programs.h"

namespace anvil::tir {
namespace {

using namespace testing;

TEST(CacheRead, ParameterCopyGoesFirst) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  BlockRV copy = sch.cache_read(sch.get_block("B"), 0, "local");
  EXPECT_EQ(copy.name, "A_local");
  PrimFunc out = sch.func();
  EXPECT_EQ(block_names(out), (std::vector<std::string>{"A_local", "B", "C"}));
  EXPECT_EQ(root_allocations(out), (std::vector<std::string>{"B", "A_local"}));
  Block cache = find_block(out, "A_local");
  EXPECT_EQ(region_buffers(cache->reads), std::vector<std::string>{"A"});
  EXPECT_EQ(region_buffers(cache->writes), std::vector<std::string>{"A_local"});
  EXPECT_EQ(root_block(out)->alloc_buffers[1]->scope, "local");
  EXPECT_EQ(region_buffers(find_block(out, "B")->reads), std::vector<std::string>{"A_local"});
  EXPECT_EQ(loop_extents(sch, "A_local"), (std::vector<int64_t>{37, 53}));
  expect_same_results(func, out, 1);
}

TEST(CacheRead, IntermediateCopyGoesAfterItsProducer) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  sch.cache_read(sch.get_block("C"), 0, "local");
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"B", "B_local", "C"}));
  EXPECT_EQ(region_buffers(find_block(sch.func(), "C")->reads),
            std::vector<std::string>{"B_local"});
  // Only C was redirected: B still writes B.
  EXPECT_EQ(region_buffers(find_block(sch.func(), "B")->writes), std::vector<std::string>{"B"});
  expect_same_results(func, sch.func(), 1);
}

TEST(CacheRead, NamesStayUnique) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  BlockRV first = sch.cache_read(sch.get_block("B"), 0, "local");
  BlockRV second = sch.cache_read(first, 0, "local");
  EXPECT_EQ(second.name, "A_local_1");
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"A_local_1", "A_local", "B", "C"}));
  expect_same_results(func, sch.func(), 1);
}

TEST(CacheRead, PackedPanelOfTheWeightsPerColumnTile) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({cols[0], loops[0], cols[1], loops[2]});
  BlockRV pack = sch.cache_read(sch.get_block("D"), 1, "global");
  EXPECT_EQ(pack.name, "W_global");
  sch.compute_at(pack, cols[0]);
  // Per tile of 16 columns, the 19x16 panel of W; the last tile is partial.
  EXPECT_EQ(loop_extents(sch, "W_global"), (std::vector<int64_t>{4, 19, 16}));
  EXPECT_FALSE(is_one(find_realize(sch.func(), "W_global")->predicate));
  EXPECT_EQ(region_buffers(find_block(sch.func(), "D")->reads),
            (std::vector<std::string>{"A", "W_global"}));
  expect_same_results(func, sch.func(), 3);
}

TEST(CacheWrite, AccumulatorInLocalStorageWrittenBack) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  BlockRV copy = sch.cache_write(sch.get_block("D"), 0, "local");
  EXPECT_EQ(copy.name, "D_local");
  PrimFunc out = sch.func();
  EXPECT_EQ(block_names(out), (std::vector<std::string>{"D", "D_local", "E", "F"}));
  Block d = find_block(out, "D");
  EXPECT_EQ(region_buffers(d->writes), std::vector<std::string>{"D_local"});
  // Init and update both go to the local buffer.
  EXPECT_EQ(as<BufferStoreNode>(d->init)->buffer->name, "D_local");
  EXPECT_EQ(as<BufferStoreNode>(d->body)->buffer->name, "D_local");
  Block write_back = find_block(out, "D_local");
  EXPECT_EQ(region_buffers(write_back->reads), std::vector<std::string>{"D_local"});
  EXPECT_EQ(region_buffers(write_back->writes), std::vector<std::string>{"D"});
  expect_same_results(func, out, 3);
}

TEST(CacheWrite, RegisterTileWithWriteBackUnderTheTileLoop) {
  PrimFunc func = matmul_bias_relu();
  Schedule sch(func);
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
  std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 4});
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({rows[0], cols[0], loops[2], rows[1], cols[1]});
  BlockRV write_back = sch.cache_write(sch.get_block("D"), 0, "local");
  sch.reverse_compute_at(write_back, cols[0]);
  EXPECT_EQ(loop_extents(sch, "D_local"), (std::vector<int64_t>{10, 4, 4, 16}));
  expect_same_results(func, sch.func(), 3);
}

TEST(CacheWrite, OutputBlockKeepsItsParameter) {
  PrimFunc func = elementwise_pipeline();
  Schedule sch(func);
  sch.cache_write(sch.get_block("C"), 0, "local");
  EXPECT_EQ(block_names(sch.func()), (std::vector<std::string>{"B", "C", "C_local"}));
  EXPECT_EQ(region_buffers(find_block(sch.func(), "C_local")->writes),
            std::vector<std::string>{"C"});
  expect_same_results(func, sch.func(), 1);
}

TEST(CacheRead, GoldenTextOfThePackedPanel) {
  Schedule sch(matmul_bias_relu());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({cols[0], loops[0], cols[1], loops[2]});
  BlockRV pack = sch.cache_read(sch.get_block("D"), 1, "global");
  sch.compute_at(pack, cols[0]);
  sch.compute_inline(sch.get_block("E"));
  expect_func_text(sch.func(), R"(@T.prim_func
def dense(A: T.handle, W: T.handle, bias: T.handle, F: T.handle):
    T.func_attr({"global_symbol": "dense", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 19), "float32")
    W_1 = T.match_buffer(W, (19, 53), "float32")
    bias_1 = T.match_buffer(bias, (53,), "float32")
    F_1 = T.match_buffer(F, (37, 53), "float32")
    D = T.alloc_buffer((37, 53), "float32")
    W_global = T.alloc_buffer((19, 53), "float32")
    for j_0 in range(4):
        for ax0, ax1 in T.grid(19, 16):
            with T.block("W_global"):
                v0 = T.axis.spatial(19, ax0)
                v1 = T.axis.spatial(53, j_0 * 16 + ax1)
                T.where(j_0 * 16 + ax1 < 53)
                T.reads(W_1[v0, v1])
                T.writes(W_global[v0, v1])
                W_global[v0, v1] = W_1[v0, v1]
        for i, j_1, k in T.grid(37, 16, 19):
            with T.block("D"):
                vi = T.axis.spatial(37, i)
                vj = T.axis.spatial(53, j_0 * 16 + j_1)
                vk = T.axis.reduce(19, k)
                T.where(j_0 * 16 + j_1 < 53)
                T.reads(A_1[vi, vk], W_global[vk, vj])
                T.writes(D[vi, vj])
                with T.init():
                    D[vi, vj] = T.float32(0)
                D[vi, vj] = D[vi, vj] + A_1[vi, vk] * W_global[vk, vj]
    for i, j in T.grid(37, 53):
        with T.block("F"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(D[vi, vj], bias_1[vj])
            T.writes(F_1[vi, vj])
            F_1[vi, vj] = T.max(D[vi, vj] + bias_1[vj], T.float32(0))
)");
}

TEST(CacheWrite, GoldenTextOfTheAccumulatorTile) {
  Schedule sch(matmul_bias_relu());
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("D"));
  std::vector<LoopRV> rows = sch.split(loops[0], {nullptr, 4});
  std::vector<LoopRV> cols = sch.split(loops[1], {nullptr, 16});
  sch.reorder({rows[0], cols[0], loops[2], rows[1], cols[1]});
  BlockRV write_back = sch.cache_write(sch.get_block("D"), 0, "local");
  sch.reverse_compute_at(write_back, cols[0]);
  sch.compute_inline(sch.get_block("E"));
  expect_func_text(sch.func(), R"(@T.prim_func
def dense(A: T.handle, W: T.handle, bias: T.handle, F: T.handle):
    T.func_attr({"global_symbol": "dense", "tir.noalias": 1})
    A_1 = T.match_buffer(A, (37, 19), "float32")
    W_1 = T.match_buffer(W, (19, 53), "float32")
    bias_1 = T.match_buffer(bias, (53,), "float32")
    F_1 = T.match_buffer(F, (37, 53), "float32")
    D = T.alloc_buffer((37, 53), "float32")
    D_local = T.alloc_buffer((37, 53), "float32", scope="local")
    for i_0, j_0 in T.grid(10, 4):
        for k, i_1, j_1 in T.grid(19, 4, 16):
            with T.block("D"):
                vi = T.axis.spatial(37, i_0 * 4 + i_1)
                vj = T.axis.spatial(53, j_0 * 16 + j_1)
                vk = T.axis.reduce(19, k)
                T.where(i_0 * 4 + i_1 < 37 and j_0 * 16 + j_1 < 53)
                T.reads(A_1[vi, vk], W_1[vk, vj])
                T.writes(D_local[vi, vj])
                with T.init():
                    D_local[vi, vj] = T.float32(0)
                D_local[vi, vj] = D_local[vi, vj] + A_1[vi, vk] * W_1[vk, vj]
        for ax0, ax1 in T.grid(4, 16):
            with T.block("D_local"):
                v0 = T.axis.spatial(37, i_0 * 4 + ax0)
                v1 = T.axis.spatial(53, j_0 * 16 + ax1)
                T.where(i_0 * 4 + ax0 < 37 and j_0 * 16 + ax1 < 53)
                T.reads(D_local[v0, v1])
                T.writes(D[v0, v1])
                D[v0, v1] = D_local[v0, v1]
    for i, j in T.grid(37, 53):
        with T.block("F"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(D[vi, vj], bias_1[vj])
            T.writes(F_1[vi, vj])
            F_1[vi, vj] = T.max(D[vi, vj] + bias_1[vj], T.float32(0))
)");
}

}  // namespace
}  // namespace anvil::tir
