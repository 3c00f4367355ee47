#include "anvil/runtime/tensor_file.h"

#include "anvil/runtime/params.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"

namespace anvil {

const char* tensor_file_format_name(TensorFileFormat format) {
  switch (format) {
    case TensorFileFormat::Npy:
      return "npy";
    case TensorFileFormat::Npz:
      return "npz";
    case TensorFileFormat::Params:
      return "params";
  }
  return "unknown";
}

std::optional<TensorFileFormat> detect_tensor_file_format(std::string_view bytes) {
  if (bytes.starts_with("PK")) return TensorFileFormat::Npz;
  if (bytes.starts_with("\x93NUMPY")) return TensorFileFormat::Npy;
  if (bytes.size() >= 8 && detail::load_le<uint64_t>(bytes.data()) == kParamsListMagic)
    return TensorFileFormat::Params;
  return std::nullopt;
}

TensorFile read_tensor_file(const std::filesystem::path& path) {
  std::string bytes = detail::read_file_bytes(path, "file " + detail::quoted(path));
  std::optional<TensorFileFormat> format = detect_tensor_file_format(bytes);
  if (!format) {
    if (bytes.empty())
      throw_error("file ", detail::quoted(path), " is empty, not a .npy, .npz or params file");
    throw_error("file ", detail::quoted(path),
                " is not a .npy, .npz or params file (it starts with \"",
                detail::printable(std::string_view(bytes).substr(0, 8)), "\")");
  }
  std::string what =
      std::string(tensor_file_format_name(*format)) + " file " + detail::quoted(path);
  if (*format == TensorFileFormat::Npy)
    return {*format, {{path.stem().string(), parse_npy(bytes, what)}}};
  if (*format == TensorFileFormat::Npz) return {*format, parse_npz(bytes, what)};
  return {*format, load_params(bytes, what)};
}

}  // namespace anvil
