// The blocked convolution nn.contrib_conv2d_NCHWc: its compute against the reference kernel
// (naive and under the group scheduler), and the x86 schedule applied directly, with fused
// epilogues, on shapes whose widths exercise the register-tile choice.
#include <gtest/gtest.h>

#include "topi/topi_test_util.h"
#include "topi/x86/nn_conv.h"
#include "topi/x86/x86_util.h"
#include "topi/x86_schedule_check.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;

ir::Attrs conv_attrs(std::vector<int64_t> padding, std::vector<int64_t> strides,
                     std::vector<int64_t> dilation, int64_t groups, const std::string& data_layout,
                     const std::string& kernel_layout, const std::string& out_layout = "") {
  return attrs("nn.contrib_conv2d_NCHWc", {{"padding", padding},
                                           {"strides", strides},
                                           {"dilation", dilation},
                                           {"groups", groups},
                                           {"data_layout", data_layout},
                                           {"kernel_layout", kernel_layout},
                                           {"out_layout", out_layout}});
}

TEST(X86Conv2dNCHWc, PaddedStridedOddShape) {
  Tensor data = random_tensor({1, 3, 9, 11, 4}, DataType::float32(), 1);
  Tensor weight = random_tensor({2, 3, 3, 3, 4, 8}, DataType::float32(), 2);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({1, 2, 0, 1}, {2, 1}, {1, 1}, 1, "NCHW4c", "OIHW4i8o"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, DilatedBatchOfTwo) {
  Tensor data = random_tensor({2, 2, 10, 7, 8}, DataType::float32(), 3);
  Tensor weight = random_tensor({1, 2, 3, 2, 8, 16}, DataType::float32(), 4);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({2, 1, 2, 1}, {1, 1}, {2, 3}, 1, "NCHW8c", "OIHW8i16o"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, OutputBlockDiffersFromKernelBlock) {
  Tensor data = random_tensor({1, 1, 5, 6, 16}, DataType::float32(), 5);
  Tensor weight = random_tensor({4, 1, 1, 1, 16, 4}, DataType::float32(), 6);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({0}, {1, 1}, {1, 1}, 1, "NCHW16c", "OIHW16i4o", "NCHW8c"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, HalfVectorBlocksTileMoreChannels) {
  // 40 output channels in blocks of 8 (half an AVX-512 vector): the tile takes 5 blocks x 4
  // pixels, and 13 columns leave a guarded tail of one pixel. Applied directly, so a refusal
  // fails instead of falling back to the generic schedule.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 2, 13, 13, 16), float32],
      %w: Tensor[(5, 2, 1, 1, 16, 8), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, channels=40, kernel_size=[1, 1], data_layout="NCHW16c",
                                 kernel_layout="OIHW16i8o", out_layout="NCHW8c");
    nn.relu(%0)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dNCHWc, Grouped) {
  // 8 input channels in 2 groups of 4; the data block (8) spans both groups.
  Tensor data = random_tensor({1, 1, 6, 5, 8}, DataType::float32(), 7);
  Tensor weight = random_tensor({2, 2, 3, 3, 2, 4}, DataType::float32(), 8);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({1}, {1, 1}, {1, 1}, 2, "NCHW8c", "OIHW2i4o"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, DepthwiseStrided) {
  // 32 channels, one per group; the output block equals the data block.
  Tensor data = random_tensor({1, 4, 9, 9, 8}, DataType::float32(), 9);
  Tensor weight = random_tensor({4, 1, 3, 3, 1, 8}, DataType::float32(), 10);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({1}, {2, 2}, {1, 1}, 32, "NCHW8c", "OIHW1i8o"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, BlockWiderThanVectorTakesGenericSchedule) {
  // 32 output channels per block exceed one 16-lane vector: the x86 schedule declines and the
  // generic schedule handles the padded stage and the convolution.
  Tensor data = random_tensor({1, 1, 5, 5, 4}, DataType::float32(), 11);
  Tensor weight = random_tensor({1, 1, 3, 3, 4, 32}, DataType::float32(), 12);
  std::vector<Tensor> inputs, expected;
  EXPECT_THROW(x86_test::schedule_group_with(R"(fn (%x: Tensor[(1, 1, 5, 5, 4), float32],
      %w: Tensor[(1, 1, 3, 3, 4, 32), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW4c",
                            kernel_layout="OIHW4i32o", out_layout="NCHW32c")
  })",
                                             "nn.contrib_conv2d_NCHWc", inputs, expected),
               Error);
  check_op("nn.contrib_conv2d_NCHWc", {data, weight},
           conv_attrs({1}, {1, 1}, {1, 1}, 1, "NCHW4c", "OIHW4i32o", "NCHW32c"), {1e-4, 1e-4});
}

TEST(X86Conv2dNCHWc, DeclinedStrategyIsRecordedOnTheKernel) {
  // The same group through the group scheduler: the kernel says that the auto-scheduler ran
  // and why the x86 strategy declined.
  ir::Function fn = topi_test::primitive_function(R"(fn (%x: Tensor[(1, 1, 5, 5, 4), float32],
      %w: Tensor[(1, 1, 3, 3, 4, 32), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW4c",
                            kernel_layout="OIHW4i32o", out_layout="NCHW32c")
  })");
  tir::PrimFunc func = lower::lower_primitive(fn, "kernel", {});
  const ir::AttrValue* schedule = func->func_attrs.find(topi::kScheduleAttr);
  const ir::AttrValue* declined = func->func_attrs.find(topi::kScheduleDeclinedAttr);
  ASSERT_TRUE(schedule && declined);
  EXPECT_EQ(std::get<std::string>(*schedule), "auto");
  EXPECT_NE(std::get<std::string>(*declined).find("x86.conv2d_nchwc: "), std::string::npos);
  EXPECT_NE(std::get<std::string>(*declined).find("oc block 32 does not fit one vector"),
            std::string::npos)
      << std::get<std::string>(*declined);
}

TEST(X86Conv2dNCHWc, AcceptedStrategyIsRecordedOnTheKernel) {
  ir::Function fn = topi_test::primitive_function(R"(fn (%x: Tensor[(1, 1, 5, 5, 16), float32],
      %w: Tensor[(1, 1, 3, 3, 16, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW16c",
                            kernel_layout="OIHW16i16o")
  })");
  tir::PrimFunc func = lower::lower_primitive(fn, "kernel", {});
  const ir::AttrValue* schedule = func->func_attrs.find(topi::kScheduleAttr);
  ASSERT_TRUE(schedule);
  EXPECT_EQ(std::get<std::string>(*schedule), "x86.conv2d_nchwc");
  EXPECT_EQ(func->func_attrs.find(topi::kScheduleDeclinedAttr), nullptr);
}

// Grouped convolutions whose groups are whole blocks: two blocks per group share a tile; one
// block per group takes a longer row of pixels. Applied directly, so a refusal fails.
TEST(X86Conv2dSchedule, GroupsOfTwoBlocks) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 4, 9, 9, 16), float32],
      %w: Tensor[(4, 2, 3, 3, 16, 16), float32], %b: Tensor[(4, 1, 1, 16), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], groups=2,
                                 data_layout="NCHW16c", kernel_layout="OIHW16i16o");
    %1 = add(%0, %b);
    nn.relu(%1)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dSchedule, GroupsOfOneBlockStrided) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 3, 15, 29, 8), float32],
      %w: Tensor[(3, 1, 3, 3, 8, 8), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[1, 2], padding=[1, 1, 1, 1], groups=3,
                                 data_layout="NCHW8c", kernel_layout="OIHW8i8o");
    nn.relu(%0)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

