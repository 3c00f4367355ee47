// TensorProto to Tensor: typed repeated fields, raw little-endian bytes, or
// external data in a file beside the model.
#include <cstring>
#include <fstream>

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

DataType onnx_dtype(int32_t onnx_type, const std::string& what) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT:
      return DataType::float32();
    case onnx::TensorProto::UINT8:
      return DataType::uint8();
    case onnx::TensorProto::INT8:
      return DataType::int8();
    case onnx::TensorProto::UINT16:
      return DataType::uint16();
    case onnx::TensorProto::INT16:
      return DataType::int16();
    case onnx::TensorProto::INT32:
      return DataType::int32();
    case onnx::TensorProto::INT64:
      return DataType::int64();
    case onnx::TensorProto::BOOL:
      return DataType::boolean();
    case onnx::TensorProto::FLOAT16:
      return DataType::float16();
    case onnx::TensorProto::DOUBLE:
      return DataType::float64();
    case onnx::TensorProto::UINT32:
      return DataType::uint32();
    case onnx::TensorProto::UINT64:
      return DataType::uint64();
    case onnx::TensorProto::BFLOAT16:
      return DataType::bfloat16();
    case onnx::TensorProto::STRING:
      throw_error(what, " has element type string, which is not supported");
    case onnx::TensorProto::COMPLEX64:
    case onnx::TensorProto::COMPLEX128:
      throw_error(what, " has a complex element type, which is not supported");
    default:
      throw_error(what, " has ONNX element type ", onnx_type, ", which is not supported");
  }
}

int32_t to_onnx_dtype(DataType dtype) {
  if (dtype.is_bool()) return onnx::TensorProto::BOOL;
  if (dtype == DataType::float32()) return onnx::TensorProto::FLOAT;
  if (dtype == DataType::float16()) return onnx::TensorProto::FLOAT16;
  if (dtype == DataType::float64()) return onnx::TensorProto::DOUBLE;
  if (dtype == DataType::bfloat16()) return onnx::TensorProto::BFLOAT16;
  if (dtype == DataType::int8()) return onnx::TensorProto::INT8;
  if (dtype == DataType::int16()) return onnx::TensorProto::INT16;
  if (dtype == DataType::int32()) return onnx::TensorProto::INT32;
  if (dtype == DataType::int64()) return onnx::TensorProto::INT64;
  if (dtype == DataType::uint8()) return onnx::TensorProto::UINT8;
  if (dtype == DataType::uint16()) return onnx::TensorProto::UINT16;
  if (dtype == DataType::uint32()) return onnx::TensorProto::UINT32;
  if (dtype == DataType::uint64()) return onnx::TensorProto::UINT64;
  throw_error("data type ", dtype.to_string(), " has no ONNX equivalent");
}

namespace {

std::string read_external(const onnx::TensorProto& proto, const std::filesystem::path& base_dir,
                          const std::string& what, int64_t expected_bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      throw_error(what, ": external data entry '", entry.key(), "' is not a number: '",
                  entry.value(), "'");
    }
  }
  if (location.empty()) throw_error(what, ": external data without a location");
  std::filesystem::path path(location);
  if (path.is_absolute() || location.find("..") != std::string::npos)
    throw_error(what, ": external data location '", location,
                "' must be a relative path beside the model");
  path = base_dir / path;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw_error(what, ": external data file '", path.string(), "' cannot be opened");
  file.seekg(0, std::ios::end);
  int64_t size = file.tellg();
  if (length < 0) length = expected_bytes;
  if (offset < 0 || length != expected_bytes || offset + length > size)
    throw_error(what, ": external data in '", path.string(), "' holds ", size, " bytes; need ",
                expected_bytes, " at offset ", offset);
  std::string bytes(size_t(length), '\0');
  file.seekg(offset);
  file.read(bytes.data(), length);
  return bytes;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::filesystem::path& base_dir) {
  std::string what = "tensor '" + proto.name() + "'";
  DataType dtype = onnx_dtype(proto.data_type(), what);
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) throw_error(what, " has a negative dimension in ", shape);
    if (d > 0 && numel > (int64_t(1) << 40) / d)
      throw_error(what, " is implausibly large: ", shape);
    numel *= d;
  }
  int64_t bytes = numel * dtype.bytes();
  auto expect_count = [&](int64_t count) {
    if (count != numel)
      throw_error(what, " of shape ", shape, " holds ", count, " values instead of ", numel);
  };
  // The data is checked against the declared shape before anything is
  // allocated, so a corrupt header cannot ask for gigabytes.
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string data = read_external(proto, base_dir, what, bytes);
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.data(), data.data(), size_t(bytes));
    return t;
  }
  if (proto.has_raw_data()) {
    if (int64_t(proto.raw_data().size()) != bytes)
      throw_error(what, " of shape ", shape, " has ", proto.raw_data().size(),
                  " raw bytes instead of ", bytes);
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.data(), proto.raw_data().data(), size_t(bytes));
    return t;
  }
  int64_t count = dtype == DataType::float32()   ? proto.float_data_size()
                  : dtype == DataType::float64() ? proto.double_data_size()
                  : dtype == DataType::int64()   ? proto.int64_data_size()
                  : (dtype == DataType::uint64() || dtype == DataType::uint32())
                      ? proto.uint64_data_size()
                      : proto.int32_data_size();
  expect_count(count);
  Tensor t = Tensor::empty(shape, dtype);
  if (dtype == DataType::float32()) {
    expect_count(proto.float_data_size());
    std::copy(proto.float_data().begin(), proto.float_data().end(), t.data_as<float>());
  } else if (dtype == DataType::float64()) {
    expect_count(proto.double_data_size());
    std::copy(proto.double_data().begin(), proto.double_data().end(), t.data_as<double>());
  } else if (dtype == DataType::int64()) {
    expect_count(proto.int64_data_size());
    std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data_as<int64_t>());
  } else if (dtype == DataType::uint64() || dtype == DataType::uint32()) {
    expect_count(proto.uint64_data_size());
    for (int64_t i = 0; i < numel; ++i) {
      uint64_t v = proto.uint64_data(int(i));
      std::memcpy(static_cast<char*>(t.data()) + i * dtype.bytes(), &v, size_t(dtype.bytes()));
    }
  } else {
    // int32_data carries every narrower type; float16/bfloat16 as their bit patterns.
    expect_count(proto.int32_data_size());
    for (int64_t i = 0; i < numel; ++i) {
      int32_t v = proto.int32_data(int(i));
      std::memcpy(static_cast<char*>(t.data()) + i * dtype.bytes(), &v, size_t(dtype.bytes()));
    }
  }
  return t;
}

}  // namespace anvil::frontend::onnx_import
