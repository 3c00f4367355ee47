// The VM executable's bytes (save_executable / load_executable): a hand-built program using
// every opcode round-trips and runs the same; every truncation, random byte changes and
// hand-made corruptions are Errors naming the problem, never crashes (this suite also runs
// under AddressSanitizer and UndefinedBehaviorSanitizer).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "anvil/runtime/module.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/vm.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_close;
using testing::filled;

using vm::DimProgram;
using vm::Instruction;
using vm::Opcode;
using DimOp = DimProgram::Op;

constexpr const char* kDoubleFunc = "test.vm_serialize.double";

// A runtime function as the VM calls one: the input, then the vector it fills.
ANVIL_REGISTER_GLOBAL(kDoubleFunc, [](const PackedArgs& args) {
  Tensor in = args.get<Tensor>(0);
  auto* outputs = static_cast<std::vector<Tensor>*>(args.get<void*>(1));
  Tensor out = Tensor::empty(in.shape_vector(), in.dtype());
  for (int64_t i = 0; i < in.numel(); ++i) out.set_from_double(i, 2 * in.get_as_double(i));
  outputs->push_back(out);
});

// The kernel library: add_one(in, out) writes in + 1 into out. Like a compiled kernel, it checks
// the shapes it is given.
Module test_library() {
  Module lib = Module::create("test kernels");
  lib.add_function("add_one", PackedFunc::from_typed([](Tensor in, Tensor out) {
                     if (in.shape_vector() != out.shape_vector())
                       throw_error("add_one: shapes differ");
                     for (int64_t i = 0; i < in.numel(); ++i)
                       out.set_from_double(i, in.get_as_double(i) + 1);
                   }));
  return lib;
}

vm::RuntimeFunc runtime_func(std::string name, PackedFunc func, std::string note = {}) {
  vm::RuntimeFunc result;
  result.name = std::move(name);
  result.func = std::move(func);
  result.note = std::move(note);
  return result;
}

Instruction make(Opcode op, std::vector<vm::RegIndex> args, std::vector<vm::RegIndex> dsts,
                 int32_t index = -1) {
  Instruction in;
  in.op = op;
  in.args = std::move(args);
  in.dsts = std::move(dsts);
  in.index = index;
  return in;
}

Instruction jump(Opcode op, std::vector<vm::RegIndex> args, int32_t to, int32_t otherwise = -1) {
  Instruction in = make(op, std::move(args), {});
  in.true_target = to;
  in.false_target = otherwise;
  return in;
}

Instruction alloc(vm::RegIndex dst, std::vector<DimProgram> shape, DataType dtype) {
  Instruction in = make(Opcode::AllocTensor, {}, {dst});
  in.shape = std::move(shape);
  in.dtype = dtype;
  return in;
}

DimProgram var(int64_t index) {
  DimProgram dim;
  dim.steps = {{DimOp::Var, index}};
  return dim;
}

// @main(x: (n, 3) float32, c: () bool): x + 1, doubled by a runtime function or not as c says,
// two constants moved at once, and a tensor of n * 2 + 1 int32 storage. @second returns its
// input. Every opcode appears.
vm::Executable test_executable() {
  vm::Executable exec;
  vm::Function main;
  main.name = "main";
  main.params = {{"x", {-1, 3}, DataType::float32()}, {"c", {}, DataType::boolean()}};
  main.size_vars = {"n"};
  main.param_dims = {{var(0), DimProgram(3)}, {}};
  main.num_registers = 9;
  DimProgram twice_plus_one;
  twice_plus_one.steps = {
      {DimOp::Var, 0}, {DimOp::Const, 2}, {DimOp::Mul, 0}, {DimOp::Const, 1}, {DimOp::Add, 0}};
  main.instructions = {
      make(Opcode::LoadConst, {}, {2}, 0),
      make(Opcode::LoadConst, {}, {3}, 1),
      alloc(4, {var(0), DimProgram(3)}, DataType::float32()),
      make(Opcode::InvokeKernel, {0}, {4}, 0),
      jump(Opcode::If, {1}, 5, 7),
      make(Opcode::InvokePacked, {4}, {5}, 0),
      jump(Opcode::Goto, {}, 8),
      make(Opcode::Move, {4}, {5}),
      make(Opcode::Move, {2, 3}, {6, 7}),
      alloc(8, {twice_plus_one}, DataType::int32()),
      make(Opcode::Ret, {5, 6, 7, 8}, {}),
  };
  vm::Function second;
  second.name = "second";
  second.params = {{"y", {2}, DataType::float32()}};
  second.param_dims = {{DimProgram(2)}};
  second.num_registers = 1;
  second.instructions = {make(Opcode::Ret, {0}, {})};
  exec.functions = {main, second};

  Tensor weights = Tensor::empty({3}, DataType::float32());
  for (int64_t i = 0; i < 3; ++i) weights.set_from_double(i, 0.5 * double(i) - 1);
  Tensor ids = Tensor::empty({2}, DataType::int32());
  ids.set_from_double(0, -7);
  ids.set_from_double(1, 40000);
  exec.constants = {weights, ids};
  exec.lib = test_library();
  exec.kernel_names = {"add_one"};
  exec.runtime_funcs = {runtime_func(kDoubleFunc, get_global(kDoubleFunc), "doubles its input")};
  return exec;
}

