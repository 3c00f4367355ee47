#include "anvil/runtime/data_type.h"

#include <gtest/gtest.h>

#include "anvil/support/error.h"

namespace anvil {
namespace {

TEST(DataType, ParsePrintRoundTripForEveryElementType) {
  const char* names[] = {"float16", "float32", "float64", "bfloat16",  "int8",
                         "int16",   "int32",   "int64",   "uint8",     "uint16",
                         "uint32",  "uint64",  "bool",    "float32x16"};
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

TEST(DataType, FromDLPackAcceptsNewBoolCode) {
  EXPECT_EQ(DataType::from_dlpack(DLDataType{6, 8, 1}), DataType::boolean());
  EXPECT_EQ(DataType::from_dlpack(DLDataType{kDLFloat, 32, 1}), DataType::float32());
  EXPECT_THROW(DataType::from_dlpack(DLDataType{kDLFloat, 12, 1}), Error);
}

TEST(DataType, ParseRejectsUnknownNamesWithTheName) {
  for (const char* bad :
       {"float", "float12", "int3", "bfloat32", "complex64", "", "int32x", "x4"}) {
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
