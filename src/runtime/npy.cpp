// The .npy format: a magic string, a version, a Python-literal header dict
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) and the raw
// elements in C order.
#include "anvil/runtime/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "anvil/support/error.h"
#include "runtime/binary_io.h"
#include "runtime/npy_format.h"

namespace anvil {
namespace detail {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// A header this long is a corrupt or hostile file, not an array (numpy itself
// refuses headers over 10 kB unless told otherwise).
constexpr uint32_t kMaxHeaderBytes = 1 << 20;
constexpr char kNativeOrder = std::endian::native == std::endian::little ? '<' : '>';

struct Descriptor {
  DataType dtype;
  bool byte_swap = false;
};

Descriptor parse_descriptor(std::string_view descr, const std::string& what) {
  auto unsupported = [&]() -> Descriptor {
    throw_error(what, ": unsupported dtype '", printable(descr),
                "'; anvil reads bool, int8..int64, uint8..uint64 and float16..float64");
  };
  if (descr.size() != 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos)
    return unsupported();
  char order = descr[0], kind = descr[1];
  int size = descr[2] - '0';
  std::optional<DataType> dtype;
  if (kind == 'b' && size == 1) dtype = DataType::boolean();
  if ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8))
    dtype = DataType(kind == 'i' ? DataType::Int : DataType::UInt, uint8_t(size * 8));
  if (kind == 'f' && (size == 2 || size == 4 || size == 8))
    dtype = DataType(DataType::Float, uint8_t(size * 8));
  if (!dtype) return unsupported();
  if (order == '|' && size != 1)
    throw_error(what, ": dtype '", descr, "' of ", size, " bytes has no byte order");
  bool swap = size > 1 && order != '=' && order != kNativeOrder;
  return {*dtype, swap};
}

std::string descriptor_of(DataType dtype) {
  if (!dtype.is_scalar())
    throw_error("a ", dtype.to_string(),
                " tensor has no numpy dtype; vector types cannot be saved");
  if (dtype.is_bfloat())
    throw_error("a bfloat16 tensor has no numpy dtype; convert it to float32 first");
  if (dtype.is_minifloat())
    throw_error("a ", dtype.to_string(), " tensor has no numpy dtype; convert it to float32 first");
  // int4, uint4, int2 and uint2 are saved as the int8 or uint8 each element is stored in.
  if (dtype.is_bool()) return "|b1";
  char kind = dtype.is_float() ? 'f' : dtype.is_int() ? 'i' : 'u';
  char order = dtype.bytes() == 1 ? '|' : kNativeOrder;
  return std::string{order, kind, char('0' + dtype.bytes())};
}

// The header dict, as np.save writes it and np.load accepts it: exactly the
// keys descr, fortran_order and shape, in any order, with Python literals.
struct HeaderDict {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  HeaderDict parse() {
    HeaderDict dict;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!consume('}')) {
      std::string key = parse_string();
      expect(':');
      if (key == "descr" && !seen_descr) {
        skip_space();
        if (peek() == '[') fail("structured dtypes (a list descr) are not supported");
        dict.descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_order) {
        dict.fortran_order = parse_bool();
        seen_order = true;
      } else if (key == "shape" && !seen_shape) {
        dict.shape = parse_shape();
        seen_shape = true;
      } else {
        fail("unexpected or repeated key '" + printable(key) + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    if (!seen_descr) fail("missing key 'descr'");
    if (!seen_order) fail("missing key 'fortran_order'");
    if (!seen_shape) fail("missing key 'shape'");
    return dict;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw_error(what_, ": malformed .npy header: ", message);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() &&
           std::string_view(" \t\n\r\f\v").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
  }
  bool consume(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "' at byte " + std::to_string(pos_) + " of the header");
  }

  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a quoted string at byte " + std::to_string(pos_) + " of the header");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) fail("escapes in strings are not supported");
    pos_ = end + 1;
    return value;
  }

  bool parse_bool() {
    skip_space();
    for (std::string_view word : {"True", "False"}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += word.size();
        return word == "True";
      }
    }
    fail("fortran_order is not True or False");
  }

  int64_t parse_dim() {
    skip_space();
    if (peek() == '-') fail("shape has a negative dimension");
    if (peek() < '0' || peek() > '9') fail("shape holds something other than integers");
    int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, peek() - '0', &value))
        fail("a dimension of the shape does not fit in 64 bits");
      ++pos_;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 longs, as old numpy wrote them
    return value;
  }

  std::vector<int64_t> parse_shape() {
    expect('(');
    std::vector<int64_t> shape;
    while (!consume(')')) {
      if (shape.size() == size_t(kMaxFileDims))
        fail("shape has more than " + std::to_string(kMaxFileDims) + " dimensions");
      shape.push_back(parse_dim());
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

// Fortran and C order lay out the same bytes when at most one dim exceeds 1.
bool layout_is_order_free(const std::vector<int64_t>& shape) {
  return std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d > 1; }) <= 1;
}

class MemorySource : public ByteSource {
 public:
  MemorySource(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}
  void read(void* dst, size_t n) override {
    if (n > bytes_.size() - pos_)
      throw_error(what_, ": truncated: needed ", n, " more bytes, ", bytes_.size() - pos_,
                  " remain");
    if (n > 0) std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
  }

 private:
  std::string_view bytes_;
  const std::string& what_;
  size_t pos_ = 0;
};

