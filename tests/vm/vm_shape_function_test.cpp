// Ops whose output dims depend on values given at run time (the axes of a reduction, the target
// of a reshape, the bounds of a slice or a range): the VM runs each op's shape function, binds
// the sizes it writes (load_shape), and runs a compiled kernel over them. One executable runs
// with many operand values, in an order where outputs shrink and grow; the reference
// interpreter is the oracle, and no group may fall back to it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/runtime/vm_executable.h"
#include "support/test_tensors.h"
#include "support/vm_oracle.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_matches_reference;
using testing::pseudo_random;

ir::IRModule parse(const std::string& text) { return ir::infer_type(ir::parse_module(text)); }

Tensor ints(const std::vector<int64_t>& values, DataType dtype = DataType::int64()) {
  Tensor t = Tensor::empty({int64_t(values.size())}, dtype);
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), double(values[i]));
  return t;
}

Tensor scalar(double value, DataType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  t.set_from_double(0, value);
  return t;
}

// Built once; every group compiled (no runtime function) and the executable saves.
driver::VmModule build_compiled(const ir::IRModule& mod, const std::string& what) {
  driver::VmModule built = driver::build_vm(mod, {});
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << what << "\n" << built.print_bytecode();
  EXPECT_NE(built.print_bytecode().find("load_shape"), std::string::npos) << what;
  EXPECT_NO_THROW(vm::save_executable(*built.executable())) << what;
  return built;
}

struct ReduceCase {
  const char* op;
  bool keepdims;
};

class DynamicReductions : public ::testing::TestWithParam<ReduceCase> {};

// Every reduction, kept dims or not, over axes sets that differ in which dims they reduce:
// negative axes, the first, the last, a middle pair, all of them.
TEST_P(DynamicReductions, AxesChosenAtRunTime) {
  const ReduceCase& c = GetParam();
  for (int64_t count : {1, 2}) {
    std::string text = "def @main(%x: Tensor[(3, 4, 5), float32], %axes: Tensor[(" +
                       std::to_string(count) + "), int64]) {\n  dyn." + c.op + "(%x, %axes" +
                       (c.keepdims ? ", keepdims=True" : "") + ")\n}\n";
    ir::IRModule mod = parse(text);
    driver::VmModule built = build_compiled(mod, text);
    VirtualMachine vm = built.create_vm();
    std::vector<std::vector<int64_t>> axes_sets =
        count == 1 ? std::vector<std::vector<int64_t>>{{0}, {2}, {-2}, {1}, {-1}}
                   : std::vector<std::vector<int64_t>>{{0, 2}, {1, 2}, {-3, 1}, {2, 0}};
    uint64_t seed = 1;
    for (const std::vector<int64_t>& axes : axes_sets) {
      std::string what = text + " axes " + std::to_string(axes[0]);
      expect_matches_reference(
          vm, mod, {pseudo_random({3, 4, 5}, DataType::float32(), seed++), ints(axes)}, what);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, DynamicReductions,
    ::testing::Values(ReduceCase{"sum", false}, ReduceCase{"sum", true}, ReduceCase{"mean", false},
                      ReduceCase{"mean", true}, ReduceCase{"max", false}, ReduceCase{"min", true},
                      ReduceCase{"prod", false}, ReduceCase{"logsumexp", false},
                      ReduceCase{"logsumexp", true}, ReduceCase{"l1_norm", false},
                      ReduceCase{"l2_norm", true}, ReduceCase{"sum_square", false}),
    [](const ::testing::TestParamInfo<ReduceCase>& info) {
      return std::string(info.param.op) + (info.param.keepdims ? "_keepdims" : "");
    });

// An empty axes list reduces every dim; a reduced dim of static size 0 folds nothing.
TEST(DynamicReductionEdges, EmptyAxesAndEmptyDims) {
  ir::IRModule all = parse(R"(
def @main(%x: Tensor[(2, 3), float32], %axes: Tensor[(0), int64]) { dyn.sum(%x, %axes) }
)");
  VirtualMachine vm = build_compiled(all, "empty axes").create_vm();
  expect_matches_reference(vm, all, {pseudo_random({2, 3}, DataType::float32(), 3), ints({})},
                           "empty axes");
  ir::IRModule empty = parse(R"(
def @main(%x: Tensor[(2, 0, 4), float32], %axes: Tensor[(1), int64]) {
  dyn.prod(%x, %axes, keepdims=True)
}
)");
  VirtualMachine vm2 = build_compiled(empty, "empty dim").create_vm();
  for (int64_t axis : {1, 0, 2})
    expect_matches_reference(vm2, empty,
                             {Tensor::empty({2, 0, 4}, DataType::float32()), ints({axis})},
                             "empty dim, axis " + std::to_string(axis));
}

struct ShapeOperandCase {
  const char* name;
  const char* text;
  // Values of the shape operand (the last input), each run in turn.
  std::vector<std::vector<int64_t>> operands;
};

const ShapeOperandCase kShapeCases[] = {
    {"reshape",
     R"(
def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(3), int64]) { dyn.reshape(%x, %s) }
)",
     {{4, 3, 2}, {0, -1, 2}, {24, 1, 1}, {-1, 2, 2}, {2, 0, 4}}},
    {"reshape_allowzero",
     R"(
def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]) {
  dyn.reshape(%x, %s, allowzero=True)
}
)",
     {{6, 4}, {-1, 12}, {24, 1}}},
    {"expand_dims",
     R"(
def @main(%x: Tensor[(3, 4), float32], %s: Tensor[(2), int64]) { dyn.expand_dims(%x, %s) }
)",
     {{0, 1}, {0, 3}, {-1, 1}, {2, 3}}},
    {"squeeze",
     R"(
def @main(%x: Tensor[(1, 3, 1, 4), float32], %s: Tensor[(1), int64]) { dyn.squeeze(%x, %s) }
)",
     {{0}, {2}, {-2}, {-4}}},
    {"tile",
     R"(
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(3), int64]) { dyn.tile(%x, %s) }
)",
     {{1, 2, 2}, {3, 1, 1}, {1, 1, 0}, {2, 3, 1}}},
    {"broadcast_to",
     R"(
def @main(%x: Tensor[(3, 1), float32], %s: Tensor[(3), int64]) { dyn.broadcast_to(%x, %s) }
)",
     {{2, 3, 4}, {1, 3, 1}, {5, 3, 2}}},
};

