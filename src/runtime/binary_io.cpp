#include "runtime/binary_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <random>

#include "anvil/support/error.h"

namespace anvil::detail {

namespace fs = std::filesystem;

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

std::string printable(std::string_view text, size_t limit) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == limit) return out + "...";
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != 0x7f && c != '\\') {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string read_file_bytes(const fs::path& path, const std::string& what) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw_error(what, ": no such file");
  if (ec) throw_error(what, ": cannot access: ", ec.message());
  if (status.type() == fs::file_type::directory) throw_error(what, ": is a directory, not a file");
  // Devices and pipes may never end (/dev/zero); only plain files are read.
  if (status.type() != fs::file_type::regular) throw_error(what, ": is not a regular file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw_error(what, ": cannot open: ", std::strerror(errno));
  std::string bytes;
  if (uintmax_t size = fs::file_size(path, ec); !ec) bytes.reserve(size_t(size));
  char chunk[1 << 16];
  while (file.read(chunk, sizeof(chunk)) || file.gcount() > 0)
    bytes.append(chunk, size_t(file.gcount()));
  if (file.bad()) throw_error(what, ": read failed: ", std::strerror(errno));
  return bytes;
}

namespace {

// A name for the temporary file that no other writer in this or another process picks.
fs::path temporary_sibling(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  std::string name = "." + path.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" +
                     std::to_string(salt ^ counter.fetch_add(1));
  return path.parent_path() / name;
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view bytes, const std::string& what) {
  if (path.filename().empty()) throw_error("cannot write ", what, ": the path names no file");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw_error("cannot write ", what, ": it is a directory");
  fs::path temp = temporary_sibling(path);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw_error("cannot write ", what, ": ", std::strerror(errno));
  auto fail = [&](int error) {
    ::unlink(temp.c_str());
    throw_error("cannot write ", what, ": ", std::strerror(error));
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = n < 0 ? errno : EIO;
      ::close(fd);
      fail(error);
    }
    p += n;
    left -= size_t(n);
  }
  if (::close(fd) != 0) fail(errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail(errno);
}

void byte_swap_elements(void* data, int64_t elem_size, int64_t count) {
  if (elem_size <= 1) return;
  auto* bytes = static_cast<unsigned char*>(data);
  for (int64_t i = 0; i < count; ++i) {
    unsigned char* e = bytes + i * elem_size;
    for (int64_t a = 0, b = elem_size - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
  }
}

bool checked_byte_size(std::span<const int64_t> shape, int64_t elem_bytes, int64_t* out) {
  // Zero dims are skipped in the product: strides and offsets multiply the
  // other dims, so those must not overflow even when the tensor is empty.
  int64_t total = elem_bytes;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0)
      empty = true;
    else if (__builtin_mul_overflow(total, d, &total))
      return false;
  }
  *out = empty ? 0 : total;
  return true;
}

}  // namespace anvil::detail
