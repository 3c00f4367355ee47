// The bfloat16 convolution on AMX tiles (see amx_conv.h): the micro-kernel of one output
// block as a tensor intrinsic, and the schedule around it.
#include "topi/x86/amx_conv.h"

#include <string>
#include <vector>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/nn_geometry.h"
#include "topi/x86/dot_conv.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {

using tir::PrimExpr;

int64_t amx_tile_rows(int64_t extent) { return largest_divisor_at_most(extent, 16); }

namespace {

// One output block's micro-kernel: tm row tiles x tn 16-channel halves of accumulators, over
// in_blocks input channel blocks of ib channels and the kernel's taps.
struct AmxShape {
  const DotProduct* dot = nullptr;  // element types and the depth of one product step
  int64_t tm = 1, tn = 1, rows = 16;
  bool rows_mode = false;  // the rows are the batch (a dense layer), not pixels of a row
  bool along_h = false;    // the row tiles are consecutive output rows (else along the width)
  int64_t in_blocks = 1, ib = 32, kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;

  int64_t out_block() const { return 16 * tn; }
  // Output pixels along the width that one block covers.
  int64_t span() const { return rows_mode ? 1 : along_h ? rows : tm * rows; }

  int64_t depth() const { return dot->depth; }
  int64_t data_bytes() const { return dot->data.bits / 8; }
  // The tile product of the dot's types: tdpbf16ps, or tdpbusd for uint8 x int8.
  const char* instruction() const {
    return dot->data == DataType::bfloat16() ? "amx_dpbf16ps" : "amx_dpbusd";
  }