// The heuristic's picks: grouped tiles stay inside a group; the input channels unroll by 4, by 2
// under a tile of more than 16 accumulators.
TEST(X86Conv2dKnobs, HeuristicPicks) {
  topi::x86::Conv2dNCHWcShape shape;
  shape.oc_chunks = 32, shape.out_width = 28, shape.oc_bn = 16, shape.ic_bn = 16;
  shape.groups = 32, shape.in_per_group = 16;  // ResNeXt: one block per group
  topi::x86::Conv2dNCHWcKnobs one = topi::x86::default_conv2d_nchwc_knobs(shape, 512);
  EXPECT_EQ(one.oc_tile, 1);
  EXPECT_EQ(one.ow_block, 14);
  EXPECT_EQ(one.ic_unroll, 4);
  shape.oc_chunks = 64, shape.in_per_group = 32;  // two blocks per group
  topi::x86::Conv2dNCHWcKnobs two = topi::x86::default_conv2d_nchwc_knobs(shape, 512);
  EXPECT_EQ(two.oc_tile, 2);
  EXPECT_EQ(two.ow_block, 7);
  shape.groups = 1;  // dense: any two blocks
  EXPECT_EQ(topi::x86::default_conv2d_nchwc_knobs(shape, 512).oc_tile, 2);
  shape.oc_bn = 8, shape.ic_bn = 8, shape.oc_chunks = 125;  // 5 blocks x 5 pixels: unroll 2
  shape.out_width = 13;
  topi::x86::Conv2dNCHWcKnobs narrow = topi::x86::default_conv2d_nchwc_knobs(shape, 512);
  EXPECT_EQ(narrow.oc_tile * narrow.ow_block, 25);
  EXPECT_EQ(narrow.ic_unroll, 2);
  shape.ic_bn = 1;  // the stem's 3 channels
  EXPECT_EQ(topi::x86::default_conv2d_nchwc_knobs(shape, 512).ic_unroll, 1);
  shape.oc_bn = 16, shape.ic_bn = 16, shape.oc_chunks = 64, shape.out_width = 28;
  shape.oc_bn = 32;
  EXPECT_THROW(topi::x86::default_conv2d_nchwc_knobs(shape, 512), Error);
}

