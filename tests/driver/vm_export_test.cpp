// VM packages: a model built by build_vm and written by export_library (.tar with mod.so and
// mod.vm) is loaded by load_module and run, in this process and by package_runner (a program
// linked with libanvil_runtime alone); its outputs must be the in-memory VM's, bit for bit,
// since the library links the same machine code.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "support/test_tensors.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_close;
using testing::filled;

ir::IRModule parse(const std::string& text) { return ir::infer_type(ir::parse_module(text)); }

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape_vector() == b.shape_vector() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), size_t(a.nbytes())) == 0;
}

// Runs both machines on the same inputs and expects the same outputs, bit for bit.
void expect_same_outputs(VirtualMachine& expected, VirtualMachine& got,
                         const std::vector<Tensor>& inputs, const std::string& what) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    expected.set_input(int(i), inputs[i]);
    got.set_input(int(i), inputs[i]);
  }
  expected.run();
  got.run();
  ASSERT_EQ(got.get_num_outputs(), expected.get_num_outputs()) << what;
  for (int i = 0; i < expected.get_num_outputs(); ++i)
    EXPECT_TRUE(same_bytes(expected.get_output(i), got.get_output(i)))
        << what << ": output " << i << " differs from the in-memory VM's";
}

constexpr const char* kSymbolicModule = R"(
def @main(%x: Tensor[(n, 5), float32], %w: Tensor[(5), float32]) {
  %0 = add(%x, %w);
  tanh(multiply(%0, %x))
}
)";

TEST(VmExport, SymbolicDimPackageRunsAtEverySize) {
  ir::IRModule mod = parse(kSymbolicModule);
  // %w is bound as a constant of the executable.
  Tensor w = filled({5}, DataType::float32(), {0.5, -2, 1, 0.25, -0.75});
  driver::VmModule built = driver::build_vm(mod, {{"w", w}});
  std::string code = built.print_bytecode();
  EXPECT_EQ(code.find("invoke_packed"), std::string::npos) << code;
  EXPECT_NE(code.find("load_const"), std::string::npos) << code;

  testing::ScratchDir dir;
  std::string path = (dir / "symbolic.tar").string();
  built.export_library(path);
  Package package = load_module(path);
  ASSERT_TRUE(package.is_vm());
  EXPECT_EQ(vm::print_bytecode(*package.vm_executable), code);
  EXPECT_EQ(package.create_vm().get_input_info()[0].shape, (std::vector<int64_t>{-1, 5}));

  VirtualMachine expected = built.create_vm();
  VirtualMachine loaded = package.create_vm();
  for (int64_t n : {3, 7, 1}) {
    Tensor x = filled({n, 5}, DataType::float32(), {1, -0.5, 2, 3, 0.25, -1.5, 0.75});
    expect_same_outputs(expected, loaded, {x}, "n = " + std::to_string(n));
    EXPECT_EQ(loaded.get_output(0).shape_vector(), (std::vector<int64_t>{n, 5}));
  }
  EXPECT_NE(error_of([&] { package.create_executor(); }).find("use create_vm"), std::string::npos);

  // A program linked with the runtime alone runs the package too.
  Tensor x = filled({4, 5}, DataType::float32(), {0.5, -1, 2});
  write_npz(dir / "inputs.npz", {{"x", x}}, /*compress=*/false);
  std::string outputs = (dir / "outputs.npz").string();
  testing::CommandResult result =
      testing::run_command({ANVIL_PACKAGE_RUNNER, path, (dir / "inputs.npz").string(), outputs});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expected.set_input("x", x);
  expected.run();
  NamedTensors got = read_npz(outputs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(same_bytes(expected.get_output(0), got[0].second));
}

TEST(VmExport, StaticModelWithIfTakesBothBranchesAfterLoading) {
  ir::IRModule mod = parse(R"(
def @main(%c: bool, %x: Tensor[(2, 3), float32]) {
  %0 = add(%x, %x);
  %1 = if (%c) {
    nn.relu(%0)
  } else {
    negative(exp(%0))
  };
  (multiply(%1, %0), %0)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  testing::ScratchDir dir;
  std::string path = (dir / "if.tar").string();
  built.export_library(path);
  Package package = load_module(path);
  ASSERT_TRUE(package.is_vm());
  VirtualMachine expected = built.create_vm();
  VirtualMachine loaded = package.create_vm();
  Tensor x = filled({2, 3}, DataType::float32(), {0.5, -1.0, 2.0, -0.25, 0.0, 1.5});
  for (bool taken : {true, false, true}) {
    Tensor c = Tensor::empty({}, DataType::boolean());
    c.set_from_double(0, taken ? 1 : 0);
    expect_same_outputs(expected, loaded, {c, x}, taken ? "then" : "else");
  }
}

// A group whose compute declines its symbolic dims (grid_sample needs a static input) runs on
// the reference kernels, which a package cannot carry.
TEST(VmExport, ReferenceBackedRuntimeFunctionCannotBeExported) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(1, 2, h, w), float32], %g: Tensor[(1, 2, 3, 3), float32]) {
  image.grid_sample(%x, %g)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  ASSERT_EQ(built.executable()->runtime_funcs.size(), 1u) << built.print_bytecode();
  testing::ScratchDir dir;
  std::string message = error_of([&] { built.export_library((dir / "m.tar").string()); });
  EXPECT_NE(message.find(
                "runtime function 'fused_image_grid_sample' is not a registered global function"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(VmExport, VmPackagesAreTarOnly) {
  driver::VmModule built = driver::build_vm(parse(kSymbolicModule), {});
  testing::ScratchDir dir;
  EXPECT_EQ(
      error_of([&] { built.export_library((dir / "m.so").string()); }),
      "cannot write package '" + (dir / "m.so").string() + "': VM packages are written as .tar");
  EXPECT_NE(error_of([&] {
              built.export_library((dir / "m.zip").string());
            }).find("unknown extension '.zip'"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(VmExport, DamagedExecutableInPackageIsAnErrorNamingMember) {
  driver::VmModule built = driver::build_vm(parse(kSymbolicModule), {});
  testing::ScratchDir dir;
  std::string path = (dir / "m.tar").string();
  built.export_library(path);
  // Tar members are stored as they are: the executable's version field lies just after its
  // magic. (Tar checksums cover headers only.)
  std::string bytes = testing::read_file(path);
  size_t magic = bytes.find(std::string(vm::kExecutableMagic, 8));
  ASSERT_NE(magic, std::string::npos);
  bytes[magic + 8] = 9;
  testing::write_file(path, bytes);
  EXPECT_EQ(error_of([&] { load_module(path); }),
            "package '" + path + "': mod.vm: version 9, expected " +
                std::to_string(vm::kExecutableVersion));
}

TEST(VmExport, GraphPackageIsNotAVmPackage) {
  testing::Workload w = testing::mlp();
  driver::BuiltModule built = driver::build(w.mod, w.params);
  testing::ScratchDir dir;
  std::string path = (dir / "mlp.tar").string();
  built.export_library(path);
  Package package = load_module(path);
  EXPECT_FALSE(package.is_vm());
  EXPECT_NE(error_of([&] { package.create_vm(); }).find("use create_executor"), std::string::npos);
  package.create_executor();
}

}  // namespace
}  // namespace anvil
