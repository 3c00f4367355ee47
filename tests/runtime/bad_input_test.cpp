// Hostile and broken input for every tensor file reader: each must either
// parse or throw anvil::Error with one line naming the source; never crash,
// never read out of bounds (this suite also runs under ASan + UBSan), never
// allocate what a header merely claims.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <typeinfo>

#include "anvil/runtime/npy.h"
#include "anvil/runtime/params.h"
#include "anvil/support/error.h"
#include "runtime/io_test_util.h"
#include "support/test_util.h"

namespace anvil::testing {
namespace {

enum class Format { Npy, NpzStored, NpzCompressed, Params };
const Format kFormats[] = {Format::Npy, Format::NpzStored, Format::NpzCompressed, Format::Params};

const char* label(Format f) {
  switch (f) {
    case Format::Npy:
      return "npy file 'fuzz.npy'";
    case Format::NpzStored:
      return "npz file 'stored.npz'";
    case Format::NpzCompressed:
      return "npz file 'deflated.npz'";
    case Format::Params:
      return "params file 'fuzz.params'";
  }
  return "";
}

void parse_as(Format f, std::string_view bytes) {
  switch (f) {
    case Format::Npy:
      parse_npy(bytes, label(f));
      return;
    case Format::NpzStored:
    case Format::NpzCompressed:
      parse_npz(bytes, label(f));
      return;
    case Format::Params:
      load_params(bytes, label(f));
      return;
  }
}

// A small valid file of each format.
std::string valid_bytes(Format f) {
  switch (f) {
    case Format::Npy:
      return serialize_npy(make_test_tensor(DataType::int16(), {2, 3}));
    case Format::NpzStored:
    case Format::NpzCompressed:
      return serialize_npz({{"w", make_test_tensor(DataType::float32(), {3})},
                            {"m", make_test_tensor(DataType::boolean(), {2, 2})}},
                           f == Format::NpzCompressed);
    case Format::Params:
      return save_params({{"w", make_test_tensor(DataType::float32(), {2, 2})},
                          {"m", make_test_tensor(DataType::boolean(), {3})}});
  }
  return "";
}

enum class Outcome { Parsed, Rejected, Crashed };

// Parses, and checks that a rejection is an Error of one line naming the source.
Outcome try_parse(Format f, std::string_view bytes, const std::string& context) {
  try {
    parse_as(f, bytes);
    return Outcome::Parsed;
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << context << ": " << message;
    EXPECT_EQ(message.rfind(label(f), 0), 0u) << context << ": " << message;
    return Outcome::Rejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << context << ": threw " << typeid(e).name()
                  << " instead of anvil::Error: " << e.what();
    return Outcome::Crashed;
  }
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

void put_u64(std::string& bytes, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes[offset + size_t(i)] = char((value >> (8 * i)) & 0xff);
}

void put_u32(std::string& bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[offset + size_t(i)] = char((value >> (8 * i)) & 0xff);
}

TEST(BadInput, EmptyInputIsRejected) {
  for (Format f : kFormats) {
    std::string message = error_of([&] { parse_as(f, ""); });
    EXPECT_EQ(message, std::string(label(f)) + ": is empty");
  }
}

TEST(BadInput, EveryTruncationIsRejected) {
  for (Format f : kFormats) {
    std::string valid = valid_bytes(f);
    ASSERT_EQ(try_parse(f, valid, "valid"), Outcome::Parsed) << label(f);
    for (size_t length = 0; length < valid.size(); ++length)
      EXPECT_EQ(try_parse(f, std::string_view(valid).substr(0, length),
                          label(f) + std::string(" cut to ") + std::to_string(length)),
                Outcome::Rejected)
          << label(f) << " cut to " << length << " bytes was accepted";
  }
}

TEST(BadInput, RandomBytesNeverCrash) {
  std::mt19937 rng(20240611);
  for (Format f : kFormats) {
    std::string valid = valid_bytes(f);
    for (int i = 0; i < 300; ++i) {
      std::string bytes(rng() % 600, '\0');
      for (char& c : bytes) c = char(rng() & 0xff);
      // Half the cases keep a valid beginning so parsing gets past the magic.
      if (i % 2 == 1) {
        size_t keep = std::min(bytes.size(), size_t(rng() % valid.size()));
        std::memcpy(bytes.data(), valid.data(), keep);
      }
      try_parse(f, bytes, label(f) + std::string(" random case ") + std::to_string(i));
    }
  }
}

TEST(BadInput, WrongMagicIsRejected) {
  for (Format f : kFormats) {
    std::string bytes = valid_bytes(f);
    bytes[0] = char(bytes[0] ^ 0x20);
    EXPECT_EQ(try_parse(f, bytes, "wrong magic"), Outcome::Rejected) << label(f);
    EXPECT_NE(error_of([&] { parse_as(f, bytes); }).find("not"), std::string::npos);
  }
}

TEST(BadInput, BitFlipsAtEveryPositionNeverCrash) {
  for (Format f : kFormats) {
    std::string valid = valid_bytes(f);
    int parsed = 0, rejected = 0;
    for (size_t pos = 0; pos < valid.size(); ++pos) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bytes = valid;
        bytes[pos] = char(bytes[pos] ^ (1 << bit));
        Outcome outcome = try_parse(f, bytes,
                                    label(f) + std::string(" flip byte ") + std::to_string(pos) +
                                        " bit " + std::to_string(bit));
        (outcome == Outcome::Parsed ? parsed : rejected)++;
      }
    }
    // Flips in the element data still parse; flips in the structure mostly do not.
    EXPECT_GT(parsed, 0) << label(f);
    EXPECT_GT(rejected, 0) << label(f);
  }
}

std::string npy_with_header(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string bytes = "\x93NUMPY";
  bytes += char(major);
  bytes += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    bytes += char((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

TEST(BadInput, NpyHeadersThatLieAreRejectedBeforeAllocating) {
  struct Case {
    std::string dict, data, needle;
  };
  std::vector<Case> cases = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", "12345678",
       "truncated: header declares 8000000000000 bytes of float64 data"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "",
       "too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }", "",
       "too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", "",
       "does not fit"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }", "", "negative"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(12, '\0'),
       "4 unexpected bytes"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,)", "", "malformed"},
      {"{'descr': '<i4', 'fortran_order': False}", "", "missing key 'shape'"},
      {"{'descr': '<i4', 'fortran_order': 0, 'shape': ()}", "", "True or False"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (), 'x': 1}", "", "unexpected"},
      {"{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': ()}", "", "repeated"},
      {"{'descr': '<i4\n', 'fortran_order': False, 'shape': ()}", "", "unsupported dtype"},
  };
  std::string many_dims = "{'descr': '<i1', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 100; ++i) many_dims += "1,";
  cases.push_back({many_dims + "), }", "", "more than 64 dimensions"});
  for (const Case& c : cases) {
    std::string message =
        error_of([&] { parse_npy(npy_with_header(c.dict, c.data), "npy file 'l.npy'"); });
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.dict << "\n" << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // A version 2.0 header that claims four gigabytes.
  std::string v2 = npy_with_header("{}", "", 2);
  put_u32(v2, 8, 0xfffffff0u);
  EXPECT_NE(
      error_of([&] { parse_npy(v2, "npy file 'l.npy'"); }).find("header declares 4294967280 bytes"),
      std::string::npos);
  std::string v9 = npy_with_header("{}", "", 1);
  v9[6] = 9;
  EXPECT_NE(error_of([&] { parse_npy(v9, "npy file 'l.npy'"); }).find("version 9.0"),
            std::string::npos);
}

// Field offsets in the params blob of one tensor named "a" with shape (n,).
constexpr size_t kNameCount = 16, kNameLength = 24, kTensorCount = 33, kTensorStart = 41;
constexpr size_t kNdim = kTensorStart + 24, kDtype = kNdim + 4, kShape = kDtype + 4,
                 kDataSize = kShape + 8;

std::string one_tensor_params() {
  return save_params({{"a", make_test_tensor(DataType::float32(), {4})}});
}

TEST(BadInput, ParamsThatLieAreRejectedBeforeAllocating) {
  struct Case {
    size_t offset;
    uint64_t value;
    int width;
    std::string needle;
  };
  const uint64_t huge = uint64_t(1) << 62;
  std::vector<Case> cases = {
      {kNameCount, huge, 8, "declares 4611686018427387904 names"},
      {kNameCount, 2, 8, "declares 2 names but"},
      {kNameLength, huge, 8, "name 0 declares 4611686018427387904 bytes"},
      {kTensorCount, 2, 8, "declares 1 names but 2 tensors"},
      {kTensorStart, 0x1234, 8, "not the tensor magic"},
      {kNdim, 1u << 30, 4, "1073741824 dims"},
      {kNdim, 0xffffffffu, 4, "negative ndim -1"},
      {kNdim, 10, 4, "truncated: tensor 'a' (index 0) shape needs 8 bytes"},
      {kDtype, 0x00010205, 4, "unsupported data type (code 5"},
      {kDtype, 0x00042002, 4, "vector type float32x4"},
      {kShape, uint64_t(-3), 8, "negative dimension"},
      {kShape, uint64_t(1) << 61, 8, "too large"},
      {kDataSize, 12, 8, "declares 12 bytes of data, but a float32 tensor of shape (4,) has 16"},
  };
  for (const Case& c : cases) {
    std::string bytes = one_tensor_params();
    if (c.width == 8)
      put_u64(bytes, c.offset, c.value);
    else
      put_u32(bytes, c.offset, uint32_t(c.value));
    std::string message = error_of([&] { load_params(bytes, "params file 'l.params'"); });
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.needle << "\n" << message;
    EXPECT_EQ(message.rfind("params file 'l.params': ", 0), 0u) << message;
  }
  // A shape that matches its data size but not the bytes present.
  std::string bytes = one_tensor_params();
  put_u64(bytes, kShape, uint64_t(1) << 40);
  put_u64(bytes, kDataSize, uint64_t(4) << 40);
  EXPECT_EQ(error_of([&] { load_params(bytes, "params file 'l.params'"); }),
            "params file 'l.params': truncated: tensor 'a' (index 0) declares 4398046511104 bytes "
            "of data, 16 remain");
  EXPECT_NE(error_of([&] {
              load_params(one_tensor_params() + "x", "params file 'l.params'");
            }).find("1 unexpected bytes after the last tensor"),
            std::string::npos);
}

size_t find_signature(const std::string& bytes, const char* signature) {
  size_t at = bytes.find(std::string(signature, 4));
  EXPECT_NE(at, std::string::npos);
  return at;
}

TEST(BadInput, NpzEntriesThatLieAreRejectedBeforeAllocating) {
  for (bool compress : {false, true}) {
    std::string bytes = serialize_npz({{"w", Tensor::zeros({4}, DataType::float32())}}, compress);
    // Claim a 2 GiB entry in both the local header and the central directory.
    put_u32(bytes, find_signature(bytes, "PK\x03\x04") + 22, 0x7fffffffu);
    put_u32(bytes, find_signature(bytes, "PK\x01\x02") + 24, 0x7fffffffu);
    std::string message = error_of([&] { parse_npz(bytes, "npz file 'l.npz'"); });
    EXPECT_EQ(message.rfind("npz file 'l.npz': ", 0), 0u) << message;
  }
}

TEST(BadInput, NpzEntryThatIsNotNpyIsRejected) {
  std::string bytes = serialize_npz({{"w", Tensor::zeros({4}, DataType::float32())}}, false);
  for (size_t at = bytes.find("w.npy"); at != std::string::npos; at = bytes.find("w.npy", at))
    bytes.replace(at, 5, "w.txt");
  EXPECT_EQ(error_of([&] { parse_npz(bytes, "npz file 'n.npz'"); }),
            "npz file 'n.npz': entry 'w.txt': is not a .npy file");
}

TEST(BadInput, MissingFilesDirectoriesAndDevices) {
  ScratchDir dir;
  std::filesystem::path missing = dir / "missing.bin";
  std::string quoted_missing = "'" + missing.string() + "'";
  std::string quoted_dir = "'" + dir.path().string() + "'";
  EXPECT_EQ(error_of([&] { read_npy(missing); }), "npy file " + quoted_missing + ": no such file");
  EXPECT_EQ(error_of([&] { read_npz(missing); }), "npz file " + quoted_missing + ": no such file");
  EXPECT_EQ(error_of([&] { read_params_file(missing); }),
            "params file " + quoted_missing + ": no such file");
  EXPECT_EQ(error_of([&] { read_npy(dir.path()); }),
            "npy file " + quoted_dir + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { read_npz(dir.path()); }),
            "npz file " + quoted_dir + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { read_params_file(dir.path()); }),
            "params file " + quoted_dir + ": is a directory, not a file");
  EXPECT_EQ(error_of([] { read_npy("/dev/zero"); }), "npy file '/dev/zero': is not a regular file");
  write_file(dir / "empty.params", "");
  EXPECT_NE(error_of([&] { read_params_file(dir / "empty.params"); }).find(": is empty"),
            std::string::npos);
}

TEST(BadInput, WritingOverADirectoryFailsCleanly) {
  ScratchDir dir;
  std::filesystem::create_directory(dir / "sub");
  std::string message =
      error_of([&] { write_npy(dir / "sub", Tensor::zeros({1}, DataType::int8())); });
  EXPECT_EQ(message.rfind("cannot write npy file '", 0), 0u) << message;
  message = error_of([&] { write_npz(dir / "none" / "x.npz", {}, true); });
  EXPECT_EQ(message.rfind("cannot write npz file '", 0), 0u) << message;
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::recursive_directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1);  // only "sub", and nothing in it
}

}  // namespace
}  // namespace anvil::testing