vm::Executable load(const std::string& bytes, Module lib = test_library()) {
  return vm::load_executable(bytes, std::move(lib), "mod.vm");
}

// The Error message of loading `exec` after `change` damaged it (save does not check what
// load checks, so corrupt programs can be written).
template <typename F>
std::string load_error(F&& change) {
  vm::Executable exec = test_executable();
  change(exec);
  std::string bytes = vm::save_executable(exec);
  return error_of([&] { load(bytes); });
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape_vector() == b.shape_vector() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), size_t(a.nbytes())) == 0;
}

// Runs @main of exec on x and c and returns the outputs.
std::vector<Tensor> run(const vm::Executable& exec, const Tensor& x, bool c) {
  VirtualMachine machine(std::make_shared<const vm::Executable>(exec));
  machine.set_input("x", x);
  Tensor cond = Tensor::empty({}, DataType::boolean());
  cond.set_from_double(0, c ? 1 : 0);
  machine.set_input("c", cond);
  machine.run();
  std::vector<Tensor> outputs;
  for (int i = 0; i < machine.get_num_outputs(); ++i) outputs.push_back(machine.get_output(i));
  return outputs;
}

TEST(VmSerialize, RoundTripKeepsProgramAndConstants) {
  vm::Executable original = test_executable();
  std::string bytes = vm::save_executable(original);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(std::memcmp(bytes.data(), vm::kExecutableMagic, 8), 0);
  vm::Executable loaded = load(bytes);
  EXPECT_EQ(vm::print_bytecode(loaded), vm::print_bytecode(original));
  ASSERT_EQ(loaded.constants.size(), original.constants.size());
  for (size_t i = 0; i < original.constants.size(); ++i)
    EXPECT_TRUE(same_bytes(loaded.constants[i], original.constants[i])) << "constant " << i;
  EXPECT_EQ(loaded.kernel_names, original.kernel_names);
  ASSERT_EQ(loaded.runtime_funcs.size(), 1u);
  EXPECT_TRUE(loaded.runtime_funcs[0].func.same_as(get_global(kDoubleFunc)));
  ASSERT_EQ(loaded.functions.size(), 2u);
  const vm::Function& main = loaded.functions[0];
  EXPECT_EQ(main.size_vars, std::vector<std::string>{"n"});
  ASSERT_EQ(main.param_dims.size(), 2u);
  EXPECT_TRUE(main.param_dims[0][0] == var(0));
  EXPECT_TRUE(main.instructions[9].shape[0] == original.functions[0].instructions[9].shape[0]);
  // Saving what was loaded gives the same bytes.
  EXPECT_EQ(vm::save_executable(loaded), bytes);
}

