#include <gtest/gtest.h>

#include "support/test_util.h"

namespace anvil::testing {
namespace {

TEST(Cli, VersionPrintsName) {
  CommandResult r = run_anvil({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("anvil ", 0), 0u) << r.out;
}

TEST(Cli, HelpListsSubcommandsAndExamples) {
  CommandResult r = run_anvil({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("inspect"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Examples:"), std::string::npos) << r.out;
}

TEST(Cli, UnknownFlagIsUsageErrorOnOneLine) {
  CommandResult r = run_anvil({"--frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("anvil: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(Cli, UnknownSubcommandIsUsageError) {
  CommandResult r = run_anvil({"transmogrify"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("transmogrify"), std::string::npos) << r.err;
}

TEST(Cli, NoSubcommandIsUsageError) {
  CommandResult r = run_anvil({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("anvil: error: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace anvil::testing
