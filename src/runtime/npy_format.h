// Internal: the .npy reader over any byte source, shared by .npy files and
// the entries of .npz archives.
#pragma once

#include <cstdint>
#include <string>

#include "anvil/runtime/tensor.h"

namespace anvil::detail {

// Sequential bytes of known total length.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills dst with exactly n bytes or throws Error naming the source.
  virtual void read(void* dst, size_t n) = 0;
};

// Reads one .npy image of exactly `total_size` bytes from the source. Sizes
// declared in the header are checked against total_size before anything is
// allocated.
Tensor read_npy_from(ByteSource& source, uint64_t total_size, const std::string& what);

}  // namespace anvil::detail