TEST(X86Conv2dNCHWc, RejectsUnblockedLayout) {
  // The type relation accepts only blocked layouts, so the compute is called directly.
  te::Tensor data = te::placeholder({1, 1, 4, 4, 8}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({1, 1, 1, 1, 8, 8}, DataType::float32(), "weight");
  ir::Attrs a = conv_attrs({0}, {1, 1}, {1, 1}, 1, "NCHW8c", "OIHW8o8i");
  ir::Call call = ir::call_op("nn.contrib_conv2d_NCHWc", {}, a);
  std::vector<te::Tensor> inputs = {data, weight};
  ir::Type out = ir::TensorTypeNode::make({1, 1, 4, 4, 8}, DataType::float32());
  topi::ComputeArgs args{*call, inputs, out};
  try {
    (*topi::find_compute("nn.contrib_conv2d_NCHWc"))(args);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_layout \"OIHW8o8i\""), std::string::npos)
        << e.what();
  }
}

// ResNet-like shapes scheduled by the x86 schedule itself, with the epilogues the fusion pass
// gives it: bias (per-channel constant in the blocked layout), relu, residual add.
TEST(X86Conv2dSchedule, Conv3x3BiasRelu) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 2, 14, 14, 16), float32],
      %w: Tensor[(2, 2, 3, 3, 16, 16), float32], %b: Tensor[(2, 1, 1, 16), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW16c",
                                 kernel_layout="OIHW16i16o");
    %1 = add(%0, %b);
    nn.relu(%1)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dSchedule, Conv1x1ResidualAddRelu) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 4, 7, 7, 16), float32],
      %w: Tensor[(3, 4, 1, 1, 16, 16), float32], %r: Tensor[(1, 3, 7, 7, 16), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, data_layout="NCHW16c", kernel_layout="OIHW16i16o");
    %1 = add(%0, %r);
    nn.relu(%1)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dSchedule, StridedFirstLayerWithThreeChannels) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 1, 23, 23, 3), float32],
      %w: Tensor[(1, 1, 7, 7, 3, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], data_layout="NCHW3c",
                            kernel_layout="OIHW3i16o", out_layout="NCHW16c")
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dSchedule, PrimeWidthAndHalfVectorBlock) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 1, 5, 17, 8), float32],
      %w: Tensor[(2, 1, 3, 3, 8, 8), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW8c",
                                 kernel_layout="OIHW8i8o");
    nn.relu(%0)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

TEST(X86Conv2dSchedule, Avx2TileWithGuardedWidth) {
  // 256-bit vectors: blocks of 8 and at most 6 pixels; width 13 takes a guarded tile.
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 2, 6, 13, 8), float32],
      %w: Tensor[(2, 2, 3, 3, 8, 8), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW8c",
                                 kernel_layout="OIHW8i8o");
    nn.relu(%0)
  })",
                               "nn.contrib_conv2d_NCHWc", 256);
}

