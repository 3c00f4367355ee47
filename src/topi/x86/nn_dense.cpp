// The layout strategy of nn.dense and nn.matmul with a constant 2-D weight on x86: the product
// becomes nn.contrib_dense_pack against the weight packed in blocks of output columns,
// (N / b, K, b), so that one column tile of the schedule (below) reads one contiguous panel
// (a row of the plain (K, N) weight is N floats apart from the next, which for N = 768 or 3072
// maps a whole panel onto a few cache sets). A width that takes no block of four lanes or more
// falls back to a matmul against the transposed weight.
//
// Matrix products on x86: nn.contrib_dense_pack (the form AlterOpLayout gives dense layers and
// matmuls with constant weights: the weight packed at compile time in blocks of output columns,
// so a column tile reads one contiguous panel), nn.matmul, and numpy matmul of two activations
// (the attention products of transformers). A register tile of rows x (vectors x lanes)
// accumulators stays in registers while a slice of the reduction runs; the column tiles (or the
// batch) are the parallel tasks.
#include "topi/x86/nn_dense.h"

#include <algorithm>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

// The output-column block of a packed weight (the column tile of the x86 schedule): up to
// four whole vectors, or up to eight half vectors; 0 when N takes neither.
int64_t column_block(int64_t columns, int lanes) {
  // Half vectors when no full one divides N (1000 classes = 125 x 8): the weight of a
  // classifier is read once per run, and packed it is read as one stream per column tile
  // instead of 40 floats out of every 4000-byte row.
  for (int64_t width = lanes, most = 4; width >= 4 && width >= lanes / 2; width /= 2, most *= 2) {
    if (columns % width != 0) continue;
    int64_t vectors = 1;
    for (int64_t v = most; v > 1; --v)
      if ((columns / width) % v == 0) {
        vectors = v;
        break;
      }
    return vectors * width;
  }
  return 0;
}

// The (K, N) matrix `weight` (or, with `rows_are_columns`, the (N, K) weight of nn.dense) in
// blocks of b output columns: packed[n / b, k, n % b] = element (k, n).
Tensor pack_columns(const Tensor& weight, bool rows_are_columns, int64_t block) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t k_size = rows_are_columns ? s[1] : s[0], n_size = rows_are_columns ? s[0] : s[1];
  Tensor packed = Tensor::empty({n_size / block, k_size, block}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(packed.data());
  for (int64_t k = 0; k < k_size; ++k)
    for (int64_t n = 0; n < n_size; ++n)
      dst[(n / block) * k_size * block + k * block + n % block] =
          rows_are_columns ? src[n * k_size + k] : src[k * n_size + n];
  return packed;
}

std::string check_dense(const ir::CallNode& call, const ir::Type&, int) {
  if (call.args.size() != 2) return "not a two-operand product";
  const auto* w = ir::as<ir::TensorTypeNode>(call.args[1]->checked_type);
  if (!w || !w->shape || w->shape->size() != 2 || !ir::is_float32(call.args[1]->checked_type) ||
      !ir::is_float32(call.args[0]->checked_type))
    return "data and weight must be float32, the weight 2-D";
  if (!(*w->shape)[0].is_static() || !(*w->shape)[1].is_static())
    return "the weight's shape is not static";
  if (call.op()->name == "nn.matmul") {
    const auto* a = dynamic_cast<const ir::MatmulAttrs*>(call.attrs.get());
    if (a && (a->transpose_a || a->transpose_b)) return "transposed operands are not packed";
  }
  return "";
}