class ShapeOperands : public ::testing::TestWithParam<ShapeOperandCase> {};

TEST_P(ShapeOperands, OneExecutableServesEveryOperand) {
  const ShapeOperandCase& c = GetParam();
  ir::IRModule mod = parse(c.text);
  VirtualMachine vm = build_compiled(mod, c.name).create_vm();
  const auto& params = mod.get_function("main")->params;
  const auto* data_type = ir::as<ir::TensorTypeNode>(params[0]->checked_type);
  Tensor data = pseudo_random(*ir::to_ints(*data_type->shape), DataType::float32(), 7);
  for (const std::vector<int64_t>& operand : c.operands)
    expect_matches_reference(vm, mod, {data, ints(operand)},
                             std::string(c.name) + " to " + std::to_string(operand[0]) + "...");
}

INSTANTIATE_TEST_SUITE_P(Ops, ShapeOperands, ::testing::ValuesIn(kShapeCases),
                         [](const ::testing::TestParamInfo<ShapeOperandCase>& info) {
                           return std::string(info.param.name);
                         });

// Slices with negative steps, ends past the dim, begins counted from the end, axes in either
// order, one executable.
TEST(DynamicSlices, ClampingAndNegativeSteps) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(5, 6), float32], %b: Tensor[(2), int64], %e: Tensor[(2), int64],
          %st: Tensor[(2), int64], %axes: Tensor[(2), int64]) {
  dyn.strided_slice(%x, %b, %e, %st, %axes)
}
)");
  VirtualMachine vm = build_compiled(mod, "strided_slice").create_vm();
  Tensor x = pseudo_random({5, 6}, DataType::float32(), 9);
  struct Slice {
    std::vector<int64_t> begin, end, steps, axes;
  };
  const Slice slices[] = {
      {{0, 1}, {5, 6}, {1, 2}, {0, 1}},      {{-1, 0}, {-6, 100}, {-1, 3}, {0, 1}},
      {{2, -2}, {4, -100}, {1, -2}, {0, 1}}, {{1, 0}, {3, 9223372036854775807}, {1, 2}, {1, 0}},
      {{4, 0}, {2, 6}, {1, 1}, {-2, -1}},
  };
  for (const Slice& s : slices)
    expect_matches_reference(vm, mod, {x, ints(s.begin), ints(s.end), ints(s.steps), ints(s.axes)},
                             "slice from " + std::to_string(s.begin[0]));
}

