// numpy's .npy and .npz files: how tensors travel between anvil and Python.
//
// Readers accept format versions 1.0, 2.0 and 3.0, little- and big-endian
// descriptors of bool, int8..int64, uint8..uint64, float16, float32 and
// float64, 0-d and zero-size arrays. They reject Fortran-ordered arrays
// (unless the layout is the same as C order), structured and object dtypes.
// bfloat16 and vector types have no numpy dtype: writers reject them.
// Every failure is an anvil::Error whose one-line message names the source.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/runtime/tensor.h"

namespace anvil {

// Named tensors in file order, as an .npz archive or a params file holds them.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Parses the bytes of a .npy file; `what` names the source in errors ("npy file 'x.npy'").
Tensor parse_npy(std::string_view bytes, const std::string& what);
// Reads a .npy file.
Tensor read_npy(const std::filesystem::path& path);
// The bytes of a .npy file (version 1.0, or 2.0 when the header needs it) holding the tensor.
std::string serialize_npy(const Tensor& tensor);
// Writes a .npy file through a temporary file, so a failed write leaves no output behind.
void write_npy(const std::filesystem::path& path, const Tensor& tensor);

// Parses the bytes of an .npz archive (stored or deflated entries); names lose their ".npy".
NamedTensors parse_npz(std::string_view bytes, const std::string& what);
// Reads an .npz archive written by np.savez or np.savez_compressed.
NamedTensors read_npz(const std::filesystem::path& path);
// The bytes of an .npz archive; entries are deflated when `compress` is set, else stored.
std::string serialize_npz(const NamedTensors& tensors, bool compress);
// Writes an .npz archive through a temporary file.
void write_npz(const std::filesystem::path& path, const NamedTensors& tensors, bool compress);

}  // namespace anvil
