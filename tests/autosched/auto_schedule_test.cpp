// The op-family grid through the auto-scheduler: convolutions of every rank (strided, dilated,
// grouped, prime sizes), their transposes (strides 2 and 3, kernels 2 to 4, output padding),
// batched matmuls, and convolutions over a symbolic batch, height or width. Each case must be
// scheduled by the auto-scheduler (the kernel says "auto") and match the reference kernels.
// The shapes are drawn from a seeded generator over small primes and odd sizes, so that tiles
// rarely divide them.
#include "anvil/autosched/auto_schedule.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/op.h"
#include "anvil/ir/parser.h"
#include "anvil/lower/lower.h"
#include "anvil/reference/reference.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"
#include "anvil/topi/strategy.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::random_tensor;
using Fields = std::vector<std::pair<std::string, ir::AttrValue>>;
using Ints = std::vector<int64_t>;

const topi_test::Tolerance kLongSum{1e-4, 1e-5};

Tensor f32(Ints shape, uint64_t seed) {
  return random_tensor(std::move(shape), DataType::float32(), seed);
}

std::string text_attr(const tir::PrimFunc& func, const char* key) {
  const ir::AttrValue* value = func->func_attrs.find(key);
  const std::string* text = value ? std::get_if<std::string>(value) : nullptr;
  return text ? *text : std::string();
}

// Both vector widths the x86 targets have: AVX2's 8 lanes and AVX-512's 16; `rule` must be among
// the rules the kernel names.
void expect_auto(const ir::Function& fn, const std::string& what,
                 const std::string& rule = "multi-level tiling") {
  for (int bits : {256, 512}) {
    lower::LowerGroupOptions options;
    options.vector_bits = bits;
    tir::PrimFunc func = lower::lower_primitive(fn, "kernel", options);
    EXPECT_EQ(text_attr(func, topi::kScheduleAttr), "auto")
        << what << " at " << bits << " bits: " << text_attr(func, topi::kScheduleDeclinedAttr);
    EXPECT_NE(text_attr(func, topi::kScheduleRulesAttr).find(rule), std::string::npos)
        << what << ": " << text_attr(func, topi::kScheduleRulesAttr) << "; refused "
        << text_attr(func, topi::kScheduleRefusedAttr);
  }
}

void check_auto(const std::string& op, const std::vector<Tensor>& inputs, ir::Attrs call_attrs,
                const std::string& what, const std::string& rule = "multi-level tiling") {
  SCOPED_TRACE(what);
  expect_auto(topi_test::op_function(op, inputs, call_attrs), what, rule);
  topi_test::check_op(op, inputs, call_attrs, kLongSum);
}

std::string shape_text(const Ints& shape) {
  std::ostringstream out;
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  return "[" + out.str() + "]";
}

// Draws from a list with a seeded generator.
struct Draw {
  std::mt19937_64 rng;
  explicit Draw(uint64_t seed) : rng(seed) {}
  int64_t pick(const Ints& values) { return values[rng() % values.size()]; }
};

TEST(AutoScheduleGrid, Conv1d) {
  Draw draw(1);
  struct Form {
    int64_t kernel, stride, dilation, pad, groups;
  };
  // The audio front end (kernel 10 stride 5), the feature stack (kernel 3 stride 2), a grouped
  // positional convolution (kernel 31 over groups), a dilated one.
  for (const Form& f : {Form{10, 5, 1, 0, 1}, Form{3, 2, 1, 1, 1}, Form{31, 1, 1, 15, 4},
                        Form{3, 1, 2, 2, 1}, Form{1, 1, 1, 0, 1}}) {
    for (int round = 0; round < 2; ++round) {
      const int64_t groups = f.groups;
      const int64_t in = groups * draw.pick({1, 3, 5}), out = groups * draw.pick({2, 7, 13});
      const int64_t width = draw.pick({37, 53, 61, 100});
      const int64_t batch = draw.pick({1, 2});
      const Ints data = {batch, in, width}, weight = {out, in / groups, f.kernel};
      check_auto("nn.conv1d", {f32(data, 10 + round), f32(weight, 20 + round)},
                 attrs("nn.conv1d", Fields{{"strides", Ints{f.stride}},
                                           {"padding", Ints{f.pad, f.pad}},
                                           {"dilation", Ints{f.dilation}},
                                           {"groups", groups}}),
                 "conv1d " + shape_text(data) + " * " + shape_text(weight) + " stride " +
                     std::to_string(f.stride) + " dilation " + std::to_string(f.dilation));
    }
  }
}

