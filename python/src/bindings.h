// What the binding files of the _core extension share: how Python objects become tensors, and
// the entry points that each file adds to the module.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "anvil/runtime/tensor.h"

namespace anvil::python {

namespace nb = nanobind;

// A tensor for `what` (an input's name, an argument): an NDArray as it is (shared), any other
// array (numpy, anything with __dlpack__ or the buffer protocol) wrapped without a copy. Throws
// Error naming `what` for an object that is no array or an array that is not C-contiguous.
Tensor as_tensor(nb::handle object, const std::string& what);

// The NDArray of a tensor (sharing its storage).
nb::object to_python(const Tensor& tensor);

void bind_runtime(nb::module_& m);
void bind_executors(nb::module_& m);
void bind_compiler(nb::module_& m);
void bind_tools(nb::module_& m);

}  // namespace anvil::python
