#include "anvil/runtime/params.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "anvil/support/error.h"
#include "runtime/io_test_util.h"
#include "support/test_util.h"

namespace anvil::testing {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string hex_of(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

NamedTensors every_dtype_params() {
  NamedTensors params;
  int salt = 0;
  for (const std::string& name : numpy_dtype_names())
    for (const auto& shape : test_shapes()) {
      params.emplace_back("p" + std::to_string(salt) + "." + name,
                          make_test_tensor(DataType::parse(name), shape, salt));
      ++salt;
    }
  params.emplace_back("bf16", make_test_tensor(DataType::bfloat16(), {3, 2}));
  return params;
}

TEST(Params, RoundTripIsIdentical) {
  NamedTensors params = every_dtype_params();
  std::string bytes = save_params(params);
  NamedTensors back = load_params(bytes, "params file 'p.params'");
  ASSERT_EQ(back.size(), params.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].first, params[i].first);
    expect_same_tensor(back[i].second, params[i].second, params[i].first);
  }
  EXPECT_EQ(save_params(back), bytes);
}

TEST(Params, EmptyListRoundTrips) {
  std::string bytes = save_params({});
  EXPECT_EQ(bytes.size(), 32u);
  EXPECT_TRUE(load_params(bytes, "params file 'e.params'").empty());
}

TEST(Params, HeaderBytesMatchTvmLayout) {
  Tensor w = Tensor::empty({2}, DataType::float32());
  w.set_from_double(0, 1.0);
  w.set_from_double(1, 2.0);
  Tensor mask = Tensor::empty({}, DataType::boolean());
  mask.set_from_double(0, 1);
  std::string bytes = save_params({{"w", w}, {"mask", mask}});
  std::string expected =
      "b79c04054f8de5f7"  // list magic 0xF7E58D4F05049CB7
      "0000000000000000"  // reserved
      "0200000000000000"  // two names
      "0100000000000000"
      "77"  // "w"
      "0400000000000000"
      "6d61736b"          // "mask"
      "0200000000000000"  // two tensors
      // tensor "w"
      "3fa1b496f0405edd"  // tensor magic 0xDD5E40F096B4A13F
      "0000000000000000"  // reserved
      "01000000"          // device_type kDLCPU
      "00000000"          // device_id
      "01000000"          // ndim
      "02200100"          // dtype: code kDLFloat, 32 bits, 1 lane
      "0200000000000000"  // shape[0]
      "0800000000000000"  // data bytes
      "0000803f00000040"  // 1.0f, 2.0f
      // tensor "mask": TVM's bool, {kDLUInt, 1, 1}, one byte per element
      "3fa1b496f0405edd"
      "0000000000000000"
      "01000000"
      "00000000"
      "00000000"          // ndim 0
      "01010100"          // dtype: code kDLUInt, 1 bit, 1 lane
      "0100000000000000"  // data bytes
      "01";
  EXPECT_EQ(hex_of(bytes), expected);
}

TEST(Params, FileRoundTripAndAtomicWrite) {
  ScratchDir dir;
  NamedTensors params = every_dtype_params();
  write_params_file(dir / "m.params", params);
  NamedTensors back = read_params_file(dir / "m.params");
  ASSERT_EQ(back.size(), params.size());
  for (size_t i = 0; i < back.size(); ++i) expect_same_tensor(back[i].second, params[i].second);

  // A failed write (a vector type cannot be saved) leaves the old file untouched and no
  // temporaries.
  std::string before = read_file(dir / "m.params");
  NamedTensors bad{{"v", Tensor::zeros({2}, DataType::float32().with_lanes(4))}};
  std::string message = error_of([&] { write_params_file(dir / "m.params", bad); });
  EXPECT_NE(message.find("'" + (dir / "m.params").string() + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("'v'"), std::string::npos) << message;
  EXPECT_EQ(read_file(dir / "m.params"), before);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST(Params, WriteIntoMissingDirectoryFailsCleanly) {
  ScratchDir dir;
  std::string message = error_of([&] {
    write_params_file(dir / "no" / "m.params", {{"a", Tensor::zeros({1}, DataType::int8())}});
  });
  EXPECT_EQ(message.rfind("cannot write params file '", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Params, DuplicateNamesAreRejected) {
  NamedTensors params{{"a", Tensor::zeros({1}, DataType::int8())},
                      {"a", Tensor::zeros({1}, DataType::int8())}};
  EXPECT_NE(error_of([&] { save_params(params); }).find("'a' appears twice"), std::string::npos);
}

TEST(Params, NonCpuDeviceIsRejectedOnLoad) {
  std::string bytes = save_params({{"a", Tensor::zeros({1}, DataType::int8())}});
  // The first tensor's device_type: after magic, reserved, name count, name "a", tensor
  // count, then the tensor's magic and reserved field.
  size_t device_offset = 8 + 8 + 8 + 8 + 1 + 8 + 8 + 8;
  ASSERT_EQ(bytes[device_offset], 1);
  bytes[device_offset] = 2;  // kDLCUDA
  std::string message = error_of([&] { load_params(bytes, "params file 'g.params'"); });
  EXPECT_NE(message.find("device type 2"), std::string::npos) << message;
}

TEST(Params, StridedTensorIsSavedInLogicalOrder) {
  Tensor base = make_test_tensor(DataType::float64(), {2, 3});
  Tensor transposed = Tensor::wrap(base.data(), {3, 2}, DataType::float64(), {1, 3});
  NamedTensors back = load_params(save_params({{"t", transposed}}), "params file 't.params'");
  expect_same_tensor(back[0].second, transposed.copy());
}

}  // namespace
}  // namespace anvil::testing