TEST(AutoScheduleGrid, Conv3d) {
  Draw draw(2);
  struct Form {
    Ints kernel, strides, pad, dilation;
    int64_t groups;
  };
  for (const Form& f : {Form{{3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, 1},
                        Form{{1, 3, 3}, {1, 2, 2}, {0, 1, 1, 0, 1, 1}, {1, 1, 1}, 1},
                        Form{{3, 1, 1}, {1, 1, 1}, {1, 0, 0, 1, 0, 0}, {1, 1, 1}, 1},
                        Form{{3, 3, 3}, {2, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 2, 1}, 2}}) {
    const int64_t in = f.groups * draw.pick({2, 3}), out = f.groups * draw.pick({5, 11});
    const Ints data = {1, in, draw.pick({5, 7}), draw.pick({9, 11}), draw.pick({13, 19, 29})};
    const Ints weight = {out, in / f.groups, f.kernel[0], f.kernel[1], f.kernel[2]};
    check_auto("nn.conv3d", {f32(data, 30), f32(weight, 31)},
               attrs("nn.conv3d", Fields{{"strides", f.strides},
                                         {"padding", f.pad},
                                         {"dilation", f.dilation},
                                         {"groups", f.groups}}),
               "conv3d " + shape_text(data) + " * " + shape_text(weight));
  }
}

TEST(AutoScheduleGrid, Conv2dThatNoStrategyTakes) {
  // Grouped with several channels per group and dilated: the blocked strategy's layout is not
  // applied without AlterOpLayout, so the op in its own layout reaches the auto-scheduler.
  check_auto("nn.conv2d", {f32({1, 6, 23, 31}, 40), f32({9, 2, 3, 3}, 41)},
             attrs("nn.conv2d", Fields{{"padding", Ints{1, 2, 1, 0}},
                                       {"dilation", Ints{2, 1}},
                                       {"groups", int64_t(3)}}),
             "grouped dilated conv2d");
}

TEST(AutoScheduleGrid, ConvTranspose) {
  Draw draw(3);
  struct Form {
    int rank;
    int64_t kernel, stride, pad, output_padding, dilation, groups;
  };
  for (const Form& f :
       {Form{1, 4, 2, 1, 0, 1, 1}, Form{1, 2, 2, 0, 0, 1, 1}, Form{2, 4, 2, 1, 0, 1, 1},
        Form{2, 2, 2, 0, 0, 1, 1}, Form{2, 3, 2, 1, 1, 1, 1}, Form{2, 3, 3, 0, 2, 1, 2},
        Form{2, 3, 1, 1, 0, 2, 1}, Form{3, 2, 2, 0, 0, 1, 1}, Form{3, 4, 2, 1, 0, 1, 1}}) {
    const int64_t in = f.groups * draw.pick({2, 3, 5}), out = f.groups * draw.pick({3, 7});
    Ints data = {1, in}, weight = {in, out / f.groups};
    for (int d = 0; d < f.rank; ++d) {
      data.push_back(draw.pick({5, 7, 11}));
      weight.push_back(f.kernel);
    }
    const std::string op = "nn.conv" + std::to_string(f.rank) + "d_transpose";
    check_auto(op, {f32(data, 50), f32(weight, 51)},
               attrs(op, Fields{{"strides", Ints(size_t(f.rank), f.stride)},
                                {"padding", Ints(size_t(2 * f.rank), f.pad)},
                                {"output_padding", Ints(size_t(f.rank), f.output_padding)},
                                {"dilation", Ints(size_t(f.rank), f.dilation)},
                                {"groups", f.groups}}),
               op + " " + shape_text(data) + " * " + shape_text(weight) + " stride " +
                   std::to_string(f.stride));
  }
}

TEST(AutoScheduleGrid, BatchMatmul) {
  Draw draw(4);
  for (int round = 0; round < 3; ++round) {
    const int64_t b = draw.pick({1, 3}), m = draw.pick({7, 31, 64}), k = draw.pick({5, 37, 64}),
                  n = draw.pick({13, 48, 67});
    check_auto("nn.batch_matmul", {f32({b, m, k}, 60), f32({b, n, k}, 61)}, nullptr,
               "batch_matmul " + shape_text({b, m, k}) + " x " + shape_text({b, n, k}) + "^T");
  }
}

// A group with symbolic dims, lowered once and run at several sizes; the oracle is the
// reference interpreter on the same text with the sizes written in.
void check_symbolic(const std::string& text,
                    const std::vector<std::pair<std::string, int64_t>>& sizes,
                    const std::vector<Ints>& input_shapes,
                    const std::string& rule = "multi-level tiling") {
  std::string concrete = text;
  for (const auto& [name, value] : sizes) {
    for (size_t at = concrete.find(name); at != std::string::npos; at = concrete.find(name, at)) {
      const bool whole = (at == 0 || !std::isalnum(static_cast<unsigned char>(concrete[at - 1]))) &&
                         (at + name.size() >= concrete.size() ||
                          !std::isalnum(static_cast<unsigned char>(concrete[at + name.size()])));
      if (whole) concrete.replace(at, name.size(), std::to_string(value));
      at += whole ? std::to_string(value).size() : name.size();
    }
  }
  SCOPED_TRACE(concrete);
  ir::Function symbolic = topi_test::primitive_function(text);
  expect_auto(symbolic, "symbolic group", rule);
  ir::Function fixed = topi_test::primitive_function(concrete);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < input_shapes.size(); ++i) inputs.push_back(f32(input_shapes[i], 70 + i));
  ir::IRModule mod;
  mod.add("main", fixed);
  std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
  ASSERT_EQ(expected.size(), 1u);
  lower::LowerGroupOptions options;
  options.vector_bits = 256;
  Module module = codegen::jit_compile(
      {tir::transform::lower(lower::lower_primitive(symbolic, "kernel", options))});
  Tensor output = Tensor::zeros(expected[0].shape_vector(), DataType::float32());
  std::vector<Value> args;
  for (const Tensor& t : inputs) args.emplace_back(t);
  args.emplace_back(output);
  module.function("kernel").call(args);
  for (int64_t i = 0; i < output.numel(); ++i) {
    const double want = expected[0].get_as_double(i);
    ASSERT_NEAR(output.get_as_double(i), want, 1e-4 + 1e-4 * std::abs(want)) << "element " << i;
  }
}

