// TVM's params format: a list magic, the names, then one DLTensor record per
// name, every integer little-endian. See docs/artifact-format.md.
#include "anvil/runtime/params.h"

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>

#include "anvil/support/error.h"
#include "runtime/binary_io.h"

namespace anvil {
namespace {

// Bytes of a tensor record before its shape: magic, reserved, device, ndim, dtype.
constexpr uint64_t kTensorHeaderBytes = 8 + 8 + 8 + 4 + 4;
// The smallest tensor record: a header, no dims, and the data size field.
constexpr uint64_t kMinTensorRecordBytes = kTensorHeaderBytes + 8;
constexpr bool kHostIsLittleEndian = std::endian::native == std::endian::little;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016" PRIX64, value);
  return text;
}

// A cursor over untrusted bytes: every read checks what remains first.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  T read(const std::string& field) {
    using U = std::make_unsigned_t<T>;
    if (remaining() < sizeof(T))
      throw_error(what_, ": truncated: ", field, " needs ", sizeof(T), " bytes at offset ", pos_,
                  ", ", remaining(), " remain");
    U value = detail::load_le<U>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return static_cast<T>(value);
  }

  std::string_view take(uint64_t n) {
    ANVIL_ICHECK(n <= remaining());
    std::string_view part = bytes_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return part;
  }

 private:
  std::string_view bytes_;
  const std::string& what_;
  size_t pos_ = 0;
};

DataType read_dtype(Reader& in, const std::string& what, const std::string& label) {
  DLDataType dl;
  dl.code = in.read<uint8_t>(label + " dtype code");
  dl.bits = in.read<uint8_t>(label + " dtype bits");
  dl.lanes = in.read<uint16_t>(label + " dtype lanes");
  DataType dtype;
  try {
    dtype = DataType::from_dlpack(dl);
  } catch (const Error&) {
    throw_error(what, ": ", label, " has an unsupported data type (code ", int(dl.code), ", bits ",
                int(dl.bits), ", lanes ", dl.lanes, ")");
  }
  if (!dtype.is_scalar())
    throw_error(what, ": ", label, " has vector type ", dtype.to_string(),
                "; params files hold scalar element types only");
  return dtype;
}

Tensor read_tensor(Reader& in, const std::string& what, const std::string& label) {
  uint64_t magic = in.read<uint64_t>(label + " magic");
  if (magic != kParamsTensorMagic)
    throw_error(what, ": ", label, " starts with ", hex(magic), ", not the tensor magic ",
                hex(kParamsTensorMagic));
  in.read<uint64_t>(label + " reserved field");
  int32_t device_type = in.read<int32_t>(label + " device type");
  in.read<int32_t>(label + " device id");
  if (device_type != kDLCPU)
    throw_error(what, ": ", label, " is stored for device type ", device_type,
                "; params files hold CPU (", int(kDLCPU), ") tensors");
  int32_t ndim = in.read<int32_t>(label + " ndim");
  if (ndim < 0) throw_error(what, ": ", label, " has negative ndim ", ndim);
  if (ndim > detail::kMaxFileDims)
    throw_error(what, ": ", label, " has ", ndim, " dims; at most ", detail::kMaxFileDims,
                " are supported");
  DataType dtype = read_dtype(in, what, label);
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  for (int32_t d = 0; d < ndim; ++d) shape[size_t(d)] = in.read<int64_t>(label + " shape");
  for (int64_t d : shape)
    if (d < 0)
      throw_error(what, ": ", label, " has a negative dimension in shape ", shape_to_string(shape));
  int64_t expected = 0;
  if (!detail::checked_byte_size(shape, dtype.bytes(), &expected))
    throw_error(what, ": ", label, " has shape ", shape_to_string(shape), ", too large to address");
  int64_t data_size = in.read<int64_t>(label + " data size");
  if (data_size != expected)
    throw_error(what, ": ", label, " declares ", data_size, " bytes of data, but a ",
                dtype.to_string(), " tensor of shape ", shape_to_string(shape), " has ", expected);
  if (uint64_t(data_size) > in.remaining())
    throw_error(what, ": truncated: ", label, " declares ", data_size, " bytes of data, ",
                in.remaining(), " remain");
  Tensor tensor = Tensor::empty(std::move(shape), dtype);
  std::string_view data = in.take(uint64_t(data_size));
  if (!data.empty()) std::memcpy(tensor.data(), data.data(), data.size());
  if (!kHostIsLittleEndian)
    detail::byte_swap_elements(tensor.data(), dtype.bytes(), tensor.numel());
  if (dtype.is_bool()) {
    auto* p = tensor.data_as<uint8_t>();
    for (int64_t i = 0, n = tensor.numel(); i < n; ++i) p[i] = p[i] != 0;
  }
  return tensor;
}

}  // namespace

