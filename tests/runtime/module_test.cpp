#include "anvil/runtime/module.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using anvil::testing::ScratchDir;

// The message of the anvil::Error fn throws; fails the test if it throws none.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Modules built in memory ----

TEST(ModuleTest, InMemoryFunctionTable) {
  Module m = Module::create("ops");
  EXPECT_TRUE(m.defined());
  EXPECT_EQ(m.name(), "ops");
  m.add_function("neg", PackedFunc::from_typed([](int64_t x) { return -x; }));
  m.add_function("abs", PackedFunc::from_typed([](double x) { return std::fabs(x); }));
  EXPECT_EQ(m.function_names(), (std::vector<std::string>{"abs", "neg"}));
  ASSERT_TRUE(m.get_function("neg").has_value());
  EXPECT_EQ((*m.get_function("neg"))(4).as_int(), -4);
  EXPECT_EQ(m.function("abs")(-2.5).as_float(), 2.5);
  EXPECT_EQ(m.function("neg").name(), "neg");
  EXPECT_FALSE(m.get_function("sqrt").has_value());
  EXPECT_EQ(error_of([&] { m.function("sqrt"); }), "module 'ops' has no function named 'sqrt'");
  EXPECT_EQ(error_of([&] { m.add_function("neg", PackedFunc::from_typed([] {})); }),
            "module 'ops' already has a function named 'neg'");
  m.add_function("neg", PackedFunc::from_typed([](int64_t x) { return x; }), true);
  EXPECT_EQ(m.function("neg")(4).as_int(), 4);
  // Copies share the table.
  Module copy = m;
  copy.add_function("id", PackedFunc::from_typed([](int64_t x) { return x; }));
  EXPECT_TRUE(m.get_function("id").has_value());
  EXPECT_FALSE(Module().defined());
}

// ---- Kernel libraries ----

TEST(ModuleTest, LoadsAKernelLibraryAndCallsItsKernels) {
  Module m = Module::load_shared(ANVIL_TEST_KERNELS);
  EXPECT_EQ(m.name(), ANVIL_TEST_KERNELS);
  EXPECT_EQ(m.function_names(),
            (std::vector<std::string>{"add_one", "echo", "fail", "fail_silently", "parallel_fail",
                                      "parallel_fill", "return_tensor", "type_code"}));
  Tensor x = Tensor::empty({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) x.set_from_double(i, i * 0.5);
  PackedFunc add_one = m.function("add_one");
  EXPECT_EQ(add_one.name(), "add_one");
  EXPECT_TRUE(add_one(x).is_null());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x.get_as_double(i), i * 0.5 + 1) << i;
  // A kernel's own argument check comes back as an error naming the kernel.
  EXPECT_EQ(error_of([&] { add_one(3); }),
            "kernel 'add_one' in '" +
                std::filesystem::path(ANVIL_TEST_KERNELS).filename().string() +
                "' failed: add_one expects one float32 tensor");
}

TEST(ModuleTest, KernelFailureCarriesTheLastErrorText) {
  Module m = Module::load_shared(ANVIL_TEST_KERNELS);
  std::string message = error_of([&] { m.function("fail")(); });
  EXPECT_TRUE(contains(message, "kernel 'fail'")) << message;
  EXPECT_TRUE(contains(message, "the fail kernel always fails")) << message;
  message = error_of([&] { m.function("fail_silently")(); });
  EXPECT_TRUE(contains(message, "kernel 'fail_silently'")) << message;
  EXPECT_TRUE(contains(message, "error code 7 (no message was set)")) << message;
  // A stale message from an earlier failure is not reused.
  AnvilSetLastError("stale");
  message = error_of([&] { m.function("fail_silently")(); });
  EXPECT_FALSE(contains(message, "stale")) << message;
}

