// TensorProto to Tensor for the element types narrower than a byte and the float8 types: ONNX
// packs int4/uint4/float4 two to a byte and int2/uint2 four to a byte (the first element in the
// low bits), in raw_data or one packed byte per int32_data entry; anvil spreads them one to a
// byte, integers sign- or zero-extended. A wrong byte count is an error naming the tensor.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <string>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/support/minifloat.h"
#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {
namespace {

onnx::TensorProto proto(int32_t type, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("t");
  p.set_data_type(type);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

std::vector<int64_t> values_of(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(int64_t(t.get_as_double(i)));
  return out;
}

TEST(OnnxTensorProto, Int4RawDataUnpacksLowNibbleFirst) {
  // Five values -8, 7, -1, 0, 3: bytes 0x78 (7 << 4 | 0x8), 0x0F, 0x03 (the last half empty).
  onnx::TensorProto p = proto(kOnnxInt4, {5});
  p.set_raw_data(std::string("\x78\x0f\x03", 3));
  Tensor t = tensor_from_proto(p, ".");
  EXPECT_EQ(t.dtype(), DataType::int4());
  EXPECT_EQ(values_of(t), (std::vector<int64_t>{-8, 7, -1, 0, 3}));
  // Stored one to a byte, sign-extended.
  EXPECT_EQ(static_cast<const int8_t*>(t.data())[0], -8);
}

TEST(OnnxTensorProto, Uint4AndUint2FromInt32Data) {
  onnx::TensorProto p = proto(kOnnxUInt4, {3});
  p.add_int32_data(0xF1);  // 1, 15
  p.add_int32_data(0x09);  // 9
  EXPECT_EQ(values_of(tensor_from_proto(p, ".")), (std::vector<int64_t>{1, 15, 9}));

  onnx::TensorProto q = proto(kOnnxUInt2, {2, 3});
  q.add_int32_data(0b11100100);  // 0, 1, 2, 3
  q.add_int32_data(0b00001110);  // 2, 3
  EXPECT_EQ(values_of(tensor_from_proto(q, ".")), (std::vector<int64_t>{0, 1, 2, 3, 2, 3}));
}

TEST(OnnxTensorProto, Int2SignExtends) {
  onnx::TensorProto p = proto(kOnnxInt2, {4});
  p.set_raw_data(std::string("\xE4", 1));  // fields 0, 1, 2 (-2), 3 (-1)
  EXPECT_EQ(values_of(tensor_from_proto(p, ".")), (std::vector<int64_t>{0, 1, -2, -1}));
}

TEST(OnnxTensorProto, Float4AndFloat8KeepTheirCodes) {
  onnx::TensorProto p = proto(kOnnxFloat4E2M1, {3});
  p.set_raw_data(std::string("\xF2\x01", 2));  // codes 2 (1.0), 15 (-6), 1 (0.5)
  Tensor t = tensor_from_proto(p, ".");
  EXPECT_EQ(t.dtype(), DataType::float4_e2m1fn());
  EXPECT_EQ(t.get_as_double(0), 1.0);
  EXPECT_EQ(t.get_as_double(1), -6.0);
  EXPECT_EQ(t.get_as_double(2), 0.5);

  onnx::TensorProto q = proto(kOnnxFloat8E5M2, {3});
  q.add_int32_data(0x3C);  // 1.0
  q.add_int32_data(0xFC);  // -inf
  q.add_int32_data(0x7F);  // NaN
  Tensor f8 = tensor_from_proto(q, ".");
  EXPECT_EQ(f8.dtype(), DataType::float8_e5m2());
  EXPECT_EQ(f8.get_as_double(0), 1.0);
  EXPECT_EQ(f8.get_as_double(1), -INFINITY);
  EXPECT_TRUE(std::isnan(f8.get_as_double(2)));

  onnx::TensorProto r = proto(kOnnxFloat8E4M3FN, {2});
  r.set_raw_data(std::string("\x38\xFE", 2));  // 1.0, -448
  Tensor e4 = tensor_from_proto(r, ".");
  EXPECT_EQ(e4.get_as_double(0), 1.0);
  EXPECT_EQ(e4.get_as_double(1), -448.0);
}

TEST(OnnxTensorProto, WrongPackedByteCountsAreErrorsNamingTheTensor) {
  onnx::TensorProto raw = proto(kOnnxInt4, {5});
  raw.set_raw_data(std::string("\x78\x0f", 2));  // 5 values need 3 bytes
  onnx::TensorProto ints = proto(kOnnxUInt2, {5});
  ints.add_int32_data(0);  // 5 values need 2 entries
  onnx::TensorProto f8 = proto(kOnnxFloat8E4M3FNUZ, {2});
  f8.set_raw_data(std::string("\x01", 1));
  for (const onnx::TensorProto& p : {raw, ints, f8}) {
    try {
      tensor_from_proto(p, ".");
      FAIL() << "accepted a tensor of type " << p.data_type();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 't'"), std::string::npos) << e.what();
    }
  }
}

TEST(OnnxTensorProto, Float8E8M0KeepsItsExponentCodes) {
  onnx::TensorProto p = proto(kOnnxFloat8E8M0, {4});
  p.set_raw_data(std::string("\x7f\x80\x00\xff", 4));  // 1, 2, 2^-127, NaN
  Tensor t = tensor_from_proto(p, ".");
  EXPECT_EQ(t.dtype(), DataType::float8_e8m0fnu());
  EXPECT_EQ(t.get_as_double(0), 1.0);
  EXPECT_EQ(t.get_as_double(1), 2.0);
  EXPECT_EQ(t.get_as_double(2), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(t.get_as_double(3)));
}

}  // namespace
}  // namespace anvil::frontend::onnx_import
