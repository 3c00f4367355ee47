// Reading any tensor file anvil knows, choosing the format by content.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "anvil/runtime/npy.h"

namespace anvil {

// The file formats that hold tensors.
enum class TensorFileFormat { Npy, Npz, Params };

// "npy", "npz" or "params".
const char* tensor_file_format_name(TensorFileFormat format);

// The format the bytes start like (zip "PK", "\x93NUMPY", the params list magic), if any.
std::optional<TensorFileFormat> detect_tensor_file_format(std::string_view bytes);

// A file's tensors and the format they were read from.
struct TensorFile {
  TensorFileFormat format;
  NamedTensors tensors;
};

// Reads a .npy, .npz or params file, whatever its name; a .npy array is named
// after the file's stem. Anything else is an Error naming the file.
TensorFile read_tensor_file(const std::filesystem::path& path);

}  // namespace anvil
