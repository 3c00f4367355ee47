#include "anvil/runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include "anvil/support/error.h"
#include "anvil/support/half.h"
#include "anvil/support/minifloat.h"
#include "runtime/binary_io.h"

namespace anvil {

// The storage record behind a Tensor handle: the DLTensor plus the arrays it
// points into, and whatever keeps the data alive.
class Tensor::Node : public RefCounted {
 public:
  DLTensor dl{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  // Runs when the record dies: frees an owned buffer or calls a DLPack deleter.
  std::function<void()> release;
  // A view keeps its base alive.
  Ref<Node> base;

  ~Node() override {
    if (release) release();
  }

  void finish_layout() {
    dl.ndim = int32_t(shape.size());
    dl.shape = shape.data();
    if (strides.empty()) strides = compact_strides(shape);
    dl.strides = strides.data();
  }

  static std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> result(shape.size());
    int64_t step = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      result[i] = step;
      step *= shape[i];
    }
    return result;
  }
};

namespace {

void check_shape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0) throw_error("tensor shape ", shape, " has a negative dimension");
}

void check_cpu(Device device) {
  if (device.type != DeviceType::CPU)
    throw_error("device ", device.to_string(), " is not available in this build");
}

}  // namespace

// Special members live here, where Node is complete.
Tensor::Tensor() = default;
Tensor::Tensor(Ref<Node> node) : node_(std::move(node)) {}
Tensor::Tensor(const Tensor&) = default;
Tensor::Tensor(Tensor&&) noexcept = default;
Tensor& Tensor::operator=(const Tensor&) = default;
Tensor& Tensor::operator=(Tensor&&) noexcept = default;
Tensor::~Tensor() = default;
int32_t Tensor::use_count() const { return node_ ? node_->use_count() : 0; }

int64_t shape_numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_to_string(std::span<const int64_t> shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) text += ",";
  return text + ")";
}

Tensor Tensor::empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  check_shape(shape);
  check_cpu(device);
  // Shapes computed at run time (the VM's dims) can be anything: a size or stride that
  // overflows int64 is an Error, not a wrong allocation.
  int64_t bytes = 0;
  if (!detail::checked_byte_size(shape, dtype.bytes(), &bytes) ||
      bytes > std::numeric_limits<int64_t>::max() - int64_t(kAlignment))
    throw_error("tensor shape ", shape, " of ", dtype.to_string(), " is too large to allocate");
  auto node = make_ref<Node>();
  node->shape = std::move(shape);
  node->finish_layout();
  size_t alloc = size_t((bytes + kAlignment - 1) / kAlignment * kAlignment);
  void* data = std::aligned_alloc(kAlignment, alloc == 0 ? kAlignment : alloc);
  if (!data) throw_error("out of memory allocating a tensor of ", bytes, " bytes");
  node->release = [data] { std::free(data); };
  node->dl.data = data;
  node->dl.device = device.to_dlpack();
  node->dl.dtype = dtype.to_dlpack();
  return Tensor(node);
}

Tensor Tensor::zeros(std::vector<int64_t> shape, DataType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  std::memset(t.data(), 0, size_t(t.nbytes()));
  return t;
}

Tensor Tensor::wrap(void* data, std::vector<int64_t> shape, DataType dtype,
                    std::vector<int64_t> strides, Device device) {
  check_shape(shape);
  ANVIL_ICHECK(strides.empty() || strides.size() == shape.size());
  auto node = make_ref<Node>();
  node->shape = std::move(shape);
  node->strides = std::move(strides);
  node->finish_layout();
  node->dl.data = data;
  node->dl.device = device.to_dlpack();
  node->dl.dtype = dtype.to_dlpack();
  return Tensor(node);
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  ANVIL_ICHECK(managed != nullptr);
  const DLTensor& src = managed->dl_tensor;
  auto node = make_ref<Node>();
  // Set the release first so the producer's deleter runs even if validation throws.
  node->release = [managed] {
    if (managed->deleter) managed->deleter(managed);
  };
  DataType dtype = DataType::from_dlpack(src.dtype);
  if (src.ndim < 0) throw_error("DLPack tensor has negative ndim ", src.ndim);
  node->shape.assign(src.shape, src.shape + src.ndim);
  if (src.strides) node->strides.assign(src.strides, src.strides + src.ndim);
  check_shape(node->shape);
  node->finish_layout();
  node->dl.data = static_cast<char*>(src.data) + src.byte_offset;
  node->dl.device = src.device;
  node->dl.dtype = dtype.to_dlpack();
  return Tensor(node);
}

