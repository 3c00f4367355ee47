// Modules that mix compiled loops with registered functions, run by the VM (the MLC course's
// end-to-end lesson): call_tir of a PrimFunc of the module, call_dps_packed of a function of
// the global registry that writes the outputs the VM allocated. Plain C++ is the oracle.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/ir/parser.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "support/test_tensors.h"
#include "tir/text_corpus.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::pseudo_random;

// linear0 (a PrimFunc, symbolic m and n), then test.vm.relu (a registered function) on the
// result: relu(x w^T + b) with x of (1, m), w of (n, m).
std::string mixed_module(int64_t m, int64_t n) {
  std::string t = "Tensor[(1, " + std::to_string(n) + "), float32]";
  return "prim_func @linear0 " + std::string(tir::testing::kLinear0) + "\n" +
         "def @main(%x: Tensor[(1, " + std::to_string(m) + "), float32], %w: Tensor[(" +
         std::to_string(n) + ", " + std::to_string(m) + "), float32], %b: Tensor[(" +
         std::to_string(n) + "), float32]) {\n" +
         "  dataflow {\n"
         "    %lv0 = call_tir(@linear0, (%x, %w, %b), out=" +
         t +
         ");\n"
         "    %gv = call_dps_packed(\"test.vm.relu\", (%lv0), out=" +
         t +
         ");\n"
         "    output(%gv);\n"
         "  }\n"
         "  %gv\n"
         "}\n";
}

std::vector<float> expected(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t n = w.shape()[0], m = w.shape()[1];
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    float acc = 0;
    for (int64_t k = 0; k < m; ++k) acc += x.data_as<float>()[k] * w.data_as<float>()[j * m + k];
    out[size_t(j)] = std::max(acc + b.data_as<float>()[j], 0.f);
  }
  return out;
}

int relu_calls = 0;

void register_relu() {
  register_global("test.vm.relu", PackedFunc::from_typed([](Tensor x, Tensor out) {
                    ++relu_calls;
                    for (int64_t i = 0; i < x.numel(); ++i)
                      out.data_as<float>()[i] = std::max(x.data_as<float>()[i], 0.f);
                  }),
                  /*override_existing=*/true);
}

void expect_runs(VirtualMachine& vm, int64_t m, int64_t n, uint64_t seed) {
  Tensor x = pseudo_random({1, m}, DataType::float32(), seed);
  Tensor w = pseudo_random({n, m}, DataType::float32(), seed + 1);
  Tensor b = pseudo_random({n}, DataType::float32(), seed + 2);
  vm.set_input("x", x);
  vm.set_input("w", w);
  vm.set_input("b", b);
  const int before = relu_calls;
  vm.run();
  EXPECT_EQ(relu_calls, before + 1);
  Tensor out = vm.get_output(0);
  ASSERT_EQ(out.shape_vector(), (std::vector<int64_t>{1, n}));
  std::vector<float> want = expected(x, w, b);
  for (int64_t j = 0; j < n; ++j)
    EXPECT_NEAR(out.data_as<float>()[j], want[size_t(j)], 1e-4) << "m=" << m << " n=" << n;
}

class MixedModule : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(MixedModule, CallTirAndCallDpsPackedMatchPlainCpp) {
  tir::install_graph_ir_hooks();
  register_relu();
  auto [m, n] = GetParam();
  driver::VmModule built = driver::build_vm(ir::parse_module(mixed_module(m, n)), {});
  std::string code = built.print_bytecode();
  EXPECT_NE(code.find("invoke_kernel"), std::string::npos) << code;
  EXPECT_NE(code.find("invoke_packed test.vm.relu"), std::string::npos) << code;
  VirtualMachine vm = built.create_vm();
  expect_runs(vm, m, n, 1);
  expect_runs(vm, m, n, 7);  // a second run reuses the storage
}

INSTANTIATE_TEST_SUITE_P(Shapes, MixedModule,
                         ::testing::Values(std::pair<int64_t, int64_t>{784, 128},
                                           std::pair<int64_t, int64_t>{3, 1},
                                           std::pair<int64_t, int64_t>{17, 33},
                                           std::pair<int64_t, int64_t>{64, 10}));

// The function is found by name at each call: one registered again after the build is the one
// called, one removed fails the run naming it, and the package loads and runs elsewhere.
TEST(MixedModule, FunctionsTravelByNameThroughPackages) {
  tir::install_graph_ir_hooks();
  register_relu();
  driver::VmModule built = driver::build_vm(ir::parse_module(mixed_module(8, 4)), {});
  auto path = std::filesystem::temp_directory_path() / "anvil-mixed-module-test.tar";
  built.export_library(path.string());
  Package package = load_module(path.string());
  std::filesystem::remove(path);
  VirtualMachine loaded = package.create_vm();
  expect_runs(loaded, 8, 4, 3);

  int replaced = 0;
  register_global("test.vm.relu", PackedFunc::from_typed([&](Tensor x, Tensor out) {
                    ++replaced;
                    out.copy_from(x);
                  }),
                  true);
  loaded.run();
  EXPECT_EQ(replaced, 1);

  ASSERT_TRUE(remove_global("test.vm.relu"));
  std::string message = error_of([&] { loaded.run(); });
  EXPECT_NE(message.find("no function is registered under 'test.vm.relu'"), std::string::npos)
      << message;
  register_relu();
}

TEST(MixedModule, OutputDimsTheInputsDoNotDetermineAreNamed) {
  tir::install_graph_ir_hooks();
  register_relu();
  const char* text = R"(def @main(%x: Tensor[(n), float32]) {
  call_dps_packed("test.vm.relu", (%x), out=Tensor[(k), float32])
})";
  std::string message = error_of([&] { driver::build_vm(ir::parse_module(text), {}); });
  EXPECT_NE(message.find("call_dps_packed(\"test.vm.relu\") declares output dim k"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace anvil
