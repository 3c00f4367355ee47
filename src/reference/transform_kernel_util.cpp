#include "reference/transform_kernel_util.h"

#include <cstring>

#include "anvil/support/error.h"

namespace anvil::reference {

Tensor gather_elements(const Tensor& src, const std::vector<int64_t>& source,
                       std::vector<int64_t> shape) {
  Tensor out = Tensor::empty(std::move(shape), src.dtype());
  ANVIL_ICHECK(int64_t(source.size()) == out.numel(), "source count ", source.size(), " vs ",
               out.numel());
  for (size_t i = 0; i < source.size(); ++i) copy_element(out, int64_t(i), src, source[i]);
  return out;
}

void copy_element(const Tensor& dst, int64_t dst_flat, const Tensor& src, int64_t src_flat) {
  ANVIL_ICHECK(src_flat >= 0 && src_flat < src.numel(), "element ", src_flat, " of ", src.numel());
  int64_t size = src.dtype().bytes();
  std::memcpy(static_cast<char*>(dst.data()) + dst.byte_offset_of(dst_flat),
              static_cast<const char*>(src.data()) + src.byte_offset_of(src_flat), size_t(size));
}

Tensor reshaped_copy(const Tensor& src, std::vector<int64_t> shape) {
  Tensor out = Tensor::empty(src.shape_vector(), src.dtype());
  out.copy_from(src);
  return out.view(std::move(shape));
}

std::vector<int64_t> int_values(const Tensor& t) {
  if (!is_integer_like(t.dtype()))
    throw_error("expected an integer tensor, got ", t.dtype().to_string());
  return to_int64s(t);
}

int64_t scalar_int(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw_error(what, " must hold one value, got a tensor of shape ", shape_to_string(t.shape()));
  return int_values(t)[0];
}

int64_t checked_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw_error(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t ravel(std::span<const int64_t> index, std::span<const int64_t> shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + index[i];
  return flat;
}

}  // namespace anvil::reference