// ONNX Pad with pads and axes given at run time, every mode: growing, cropping (negative
// pads), one axis or several, an axis counted from the end.
TEST(DynamicPad, EveryModeAndPadding) {
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    std::string text = std::string(R"(
def @main(%x: Tensor[(3, 4), float32], %pads: Tensor[(4), int64], %v: Tensor[(), float32],
          %axes: Tensor[(2), int64]) {
  dyn.nn.pad(%x, %pads, %v, %axes, pad_mode=")") +
                       mode + "\")\n}\n";
    ir::IRModule mod = parse(text);
    VirtualMachine vm = build_compiled(mod, text).create_vm();
    Tensor x = pseudo_random({3, 4}, DataType::float32(), 5);
    struct Padding {
      std::vector<int64_t> pads, axes;
    };
    const Padding paddings[] = {{{1, 2, 3, 0}, {0, 1}},
                                {{0, 0, 0, 0}, {0, 1}},
                                {{2, 5, 1, 6}, {1, 0}},
                                {{-1, 1, 0, -2}, {0, -1}},
                                {{4, 0, 0, 3}, {-2, 1}}};
    for (const Padding& p : paddings)
      expect_matches_reference(vm, mod,
                               {x, ints(p.pads), scalar(2.5, DataType::float32()), ints(p.axes)},
                               std::string(mode) + " pads " + std::to_string(p.pads[0]) + "," +
                                   std::to_string(p.pads[1]));
  }
}

Tensor floats(const std::vector<double>& values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::float32());
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), values[i]);
  return t;
}

// ONNX Resize with its scales (or sizes) and roi given at run time, over the grid of filters,
// coordinate transforms and antialiasing, on a batch of symbolic size: one executable per
// variant runs upsamples, downsamples, mixed and unit scales, each axis differently.
TEST(DynamicResize, ScalesChosenAtRunTime) {
  const char* modes[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
  const std::vector<std::vector<double>> scale_sets = {
      {2.0, 1.5}, {0.5, 0.6}, {1.0, 1.0}, {0.3, 2.5}, {1.7, 0.25}};
  for (const char* method : {"nearest_neighbor", "linear", "cubic"})
    for (const char* mode : modes)
      for (const char* extra : {"", ", antialias=True", ", cubic_exclude=1"}) {
        if (std::string(method) == "nearest_neighbor" && std::string(extra).size() > 0) continue;
        std::string text = std::string(R"(
def @main(%x: Tensor[(n, 2, 5, 7), float32], %roi: Tensor[(4), float32],
          %s: Tensor[(2), float32]) {
  dyn.image.resize(%x, %roi, %s, target="scales", axes=[3, 2], method=")") +
                           method + "\", coordinate_transformation_mode=\"" + mode +
                           "\", extrapolation_value=-3.5" + extra + ")\n}\n";
        ir::IRModule mod = parse(text);
        VirtualMachine vm = build_compiled(mod, text).create_vm();
        int64_t batch = 1;
        for (const std::vector<double>& scales : scale_sets) {
          Tensor x = pseudo_random({batch, 2, 5, 7}, DataType::float32(), int(batch));
          expect_matches_reference(
              vm, mod, {x, floats({0.1, -0.2, 0.8, 1.3}), floats(scales)},
              text + " scales " + std::to_string(scales[0]) + "," + std::to_string(scales[1]));
          batch = batch % 3 + 1;
        }
      }
}

// Sizes given at run time, stretched or fitted with one scale (not_larger, not_smaller).
TEST(DynamicResize, SizesAndAspectPolicies) {
  for (const char* policy : {"stretch", "not_larger", "not_smaller"})
    for (const char* method : {"nearest_neighbor", "linear"}) {
      std::string text = std::string(R"(
def @main(%x: Tensor[(2, 6, 4), float32], %roi: Tensor[(0), float32], %s: Tensor[(2), int64]) {
  dyn.image.resize(%x, %roi, %s, target="sizes", axes=[1, -1], keep_aspect_ratio_policy=")") +
                         policy + "\", method=\"" + method + "\", antialias=True)\n}\n";
      ir::IRModule mod = parse(text);
      VirtualMachine vm = build_compiled(mod, text).create_vm();
      Tensor x = pseudo_random({2, 6, 4}, DataType::float32(), 3);
      for (auto sizes : {std::vector<int64_t>{12, 3}, {2, 9}, {6, 4}, {1, 1}, {0, 5}})
        expect_matches_reference(
            vm, mod, {x, floats({}), ints(sizes)},
            text + " sizes " + std::to_string(sizes[0]) + "," + std::to_string(sizes[1]));
    }
}

// Scales that give no size (negative, not a number, infinite): the shape function rejects
// them, and the executable runs again afterwards.
TEST(DynamicResize, InvalidScalesAreErrors) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 1, 4, 4), float32], %roi: Tensor[(0), float32], %s: Tensor[(4), float32]) {
  dyn.image.resize(%x, %roi, %s, target="scales", antialias=True)
}
)");
  VirtualMachine vm = build_compiled(mod, "resize").create_vm();
  Tensor x = pseudo_random({1, 1, 4, 4}, DataType::float32(), 6);
  for (auto bad : {std::vector<double>{1, 1, -1, 1}, {1, 1, NAN, 2}, {1, 1, INFINITY, 1}}) {
    vm.set_input(0, x);
    vm.set_input(1, floats({}));
    vm.set_input(2, floats(bad));
    EXPECT_NE(error_of([&] { vm.run(); }).find("= -1"), std::string::npos) << bad[2];
  }
  expect_matches_reference(vm, mod, {x, floats({}), floats({1, 1, 0.5, 2})}, "after the errors");
}

