// Internal helpers shared by the tensor file formats: whole-file reads with
// clear errors, atomic writes, byte order and overflow-checked sizes.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace anvil::detail {

// The bytes of a regular file. Missing files, directories, devices and read
// failures throw Error("<what>: ...").
std::string read_file_bytes(const std::filesystem::path& path, const std::string& what);

// Writes bytes to a temporary file beside `path` and renames it over `path`;
// on failure the temporary is removed and Error("cannot write <what>: ...") thrown.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           const std::string& what);

// "'path'" quoted as messages quote file names.
std::string quoted(const std::filesystem::path& path);

// Text from an untrusted file made safe for a one-line message: control bytes
// and backslashes become \xNN, and long text is cut at `limit` bytes.
std::string printable(std::string_view text, size_t limit = 64);

// Most dims a tensor read from a file may have (numpy's own limit is 64).
inline constexpr int kMaxFileDims = 64;

// Reverses the bytes of `count` elements of `elem_size` bytes each, in place.
void byte_swap_elements(void* data, int64_t elem_size, int64_t count);

// numel(shape) * elem_bytes, or false when a dim is negative or the product of the
// non-zero dims overflows int64.
bool checked_byte_size(std::span<const int64_t> shape, int64_t elem_bytes, int64_t* out);

// Loads an unsigned integer stored little-endian at p.
template <typename T>
T load_le(const char* p) {
  static_assert(std::is_unsigned_v<T>);
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= T(T(static_cast<unsigned char>(p[i])) << (8 * i));
  return value;
}

// Appends an integer to out in little-endian byte order.
template <typename T>
void append_le(std::string& out, T value) {
  using U = std::make_unsigned_t<T>;
  U bits = static_cast<U>(value);
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(char((bits >> (8 * i)) & 0xff));
}

}  // namespace anvil::detail