LayoutRewrite rewrite_dense(const LayoutArgs& args) {
  const auto* constant = ir::as<ir::ConstantNode>(args.arg(1));
  if (!constant) throw_error("the weight is not a constant (bind the params to pack it)");
  const Tensor& w = constant->data;
  const bool is_dense = args.call.op()->name == "nn.dense";
  auto attrs = ir::make_attrs<ir::DenseAttrs>();
  if (is_dense) {
    const auto& a = args.call.attrs_as<ir::DenseAttrs>();
    attrs->units = a.units;
    attrs->out_dtype = a.out_dtype;
  } else if (args.call.attrs) {
    const auto& a = args.call.attrs_as<ir::MatmulAttrs>();
    attrs->units = a.units;
    attrs->out_dtype = a.out_dtype;
  }
  const int64_t columns = w.shape_vector()[is_dense ? 0 : 1];
  if (int64_t block = column_block(columns, args.vector_lanes)) {
    ir::Expr packed = ir::ConstantNode::make(pack_columns(w, is_dense, block));
    return LayoutRewrite{
        ir::call_op("nn.contrib_dense_pack", {args.arg(0), packed}, ir::Attrs(attrs))};
  }
  if (!is_dense)
    throw_error(columns, " columns take no block of 4 lanes or more: the weight stays as it is");
  auto matmul_attrs = ir::make_attrs<ir::MatmulAttrs>();
  matmul_attrs->units = attrs->units;
  matmul_attrs->out_dtype = attrs->out_dtype;
  // One block of all N columns is the (K, N) transpose.
  const int64_t depth = w.shape_vector()[1];
  ir::Expr transposed =
      ir::ConstantNode::make(pack_columns(w, true, columns).view({depth, columns}));
  return LayoutRewrite{
      ir::call_op("nn.matmul", {args.arg(0), transposed}, ir::Attrs(matmul_attrs))};
}

}  // namespace

DenseKnobs default_dense_knobs(const DenseShape& shape, int vector_bits) {
  const std::optional<int64_t>&rows = shape.rows, &cols = shape.cols, &depth = shape.depth;
  if ((rows && *rows <= 0) || (cols && *cols <= 0) || (depth && *depth <= 0))
    throw_error("dense schedule: an empty row, column or reduction loop");
  const bool packed = shape.packed_block > 0;
  const int64_t full_lanes = vector_bits / 32;
  DenseKnobs knobs;
  knobs.lanes = 0;
  for (int64_t v = full_lanes; cols && v >= 4 && !knobs.lanes; v /= 2)
    if (*cols % v == 0 && (!packed || shape.packed_block % v == 0)) knobs.lanes = v;
  if (packed && !knobs.lanes) throw_error("dense schedule: a column block of ", shape.packed_block);
  // Columns that take no full vector (197 in the attention products of ViT), or a symbolic
  // number of them, are cut into full vectors and a guarded last one; partition_loops gives the
  // guard-free column tiles their own loop, which is why the column loop must then stay
  // serial: the batch loops are the parallel tasks, so this needs a few of them (a symbolic
  // batch, attention's batch * heads, is taken to be enough).
  knobs.column_tail = !knobs.lanes;
  if (knobs.column_tail) {
    if ((cols && *cols < full_lanes) || (!shape.symbolic_batch && shape.batch < 4))
      throw_error("dense schedule: ", cols ? std::to_string(*cols) : "symbolic",
                  " columns take no full vector");
    knobs.lanes = full_lanes;
  }
  // Single-row products are bound by reading the weight; more accumulators hide FMA latency.
  // Rows need not divide: the last, partial row tile is cut off by partition_loops.
  knobs.tile_rows = rows ? std::min<int64_t>(*rows, 4) : 4;
  const int64_t vector_count = cols ? (*cols + knobs.lanes - 1) / knobs.lanes : 4;
  knobs.vectors = packed ? shape.packed_block / knobs.lanes
                  : knobs.column_tail
                      ? std::min<int64_t>(vector_count, 4)
                      : largest_divisor_at_most(*cols / knobs.lanes, knobs.tile_rows == 1 ? 8 : 4);
  // The tile's accumulators fit the register file with room for the weight vectors and the
  // broadcast row value: 12 of AVX2's 16 registers (4 rows x 4 vectors would use all 16 and
  // spill), up to 28 of AVX-512's 32.
  const int64_t accumulators = vector_bits >= 512 ? 28 : 12;
  knobs.tile_rows = std::max<int64_t>(1, std::min(knobs.tile_rows, accumulators / knobs.vectors));
  knobs.k_panel = depth ? largest_divisor_at_most(*depth, 256) : 0;
  return knobs;
}