TEST(VmSerialize, LoadedExecutableRunsLikeTheOriginal) {
  vm::Executable original = test_executable();
  vm::Executable loaded = load(vm::save_executable(original));
  for (int64_t n : {2, 5}) {
    Tensor x = Tensor::empty({n, 3}, DataType::float32());
    for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, 0.25 * double(i) - 1);
    for (bool c : {true, false}) {
      SCOPED_TRACE("n = " + std::to_string(n) + (c ? ", then" : ", else"));
      std::vector<Tensor> expected = run(original, x, c);
      std::vector<Tensor> got = run(loaded, x, c);
      ASSERT_EQ(got.size(), 4u);
      ASSERT_EQ(expected.size(), 4u);
      // The first three outputs are computed; the last is storage of n * 2 + 1 elements.
      for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same_bytes(expected[i], got[i])) << i;
      EXPECT_EQ(got[0].get_as_double(1), (0.25 - 1 + 1) * (c ? 2 : 1));
      EXPECT_EQ(got[3].shape_vector(), std::vector<int64_t>{n * 2 + 1});
    }
  }
}

TEST(VmSerialize, EveryTruncationIsAnError) {
  std::string bytes = vm::save_executable(test_executable());
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::string message = error_of([&] { load(bytes.substr(0, length)); });
    EXPECT_NE(message, "") << "a prefix of " << length << " bytes loaded";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(error_of([&] { load(bytes.substr(0, 30)); }).find("mod.vm: truncated at byte "),
            std::string::npos);
}

TEST(VmSerialize, RandomByteChangesGiveAnErrorOrAValidExecutable) {
  const std::string bytes = vm::save_executable(test_executable());
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
  std::uniform_int_distribution<int> value(0, 255);
  int loaded = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string changed = bytes;
    size_t at = position(rng);
    changed[at] = char(value(rng));
    try {
      vm::Executable exec = load(changed);
      ++loaded;
      // What loads is sound enough to print and to start a VM over.
      vm::print_bytecode(exec);
      VirtualMachine machine(std::make_shared<const vm::Executable>(std::move(exec)));
      EXPECT_GE(machine.get_num_inputs(), 0);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "byte " << at << ": not an anvil::Error: " << e.what();
    }
  }
  // Changed names, constant data and unchanged bytes load; the test saw both outcomes.
  EXPECT_GT(loaded, 0);
  EXPECT_LT(loaded, 400);
}

TEST(VmSerialize, EveryBitFlipGivesAnErrorOrAValidExecutable) {
  const std::string bytes = vm::save_executable(test_executable());
  int rejected = 0;
  for (size_t at = 0; at < bytes.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::string changed = bytes;
      changed[at] = char(changed[at] ^ (1 << bit));
      try {
        vm::print_bytecode(load(changed));
      } catch (const Error&) {
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << at << " bit " << bit << ": not an anvil::Error: " << e.what();
      }
    }
  EXPECT_GT(rejected, 0);
}

TEST(VmSerialize, WrongMagicOrVersionIsAnError) {
  std::string bytes = vm::save_executable(test_executable());
  std::string bad = bytes;
  bad[0] = 'X';
  EXPECT_EQ(error_of([&] { load(bad); }), "mod.vm: bad magic (not a VM executable)");
  bad = bytes;
  bad[8] = 7;
  EXPECT_EQ(error_of([&] { load(bad); }), "mod.vm: version 7, expected 4");
  EXPECT_NE(error_of([&] { load(bytes + "x"); }).find("1 trailing bytes"), std::string::npos);
  EXPECT_NE(error_of([&] { load(""); }).find("truncated at byte 0"), std::string::npos);
}

// A function of call_dps_packed travels by name and is looked up at each call; its calling
// convention is one byte (the last of this file), and it never has destination registers.
TEST(VmSerialize, DestinationPassingFunctionsTravelByName) {
  vm::Executable exec = test_executable();
  exec.runtime_funcs.push_back(vm::destination_passing_func("test.not.registered.yet"));
  std::string bytes = vm::save_executable(exec);
  vm::Executable loaded = load(bytes);
  ASSERT_EQ(loaded.runtime_funcs.size(), 2u);
  EXPECT_TRUE(loaded.runtime_funcs[1].destination_passing);
  EXPECT_FALSE(loaded.runtime_funcs[0].destination_passing);
  EXPECT_EQ(loaded.runtime_funcs[1].name, "test.not.registered.yet");
  EXPECT_NE(error_of([&] {
              loaded.runtime_funcs[1].func();
            }).find("no function is registered under 'test.not.registered.yet'"),
            std::string::npos);
  std::string message = load_error([](vm::Executable& e) {
    e.runtime_funcs[0] = vm::destination_passing_func(e.runtime_funcs[0].name);
  });
  EXPECT_NE(message.find("(invoke_packed) calls a destination-passing runtime function with "
                         "destinations"),
            std::string::npos)
      << message;
  std::string bad = bytes;
  bad.back() = 2;
  EXPECT_EQ(error_of([&] { load(bad); }),
            "mod.vm: runtime function 'test.not.registered.yet' has calling convention 2, expected "
            "0 or 1");
}

