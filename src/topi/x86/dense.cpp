// nn.matmul on x86 (the form AlterOpLayout gives a dense layer with constant weights: the
// weight transposed to (K, N) at compile time, so a row of it is a run of contiguous vectors).
// A register tile of rows x (vectors x lanes) accumulators stays in registers while a slice of
// the reduction runs; the column tiles are the parallel tasks.
#include "anvil/ir/attrs/nn.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {

void schedule_dense(tir::Schedule& sch, const ScheduleArgs& args) {
  if (const auto* attrs = dynamic_cast<const ir::MatmulAttrs*>(args.anchor.attrs.get()))
    if (attrs->transpose_a || attrs->transpose_b)
      throw_error("dense schedule: transposed operands are read with strides");
  tir::BlockRV block = sch.get_block(args.anchor_block);
  const tir::BlockNode& node = block_node(sch, args.anchor_block);
  size_t spatial = 0, reduce = 0;
  for (const tir::IterVar& iv : node.iter_vars)
    (iv.kind == tir::IterKind::Reduce ? reduce : spatial) += 1;
  std::vector<tir::LoopRV> loops = sch.get_loops(block);
  if (reduce != 1 || spatial < 2 || loops.size() != spatial + 1)
    throw_error("dense schedule: expected spatial loops and one reduction loop");
  // With a 2-D weight every leading dim of the data is a row of one matrix product ((197, 1,
  // 768) x (768, N) is 197 rows, not 197 products of one row): one row loop, tiled as a whole.
  const auto* weight = ir::as<ir::TensorTypeNode>(args.anchor.args.at(1)->checked_type);
  if (spatial > 2 && weight && weight->shape && weight->shape->size() == 2) {
    std::vector<tir::LoopRV> leading(loops.begin(), loops.begin() + (spatial - 1));
    tir::LoopRV rows_loop = sch.fuse(leading);
    loops = {rows_loop, loops[spatial - 1], loops[spatial]};
    spatial = 2;
  }
  tir::LoopRV i = loops[spatial - 2], j = loops[spatial - 1], k = loops[spatial];
  const int64_t rows = loop_extent(sch, i).value_or(0);
  const int64_t cols = loop_extent(sch, j).value_or(0);
  const int64_t depth = loop_extent(sch, k).value_or(0);
  if (rows <= 0 || cols <= 0 || depth <= 0) throw_error("dense schedule: dynamic extents");

  int64_t lanes = 0;
  for (int64_t v = args.vector_bits / 32; v >= 4 && !lanes; v /= 2)
    if (cols % v == 0) lanes = v;
  if (!lanes) throw_error("dense schedule: ", cols, " columns take no full vector");
  // Single-row products are bound by reading the weight; more accumulators hide FMA latency.
  // Rows need not divide: the last, partial row tile is cut off by partition_loops.
  const int64_t tile_rows = std::min<int64_t>(rows, 4);
  const int64_t vectors = largest_divisor_at_most(cols / lanes, tile_rows == 1 ? 8 : 4);
  const int64_t panel = largest_divisor_at_most(depth, 256);

  std::vector<tir::LoopRV> jt =
      sch.split(j, {nullptr, tir::make_int(vectors), tir::make_int(lanes)});
  std::vector<tir::LoopRV> it = sch.split(i, {nullptr, tir::make_int(tile_rows)});
  std::vector<tir::LoopRV> kt = sch.split(k, {nullptr, tir::make_int(panel)});
  sch.reorder({jt[0], kt[0], it[0], kt[1], it[1], jt[1], jt[2]});
  tir::BlockRV init = sch.decompose_reduction(block, kt[0]);
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  sch.vectorize(jt[2]);
  sch.unroll(jt[1]);
  sch.unroll(it[1]);
  // Batch loops (if any) and the column tiles are independent tasks.
  std::vector<tir::LoopRV> outer(loops.begin(), loops.begin() + (spatial - 2));
  outer.push_back(jt[0]);
  tir::LoopRV parallel = outer.size() == 1 ? outer[0] : sch.fuse(outer);
  sch.parallel(parallel);
  place_epilogue(sch, args.epilogue_blocks, parallel, lanes);
}

}  // namespace anvil::topi::x86