std::vector<KnobSpace> dense_space(const DenseShape& shape, int vector_bits) {
  const DenseKnobs defaults = default_dense_knobs(shape, vector_bits);
  auto with_default = [](std::vector<int64_t> values, int64_t fallback) {
    if (std::find(values.begin(), values.end(), fallback) == values.end())
      values.push_back(fallback);
    std::sort(values.begin(), values.end());
    return values;
  };
  std::vector<int64_t> rows;
  for (int64_t r : {1, 2, 3, 4, 6, 8})
    if (!shape.rows || r <= *shape.rows) rows.push_back(r);
  std::vector<int64_t> vectors = {defaults.vectors};
  if (shape.packed_block == 0 && !defaults.column_tail && shape.cols)
    vectors = divisors_up_to(*shape.cols / defaults.lanes, 8);
  else if (defaults.column_tail)
    vectors = {1, 2, 3, 4};
  std::vector<int64_t> panels = {0};
  if (shape.depth) {
    panels = {0};  // the whole reduction inside the register tile
    for (int64_t p : {16, 32, 64, 128, 256, 512})
      if (*shape.depth % p == 0) panels.push_back(p);
  }
  return {{"tile_rows", with_default(rows, defaults.tile_rows)},
          {"vectors", with_default(vectors, defaults.vectors)},
          {"k_panel", with_default(panels, defaults.k_panel)}};
}

namespace {

// The product's loops, the leading rows fused into one where the weight is 2-D (or packed),
// and what the heuristic looks at.
struct DenseNest {
  tir::BlockRV block;
  std::vector<tir::LoopRV> loops;  // batch loops, rows, columns, reduction
  size_t spatial = 0;
  bool packed = false;
  DenseShape shape;
};

DenseNest prepare_dense(tir::Schedule& sch, const ScheduleArgs& args) {
  if (const auto* attrs = dynamic_cast<const ir::MatmulAttrs*>(args.anchor.attrs.get()))
    if (attrs->transpose_a || attrs->transpose_b)
      throw_error("dense schedule: transposed operands are read with strides");
  tir::BlockRV block = sch.get_block(args.anchor_block);
  const tir::Block node = sch.get(block);
  size_t spatial = 0, reduce = 0;
  for (const tir::IterVar& iv : node->iter_vars)
    (iv.kind == tir::IterKind::Reduce ? reduce : spatial) += 1;
  std::vector<tir::LoopRV> loops = sch.get_loops(block);
  if (reduce != 1 || spatial < 2 || loops.size() != spatial + 1)
    throw_error("dense schedule: expected spatial loops and one reduction loop");
  // With a 2-D weight every leading dim of the data is a row of one matrix product ((197, 1,
  // 768) x (768, N) is 197 rows, not 197 products of one row): one row loop, tiled as a whole.
  const auto* weight = ir::as<ir::TensorTypeNode>(args.anchor.args.at(1)->checked_type);
  const bool packed = args.anchor.op() && args.anchor.op()->name == "nn.contrib_dense_pack";
  // The packed weight's column block fixes the column tile: one tile reads one panel.
  int64_t packed_block = 0;
  if (packed) {
    if (!weight || !weight->static_shape() || weight->shape->size() != 3)
      throw_error("dense schedule: the packed weight has no static (N / b, K, b) shape");
    packed_block = (*weight->static_shape())[2];
  }
  if (spatial > 2 && weight && weight->shape && (weight->shape->size() == 2 || packed)) {
    std::vector<tir::LoopRV> leading(loops.begin(), loops.begin() + (spatial - 1));
    tir::LoopRV rows_loop = sch.fuse(leading);
    loops = {rows_loop, loops[spatial - 1], loops[spatial]};
    spatial = 2;
  }
  // Any of the rows, columns and reduction may be a size variable (a dynamic batch or
  // sequence; attention's scores have columns and rows of the sequence): the tiles over a
  // symbolic extent are cut at run time, the last one guarded, and a symbolic reduction runs
  // whole inside the register tile.
  DenseNest nest{block, loops, spatial, packed, {}};
  DenseShape& shape = nest.shape;
  shape.rows = sch.loop_extent(loops[spatial - 2]);
  shape.cols = sch.loop_extent(loops[spatial - 1]);
  shape.depth = sch.loop_extent(loops[spatial]);
  shape.packed_block = packed_block;
  for (size_t d = 0; d + 2 < spatial; ++d) {
    std::optional<int64_t> extent = sch.loop_extent(loops[d]);
    shape.symbolic_batch |= !extent;
    shape.batch *= extent.value_or(1);
  }
  return nest;
}

}  // namespace

