#include "anvil/runtime/data_type.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"

namespace anvil {
namespace {

TEST(DataType, ParsePrintRoundTripForEveryElementType) {
  const char* names[] = {"float16",     "float32",         "float64",       "bfloat16",
                         "int8",        "int16",           "int32",         "int64",
                         "uint8",       "uint16",          "uint32",        "uint64",
                         "bool",        "float32x16",      "int4",          "uint4",
                         "int2",        "uint2",           "float8_e4m3fn", "float8_e4m3fnuz",
                         "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn", "float8_e4m3fnx16"};
  for (const char* name : names) EXPECT_EQ(DataType::parse(name).to_string(), name);
}

TEST(DataType, SizesAndDLPackCodes) {
  EXPECT_EQ(DataType::float16().bytes(), 2);
  EXPECT_EQ(DataType::bfloat16().bytes(), 2);
  EXPECT_EQ(DataType::int64().bytes(), 8);
  EXPECT_EQ(DataType::boolean().bytes(), 1);
  EXPECT_EQ(DataType::parse("float32x16").bytes(), 64);
  DLDataType dl = DataType::bfloat16().to_dlpack();
  EXPECT_EQ(dl.code, kDLBfloat);
  EXPECT_EQ(dl.bits, 16);
  EXPECT_EQ(dl.lanes, 1);
  DLDataType b = DataType::boolean().to_dlpack();
  EXPECT_EQ(b.code, kDLUInt);
  EXPECT_EQ(b.bits, 1);
}

TEST(DataType, Predicates) {
  EXPECT_TRUE(DataType::boolean().is_bool());
  EXPECT_FALSE(DataType::boolean().is_uint());
  EXPECT_TRUE(DataType::uint8().is_uint());
  EXPECT_TRUE(DataType::float16().is_float());
  EXPECT_TRUE(DataType::bfloat16().is_bfloat());
  EXPECT_TRUE(DataType::int32().is_int());
}

TEST(DataType, NarrowTypesTakeAByteEach) {
  for (DataType t :
       {DataType::int4(), DataType::uint2(), DataType::float4_e2m1fn(), DataType::float8_e5m2()})
    EXPECT_EQ(t.bytes(), 1) << t.to_string();
  EXPECT_EQ(DataType::int4().with_lanes(16).bytes(), 16);
  EXPECT_TRUE(DataType::float8_e4m3fn().is_minifloat());
  EXPECT_FALSE(DataType::float8_e4m3fn().is_float());
  EXPECT_FALSE(DataType::float8_e4m3fn().is_uint());
  EXPECT_TRUE(DataType::int4().is_sub_byte_int());
  EXPECT_FALSE(DataType::boolean().is_sub_byte_int());
  EXPECT_FALSE(DataType::int8().is_sub_byte_int());
  // DLPack 1.1's code for float8 E4M3FN.
  EXPECT_EQ(DataType::float8_e4m3fn().to_dlpack().code, 10);
  EXPECT_EQ(DataType::from_dlpack(DLDataType{17, 4, 1}), DataType::float4_e2m1fn());
}

TEST(DataType, WrapToBitsSignOrZeroExtends) {
  EXPECT_EQ(wrap_to_bits(7, DataType::int4()), 7);
  EXPECT_EQ(wrap_to_bits(8, DataType::int4()), -8);
  EXPECT_EQ(wrap_to_bits(-9, DataType::int4()), 7);
  EXPECT_EQ(wrap_to_bits(-1, DataType::uint4()), 15);
  EXPECT_EQ(wrap_to_bits(5, DataType::int2()), 1);
  EXPECT_EQ(wrap_to_bits(-3, DataType::uint2()), 1);
  EXPECT_EQ(wrap_to_bits(300, DataType::int32()), 300);  // wider types are left alone
}

TEST(DataType, FromDLPackAcceptsNewBoolCode) {
  EXPECT_EQ(DataType::from_dlpack(DLDataType{6, 8, 1}), DataType::boolean());
  EXPECT_EQ(DataType::from_dlpack(DLDataType{kDLFloat, 32, 1}), DataType::float32());
  EXPECT_THROW(DataType::from_dlpack(DLDataType{kDLFloat, 12, 1}), Error);
}

TEST(DataType, ParseRejectsUnknownNamesWithTheName) {
  for (const char* bad : {"float", "float12", "int3", "bfloat32", "complex64", "", "int32x", "x4",
                          "float8", "float8_e4m3", "float4_e2m1"}) {
    try {
      DataType::parse(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(bad) + "'"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace anvil