// TopK with k given at run time, from nothing to the whole axis, largest or smallest, along
// either axis of a batch of symbolic size; values, indices or both. k beyond the axis or
// below 0 is an error. The VM runs it with the runtime library's partial sort (a registered
// function, so the executable saves), not the compute's quadratic ranking.
TEST(DynamicTopK, KChosenAtRunTime) {
  for (const char* flags : {"axis=1", "axis=0, is_ascend=True", "axis=-1, ret_type=\"indices\"",
                            "axis=1, ret_type=\"values\", is_ascend=True"}) {
    std::string text = std::string(R"(
def @main(%x: Tensor[(n, 6), float32], %k: Tensor[(1), int64]) { dyn.topk(%x, %k, )") +
                       flags + ")\n}\n";
    ir::IRModule mod = parse(text);
    driver::VmModule built = driver::build_vm(mod, {});
    EXPECT_NE(built.print_bytecode().find("invoke_packed anvil.builtin.ordered"), std::string::npos)
        << built.print_bytecode();
    EXPECT_NO_THROW(vm::save_executable(*built.executable())) << text;
    VirtualMachine vm = built.create_vm();
    for (auto [n, k] : {std::pair{3, 2}, {4, 0}, {5, 1}, {2, 2}, {6, 3}}) {
      Tensor x = pseudo_random({n, 6}, DataType::float32(), n);
      if (std::string(flags).find("axis=0") == std::string::npos && k == 2) k = 6;
      expect_matches_reference(vm, mod, {x, ints({k})},
                               text + " n " + std::to_string(n) + " k " + std::to_string(k));
    }
    for (int64_t bad : {-1, 7}) {
      vm.set_input(0, pseudo_random({6, 6}, DataType::float32(), 1));
      vm.set_input(1, ints({bad}));
      EXPECT_NE(error_of([&] { vm.run(); }).find("k = " + std::to_string(bad) + " does not fit"),
                std::string::npos)
          << text << bad;
    }
  }
}

// The ordering ops over long lines (a detection head's scores), with ties and NaNs, along a
// middle axis, ascending and descending, integers past 2^53: the runtime library's partial sort
// against the reference kernels.
TEST(OrderingOps, LongLinesTiesAndNaNsMatchTheReference) {
  const std::vector<std::string> cases = {
      "def @main(%x: Tensor[(n, 3000), float32]) { topk(%x, k=50, axis=1) }",
      "def @main(%x: Tensor[(n, 3000), float32]) { topk(%x, k=7, axis=-1, is_ascend=True, "
      "ret_type=\"indices\", dtype=\"int32\") }",
      "def @main(%x: Tensor[(3, n, 2), float32]) { argsort(%x, axis=1, is_ascend=False) }",
      "def @main(%x: Tensor[(n, 3000), float32]) { sort(%x, axis=1) }",
  };
  for (const std::string& text : cases) {
    ir::IRModule mod = parse(text);
    driver::VmModule built = driver::build_vm(mod, {});
    EXPECT_NE(built.print_bytecode().find("anvil.builtin.ordered"), std::string::npos) << text;
    VirtualMachine vm = built.create_vm();
    const auto* type = ir::as<ir::TensorTypeNode>(mod.get_function("main")->params[0]->annotation);
    for (int64_t n : {2, 1, 700}) {
      std::vector<int64_t> shape;
      for (const ir::Dim& d : *type->shape) shape.push_back(d.is_static() ? d.int_value() : n);
      Tensor x = pseudo_random(shape, DataType::float32(), uint64_t(n));
      // Rounded to eighths (many ties), with a NaN every 97 elements.
      for (int64_t i = 0; i < x.numel(); ++i)
        x.set_from_double(i, i % 97 == 5 ? NAN : std::round(x.get_as_double(i) * 8) / 8);
      expect_matches_reference(vm, mod, {x}, text + " n " + std::to_string(n));
    }
  }
  // int64 values that a double would merge: 2^60 + 1 and 2^60 + 2 keep their order.
  ir::IRModule mod = parse("def @main(%x: Tensor[(4), int64]) { sort(%x, is_ascend=False) }");
  VirtualMachine vm = driver::build_vm(mod, {}).create_vm();
  Tensor x = Tensor::empty({4}, DataType::int64());
  const int64_t big = int64_t(1) << 60;
  auto* data = static_cast<int64_t*>(x.data());
  data[0] = big + 1, data[1] = -3, data[2] = big + 2, data[3] = big + 1;
  vm.set_input(0, x);
  vm.run();
  const auto* got = static_cast<const int64_t*>(vm.get_output(0).data());
  EXPECT_EQ(std::vector<int64_t>(got, got + 4),
            (std::vector<int64_t>{big + 2, big + 1, big + 1, -3}));
}

// A running sum along an axis given at run time (counted from either end), inclusive or not,
// forward or reversed; the type is static, so only the VM's shape function knows the axis.
TEST(DynamicScan, CumsumAlongARunTimeAxis) {
  for (const char* flags :
       {"", ", exclusive=True", ", reverse=True", ", exclusive=True, reverse=True"}) {
    std::string text = std::string(R"(
def @main(%x: Tensor[(3, 4, 2), float32], %axis: Tensor[(), int64]) {
  dyn.cumsum(%x, %axis)") +
                       flags + ")\n}\n";
    ir::IRModule mod = parse(text);
    VirtualMachine vm = build_compiled(mod, text).create_vm();
    Tensor x = pseudo_random({3, 4, 2}, DataType::float32(), 8);
    for (int64_t axis : {0, 1, 2, -1, -3})
      expect_matches_reference(vm, mod, {x, scalar(double(axis), DataType::int64())},
                               text + " axis " + std::to_string(axis));
  }
}

// An op with a shape function runs on the VM even where its type is static: only the VM binds
// the sizes its shape function writes.
TEST(DynamicScan, PickExecutorChoosesTheVm) {
  ir::IRModule scan = parse(R"(
def @main(%x: Tensor[(3, 4), float32], %axis: Tensor[(), int64]) { dyn.cumsum(%x, %axis) }
)");
  EXPECT_EQ(driver::pick_executor(scan, {}, {}), "vm");
  ir::IRModule plain = parse(R"(
def @main(%x: Tensor[(3, 4), float32]) { cumsum(%x, axis=1) }
)");
  EXPECT_EQ(driver::pick_executor(plain, {}, {}), "graph");
}

// One-hot vectors of a depth given at run time, negative indices counted from the depth.
TEST(DynamicOneHot, DepthChosenAtRunTime) {
  ir::IRModule mod = parse(R"(
def @main(%i: Tensor[(2, 3), int64], %on: Tensor[(), float32], %off: Tensor[(), float32],
          %depth: Tensor[(), int64]) {
  dyn.one_hot(%i, %on, %off, %depth, axis=1)
}
)");
  VirtualMachine vm = build_compiled(mod, "one_hot").create_vm();
  Tensor indices = testing::filled({2, 3}, DataType::int64(), {0, 2, -1, 4, 1, -3});
  for (int64_t depth : {5, 3, 8, 1})
    expect_matches_reference(
        vm, mod,
        {indices, scalar(1.5, DataType::float32()), scalar(-1, DataType::float32()),
         scalar(double(depth), DataType::int64())},
        "depth " + std::to_string(depth));
}

// Parts whose extent along the axis is a size variable, one of them empty in some runs.
TEST(DynamicConcatenate, PartsOfRunTimeLength) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(n, 3), float32], %y: Tensor[(m, 3), float32], %z: Tensor[(2, 3), float32]) {
  concatenate((%x, %z, %y), axis=0)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << built.print_bytecode();
  VirtualMachine vm = built.create_vm();
  Tensor z = pseudo_random({2, 3}, DataType::float32(), 1);
  for (auto [n, m] : {std::pair{2, 3}, {0, 4}, {5, 0}, {1, 1}, {0, 0}})
    expect_matches_reference(vm, mod,
                             {pseudo_random({n, 3}, DataType::float32(), 2),
                              pseudo_random({m, 3}, DataType::float32(), 3), z},
                             "n " + std::to_string(n) + ", m " + std::to_string(m));
}

TEST(DynamicCreation, FullAndRange) {
  ir::IRModule full = parse(R"(
def @main(%v: Tensor[(), float32], %s: Tensor[(2), int64]) { dyn.full(%v, %s) }
)");
  VirtualMachine vm = build_compiled(full, "full").create_vm();
  for (auto shape : {std::vector<int64_t>{2, 3}, {5, 1}, {0, 4}})
    expect_matches_reference(vm, full, {scalar(1.5, DataType::float32()), ints(shape)}, "full");

  for (DataType dtype : {DataType::int32(), DataType::float32()}) {
    std::string t = dtype.to_string();
    ir::IRModule range = parse("def @main(%a: Tensor[(), " + t + "], %b: Tensor[(), " + t +
                               "], %d: Tensor[(), " + t + "]) { range(%a, %b, %d) }");
    VirtualMachine rvm = build_compiled(range, "range " + t).create_vm();
    for (auto [a, b, d] :
         {std::tuple{0.0, 5.0, 1.0}, {10.0, 1.0, -3.0}, {1.0, 1.0, 2.0}, {-2.0, 7.0, 2.0}})
      expect_matches_reference(rvm, range, {scalar(a, dtype), scalar(b, dtype), scalar(d, dtype)},
                               "range " + t + " from " + std::to_string(a));
  }
}

// Operands the op rejects: a reshape that changes the element count, a squeeze of a dim that
// is not 1, a slice step of 0. The shape function writes -1 dims, which the VM refuses to
// allocate; nothing is read out of bounds, and the executable runs again afterwards.
TEST(DynamicShapeErrors, InvalidOperandsAreErrors) {
  ir::IRModule reshape = parse(R"(
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64]) { dyn.reshape(%x, %s) }
)");
  VirtualMachine vm = build_compiled(reshape, "reshape").create_vm();
  Tensor x = pseudo_random({2, 3}, DataType::float32(), 2);
  for (auto bad : {std::vector<int64_t>{4, 2}, {-1, -1}, {0, 5}, {-1, 4}}) {
    vm.set_input(0, x);
    vm.set_input(1, ints(bad));
    EXPECT_NE(error_of([&] { vm.run(); }).find("= -1"), std::string::npos)
        << bad[0] << "," << bad[1];
  }
  expect_matches_reference(vm, reshape, {x, ints({3, 2})}, "after the errors");

  ir::IRModule squeeze = parse(R"(
def @main(%x: Tensor[(1, 3), float32], %s: Tensor[(1), int64]) { dyn.squeeze(%x, %s) }
)");
  VirtualMachine svm = build_compiled(squeeze, "squeeze").create_vm();
  svm.set_input(0, pseudo_random({1, 3}, DataType::float32(), 4));
  svm.set_input(1, ints({1}));
  EXPECT_NE(error_of([&] { svm.run(); }).find("= -1"), std::string::npos);
}