std::vector<KnobSpace> dense_knob_space(const tir::Schedule& sch, const ScheduleArgs& args) {
  tir::Schedule copy = sch;
  return dense_space(prepare_dense(copy, args).shape, args.vector_bits);
}

void schedule_dense(tir::Schedule& sch, const ScheduleArgs& args) {
  DenseNest nest = prepare_dense(sch, args);
  const DenseShape& shape = nest.shape;
  const std::vector<tir::LoopRV>& loops = nest.loops;
  const size_t spatial = nest.spatial;
  const bool packed = nest.packed;
  const int64_t packed_block = shape.packed_block;
  const tir::BlockRV block = nest.block;
  tir::LoopRV i = loops[spatial - 2], j = loops[spatial - 1], k = loops[spatial];
  DenseKnobs knobs = default_dense_knobs(shape, args.vector_bits);
  apply_config(
      args, [&] { return dense_space(shape, args.vector_bits); }, "x86.dense",
      {{"tile_rows", &knobs.tile_rows}, {"vectors", &knobs.vectors}, {"k_panel", &knobs.k_panel}});
  const int64_t lanes = knobs.lanes, vectors = knobs.vectors, tile_rows = knobs.tile_rows;
  const bool column_tail = knobs.column_tail;
  if (packed && (knobs.column_tail || packed_block != vectors * lanes))
    throw_error("dense schedule: the column tile must be the packed block of ", packed_block);

  std::vector<tir::LoopRV> jt =
      sch.split(j, {nullptr, tir::make_int(vectors), tir::make_int(lanes)});
  std::vector<tir::LoopRV> it = sch.split(i, {nullptr, tir::make_int(tile_rows)});
  tir::BlockRV init;
  if (knobs.k_panel > 0) {
    // A panel of the reduction at a time keeps the columns' slice of the weight in cache.
    std::vector<tir::LoopRV> kt = sch.split(k, {nullptr, tir::make_int(knobs.k_panel)});
    sch.reorder({jt[0], kt[0], it[0], kt[1], it[1], jt[1], jt[2]});
    init = sch.decompose_reduction(block, kt[0]);
  } else {
    sch.reorder({jt[0], it[0], k, it[1], jt[1], jt[2]});
    init = sch.decompose_reduction(block, k);
  }
  std::vector<tir::LoopRV> init_loops = sch.get_loops(init);
  sch.vectorize(init_loops.back());
  sch.vectorize(jt[2]);
  sch.unroll(jt[1]);
  sch.unroll(it[1]);
  // Batch loops (if any) and the column tiles are independent tasks.
  std::vector<tir::LoopRV> outer(loops.begin(), loops.begin() + (spatial - 2));
  if (!column_tail) outer.push_back(jt[0]);
  tir::LoopRV parallel = outer.size() == 1 ? outer[0] : sch.fuse(outer);
  sch.parallel(parallel);
  place_epilogue(sch, args.epilogue_blocks, parallel, lanes);
}

void register_nn_dense_strategies() {
  const std::vector<DataType> f32 = {DataType::float32()};
  // A dense layer or a matmul with a constant weight packs it; the packed product, and matmuls
  // of two activations, take the register-tiled schedule.
  for (const char* op : {"nn.dense", "nn.matmul"})
    register_strategy(op, "x86",
                      {.name = "x86.dense_pack",
                       .precisions = f32,
                       .layout_role = LayoutRole::Anchor,
                       .layout = {check_dense, rewrite_dense}});
  for (const char* op : {"nn.matmul", "matmul"})
    register_strategy(op, "x86",
                      {.name = "x86.dense",
                       .precisions = f32,
                       .schedule = schedule_dense,
                       .space = dense_knob_space});
  register_strategy("nn.contrib_dense_pack", "x86",
                    {.name = "x86.dense_pack",
                     .precisions = f32,
                     .schedule = schedule_dense,
                     .space = dense_knob_space});
  // A per-channel bias is added in the blocked layout of its data.
  register_strategy(
      "nn.bias_add", "x86",
      {.name = "x86.bias_add", .layout_role = LayoutRole::Follows, .follow = FollowRule::BiasAdd});
}

}  // namespace anvil::topi::x86