DLManagedTensor* Tensor::to_dlpack() const {
  ANVIL_ICHECK(defined());
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor = node_->dl;
  // The handle stored in manager_ctx keeps the storage record alive.
  managed->manager_ctx = new Tensor(*this);
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<Tensor*>(self->manager_ctx);
    delete self;
  };
  return managed;
}

const DLTensor& Tensor::dl_tensor() const {
  ANVIL_ICHECK(defined());
  return node_->dl;
}
void* Tensor::data() const { return dl_tensor().data; }
DataType Tensor::dtype() const { return DataType::from_dlpack(dl_tensor().dtype); }
Device Tensor::device() const {
  return Device{DeviceType(dl_tensor().device.device_type), dl_tensor().device.device_id};
}
int Tensor::ndim() const { return dl_tensor().ndim; }
std::span<const int64_t> Tensor::shape() const { return {node_->shape}; }
std::vector<int64_t> Tensor::shape_vector() const { return node_->shape; }
std::span<const int64_t> Tensor::strides() const { return {node_->strides}; }
int64_t Tensor::numel() const { return shape_numel(shape()); }
int64_t Tensor::nbytes() const { return numel() * dtype().bytes(); }

bool Tensor::is_contiguous() const {
  return node_->strides == Node::compact_strides(node_->shape) || numel() == 0;
}

Tensor Tensor::view(std::vector<int64_t> new_shape) const {
  check_shape(new_shape);
  if (!is_contiguous()) throw_error("cannot view a strided tensor with a new shape");
  if (shape_numel(new_shape) != numel())
    throw_error("cannot view a tensor of shape ", shape_to_string(shape()), " as ",
                shape_to_string(new_shape), ": element counts differ");
  auto node = make_ref<Node>();
  node->shape = std::move(new_shape);
  node->finish_layout();
  node->dl.data = node_->dl.data;
  node->dl.device = node_->dl.device;
  node->dl.dtype = node_->dl.dtype;
  node->base = node_;
  return Tensor(node);
}

Tensor Tensor::prefix_view(std::vector<int64_t> new_shape, DataType new_dtype) const {
  check_shape(new_shape);
  if (!is_contiguous()) throw_error("cannot view the bytes of a strided tensor");
  int64_t bytes = 0;
  if (!detail::checked_byte_size(new_shape, new_dtype.bytes(), &bytes) || bytes > nbytes())
    throw_error("cannot view ", shape_to_string(new_shape), " ", new_dtype.to_string(), " in the ",
                nbytes(), " bytes of a tensor of shape ", shape_to_string(shape()));
  auto node = make_ref<Node>();
  node->shape = std::move(new_shape);
  node->finish_layout();
  node->dl.data = node_->dl.data;
  node->dl.device = node_->dl.device;
  node->dl.dtype = new_dtype.to_dlpack();
  node->base = node_;
  return Tensor(node);
}

Tensor Tensor::copy() const {
  Tensor result = empty(shape_vector(), dtype(), device());
  result.copy_from(*this);
  return result;
}

int64_t Tensor::byte_offset_of(int64_t flat_index) const {
  int64_t offset = 0;
  for (int i = ndim(); i-- > 0;) {
    int64_t dim = node_->shape[i];
    offset += (flat_index % dim) * node_->strides[i];
    flat_index /= dim;
  }
  return offset * dtype().bytes();
}

