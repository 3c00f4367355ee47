// TVM's params binary format (save_param_dict / load_param_dict): the weights
// of a compiled model, byte-compatible with TVM in both directions.
// The layout is described in docs/artifact-format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "anvil/runtime/npy.h"

namespace anvil {

// First eight bytes of every params file (TVM's kTVMNDArrayListMagic).
inline constexpr uint64_t kParamsListMagic = 0xF7E58D4F05049CB7ull;
// First eight bytes of every tensor record (TVM's kTVMNDArrayMagic).
inline constexpr uint64_t kParamsTensorMagic = 0xDD5E40F096B4A13Full;

// The params bytes of named CPU tensors, in the given order.
std::string save_params(const NamedTensors& params);
// Parses params bytes; `what` names the source in errors ("params file 'x.params'").
NamedTensors load_params(std::string_view bytes, const std::string& what);
// Writes a params file through a temporary file, so a failed write leaves no output behind.
void write_params_file(const std::filesystem::path& path, const NamedTensors& params);
// Reads a params file.
NamedTensors read_params_file(const std::filesystem::path& path);

}  // namespace anvil
