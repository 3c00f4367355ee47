// The bfloat16 convolution groups the x86 bf16 kernel tests share: a case's shapes, its graph
// text (conv + bias + relu, as a fused group of a network) and its reference run.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topi/x86_schedule_check.h"

namespace anvil::topi_test {

inline std::string dims(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t v : d) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

struct Bf16ConvCase {
  const char* name;
  int64_t batch, in_blocks, in_block, out_blocks, out_block, height, width, kernel, stride, pad;
  int64_t dilation = 1;
};

// nn.contrib_conv2d_NCHWc_bf16 + bias + relu over the case's blocked data and packed weight.
inline std::string bf16_conv_group(const Bf16ConvCase& c) {
  return "fn (%x: Tensor[(" + dims({c.batch, c.in_blocks, c.height, c.width, c.in_block}) +
         "), bfloat16], %w: Tensor[(" +
         dims({c.out_blocks, c.in_blocks, c.kernel, c.kernel, c.in_block / 2, c.out_block * 2}) +
         "), bfloat16], %b: Tensor[(" + dims({1, c.out_blocks, 1, 1, c.out_block}) +
         "), float32]) {\n  %0 = nn.contrib_conv2d_NCHWc_bf16(%x, %w, strides=[" +
         dims({c.stride, c.stride}) + "], padding=[" + dims({c.pad, c.pad, c.pad, c.pad}) +
         "], dilation=[" + dims({c.dilation, c.dilation}) + "], kernel_size=[" +
         dims({c.kernel, c.kernel}) + "], data_layout=\"NCHW" + std::to_string(c.in_block) +
         "c\", kernel_layout=\"OIHW" + std::to_string(c.in_block / 2) + "i" +
         std::to_string(c.out_block) + "o2i\", out_layout=\"NCHW" + std::to_string(c.out_block) +
         "c\", out_dtype=\"float32\");\n  %1 = add(%0, %b);\n  nn.relu(%1)\n}";
}

// A group's function, seeded random inputs and the reference interpreter's one output.
struct ReferenceRun {
  ir::Function fn;
  std::vector<Tensor> inputs;
  Tensor expected;
};

inline ReferenceRun reference_run(const std::string& function_text, uint64_t seed) {
  ReferenceRun run{primitive_function(function_text), {}, {}};
  ir::IRModule mod;
  mod.add("main", run.fn);
  for (size_t i = 0; i < run.fn->params.size(); ++i) {
    const auto* type = ir::as<ir::TensorTypeNode>(run.fn->params[i]->checked_type);
    run.inputs.push_back(random_tensor(*type->static_shape(), type->dtype, seed + i));
  }
  std::vector<Tensor> expected = reference::Interpreter(mod).run(run.inputs);
  EXPECT_EQ(expected.size(), 1u);
  if (!expected.empty()) run.expected = expected[0];
  return run;
}

}  // namespace anvil::topi_test