  std::string name() const {
    std::string n = std::string("x86.") + instruction() + "_conv";
    for (int64_t v : {tm, tn, rows, int64_t(rows_mode), int64_t(along_h), in_blocks, ib, kernel_h,
                      kernel_w, stride_h, stride_w, dilation_h, dilation_w})
      n += "_" + std::to_string(v);
    return n;
  }
};

// Tiles of the register file: accumulators 0-3, data 4-5, weights 6-7.
int64_t acc_tile(const AmxShape& s, int64_t i, int64_t j) { return i * s.tn + j; }
constexpr int64_t kDataTile = 4, kWeightTile = 6;

// The description's and implementation's parameter buffers: data (the padded input), weight,
// output, with the shapes one output block touches.
std::vector<tir::Buffer> amx_buffers(const AmxShape& s) {
  auto ints = [](std::vector<int64_t> v) {
    std::vector<PrimExpr> out;
    for (int64_t x : v) out.push_back(tir::make_int(x));
    return out;
  };
  const int64_t batch = s.rows_mode ? s.tm * s.rows : 1;
  const int64_t in_h =
      (s.along_h ? (s.tm - 1) * s.stride_h : 0) + (s.kernel_h - 1) * s.dilation_h + 1;
  const int64_t in_w = (s.span() - 1) * s.stride_w + (s.kernel_w - 1) * s.dilation_w + 1;
  const int64_t depth = s.depth();
  return {intrin_buffer("A", s.dot->data, ints({batch, s.in_blocks, in_h, in_w, s.ib})),
          intrin_buffer(
              "B", s.dot->weight,
              ints({1, s.in_blocks, s.kernel_h, s.kernel_w, s.ib / depth, depth * s.out_block()})),
          intrin_buffer("C", s.dot->accumulator,
                        ints({batch, 1, s.along_h ? s.tm : 1, s.span(), s.out_block()}))};
}

// Where row tile i of the output starts (n, h, w), and of the data for tap (kh, kw).
struct RowTileIndex {
  PrimExpr n, h, w;
};
RowTileIndex output_row(const AmxShape& s, const PrimExpr& i, const PrimExpr& r) {
  const PrimExpr zero = tir::make_int(0);
  if (s.rows_mode) return {i * s.rows + r, zero, zero};
  if (s.along_h) return {zero, i, r};
  return {zero, zero, i * s.rows + r};
}
RowTileIndex data_row(const AmxShape& s, const PrimExpr& i, const PrimExpr& r, const PrimExpr& kh,
                      const PrimExpr& kw) {
  RowTileIndex out = output_row(s, i, r);
  return {out.n, out.h * s.stride_h + kh * s.dilation_h, out.w * s.stride_w + kw * s.dilation_w};
}

// C[block] += sum over ko, kh, kw, k, l of A[.., ko, .., 2k + l] * B[0, ko, kh, kw, k, 2o + l],
// as the convolution's loops nest below the block's first row-tile loop.
tir::PrimFunc amx_description(const AmxShape& s) {
  std::vector<tir::Buffer> buffers = amx_buffers(s);
  const tir::Buffer &a = buffers[0], &b = buffers[1], &c = buffers[2];
  struct Axis {
    const char* name;
    int64_t extent;
    tir::IterKind kind;
  };
  const std::vector<Axis> axes = {
      {"i", s.tm, tir::IterKind::Spatial},        {"j", s.tn, tir::IterKind::Spatial},
      {"r", s.rows, tir::IterKind::Spatial},      {"o", 16, tir::IterKind::Spatial},
      {"ko", s.in_blocks, tir::IterKind::Reduce}, {"kh", s.kernel_h, tir::IterKind::Reduce},
      {"kw", s.kernel_w, tir::IterKind::Reduce},  {"k", s.ib / s.depth(), tir::IterKind::Reduce},
      {"l", s.depth(), tir::IterKind::Reduce}};
  std::vector<tir::Var> loop_vars;
  std::vector<tir::IterVar> iters;
  std::vector<PrimExpr> bindings;
  for (const Axis& axis : axes) {
    loop_vars.push_back(tir::VarNode::make(axis.name));
    iters.push_back(tir::IterVar{tir::VarNode::make(std::string("v") + axis.name),
                                 tir::Range{tir::make_int(0), tir::make_int(axis.extent)},
                                 axis.kind});
    bindings.push_back(loop_vars.back());
  }
  auto v = [&](size_t k) { return PrimExpr(iters[k].var); };
  PrimExpr channel = v(1) * 16 + v(3);
  RowTileIndex out = output_row(s, v(0), v(2));
  RowTileIndex in = data_row(s, v(0), v(2), v(5), v(6));
  std::vector<PrimExpr> c_index = {out.n, tir::make_int(0), out.h, out.w, channel};
  const DataType acc = s.dot->accumulator;
  const int64_t depth = s.depth();
  PrimExpr product =
      tir::cast(acc, tir::load(a, {in.n, v(4), in.h, in.w, v(7) * depth + v(8)})) *
      tir::cast(acc,
                tir::load(b, {tir::make_int(0), v(4), v(5), v(6), v(7), channel * depth + v(8)}));
  tir::Stmt update = tir::store(c, tir::load(c, c_index) + product, c_index);
  tir::Block block = tir::BlockNode::make(
      iters, {tir::BufferRegion::full(c), tir::BufferRegion::full(a), tir::BufferRegion::full(b)},
      {tir::BufferRegion::full(c)}, "amx_block", update);
  tir::Stmt nest = tir::BlockRealizeNode::make(bindings, tir::const_true(), block);
  for (size_t k = axes.size(); k-- > 0;)
    nest = tir::for_loop(loop_vars[k], 0, axes[k].extent, nest);
  return intrin_func(buffers, nest);
}

// The same block on the tiles, from zero (the intrinsic subsumes the block's init): zero the
// accumulators, then per input block and tap load the data and weight tiles and multiply every
// pair, then store the accumulators.
tir::PrimFunc amx_implementation(const AmxShape& s) {
  std::vector<tir::Buffer> buffers = amx_buffers(s);
  const tir::Buffer &a = buffers[0], &b = buffers[1], &c = buffers[2];
  auto address = [](const tir::Buffer& buffer, std::vector<PrimExpr> index) {
    return tir::call_intrin(DataType::handle(), "address_of",
                            {tir::load(buffer, std::move(index))});
  };
  auto tile_op = [](const char* op, int64_t tile, int64_t rows, int64_t bytes, PrimExpr at,
                    PrimExpr stride) {
    return tir::evaluate(
        tir::call_intrin(DataType::int32(), op,
                         {tir::make_int(tile), tir::make_int(rows), tir::make_int(bytes),
                          std::move(at), std::move(stride)}));
  };
  // Row strides in bytes: along the batch for dense rows, else along the width (a convolution's
  // stride apart for the data).
  PrimExpr c_stride = (s.rows_mode ? c->strides[0] : c->strides[3]) * 4;
  PrimExpr a_stride = (s.rows_mode ? a->strides[0] : a->strides[3] * s.stride_w) * s.data_bytes();
  PrimExpr b_stride = b->strides[4] * (s.dot->weight.bits / 8);
  const PrimExpr zero = tir::make_int(0);

  std::vector<tir::Stmt> body, stores;
  for (int64_t i = 0; i < s.tm; ++i)
    for (int64_t j = 0; j < s.tn; ++j) {
      RowTileIndex out = output_row(s, tir::make_int(i), zero);
      body.push_back(tir::evaluate(tir::call_intrin(
          DataType::int32(), "amx_tile_zero",
          {tir::make_int(acc_tile(s, i, j)), tir::make_int(s.rows), tir::make_int(64)})));
      stores.push_back(tile_op("amx_tile_store", acc_tile(s, i, j), s.rows, 64,
                               address(c, {out.n, zero, out.h, out.w, tir::make_int(16 * j)}),
                               c_stride));
    }
  tir::Var ko = tir::VarNode::make("ko"), kh = tir::VarNode::make("kh"),
           kw = tir::VarNode::make("kw");
  std::vector<tir::Stmt> step;
  for (int64_t i = 0; i < s.tm; ++i) {
    RowTileIndex in = data_row(s, tir::make_int(i), zero, kh, kw);
    step.push_back(tile_op("amx_tile_load", kDataTile + i, s.rows, s.ib * s.data_bytes(),
                           address(a, {in.n, ko, in.h, in.w, zero}), a_stride));
  }
  for (int64_t j = 0; j < s.tn; ++j)
    step.push_back(tile_op("amx_tile_load", kWeightTile + j, s.ib / s.depth(), 64,
                           address(b, {zero, ko, kh, kw, zero, tir::make_int(16 * s.depth() * j)}),
                           b_stride));
  for (int64_t i = 0; i < s.tm; ++i)
    for (int64_t j = 0; j < s.tn; ++j)
      step.push_back(tir::evaluate(
          tir::call_intrin(DataType::int32(), s.instruction(),
                           {tir::make_int(acc_tile(s, i, j)), tir::make_int(kDataTile + i),
                            tir::make_int(kWeightTile + j)})));
  tir::Stmt reduction = tir::seq_stmt(step);
  reduction = tir::for_loop(kw, 0, s.kernel_w, reduction);
  reduction = tir::for_loop(kh, 0, s.kernel_h, reduction);
  reduction = tir::for_loop(ko, 0, s.in_blocks, reduction);
  body.push_back(reduction);
  body.insert(body.end(), stores.begin(), stores.end());
  return intrin_func(buffers, tir::seq_stmt(body));
}

}  // namespace

