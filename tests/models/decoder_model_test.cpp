// The GPT-style decoder of examples/generation (its small size, random weights) as a generation
// loop runs it, against ONNX Runtime's outputs (export_models.py):
//   - gpt_decode: one token against a KV cache whose past length is a symbolic dim, compiled
//     once for the VM and run at three past lengths (1, 37 and 300), logits and the grown
//     cache of every layer;
//   - gpt_prefill: the 32-token prompt without a cache, its sequence length symbolic.
// Every group must be compiled (none left on the reference kernels) and the executable must
// save, as a package needs. max|anvil - ort| <= 1e-4 * max|ort| on each output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/runtime/npy.h"
#include "anvil/runtime/vm_executable.h"
#include "models/check_inputs.h"
#include "models/model_cache.h"

namespace fs = std::filesystem;

namespace anvil {
namespace {

constexpr double kRelativeTolerance = 1e-4;

// Runs `vm` on the inputs of <stem>.input.npz and compares every output with
// <stem>.expected.npz.
void expect_run_matches(VirtualMachine& vm, const fs::path& cache, const std::string& stem) {
  NamedTensors inputs = read_npz(cache / (stem + ".input.npz"));
  NamedTensors expected = read_npz(cache / (stem + ".expected.npz"));
  ASSERT_FALSE(expected.empty()) << stem;
  for (const auto& [name, tensor] : inputs) vm.set_input(name, tensor);
  vm.run();
  ASSERT_EQ(size_t(vm.get_num_outputs()), expected.size()) << stem;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor got = vm.get_output(int(i));
    const Tensor& want = testing::named(expected, "output_" + std::to_string(i));
    ASSERT_EQ(got.shape_vector(), want.shape_vector()) << stem << " output " << i;
    double max_diff = 0, max_magnitude = 0;
    for (int64_t j = 0; j < got.numel(); ++j) {
      const double g = got.get_as_double(j), w = want.get_as_double(j);
      max_diff = std::max(max_diff, std::isfinite(g) ? std::fabs(g - w) : HUGE_VAL);
      max_magnitude = std::max(max_magnitude, std::fabs(w));
    }
    std::printf("%s output %zu: max|anvil - ort| = %.3g, relative %.3g\n", stem.c_str(), i,
                max_diff, max_diff / max_magnitude);
    EXPECT_GT(max_magnitude, 0) << stem << " output " << i;
    EXPECT_LE(max_diff, kRelativeTolerance * max_magnitude) << stem << " output " << i;
  }
}

driver::VmModule build_decoder(const fs::path& cache, const std::string& name) {
  frontend::ImportedModel model = frontend::from_onnx(cache / (name + ".onnx"));
  driver::VmModule built = driver::build_vm(model.mod, model.params);
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << name << "\n" << built.print_bytecode();
  EXPECT_NO_THROW(vm::save_executable(*built.executable())) << name;
  return built;
}

TEST(DecoderModelTest, DecodeStepMatchesOnnxRuntimeAtThreePastLengths) {
  const fs::path cache = testing::model_cache();
  ASSERT_TRUE(fs::exists(cache / "gpt_decode.stamp")) << "gpt_decode is not exported in " << cache;
  driver::VmModule built = build_decoder(cache, "gpt_decode");
  VirtualMachine vm = built.create_vm();
  // One executable for every length, the longest first so that a cache sized by an earlier,
  // longer run cannot hide a wrong shape in a later one.
  for (int past : {300, 1, 37})
    expect_run_matches(vm, cache, "gpt_decode.past" + std::to_string(past));
}

TEST(DecoderModelTest, PrefillMatchesOnnxRuntime) {
  const fs::path cache = testing::model_cache();
  ASSERT_TRUE(fs::exists(cache / "gpt_prefill.stamp"))
      << "gpt_prefill is not exported in " << cache;
  driver::VmModule built = build_decoder(cache, "gpt_prefill");
  VirtualMachine vm = built.create_vm();
  expect_run_matches(vm, cache, "gpt_prefill");
}

}  // namespace
}  // namespace anvil
