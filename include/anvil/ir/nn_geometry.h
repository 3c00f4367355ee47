// The spatial attributes of convolutions and pools (strides, dilation, padding) in the one
// form every layer reads them: the relations check them with these, and the passes, the
// computes and the reference kernels read them back the same way.
#pragma once

#include <cstdint>
#include <vector>

namespace anvil::ir::nn {

// Checks an attribute holding one value per spatial axis (1 value is spread
// to all) and at least `min_value` each; returns the n values.
std::vector<int64_t> spatial_attr(const std::vector<int64_t>& values, size_t n, const char* attr,
                                  int64_t min_value);

// Checks padding given as 1, n or 2n non-negative values and returns the 2n
// form: every axis' before-padding, then every after-padding. Throws Error naming
// `attr` otherwise.
std::vector<int64_t> expand_padding(const std::vector<int64_t>& values, size_t n,
                                    const char* attr = "padding");

}  // namespace anvil::ir::nn