// Brings freshly read elements to host order and bool bytes to 0 or 1.
void normalize_elements(Tensor& tensor, bool byte_swap) {
  if (byte_swap) byte_swap_elements(tensor.data(), tensor.dtype().bytes(), tensor.numel());
  if (tensor.dtype().is_bool()) {
    auto* p = tensor.data_as<uint8_t>();
    for (int64_t i = 0, n = tensor.numel(); i < n; ++i) p[i] = p[i] != 0;
  }
}

}  // namespace

Tensor read_npy_from(ByteSource& source, uint64_t total_size, const std::string& what) {
  if (total_size == 0) throw_error(what, ": is empty");
  char preamble[12];
  if (total_size < 10)
    throw_error(what, ": truncated: ", total_size, " bytes is too short for a .npy header");
  source.read(preamble, 10);
  if (std::memcmp(preamble, kMagic, kMagicSize) != 0)
    throw_error(what, ": not a .npy file (it does not start with \\x93NUMPY)");
  int major = static_cast<unsigned char>(preamble[6]);
  int minor = static_cast<unsigned char>(preamble[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw_error(what, ": unsupported .npy format version ", major, ".", minor,
                " (anvil reads 1.0, 2.0 and 3.0)");
  uint64_t preamble_size = major == 1 ? 10 : 12;
  uint32_t header_size;
  if (major == 1) {
    header_size = load_le<uint16_t>(preamble + 8);
  } else {
    if (total_size < 12)
      throw_error(what, ": truncated: the version ", major,
                  ".0 preamble needs 12 bytes, the file has ", total_size);
    source.read(preamble + 10, 2);
    header_size = load_le<uint32_t>(preamble + 8);
  }
  uint64_t remaining = total_size - preamble_size;
  if (header_size > remaining)
    throw_error(what, ": truncated: header declares ", header_size, " bytes, ", remaining,
                " remain");
  if (header_size > kMaxHeaderBytes)
    throw_error(what, ": header of ", header_size, " bytes is over the limit of ", kMaxHeaderBytes);
  std::string header_text(header_size, '\0');
  source.read(header_text.data(), header_size);
  remaining -= header_size;

  HeaderDict header = HeaderParser(header_text, what).parse();
  Descriptor descr = parse_descriptor(header.descr, what);
  if (header.fortran_order && !layout_is_order_free(header.shape))
    throw_error(what, ": array of shape ", shape_to_string(header.shape),
                " is stored in Fortran order; save it in C order "
                "(np.ascontiguousarray) to read it with anvil");
  int64_t data_size = 0;
  if (!checked_byte_size(header.shape, descr.dtype.bytes(), &data_size))
    throw_error(what, ": shape ", shape_to_string(header.shape), " is too large");
  if (uint64_t(data_size) > remaining)
    throw_error(what, ": truncated: header declares ", data_size, " bytes of ",
                descr.dtype.to_string(), " data for shape ", shape_to_string(header.shape), ", ",
                remaining, " remain");
  if (uint64_t(data_size) < remaining)
    throw_error(what, ": ", remaining - uint64_t(data_size), " unexpected bytes after the ",
                data_size, " bytes of data that shape ", shape_to_string(header.shape),
                " declares");
  Tensor tensor = Tensor::empty(std::move(header.shape), descr.dtype);
  source.read(tensor.data(), size_t(data_size));
  normalize_elements(tensor, descr.byte_swap);
  return tensor;
}

}  // namespace detail

Tensor parse_npy(std::string_view bytes, const std::string& what) {
  detail::MemorySource source(bytes, what);
  return detail::read_npy_from(source, bytes.size(), what);
}

Tensor read_npy(const std::filesystem::path& path) {
  std::string what = "npy file " + detail::quoted(path);
  return parse_npy(detail::read_file_bytes(path, what), what);
}

std::string serialize_npy(const Tensor& tensor) {
  if (!tensor.defined()) throw_error("cannot save an undefined tensor to .npy");
  std::string dict = "{'descr': '" + detail::descriptor_of(tensor.dtype()) +
                     "', 'fortran_order': False, 'shape': " + shape_to_string(tensor.shape()) +
                     ", }";
  // numpy pads the header with spaces and a newline so the data starts on a
  // 64-byte boundary; version 2.0 is only needed for headers past 64 KiB.
  size_t preamble = 10;
  size_t unpadded = preamble + dict.size() + 1;
  size_t header = (unpadded + 63) / 64 * 64 - preamble;
  if (header > 0xffff) {
    preamble = 12;
    unpadded = preamble + dict.size() + 1;
    header = (unpadded + 63) / 64 * 64 - preamble;
  }
  dict.append(header - dict.size() - 1, ' ');
  dict.push_back('\n');

  Tensor compact = tensor.is_contiguous() ? tensor : tensor.copy();
  std::string bytes(detail::kMagic, detail::kMagicSize);
  bytes.reserve(preamble + header + size_t(tensor.nbytes()));
  bytes.push_back(char(preamble == 10 ? 1 : 2));
  bytes.push_back('\0');
  if (preamble == 10)
    detail::append_le(bytes, uint16_t(header));
  else
    detail::append_le(bytes, uint32_t(header));
  bytes += dict;
  bytes.append(static_cast<const char*>(compact.data()), size_t(compact.nbytes()));
  return bytes;
}

void write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  std::string what = "npy file " + detail::quoted(path);
  std::string bytes;
  try {
    bytes = serialize_npy(tensor);
  } catch (const Error& e) {
    throw_error("cannot write ", what, ": ", e.what());
  }
  detail::write_file_atomically(path, bytes, what);
}

}  // namespace anvil