// Each corruption, made in memory and saved, and the message that names it.
TEST(VmSerialize, CorruptProgramsAreErrorsNamingTheProblem) {
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[3].args = {99}; }),
            "mod.vm: instruction 3 of @main (invoke_kernel) uses register r99 (the function has "
            "9)");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[4].true_target = 99; }),
            "mod.vm: instruction 4 of @main (if) jumps to 99 (the function has 11)");
  // Only a goto jumps back, into a loop with a way out (an if jumping past the goto).
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[4].true_target = 2; }),
            "mod.vm: instruction 4 of @main (if) jumps back to 2 (only a goto closes a loop)");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[6].true_target = 5; }),
            "mod.vm: instruction 6 of @main (goto) jumps back to 5 into a loop that has no exit");
  // Back to 3, the if at 4 leaves the loop (to 7): a loop the VM can run.
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[6].true_target = 3; }),
            "");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[1].index = 2; }),
            "mod.vm: instruction 1 of @main (load_const) refers to constant 2 (the executable "
            "has 2)");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[3].index = 1; }),
            "mod.vm: instruction 3 of @main (invoke_kernel) refers to kernel 1 (the executable "
            "has 1)");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[5].index = -1; }),
            "mod.vm: instruction 5 of @main (invoke_packed) refers to runtime function -1 (the "
            "executable has 1)");
  EXPECT_EQ(load_error([](vm::Executable& e) {
              e.functions[0].instructions[0].dsts = {2, 3};
            }),
            "mod.vm: instruction 0 of @main (load_const) has 0 arguments and 2 destinations, "
            "expected 0 and 1");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[4].args = {}; }),
            "mod.vm: instruction 4 of @main (if) has 0 arguments and 0 destinations, expected 1 "
            "and 0");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[8].dsts = {6}; }),
            "mod.vm: instruction 8 of @main (move) moves 2 registers into 1");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].num_registers = 1; }),
            "mod.vm: @main has 2 parameters but 1 registers");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].num_registers = 1000; }),
            "mod.vm: @main declares 1000 registers, but its parameters and instructions use at "
            "most 11");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[1].instructions.clear(); }),
            "mod.vm: @second has no instructions");
  EXPECT_EQ(load_error([](vm::Executable& e) {
              e.functions[0].instructions.back() = make(Opcode::Move, {5}, {5});
            }),
            "mod.vm: @main does not end with ret");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions.clear(); }),
            "mod.vm: the executable has no functions");
  // The else branch no longer writes r5, which ret reads.
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[7].dsts = {6}; }),
            "mod.vm: instruction 10 of @main (ret) reads r5, which holds no value on some path "
            "to it");
  // The kernel's output storage must exist before it is called.
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].instructions[2].dsts = {8}; }),
            "mod.vm: instruction 3 of @main (invoke_kernel) reads r4, which holds no value on "
            "some path to it");
  EXPECT_EQ(load_error([](vm::Executable& e) {
              e.functions[0].params[0].shape = {-1, 4};
            }),
            "mod.vm: dim 1 of parameter 'x' of @main is 4 in the shape but 3 in its program");
}