// A tensor of shape with every `stride`-th element (from `first`) set to a nonzero value
// (NaN for floats where `nan`), the rest 0.
Tensor sparse(const std::vector<int64_t>& shape, DataType dtype, int64_t first, int64_t stride,
              bool nan = false) {
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    bool set = stride > 0 && i >= first && (i - first) % stride == 0;
    t.set_from_double(i, !set ? 0.0 : nan && i % 2 == 0 ? NAN : double(i % 7 + 1));
  }
  return t;
}

// nonzero compiles (a shape function counts, the kernel finds each element in a running count)
// over ranks, dtypes and symbolic dims, with none, one, some and every element nonzero, on
// sizes that cross the count's blocks; the groups reading its result compile over the count.
TEST(DynamicNonzero, EveryDensityAndShape) {
  struct Case {
    const char* type;
    std::vector<int64_t> shape;
    DataType dtype;
  };
  const Case cases[] = {{"(6)", {6}, DataType::float32()},
                        {"(n, 3)", {5, 3}, DataType::int32()},
                        {"(2, m, 3)", {2, 150, 3}, DataType::float32()},
                        {"(300)", {300}, DataType::boolean()},
                        {"(2, 2, 2, 3)", {2, 2, 2, 3}, DataType::int64()}};
  for (const Case& c : cases) {
    std::string text = "def @main(%x: Tensor[" + std::string(c.type) + ", " + c.dtype.to_string() +
                       "]) {\n  %0 = nonzero(%x);\n  sqrt(cast(%0, dtype=\"float32\"))\n}\n";
    ir::IRModule mod = parse(text);
    VirtualMachine vm = build_compiled(mod, text).create_vm();
    const int64_t n = Tensor::empty(c.shape, c.dtype).numel();
    for (auto [first, stride] : {std::pair<int64_t, int64_t>{0, 0},
                                 {0, 1},
                                 {n - 1, 1},
                                 {3, 7},
                                 {1, 2},
                                 {129, 128},
                                 {0, 127}}) {
      bool nan = c.dtype == DataType::float32();
      expect_matches_reference(
          vm, mod, {sparse(c.shape, c.dtype, first, stride, nan)},
          text + " first " + std::to_string(first) + " stride " + std::to_string(stride));
    }
  }
}

