// Tensor: an n-dimensional array in DLPack's DLTensor layout (TVM's NDArray).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <span>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/device.h"
#include "anvil/support/ref.h"

namespace anvil {

// A refcounted tensor handle. Copying the handle shares the data; copy()
// makes a new buffer. A tensor either owns a 64-byte aligned buffer, views
// another tensor's buffer, or wraps memory imported through DLPack.
class Tensor {
 public:
  // Alignment of every buffer anvil allocates: one cache line, one AVX-512 vector.
  static constexpr size_t kAlignment = 64;

  // A null handle; defined() is false.
  Tensor();
  Tensor(const Tensor&);
  Tensor(Tensor&&) noexcept;
  Tensor& operator=(const Tensor&);
  Tensor& operator=(Tensor&&) noexcept;
  ~Tensor();

  // A new uninitialized tensor that owns its buffer.
  static Tensor empty(std::vector<int64_t> shape, DataType dtype, Device device = Device::cpu());
  // A new tensor filled with zeros.
  static Tensor zeros(std::vector<int64_t> shape, DataType dtype, Device device = Device::cpu());
  // A tensor over memory someone else owns; the caller keeps it alive.
  // Empty strides mean compact row-major.
  static Tensor wrap(void* data, std::vector<int64_t> shape, DataType dtype,
                     std::vector<int64_t> strides = {}, Device device = Device::cpu());
  // Takes ownership of a DLPack tensor; its deleter runs when the last handle goes.
  static Tensor from_dlpack(DLManagedTensor* managed);
  // Exports to DLPack sharing this buffer; the consumer calls deleter once.
  DLManagedTensor* to_dlpack() const;

  bool defined() const { return bool(node_); }
  // The DLTensor describing this tensor; valid while any handle lives.
  const DLTensor& dl_tensor() const;
  void* data() const;
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }
  DataType dtype() const;
  Device device() const;
  int ndim() const;
  std::span<const int64_t> shape() const;
  std::vector<int64_t> shape_vector() const;
  std::span<const int64_t> strides() const;
  int64_t numel() const;
  // Bytes of the elements (numel * element size), not of the allocation.
  int64_t nbytes() const;
  bool is_contiguous() const;

  // A tensor of another shape over the same contiguous buffer; element counts must match.
  Tensor view(std::vector<int64_t> shape) const;
  // A compact tensor of another shape and dtype over the leading bytes of this contiguous
  // buffer, which must hold them; it keeps the buffer alive (use_count counts it).
  Tensor prefix_view(std::vector<int64_t> shape, DataType dtype) const;
  // A compact deep copy.
  Tensor copy() const;
  // Copies the elements of src (same shape and dtype, any strides) into this tensor.
  void copy_from(const Tensor& src);
  // Sets every element to value, converted to the element type.
  void fill(double value);
  // The element at a row-major logical index, converted to double.
  double get_as_double(int64_t flat_index) const;
  // Stores value, converted to the element type, at a row-major logical index.
  void set_from_double(int64_t flat_index, double value);
  // Byte offset of a row-major logical index, honouring strides.
  int64_t byte_offset_of(int64_t flat_index) const;

  // Handles sharing this tensor's storage record.
  int32_t use_count() const;
  // Same storage record (not just equal contents).
  bool same_as(const Tensor& other) const { return node_ == other.node_; }

  class Node;

 private:
  explicit Tensor(Ref<Node> node);
  Ref<Node> node_;
};

// Product of the dims (1 for a scalar).
int64_t shape_numel(std::span<const int64_t> shape);

// "(1, 3, 224, 224)".
std::string shape_to_string(std::span<const int64_t> shape);

}  // namespace anvil