TEST(VmSerialize, CorruptDimProgramsAreErrors) {
  auto with_dim = [](std::vector<DimProgram::Step> steps) {
    return load_error(
        [&](vm::Executable& e) { e.functions[0].instructions[9].shape[0].steps = steps; });
  };
  EXPECT_EQ(with_dim({{DimOp::Var, 0}, {DimOp::Const, 2}}),
            "mod.vm: dim 0 of instruction 9 of @main (alloc_tensor) is unbalanced: it leaves 2 "
            "values instead of one");
  EXPECT_EQ(with_dim({{DimOp::Var, 0}, {DimOp::Add, 0}}),
            "mod.vm: dim 0 of instruction 9 of @main (alloc_tensor) is unbalanced: step 1 "
            "applies an operator to 1 operand");
  EXPECT_EQ(with_dim({}), "mod.vm: dim 0 of instruction 9 of @main (alloc_tensor) is empty");
  EXPECT_EQ(with_dim({{DimOp::Var, 1}}),
            "mod.vm: dim 0 of instruction 9 of @main (alloc_tensor) reads size variable 1 (the "
            "function has 1)");
  std::vector<DimProgram::Step> deep(17, {DimOp::Const, 1});
  EXPECT_EQ(with_dim(deep),
            "mod.vm: dim 0 of instruction 9 of @main (alloc_tensor) nests deeper than 16 at step "
            "16");
  EXPECT_EQ(with_dim({{DimOp::Const, -3}}),
            "mod.vm: instruction 9 of @main (alloc_tensor) allocates a tensor with static dims "
            "(-3,), negative or too large to address");
  EXPECT_EQ(load_error([](vm::Executable& e) { e.functions[0].param_dims[0][0] = var(4); }),
            "mod.vm: dim 0 of parameter 'x' of @main reads size variable 4 (the function has 1)");
  // An opcode or operator byte out of range, written over a saved program.
  vm::Executable exec = test_executable();
  exec.functions[0].instructions.back().op = Opcode(200);
  EXPECT_EQ(error_of([&] { load(vm::save_executable(exec)); }),
            "mod.vm: instruction 10 of @main has unknown opcode 200");
}

TEST(VmSerialize, KernelsAndRuntimeFunctionsAreLookedUp) {
  std::string bytes = vm::save_executable(test_executable());
  EXPECT_EQ(error_of([&] { load(bytes, Module::create("empty")); }),
            "mod.vm: kernel 'add_one' is not in the kernel library");

  // A runtime function registered when saved but not when loaded.
  const std::string name = "test.vm_serialize.temporary";
  register_global(name, PackedFunc([](const PackedArgs&) { return Value(); }));
  vm::Executable exec = test_executable();
  exec.runtime_funcs.push_back(runtime_func(name, get_global(name)));
  std::string with_temporary = vm::save_executable(exec);
  remove_global(name);
  EXPECT_EQ(error_of([&] { load(with_temporary); }),
            "mod.vm: runtime function 'test.vm_serialize.temporary' is not registered in this "
            "process");
}

TEST(VmSerialize, ClosuresCannotBeSaved) {
  vm::Executable exec = test_executable();
  exec.runtime_funcs.push_back(
      runtime_func("fused_nonzero", PackedFunc([](const PackedArgs&) { return Value(); })));
  std::string message = error_of([&] { vm::save_executable(exec); });
  EXPECT_NE(message.find("runtime function 'fused_nonzero' is not a registered global function"),
            std::string::npos)
      << message;
  // A function of the registered name that is not the registered one is refused too.
  exec.runtime_funcs.back() =
      runtime_func(kDoubleFunc, PackedFunc([](const PackedArgs&) { return Value(); }));
  EXPECT_NE(error_of([&] { vm::save_executable(exec); }).find(kDoubleFunc), std::string::npos);
}

TEST(VmSerialize, ExecutableWithoutKernelsNeedsNoLibrary) {
  vm::Executable exec;
  vm::Function main;
  main.name = "main";
  main.params = {{"x", {2}, DataType::float32()}};
  main.num_registers = 1;
  main.instructions = {make(Opcode::Ret, {0}, {})};
  exec.functions = {main};
  vm::Executable loaded = vm::load_executable(vm::save_executable(exec), Module(), "m");
  EXPECT_EQ(vm::print_bytecode(loaded), vm::print_bytecode(exec));
}

}  // namespace
}  // namespace anvil
