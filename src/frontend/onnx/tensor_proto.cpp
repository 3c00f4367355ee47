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
    // Numbers newer than the compiled-in onnx.proto may know: the field is an int32.
    case kOnnxFloat8E4M3FN:
      return DataType::float8_e4m3fn();
    case kOnnxFloat8E4M3FNUZ:
      return DataType::float8_e4m3fnuz();
    case kOnnxFloat8E5M2:
      return DataType::float8_e5m2();
    case kOnnxFloat8E5M2FNUZ:
      return DataType::float8_e5m2fnuz();
    case kOnnxUInt4:
      return DataType::uint4();
    case kOnnxInt4:
      return DataType::int4();
    case kOnnxFloat4E2M1:
      return DataType::float4_e2m1fn();
    case kOnnxFloat8E8M0:
      return DataType::float8_e8m0fnu();
    case kOnnxUInt2:
      return DataType::uint2();
    case kOnnxInt2:
      return DataType::int2();
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
  if (dtype == DataType::float8_e4m3fn()) return kOnnxFloat8E4M3FN;
  if (dtype == DataType::float8_e4m3fnuz()) return kOnnxFloat8E4M3FNUZ;
  if (dtype == DataType::float8_e5m2()) return kOnnxFloat8E5M2;
  if (dtype == DataType::float8_e5m2fnuz()) return kOnnxFloat8E5M2FNUZ;
  if (dtype == DataType::uint4()) return kOnnxUInt4;
  if (dtype == DataType::int4()) return kOnnxInt4;
  if (dtype == DataType::float4_e2m1fn()) return kOnnxFloat4E2M1;
  if (dtype == DataType::float8_e8m0fnu()) return kOnnxFloat8E8M0;
  if (dtype == DataType::uint2()) return kOnnxUInt2;
  if (dtype == DataType::int2()) return kOnnxInt2;
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

// Elements of a type narrower than a byte, packed by ONNX (the first in the low bits) into
// `packed`, spread one to a byte as anvil stores them: integers sign- or zero-extended.
void unpack_sub_byte(const std::string& packed, DataType dtype, Tensor& t) {
  const int bits = dtype.bits, per_byte = 8 / bits;
  auto* out = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint8_t byte = uint8_t(packed[size_t(i / per_byte)]);
    int64_t field = (byte >> ((i % per_byte) * bits)) & ((1 << bits) - 1);
    out[i] = uint8_t(dtype.is_minifloat() ? field : wrap_to_bits(field, dtype));
  }
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
  // Types narrower than a byte are stored packed: their bytes on file are fewer.
  const bool packed = dtype.bits < 8 && !dtype.is_bool();
  const int64_t per_byte = packed ? 8 / dtype.bits : 1;
  int64_t bytes = packed ? (numel + per_byte - 1) / per_byte : numel * dtype.bytes();
  auto expect_count = [&](int64_t count) {
    if (count != numel)
      throw_error(what, " of shape ", shape, " holds ", count, " values instead of ", numel);
  };
  auto from_bytes = [&](const std::string& data) {
    Tensor t = Tensor::empty(shape, dtype);
    if (packed)
      unpack_sub_byte(data, dtype, t);
    else
      std::memcpy(t.data(), data.data(), size_t(bytes));
    return t;
  };
  // The data is checked against the declared shape before anything is
  // allocated, so a corrupt header cannot ask for gigabytes.
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return from_bytes(read_external(proto, base_dir, what, bytes));
  if (proto.has_raw_data()) {
    if (int64_t(proto.raw_data().size()) != bytes)
      throw_error(what, " of shape ", shape, " has ", proto.raw_data().size(),
                  " raw bytes instead of ", bytes);
    return from_bytes(proto.raw_data());
  }
  if (packed) {
    // int32_data holds the packed bytes, one to an entry.
    if (proto.int32_data_size() != bytes)
      throw_error(what, " of shape ", shape, " holds ", proto.int32_data_size(),
                  " packed values instead of ", bytes);
    std::string data(size_t(bytes), '\0');
    for (int64_t i = 0; i < bytes; ++i) data[size_t(i)] = char(proto.int32_data(int(i)));
    return from_bytes(data);
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