TEST(ModuleTest, ScalarArgumentsAndResultsCrossTheAbi) {
  Module m = Module::load_shared(ANVIL_TEST_KERNELS);
  PackedFunc echo = m.function("echo");
  PackedFunc type_code = m.function("type_code");
  EXPECT_EQ(echo(int64_t(-42)).as_int(), -42);
  EXPECT_EQ(echo(2.25).as_float(), 2.25);
  EXPECT_EQ(echo("hello").as_string(), "hello");
  EXPECT_EQ(echo(DataType::float32().with_lanes(16)).as_dtype(), DataType(DataType::Float, 32, 16));
  EXPECT_TRUE(echo(nullptr).is_null());
  int local = 0;
  EXPECT_EQ(echo(static_cast<void*>(&local)).as_handle(), &local);
  EXPECT_EQ(echo(true).as_int(), 1);
  EXPECT_EQ(type_code(1).as_int(), kAnvilInt);
  EXPECT_EQ(type_code(1.0).as_int(), kAnvilFloat);
  EXPECT_EQ(type_code("s").as_int(), kAnvilStr);
  EXPECT_EQ(type_code(Value()).as_int(), kAnvilNull);
  EXPECT_EQ(type_code(Tensor::zeros({1}, DataType::int8())).as_int(), kAnvilDLTensor);
  EXPECT_EQ(type_code(DataType::int8()).as_int(), kAnvilDataType);
  EXPECT_EQ(type_code(static_cast<void*>(&local)).as_int(), kAnvilHandle);
}

TEST(ModuleTest, ValuesTheAbiCannotCarryAreRejected) {
  Module m = Module::load_shared(ANVIL_TEST_KERNELS);
  EXPECT_EQ(error_of([&] { m.function("echo")(PackedFunc::from_typed([] {})); }),
            "argument 0 of 'echo': a function cannot be passed to a compiled kernel");
  EXPECT_EQ(error_of([&] { m.function("echo")(Tensor()); }),
            "argument 0 of 'echo': the tensor is undefined");
  EXPECT_EQ(error_of([&] { m.function("return_tensor")(Tensor::zeros({1}, DataType::int8())); }),
            "kernel 'return_tensor' returned a DLTensor; kernels return results through output "
            "arguments");
}

TEST(ModuleTest, KernelsUseTheThreadPoolAndWorkspace) {
  Module m = Module::load_shared(ANVIL_TEST_KERNELS);
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor x = Tensor::zeros({1001}, DataType::float32());
    m.function("parallel_fill")(x);
    for (int i = 0; i < 1001; ++i) ASSERT_EQ(x.get_as_double(i), 2.0 * i) << i;
    std::string message = error_of([&] { m.function("parallel_fail")(); });
    EXPECT_TRUE(contains(message, "task 1 of parallel_fail failed")) << message;
  }
  set_num_threads(0);
}

TEST(ModuleTest, LibraryStaysLoadedWhileAFunctionFromItLives) {
  PackedFunc add_one;
  {
    Module m = Module::load_shared(ANVIL_TEST_KERNELS);
    add_one = m.function("add_one");
  }
  Tensor x = Tensor::zeros({4}, DataType::float32());
  add_one(x);
  EXPECT_EQ(x.get_as_double(3), 1.0);
  std::string path = std::filesystem::absolute(ANVIL_TEST_KERNELS).string();
  void* still_loaded = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(still_loaded, nullptr);
  if (still_loaded) dlclose(still_loaded);
  add_one = PackedFunc();
  // The last reference is gone, so is the library.
  void* after = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(after, nullptr);
  if (after) dlclose(after);
}

TEST(ModuleTest, MissingFileErrorNamesThePath) {
  EXPECT_EQ(error_of([] { Module::load_shared("/nonexistent/dir/kernels.so"); }),
            "cannot load kernel library '/nonexistent/dir/kernels.so': no such file");
}

TEST(ModuleTest, TextFileNamedSoIsRejectedWithTheLoadersReason) {
  ScratchDir dir;
  std::string path = (dir / "fake.so").string();
  anvil::testing::write_file(path, "this is not an ELF file, just text pretending to be one\n");
  std::string message = error_of([&] { Module::load_shared(path); });
  EXPECT_TRUE(contains(message, "cannot load kernel library '" + path + "': ")) << message;
  // dlerror's own explanation follows.
  EXPECT_TRUE(contains(message, "ELF") || contains(message, "too short")) << message;
}