// unique compiles for slices along each axis and for single elements, sorted or in order of
// first occurrence, with repeated slices, NaNs (all one value) and a symbolic dim, including
// none at all.
TEST(DynamicUnique, SlicesAlongEveryAxis) {
  for (const char* flags : {"", "sorted=False", "axis=0", "axis=1, sorted=False", "axis=-1"}) {
    for (DataType dtype : {DataType::float32(), DataType::int32()}) {
      std::string text = "def @main(%x: Tensor[(n, 4), " + dtype.to_string() + "]) {\n  unique(%x" +
                         (std::string(flags).empty() ? "" : ", ") + flags + ")\n}\n";
      ir::IRModule mod = parse(text);
      VirtualMachine vm = build_compiled(mod, text).create_vm();
      const double nan = dtype.is_float() ? NAN : 7;
      const std::vector<double> values = {3, 1, nan, 3,  0, 1, 1, nan, 3, 1, nan, 3,
                                          2, 2, 0,   -1, 0, 1, 1, nan, 5, 5, 5,   5};
      for (int64_t rows : {4, 1, 6, 0, 2}) {
        std::vector<double> head(values.begin(), values.begin() + rows * 4);
        if (rows == 0) head = {0};
        expect_matches_reference(vm, mod, {testing::filled({rows, 4}, dtype, head)},
                                 text + " rows " + std::to_string(rows));
      }
    }
  }
}

