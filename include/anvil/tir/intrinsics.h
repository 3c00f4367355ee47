// The table of tensor-IR intrinsics: math functions the code generators
// vectorize, and builtins (address_of, likely, reinterpret, if_then_else).
#pragma once

#include <string_view>
#include <vector>

namespace anvil::tir {

enum class IntrinsicClass : uint8_t {
  FloatMath,  // elementwise on floats: result dtype = argument dtype
  FloatTest,  // isnan/isinf/isfinite: bool result
  Builtin,    // special meaning, handled by name in each pass and code generator
};

struct IntrinsicInfo {
  std::string_view name;
  int num_args;  // -1: any
  IntrinsicClass intrinsic_class;
  bool pure;  // no side effects: may be moved, duplicated or removed
};

// The intrinsic named name, or nullptr.
const IntrinsicInfo* find_intrinsic(std::string_view name);

// Every intrinsic, in table order.
const std::vector<IntrinsicInfo>& all_intrinsics();

}  // namespace anvil::tir