void schedule_amx_conv(tir::Schedule& sch, const ScheduleArgs& args, const DotProduct& dot) {
  if (!args.amx_bf16) throw_error("the target has no AMX tiles (amx-tile, amx-bf16)");
  tir::BlockRV conv = sch.get_block(args.anchor_block);
  std::vector<tir::LoopRV> loops = sch.get_loops(conv);
  if (loops.size() != 10)
    throw_error("AMX conv2d schedule: expected 10 loops, found ", loops.size());
  std::vector<int64_t> extent(10, 0);
  for (size_t k = 1; k < 10; ++k) extent[k] = sch.loop_extent(loops[k]).value_or(0);
  const int64_t batch = sch.loop_extent(loops[0]).value_or(0);
  const int64_t out_h = extent[2], out_w = extent[3], ob = extent[4];
  if (!out_h || !out_w || extent[9] != dot.depth)
    throw_error("AMX conv2d schedule: needs a static output size and steps of ", dot.depth,
                " channels");
  AmxShape s;
  s.dot = &dot;
  s.ib = dot.depth * extent[8];
  if (!amx_blocks(s.ib * (dot.data.bits / 8), ob))
    throw_error("AMX conv2d schedule: blocks of ", s.ib, " input and ", ob,
                " output channels; the tiles take rows of 32 or 64 bytes and 16 or 32 outputs");
  s.tn = ob / 16;
  s.in_blocks = extent[5];
  s.kernel_h = extent[6];
  s.kernel_w = extent[7];
  const auto& attrs = args.anchor.attrs_as<ir::Conv2DAttrs>();
  std::vector<int64_t> strides = ir::nn::spatial_attr(attrs.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = ir::nn::spatial_attr(attrs.dilation, 2, "dilation", 1);
  s.stride_h = strides[0];
  s.stride_w = strides[1];
  s.dilation_h = dilation[0];
  s.dilation_w = dilation[1];
  s.rows_mode = out_w == 1 && out_h == 1 && batch > 1;
  const int64_t tiled = s.rows_mode ? batch : out_w;
  s.rows = amx_tile_rows(tiled);
  if (s.rows < std::min<int64_t>(kMinAmxTileRows, tiled) || s.rows < 1)
    throw_error("AMX conv2d schedule: ", tiled, (s.rows_mode ? " rows" : " pixels a row"),
                " make tiles of ", s.rows, " rows; the vdpbf16ps kernel is as fast");
  // Two row tiles where the tiled dimension (or else the output height) splits in two.
  if ((tiled / s.rows) % 2 == 0) {
    s.tm = 2;
  } else if (!s.rows_mode && out_h % 2 == 0) {
    s.tm = 2;
    s.along_h = true;
  }

  // n, oc_chunk, oh, ow, oc_block | ic_outer, kh, kw, step, lane: the row tiles (i), the
  // channel halves (j), the tile rows (r) and the 16 channels (o) go under the block loops.
  tir::LoopRV n_outer = loops[0], h_outer = loops[2], w_outer, tile_i, tile_r;
  if (s.rows_mode) {
    std::vector<tir::LoopRV> split =
        sch.split(loops[0], {nullptr, tir::make_int(s.tm), tir::make_int(s.rows)});
    n_outer = split[0];
    tile_i = split[1];
    tile_r = split[2];
    w_outer = loops[3];
  } else {
    std::vector<tir::LoopRV> w_split =
        s.along_h ? sch.split(loops[3], {nullptr, tir::make_int(s.rows)})
                  : sch.split(loops[3], {nullptr, tir::make_int(s.tm), tir::make_int(s.rows)});
    w_outer = w_split[0];
    tile_r = w_split.back();
    if (s.along_h) {
      std::vector<tir::LoopRV> h_split = sch.split(loops[2], {nullptr, tir::make_int(s.tm)});
      h_outer = h_split[0];
      tile_i = h_split[1];
    } else {
      tile_i = w_split[1];
    }
  }
  std::vector<tir::LoopRV> halves = sch.split(loops[4], {tir::make_int(s.tn), tir::make_int(16)});
  sch.reorder({n_outer, loops[1], h_outer, w_outer, tile_i, halves[0], tile_r, halves[1], loops[5],
               loops[6], loops[7], loops[8], loops[9]});
  sch.parallel(sch.fuse({n_outer, loops[1], h_outer}));
  schedule_padding(sch, args.vector_bits / 16);
  place_epilogue(sch, args.epilogue_blocks, w_outer, ob);
  const std::string name = s.name();
  tir::register_tensor_intrin(name, {amx_description(s), amx_implementation(s), true});
  sch.tensorize(tile_i, name);
}

}  // namespace anvil::topi::x86