// Col2Im with the image and block shapes given at run time: one executable folds blocks of
// several shapes into images of several sizes, strided, padded and dilated; blocks that do
// not match the data are an error.
TEST(DynamicCol2Im, ImageAndBlockChosenAtRunTime) {
  for (const char* flags : {"", ", strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 2]"}) {
    std::string text = std::string(R"(
def @main(%x: Tensor[(n, c, l), float32], %image: Tensor[(2), int64], %block: Tensor[(2), int64]) {
  dyn.col2im(%x, %image, %block)") +
                       flags + ")\n}\n";
    ir::IRModule mod = parse(text);
    VirtualMachine vm = build_compiled(mod, text).create_vm();
    const bool spaced = std::string(flags).size() > 0;
    for (auto [image, block] :
         {std::pair<std::vector<int64_t>, std::vector<int64_t>>{{4, 5}, {2, 2}},
          {{3, 3}, {1, 3}},
          {{5, 4}, {3, 1}},
          {{2, 2}, {2, 2}}}) {
      int64_t positions = 1;
      for (size_t d = 0; d < 2; ++d) {
        int64_t stride = spaced && d == 0 ? 2 : 1, dilation = spaced && d == 1 ? 2 : 1;
        int64_t pad = !spaced ? 0 : d == 0 ? 2 : 2;
        positions *= (image[d] + pad - (dilation * (block[d] - 1) + 1)) / stride + 1;
      }
      Tensor x = pseudo_random({2, 3 * block[0] * block[1], positions}, DataType::float32(), 7);
      expect_matches_reference(vm, mod, {x, ints(image), ints(block)},
                               text + " image " + std::to_string(image[0]) + "x" +
                                   std::to_string(image[1]) + " block " + std::to_string(block[0]) +
                                   "x" + std::to_string(block[1]));
    }
    vm.set_input(0, pseudo_random({1, 4, 3}, DataType::float32(), 1));
    vm.set_input(1, ints({3, 3}));
    vm.set_input(2, ints({2, 2}));
    EXPECT_NE(error_of([&] { vm.run(); }).find("-1"), std::string::npos) << text;
  }
}

// MaxUnpool with its output shape given at run time, after the max pooling whose indices it
// reads: the implied size, a larger one (zeros past it) and a smaller one (elements past it
// dropped); a batch or channel count that is not the data's is an error.
TEST(DynamicMaxUnpool, OutputShapeChosenAtRunTime) {
  // Windows that cover the input, so that the pooling's indices lie in the implied size.
  const std::pair<const char*, std::vector<int64_t>> windows[] = {
      {"pool_size=[2, 2], strides=[2, 2]", {2, 3, 6, 4}},
      {"pool_size=[3, 2], strides=[2, 1]", {2, 3, 7, 5}}};
  for (const auto& [window, in] : windows) {
    std::string text =
        "def @main(%x: Tensor[(2, 3, " + std::to_string(in[2]) + ", " + std::to_string(in[3]) +
        "), float32], %shape: Tensor[(4), int64]) {\n"
        "  %0 = nn.max_pool2d_with_argmax(%x, " +
        window + ");\n  dyn.nn.max_unpool2d(%0.0, %0.1, %shape, " + window + ")\n}\n";
    ir::IRModule mod = parse(text);
    VirtualMachine vm = build_compiled(mod, text).create_vm();
    Tensor x = pseudo_random(in, DataType::float32(), 9);
    for (auto shape : {in, {2, 3, in[2] + 2, in[3] + 3}, {2, 3, 3, 2}, {2, 3, 0, 5}})
      expect_matches_reference(
          vm, mod, {x, ints(shape)},
          text + " shape " + std::to_string(shape[2]) + "x" + std::to_string(shape[3]));
    vm.set_input(0, x);
    vm.set_input(1, ints({1, 3, in[2], in[3]}));
    EXPECT_NE(error_of([&] { vm.run(); }).find("-1"), std::string::npos) << text;
  }
}

// A reduction over a dim that is 0 at run time writes its identity (its first step, which
// writes it, is one the loop must still take); so do the counts of nonzero and unique.
TEST(EmptyAtRunTime, ReductionsWriteTheirIdentity) {
  for (const char* op : {"sum", "prod", "max", "min", "argmax"}) {
    std::string text =
        std::string("def @main(%x: Tensor[(n, 3), float32]) { ") + op + "(%x, axis=[0]) }";
    if (std::string(op) == "argmax")
      text = "def @main(%x: Tensor[(n, 3), float32]) { argmax(%x, axis=[1]) }";
    ir::IRModule mod = parse(text);
    driver::VmModule built = driver::build_vm(mod, {});
    EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << text;
    VirtualMachine vm = built.create_vm();
    for (int64_t n : {2, 0, 3})
      expect_matches_reference(vm, mod, {pseudo_random({n, 3}, DataType::float32(), 4)},
                               text + " n " + std::to_string(n));
  }
  ir::IRModule counts = parse(R"(
def @main(%x: Tensor[(n), float32]) { (nonzero(%x), unique(%x)) }
)");
  VirtualMachine vm = build_compiled(counts, "counts").create_vm();
  for (int64_t n : {0, 4, 0})
    expect_matches_reference(vm, counts, {pseudo_random({n}, DataType::float32(), 4)},
                             "n " + std::to_string(n));
}

// An input's unknown dim (?) is named by a size variable the input binds, and so is the
// result of an If whose branches give different sizes, where the branches join: the groups
// reading them compile.
TEST(MatchShape, GroupsAfterAnIfWhoseBranchesDifferCompile) {
  ir::IRModule mod = parse(R"(
def @main(%c: bool, %x: Tensor[(?), float32], %y: Tensor[(?), float32]) {
  %0 = if (%c) { %x } else { %y };
  exp(%0)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  std::string code = built.print_bytecode();
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << code;
  EXPECT_NE(code.find("match_shape"), std::string::npos) << code;
  VirtualMachine vm = built.create_vm();
  Tensor x = pseudo_random({4}, DataType::float32(), 1),
         y = pseudo_random({6}, DataType::float32(), 2);
  for (bool c : {true, false, true}) {
    Tensor cond = Tensor::empty({}, DataType::boolean());
    cond.set_from_double(0, c ? 1 : 0);
    expect_matches_reference(vm, mod, {cond, x, y}, c ? "then" : "else");
  }
}

}  // namespace
}  // namespace anvil