TEST(AutoScheduleGrid, SymbolicHeightAndWidth) {
  const char* conv = R"(fn (%x: Tensor[(1, 6, h, w), float32], %w: Tensor[(5, 6, 3, 3), float32],
                           %b: Tensor[(5), float32]) {
    %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
    %1 = nn.bias_add(%0, %b);
    nn.relu(%1)
  })";
  for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 61}, {13, 16}, {3, 5}})
    check_symbolic(conv, {{"h", h}, {"w", w}}, {{1, 6, h, w}, {5, 6, 3, 3}, {5}});
}

TEST(AutoScheduleGrid, SymbolicBatchAndLength) {
  const char* conv = R"(fn (%x: Tensor[(n, 4, t), float32], %w: Tensor[(9, 4, 3), float32]) {
    nn.conv1d(%x, %w, strides=[2], padding=[1, 1])
  })";
  for (auto [n, t] : {std::pair<int64_t, int64_t>{2, 41}, {1, 100}})
    check_symbolic(conv, {{"n", n}, {"t", t}}, {{n, 4, t}, {9, 4, 3}});
}

// Reductions along the input's contiguous axis. Sums, maxima, means and softmax over static
// trailing axes come from their compute as a vector of partials per row (topi/reduce.cpp),
// which parallel-vectorize takes; norms and anything symbolic take the cross-lane rule. The
// lengths are drawn prime or odd, so the lanes rarely divide them.
TEST(AutoScheduleGrid, RowReductions) {
  Draw draw(7);
  const std::string partials = "_partial: parallel-vectorize";
  for (int64_t length : {37, 97, 256, 1009}) {
    const int64_t rows = draw.pick({1, 3, 7});
    const std::string shape = shape_text({rows, 5, length});
    for (const char* op : {"sum", "max", "mean"})
      check_auto(op, {f32({rows, 5, length}, 90)},
                 attrs(op, Fields{{"axis", Ints{-1}}, {"keepdims", length % 2 == 1}}),
                 std::string(op) + " over the last axis of " + shape, partials);
    for (const char* op : {"nn.softmax", "nn.log_softmax"})
      check_auto(op, {f32({rows, 5, length}, 91)}, attrs(op, Fields{{"axis", int64_t(-1)}}),
                 std::string(op) + " " + shape, partials);
    check_auto("nn.layer_norm", {f32({rows, 5, length}, 92), f32({length}, 93), f32({length}, 94)},
               nullptr, "layer_norm " + shape, "cross-lane");
  }
  // A group's channels and plane are one contiguous row: fused, then split by the lanes.
  for (const Ints& plane : {Ints{16, 16}, Ints{5, 41}, Ints{3, 64}, Ints{7, 7}}) {
    const int64_t channels = draw.pick({4, 6, 12});
    const Ints shape = {2, channels, plane[0], plane[1]};
    check_auto("nn.group_norm", {f32(shape, 95), f32({channels}, 96), f32({channels}, 97)},
               attrs("nn.group_norm", Fields{{"num_groups", int64_t(2)}}),
               "group_norm " + shape_text(shape), "fused axes");
    check_auto("nn.instance_norm", {f32(shape, 98), f32({channels}, 99), f32({channels}, 100)},
               nullptr, "instance_norm " + shape_text(shape), "cross-lane");
  }
}