TEST(X86Conv2dSchedule, DepthwiseWithBiasRelu) {
  x86_test::check_x86_schedule(R"(fn (%x: Tensor[(1, 4, 14, 14, 16), float32],
      %w: Tensor[(4, 1, 3, 3, 1, 16), float32], %b: Tensor[(4, 1, 1, 16), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], groups=64,
                                 data_layout="NCHW16c", kernel_layout="OIHW1i16o");
    %1 = add(%0, %b);
    nn.relu(%1)
  })",
                               "nn.contrib_conv2d_NCHWc");
}

// Runs the compiled "kernel" of a group over symbolic sizes on the inputs of `concrete`, the
// group with those sizes written in, against the reference of `concrete`.
void expect_symbolic_kernel_matches(Module& module, const std::string& concrete,
                                    const std::string& what) {
  std::vector<Tensor> inputs, expected;
  x86_test::reference_run(topi_test::primitive_function(concrete), inputs, expected);
  Tensor out = Tensor::zeros(expected[0].shape_vector(), expected[0].dtype());
  std::vector<Value> args(inputs.begin(), inputs.end());
  args.emplace_back(out);
  module.function("kernel").call(args);
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_NEAR(out.get_as_double(i), expected[0].get_as_double(i), 1e-4)
        << what << " element " << i;
}

// Over a symbolic height and width the schedule accumulates each register tile in a local
// buffer, also where the convolution writes the group's output itself (no epilogue): there
// LLVM otherwise left the accumulators in memory, a load and a store per multiply-add. Run at
// sizes whose widths leave a guarded tile, against the reference at the same sizes.
TEST(X86Conv2dSchedule, SymbolicSizesAccumulateInALocalTile) {
  const char* groups[] = {
      R"(fn (%x: Tensor[(1, 4, h, w, 16), float32], %w: Tensor[(2, 4, 1, 1, 16, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, data_layout="NCHW16c", kernel_layout="OIHW16i16o")
  })",
      R"(fn (%x: Tensor[(1, 2, h, w, 16), float32], %w: Tensor[(2, 1, 3, 3, 1, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=32,
                            data_layout="NCHW16c", kernel_layout="OIHW1i16o")
  })"};
  for (const char* text : groups) {
    SCOPED_TRACE(text);
    tir::PrimFunc scheduled =
        lower::lower_primitive(topi_test::primitive_function(text), "kernel", {});
    const std::string printed = tir::print(scheduled);
    EXPECT_NE(printed.find("conv2d_NCHWc_local"), std::string::npos) << printed;
    Module module = codegen::jit_compile({tir::transform::lower(scheduled)});
    for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 9}, {5, 19}, {2, 3}}) {
      std::string concrete = text;
      concrete.replace(concrete.find(", h, w,"), 7,
                       ", " + std::to_string(h) + ", " + std::to_string(w) + ",");
      expect_symbolic_kernel_matches(module, concrete, std::to_string(h) + "x" + std::to_string(w));
    }
  }
}

// A width known only at run time leaves a partial register tile of 1 to 7 pixels, which the
// lowering specializes per remainder: every width from 1 to 17 (each remainder, a width below
// one tile, whole tiles) against the reference, with and without an epilogue.
TEST(X86Conv2dSchedule, SymbolicWidthsTakeEveryRemainderTile) {
  const char* groups[] = {
      R"(fn (%x: Tensor[(1, 2, 3, w, 16), float32], %w: Tensor[(4, 2, 1, 1, 16, 16), float32]) {
    nn.contrib_conv2d_NCHWc(%x, %w, data_layout="NCHW16c", kernel_layout="OIHW16i16o")
  })",
      R"(fn (%x: Tensor[(1, 2, 3, w, 16), float32], %w: Tensor[(2, 2, 3, 3, 16, 16), float32]) {
    %0 = nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], data_layout="NCHW16c",
                                 kernel_layout="OIHW16i16o");
    nn.relu(%0)
  })"};
  for (const char* text : groups) {
    SCOPED_TRACE(text);
    tir::PrimFunc scheduled =
        lower::lower_primitive(topi_test::primitive_function(text), "kernel", {});
    Module module = codegen::jit_compile({tir::transform::lower(scheduled)});
    for (int64_t w = 1; w <= 17; ++w) {
      std::string concrete = text;
      concrete.replace(concrete.find(", w,"), 4, ", " + std::to_string(w) + ",");
      expect_symbolic_kernel_matches(module, concrete, "width " + std::to_string(w));
    }
  }
}

}  // namespace
}  // namespace anvil
