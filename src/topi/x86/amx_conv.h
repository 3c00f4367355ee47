// The bfloat16 convolution (nn.contrib_conv2d_NCHWc_bf16, dot_conv_compute's loops) on AMX
// tiles: tdpbf16ps multiplies a tile of `rows` output pixels x 32 input channels (bf16 pairs)
// by a tile of 32 input channels x 16 output channels, the packed weight block as it is
// (OIHW{ib/2}i{ob}o2i puts a channel pair of 16 outputs in one 64-byte row), into a tile of
// rows x 16 float32 sums. A tile row is one pixel's channel block, so the data's blocked layout
// NCHW{ib}c is also the tiles' layout: the rows are pixels a stride apart along the width (or,
// for a dense layer run as a 1x1 convolution, rows of the batch).
//
// Each output block is a register tile of up to 2 x 2 accumulator tiles (two row tiles, two
// 16-channel halves), two data tiles and two weight tiles: the eight tile registers. The
// accumulators stay in their tiles over the whole reduction (input channel blocks x kernel
// taps) and are stored once.
#pragma once

#include <cstdint>

#include "anvil/tir/schedule.h"
#include "anvil/topi/strategy.h"
#include "topi/x86/dot_conv.h"

namespace anvil::topi::x86 {

// Rows of a tile for an output width (or a dense layer's row count): the largest divisor of
// extent up to 16, the rows a tile holds.
int64_t amx_tile_rows(int64_t extent);

// The fewest tile rows worth the tiles: below this, the vdpbf16ps kernels are as fast.
inline constexpr int64_t kMinAmxTileRows = 7;

// The channel blocks the AMX kernel takes: input blocks of 32 or 64 bytes a tile row (16 or 32
// bf16 channels), output blocks of 16 or 32 (one or two 16-channel halves).
inline bool amx_blocks(int64_t in_block_bytes, int64_t out_block) {
  return (in_block_bytes == 32 || in_block_bytes == 64) && (out_block == 16 || out_block == 32);
}

// Schedules dot_conv_compute's convolution of dot's types on AMX tiles; declines (throws Error)
// where the target has no AMX or the blocks or sizes do not suit the tiles.
void schedule_amx_conv(tir::Schedule& sch, const ScheduleArgs& args, const DotProduct& dot);

}  // namespace anvil::topi::x86