TEST(ModuleTest, SharedObjectWithoutTheTableIsNotAKernelLibrary) {
  std::string path = ANVIL_TEST_KERNELS_NO_TABLE;
  EXPECT_EQ(error_of([&] { Module::load_shared(path); }),
            "'" + path +
                "' is not an anvil kernel library: symbol 'anvil_library_abi_version' not found");
  // A system library is not one either.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(static_cast<double (*)(double)>(&::cos)), &info), 0);
  std::string libm = info.dli_fname;
  EXPECT_TRUE(contains(libm, "libm")) << libm;
  EXPECT_EQ(error_of([&] { Module::load_shared(libm); }),
            "'" + libm +
                "' is not an anvil kernel library: symbol 'anvil_library_abi_version' not found");
}

TEST(ModuleTest, AbiVersionMismatchIsRejected) {
  std::string path = ANVIL_TEST_KERNELS_BAD_ABI;
  EXPECT_EQ(error_of([&] { Module::load_shared(path); }),
            "'" + path +
                "' was built for anvil kernel ABI version 999, but this runtime supports " +
                "version " + std::to_string(ANVIL_ABI_VERSION));
}

// ---- Runtime services of the C ABI ----

TEST(ModuleCAbiTest, LastErrorIsPerThread) {
  AnvilSetLastError("main thread error");
  std::string seen_in_other_thread;
  std::thread other([&] {
    seen_in_other_thread = AnvilGetLastError();
    AnvilSetLastError("other thread error");
  });
  other.join();
  EXPECT_EQ(seen_in_other_thread, "");
  EXPECT_STREQ(AnvilGetLastError(), "main thread error");
  AnvilSetLastError(nullptr);
  EXPECT_STREQ(AnvilGetLastError(), "");
}

TEST(ModuleCAbiTest, WorkspaceIsAlignedWritableAndReused) {
  // A size no other test uses, so no other cached block has the same capacity.
  constexpr uint64_t kSize = 123456 - 7;
  void* a = AnvilBackendAllocWorkspace(kSize, 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 0xab, kSize);
  EXPECT_EQ(AnvilBackendFreeWorkspace(a), 0);
  // The same size again comes from this thread's cache.
  void* b = AnvilBackendAllocWorkspace(kSize, 64);
  EXPECT_EQ(b, a);
  void* wide = AnvilBackendAllocWorkspace(10, 4096);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 4096, 0u);
  void* empty = AnvilBackendAllocWorkspace(0, 0);
  EXPECT_NE(empty, nullptr);
  EXPECT_EQ(AnvilBackendFreeWorkspace(empty), 0);
  EXPECT_EQ(AnvilBackendFreeWorkspace(wide), 0);
  EXPECT_EQ(AnvilBackendFreeWorkspace(nullptr), 0);
  // A pointer into the middle of a block is refused.
  std::memset(b, 0, 256);
  EXPECT_NE(AnvilBackendFreeWorkspace(static_cast<char*>(b) + 128), 0);
  EXPECT_TRUE(contains(AnvilGetLastError(), "not returned by AnvilBackendAllocWorkspace"));
  EXPECT_EQ(AnvilBackendFreeWorkspace(b), 0);
  EXPECT_EQ(AnvilBackendAllocWorkspace(64, 3), nullptr);
  EXPECT_TRUE(contains(AnvilGetLastError(), "power of two"));
}

TEST(ModuleCAbiTest, WorkspaceMayBeFreedOnAnotherThreadAndManyBlocksCoexist) {
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) {
    void* p = AnvilBackendAllocWorkspace(uint64_t(64 * (i + 1)), 0);
    ASSERT_NE(p, nullptr);
    std::memset(p, i, size_t(64 * (i + 1)));
    blocks.push_back(p);
  }
  std::thread other([&] {
    for (size_t i = 0; i < blocks.size(); i += 2)
      EXPECT_EQ(AnvilBackendFreeWorkspace(blocks[i]), 0);
  });
  other.join();
  for (size_t i = 1; i < blocks.size(); i += 2) EXPECT_EQ(AnvilBackendFreeWorkspace(blocks[i]), 0);
}

}  // namespace
}  // namespace anvil
