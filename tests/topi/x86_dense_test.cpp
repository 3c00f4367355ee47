// The x86 schedule of nn.matmul (the form AlterOpLayout gives dense layers with constant
// weights), applied directly and compared with the reference interpreter, on shapes that
// pick different vector widths, row tiles and epilogues.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

TEST(X86DenseSchedule, SingleRowWithBias) {
  // 40 columns: 8 lanes, 5 vectors per tile.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 96), float32],
      %w: Tensor[(96, 40), float32], %b: Tensor[(40), float32]) {
    %0 = nn.matmul(%x, %w);
    add(%0, %b)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, RowTilesAndRelu) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(6, 300), float32],
      %w: Tensor[(300, 64), float32]) {
    %0 = nn.matmul(%x, %w);
    nn.relu(%0)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, BatchedLeftOperand) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(2, 3, 16), float32],
      %w: Tensor[(16, 32), float32]) {
    nn.matmul(%x, %w)
  })",
                               "nn.matmul");
}

TEST(X86DenseSchedule, RefusesColumnsWithoutFullVectors) {
  // 6 columns fit no vector of 4 or more lanes: the schedule declines and the group scheduler
  // falls back to the generic schedule, which check_group runs.
  std::vector<Tensor> inputs, expected;
  EXPECT_THROW(x86_test::schedule_group_with(R"(fn (%x: Tensor[(2, 5), float32],
      %w: Tensor[(5, 6), float32]) { nn.matmul(%x, %w) })",
                                             "nn.matmul", inputs, expected),
               Error);
  topi_test::check_group(R"(fn (%x: Tensor[(2, 5), float32], %w: Tensor[(5, 6), float32]) {
    nn.matmul(%x, %w)
  })",
                         {}, {1e-5, 1e-5});
}

}  // namespace
}  // namespace anvil