// Reductions over a leading axis and poolings vectorize their output's contiguous axis; rows
// too short for two vectors stay plain.
TEST(AutoScheduleGrid, OtherReductionsAndPooling) {
  check_auto("sum", {f32({3, 29, 67}, 100)}, attrs("sum", Fields{{"axis", Ints{1}}}),
             "sum over a leading axis", "parallel-vectorize");
  check_auto("max", {f32({9, 11, 5}, 101)}, attrs("max", Fields{{"axis", Ints{-1}}}),
             "max over rows of 5", "parallel-vectorize");
  check_auto("nn.global_avg_pool2d", {f32({2, 19, 7, 7}, 102)}, nullptr, "global_avg_pool2d",
             "parallel-vectorize");
}

TEST(AutoScheduleGrid, SymbolicRowLength) {
  const char* softmax = R"(fn (%x: Tensor[(n, 3, t), float32]) {
    nn.softmax(%x, axis=-1)
  })";
  for (auto [n, t] : {std::pair<int64_t, int64_t>{2, 41}, {1, 100}, {3, 7}, {1, 1}})
    check_symbolic(softmax, {{"n", n}, {"t", t}}, {{n, 3, t}}, "cross-lane");
  const char* row_sum = R"(fn (%x: Tensor[(4, t), float32]) {
    sum(%x, axis=[1])
  })";
  for (int64_t t : {1, 16, 33, 250}) check_symbolic(row_sum, {{"t", t}}, {{4, t}}, "cross-lane");
}

// The knob space is what tuning searches: points spread over a small case's space compile to
// the same results.
TEST(AutoScheduleSpace, PointsAcrossAConv1dSpaceMatchTheReference) {
  const std::vector<Tensor> inputs = {f32({1, 3, 29}, 80), f32({10, 3, 3}, 81)};
  ir::Attrs call_attrs = attrs("nn.conv1d", Fields{{"padding", Ints{1, 1}}});
  ir::Function fn = topi_test::op_function("nn.conv1d", inputs, call_attrs);
  lower::LowerGroupOptions options;
  options.vector_bits = 256;
  lower::GroupKnobSpace space = lower::group_knob_space(fn, options);
  ASSERT_EQ(space.strategy, "auto");
  ir::IRModule mod;
  mod.add("main", fn);
  std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
  int64_t size = 1;
  for (const topi::KnobSpace& knob : space.knobs) size *= int64_t(knob.values.size());
  // The cache level's knobs make a space of thousands of points; it is
  // checked at 40 points spread evenly over it.
  ASSERT_GE(size, 1000);
  const int64_t stride = size / 40 + (size / 40 % 2 == 0 ? 1 : 0);
  for (int64_t point = 0; point < size; point += stride) {
    lower::KnobConfig config;
    int64_t rest = point;
    for (const topi::KnobSpace& knob : space.knobs) {
      config[knob.name] = knob.values[size_t(rest % int64_t(knob.values.size()))];
      rest /= int64_t(knob.values.size());
    }
    options.config_for = [&config](const ir::Function&, const lower::LowerGroupOptions&) {
      return &config;
    };
    tir::PrimFunc func = lower::lower_primitive(fn, "kernel", options);
    ASSERT_EQ(text_attr(func, topi::kScheduleAttr), "auto")
        << text_attr(func, topi::kScheduleDeclinedAttr);
    Module module = codegen::jit_compile({tir::transform::lower(func)});
    Tensor output = Tensor::zeros(expected[0].shape_vector(), DataType::float32());
    std::vector<Value> args = {Value(inputs[0]), Value(inputs[1]), Value(output)};
    module.function("kernel").call(args);
    for (int64_t i = 0; i < output.numel(); ++i)
      ASSERT_NEAR(output.get_as_double(i), expected[0].get_as_double(i), 1e-4)
          << "point " << point << ", element " << i << "\n"
          << tir::print(func);
  }
}

TEST(HostModel, ReadsTheMachine) {
  const autosched::HostModel avx2 = autosched::HostModel::for_target(256);
  const autosched::HostModel avx512 = autosched::HostModel::for_target(512);
  EXPECT_EQ(avx2.vector_registers, 16);
  EXPECT_EQ(avx512.vector_registers, 32);
  EXPECT_GE(avx2.cores, 1);
  // Every x86 CPU this runs on has a data cache of 16 KiB or more below a larger L2.
  EXPECT_GE(avx2.l1_bytes, 16 << 10);
  EXPECT_GT(avx2.l2_bytes, avx2.l1_bytes);
}

}  // namespace
}  // namespace anvil
