// How the runtime functions of builtins.h are registered: as global functions with the VM's
// runtime-function convention (the input tensors, then a std::vector<Tensor>* that receives
// the one output), checking the argument count.
#pragma once

#include <utility>
#include <vector>

#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"

namespace anvil::builtins::detail {

template <typename F, size_t... I>
Tensor call_with_tensors(F f, const PackedArgs& args, std::index_sequence<I...>) {
  return f(args.get<Tensor>(I)...);
}

// Registers f (a function of tensors returning one tensor) under name.
template <typename... Tensors>
void register_runtime_function(const char* name, Tensor (*f)(const Tensors&...)) {
  register_global(
      name, PackedFunc(
                [name, f](const PackedArgs& args) -> Value {
                  constexpr size_t arity = sizeof...(Tensors);
                  if (args.size() != arity + 1)
                    throw_error(name, " takes ", size_t(arity), " tensors, got ", args.size() - 1);
                  auto* outputs = args.get<std::vector<Tensor>*>(arity);
                  *outputs = {call_with_tensors(f, args, std::make_index_sequence<arity>())};
                  return Value();
                },
                name));
}

}  // namespace anvil::builtins::detail
