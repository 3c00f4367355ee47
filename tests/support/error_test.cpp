#include "anvil/support/error.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(Error, ThrowErrorConcatenatesArguments) {
  try {
    throw_error("input '", "data", "' expects shape ", std::vector<int64_t>{1, 3}, ", got ", 7);
    FAIL() << "throw_error returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 'data' expects shape [1, 3], got 7");
  }
}

TEST(Error, InternalCheckNamesConditionAndLocation) {
  int rank = 3;
  try {
    ANVIL_ICHECK(rank == 4, "rank was ", rank);
    FAIL() << "check passed";
  } catch (const InternalError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("rank == 4"), std::string::npos) << text;
    EXPECT_NE(text.find("error_test.cpp"), std::string::npos) << text;
    EXPECT_NE(text.find("rank was 3"), std::string::npos) << text;
  }
}

TEST(Error, InternalCheckWithoutMessage) {
  EXPECT_THROW(ANVIL_ICHECK(1 + 1 == 3), InternalError);
  EXPECT_NO_THROW(ANVIL_ICHECK(1 + 1 == 2));
}

TEST(Error, UserAndInternalErrorsAreDistinct) {
  EXPECT_THROW(throw_error("x"), Error);
  bool caught_as_user = false;
  try {
    ANVIL_ICHECK(false);
  } catch (const Error&) {
    caught_as_user = true;
  } catch (const InternalError&) {
  }
  EXPECT_FALSE(caught_as_user);
}

}  // namespace
}  // namespace anvil
