// Pieces shared by the reference kernels of the transform, index and creation
// families, and the registration functions of their files. Data movement is
// done by copying each element's bytes, so every dtype moves exactly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/kernel_util.h"

namespace anvil::reference {

// Parts of the families' registration, one per file.
void register_transform_shape_kernels();   // transform_kernels.cpp
void register_transform_slice_kernels();   // transform_slice_kernels.cpp
void register_transform_layout_kernels();  // transform_layout_kernels.cpp
void register_index_gather_kernels();      // index_kernels.cpp
void register_index_scatter_kernels();     // index_scatter_kernels.cpp
void register_index_sort_kernels();        // index_sort_kernels.cpp

// Flat row-major index of a multi-index.
int64_t ravel(std::span<const int64_t> index, std::span<const int64_t> shape);

// A new compact tensor of `shape` and src's dtype whose element i is src's
// element source[i] (flat row-major indices into src).
Tensor gather_elements(const Tensor& src, const std::vector<int64_t>& source,
                       std::vector<int64_t> shape);

// A new tensor of out_shape whose element at each multi-index is src's
// element at the multi-index source_of(index) returns.
template <typename SourceOf>
Tensor remap(const Tensor& src, std::vector<int64_t> out_shape, SourceOf source_of) {
  std::vector<int64_t> in_shape = src.shape_vector();
  std::vector<int64_t> source(size_t(shape_numel(out_shape)));
  for (size_t o = 0; o < source.size(); ++o) {
    std::vector<int64_t> from = source_of(unravel(int64_t(o), out_shape));
    source[o] = ravel(from, in_shape);
  }
  return gather_elements(src, source, std::move(out_shape));
}

// Copies the bytes of src's element src_flat over dst's element dst_flat.
void copy_element(const Tensor& dst, int64_t dst_flat, const Tensor& src, int64_t src_flat);

// A compact copy of src with another shape of the same element count.
Tensor reshaped_copy(const Tensor& src, std::vector<int64_t> shape);

// The values of an integer tensor of any rank (a shape, axes, a scalar k).
std::vector<int64_t> int_values(const Tensor& t);
// The single value of a scalar or one-element integer tensor; Error naming `what` otherwise.
int64_t scalar_int(const Tensor& t, const char* what);

// Axis in [-rank, rank) turned into [0, rank); Error naming `what` otherwise.
int64_t checked_axis(int64_t axis, int64_t rank, const char* what);

}  // namespace anvil::reference