NamedTensors load_params(std::string_view bytes, const std::string& what) {
  if (bytes.empty()) throw_error(what, ": is empty");
  Reader in(bytes, what);
  uint64_t magic = in.read<uint64_t>("the list magic");
  if (magic != kParamsListMagic)
    throw_error(what, ": not a params file: it starts with ", hex(magic), ", not ",
                hex(kParamsListMagic));
  in.read<uint64_t>("the reserved field");

  uint64_t name_count = in.read<uint64_t>("the count of names");
  if (name_count > in.remaining() / 8)
    throw_error(what, ": truncated: declares ", name_count, " names, but only ", in.remaining(),
                " bytes remain");
  std::vector<std::string> names;
  std::set<std::string_view> seen;
  for (uint64_t i = 0; i < name_count; ++i) {
    uint64_t length = in.read<uint64_t>("the length of name " + std::to_string(i));
    if (length > in.remaining())
      throw_error(what, ": truncated: name ", i, " declares ", length, " bytes, ", in.remaining(),
                  " remain");
    names.emplace_back(in.take(length));
  }
  for (const std::string& name : names)
    if (!seen.insert(name).second)
      throw_error(what, ": name '", detail::printable(name), "' appears twice");

  uint64_t tensor_count = in.read<uint64_t>("the count of tensors");
  if (tensor_count != name_count)
    throw_error(what, ": declares ", name_count, " names but ", tensor_count, " tensors");
  if (tensor_count > in.remaining() / kMinTensorRecordBytes)
    throw_error(what, ": truncated: declares ", tensor_count, " tensors, but only ", in.remaining(),
                " bytes remain");
  NamedTensors params;
  params.reserve(size_t(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    std::string label =
        "tensor '" + detail::printable(names[i]) + "' (index " + std::to_string(i) + ")";
    params.emplace_back(names[i], read_tensor(in, what, label));
  }
  if (in.remaining() != 0)
    throw_error(what, ": ", in.remaining(), " unexpected bytes after the last tensor");
  return params;
}

std::string save_params(const NamedTensors& params) {
  std::set<std::string_view> seen;
  for (const auto& [name, tensor] : params) {
    std::string label = "tensor '" + detail::printable(name) + "'";
    if (!seen.insert(name).second) throw_error(label, " appears twice");
    if (!tensor.defined()) throw_error(label, " is undefined");
    if (!tensor.dtype().is_scalar())
      throw_error(label, " has vector type ", tensor.dtype().to_string(),
                  "; params files hold scalar element types only");
  }
  std::string out;
  detail::append_le(out, kParamsListMagic);
  detail::append_le(out, uint64_t(0));
  detail::append_le(out, uint64_t(params.size()));
  for (const auto& entry : params) {
    detail::append_le(out, uint64_t(entry.first.size()));
    out += entry.first;
  }
  detail::append_le(out, uint64_t(params.size()));
  for (const auto& entry : params) {
    const Tensor& tensor = entry.second;
    // Like TVM, every tensor is saved as a CPU tensor.
    detail::append_le(out, kParamsTensorMagic);
    detail::append_le(out, uint64_t(0));
    detail::append_le(out, int32_t(kDLCPU));
    detail::append_le(out, int32_t(0));
    detail::append_le(out, int32_t(tensor.ndim()));
    DLDataType dl = tensor.dtype().to_dlpack();
    detail::append_le(out, dl.code);
    detail::append_le(out, dl.bits);
    detail::append_le(out, dl.lanes);
    for (int64_t d : tensor.shape()) detail::append_le(out, d);
    detail::append_le(out, tensor.nbytes());
    Tensor compact = tensor.is_contiguous() ? tensor : tensor.copy();
    size_t start = out.size();
    out.append(static_cast<const char*>(compact.data()), size_t(compact.nbytes()));
    if (!kHostIsLittleEndian)
      detail::byte_swap_elements(out.data() + start, tensor.dtype().bytes(), tensor.numel());
  }
  return out;
}

void write_params_file(const std::filesystem::path& path, const NamedTensors& params) {
  std::string what = "params file " + detail::quoted(path);
  std::string bytes;
  try {
    bytes = save_params(params);
  } catch (const Error& e) {
    throw_error("cannot write ", what, ": ", e.what());
  }
  detail::write_file_atomically(path, bytes, what);
}

NamedTensors read_params_file(const std::filesystem::path& path) {
  std::string what = "params file " + detail::quoted(path);
  return load_params(detail::read_file_bytes(path, what), what);
}

}  // namespace anvil