void Tensor::copy_from(const Tensor& src) {
  ANVIL_ICHECK(defined() && src.defined());
  if (src.dtype() != dtype() ||
      !std::equal(shape().begin(), shape().end(), src.shape().begin(), src.shape().end()))
    throw_error("cannot copy a ", src.dtype().to_string(), " tensor of shape ",
                shape_to_string(src.shape()), " into a ", dtype().to_string(), " tensor of shape ",
                shape_to_string(shape()));
  if (is_contiguous() && src.is_contiguous()) {
    std::memmove(data(), src.data(), size_t(nbytes()));
    return;
  }
  int64_t elem = dtype().bytes();
  auto* dst_bytes = static_cast<char*>(data());
  auto* src_bytes = static_cast<const char*>(src.data());
  for (int64_t i = 0, n = numel(); i < n; ++i)
    std::memcpy(dst_bytes + byte_offset_of(i), src_bytes + src.byte_offset_of(i), size_t(elem));
}

double Tensor::get_as_double(int64_t flat_index) const {
  const char* p = static_cast<const char*>(data()) + byte_offset_of(flat_index);
  DataType t = dtype();
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  if (t.is_bool()) return load(uint8_t{}) != 0;
  if (t.is_minifloat()) return minifloat_decode(load(uint8_t{}), t.minifloat_format());
  switch (t.code) {
    case DataType::Float:
      if (t.bits == 16) return half_to_float(load(uint16_t{}));
      if (t.bits == 32) return load(float{});
      return load(double{});
    case DataType::BFloat:
      return bfloat16_to_float(load(uint16_t{}));
    case DataType::Int:
      if (t.bits <= 8) return load(int8_t{});
      if (t.bits == 16) return load(int16_t{});
      if (t.bits == 32) return load(int32_t{});
      return double(load(int64_t{}));
    default:
      if (t.bits <= 8) return load(uint8_t{});
      if (t.bits == 16) return load(uint16_t{});
      if (t.bits == 32) return load(uint32_t{});
      return double(load(uint64_t{}));
  }
}

void Tensor::set_from_double(int64_t flat_index, double value) {
  char* p = static_cast<char*>(data()) + byte_offset_of(flat_index);
  DataType t = dtype();
  auto store = [p](auto v) { std::memcpy(p, &v, sizeof(v)); };
  if (t.is_bool()) return store(uint8_t(value != 0));
  if (t.is_minifloat())
    return store(uint8_t(minifloat_encode(value, t.minifloat_format(), /*saturate=*/true)));
  if (t.is_sub_byte_int()) return store(uint8_t(wrap_to_bits(int64_t(value), t)));
  switch (t.code) {
    case DataType::Float:
      if (t.bits == 16) return store(float_to_half(float(value)));
      if (t.bits == 32) return store(float(value));
      return store(value);
    case DataType::BFloat:
      return store(float_to_bfloat16(float(value)));
    case DataType::Int:
      if (t.bits == 8) return store(int8_t(value));
      if (t.bits == 16) return store(int16_t(value));
      if (t.bits == 32) return store(int32_t(value));
      return store(int64_t(value));
    default:
      if (t.bits == 8) return store(uint8_t(value));
      if (t.bits == 16) return store(uint16_t(value));
      if (t.bits == 32) return store(uint32_t(value));
      return store(uint64_t(value));
  }
}

void Tensor::fill(double value) {
  int64_t n = numel();
  if (n == 0) return;
  set_from_double(0, value);
  const char* first = static_cast<const char*>(data()) + byte_offset_of(0);
  int64_t elem = dtype().bytes();
  for (int64_t i = 1; i < n; ++i)
    std::memcpy(static_cast<char*>(data()) + byte_offset_of(i), first, size_t(elem));
}

}  // namespace anvil
