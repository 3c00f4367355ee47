// The three matrices of Winograd F(4x4, 3x3) with interpolation points 0, 1, -1, 2, -2 and
// infinity: Y = A^T [(G g G^T) . (B^T d B)] A for a 6x6 input patch d and a 3x3 kernel g gives
// the 4x4 output tile. One definition for the op's reference kernel, the layout pass that
// transforms weights at compile time, and the x86 compute (docs/winograd.md).
#pragma once

#include <array>
#include <cstdint>

#include "anvil/runtime/tensor.h"

namespace anvil::winograd {

inline constexpr int kOutputTile = 4;  // m: outputs per tile side
inline constexpr int kPatch = 6;       // m + r - 1: inputs per patch side

// B^T (6 x 6): V = B^T d B. Integer entries, so the compiled input transform is adds and a few
// multiplies by 2, 4 and 5.
inline constexpr std::array<std::array<int, 6>, 6> kInputTransform = {{{4, 0, -5, 0, 1, 0},
                                                                       {0, -4, -4, 1, 1, 0},
                                                                       {0, 4, -4, -1, 1, 0},
                                                                       {0, -2, -1, 2, 1, 0},
                                                                       {0, 2, -1, -2, 1, 0},
                                                                       {0, 4, 0, -5, 0, 1}}};

// G (6 x 3): U = G g G^T, computed once per weight at compile time.
inline constexpr std::array<std::array<double, 3>, 6> kWeightTransform = {
    {{1.0 / 4, 0, 0},
     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
     {1.0 / 24, 1.0 / 12, 1.0 / 6},
     {1.0 / 24, -1.0 / 12, 1.0 / 6},
     {0, 0, 1}}};

// A^T (4 x 6): Y = A^T M A.
inline constexpr std::array<std::array<int, 6>, 4> kOutputTransform = {
    {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};

// The op's weight for a float32 3x3 convolution weight: U = G g G^T for every (output, input)
// channel pair, laid out (6, 6, O/ob, I, ob), U[x][y][o/ob][i][o%ob] = (G g[o][i] G^T)[x][y].
// `weight` is OIHW (O, I, 3, 3) with `out_block` = ob, or the blocked OIHW{ib}i{ob}o
// (O/ob, I/ib, 3, 3, ib, ob) that AlterOpLayout packs, whose own ob is used (out_block 0).
Tensor transform_weight(const Tensor& weight, int64_t out_block = 0);

}  // namespace anvil::winograd
