// Hostile input for the tensor IR parser: every prefix of valid programs,
// random bytes and bit-flipped programs. Each must parse or throw
// anvil::Error, never crash or raise an internal error (this binary also runs
// under ASan and UBSan). Whatever parses must print and parse back equal.
#include <gtest/gtest.h>

#include <random>

#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/structural_equal.h"
#include "text_corpus.h"

namespace anvil::tir {
namespace {

std::vector<std::string> seeds() {
  std::vector<std::string> out = testing::canonical_programs();
  out.push_back(testing::kLinear0);
  out.push_back(testing::kRelu0);
  return out;
}

// Parses text; on success checks the round trip. Returns whether it parsed.
bool parse_survives(const std::string& text) {
  std::vector<PrimFunc> funcs;
  try {
    funcs = parse_prim_funcs(text, "fuzz");
  } catch (const Error&) {
    return false;
  }
  for (const PrimFunc& f : funcs) {
    std::string printed = print(f);
    PrimFunc again;
    try {
      again = parse_prim_func(printed, "printed");
    } catch (const Error& e) {
      ADD_FAILURE() << "printed text does not parse: " << e.what() << "\n"
                    << printed << "\nfrom input:\n"
                    << text;
      return true;
    }
    EXPECT_TRUE(structural_equal(f, again)) << printed;
    EXPECT_EQ(print(again), printed);
  }
  return true;
}

TEST(TirParserBadInput, EveryPrefixOfValidProgramsParsesOrFailsCleanly) {
  int parsed = 0;
  for (const std::string& program : seeds()) {
    for (size_t n = 0; n <= program.size(); ++n) parsed += parse_survives(program.substr(0, n));
  }
  // Prefixes ending at a complete function parse; the rest fail with a message.
  EXPECT_GT(parsed, 0);
}

TEST(TirParserBadInput, RandomBytes) {
  std::mt19937 rng(1234);
  const std::string alphabet = "@T.():,=[]{}+-*/%<> \n    #\"'\\0123456789abcdefxyz_\t";
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    size_t length = rng() % 200;
    for (size_t i = 0; i < length; ++i)
      text += round % 2 ? char(rng() % 256) : alphabet[rng() % alphabet.size()];
    parse_survives(text);
    parse_survives("@T.prim_func\ndef f(a: T.handle):\n    " + text);
  }
}

TEST(TirParserBadInput, BitFlippedAndSplicedPrograms) {
  std::mt19937 rng(99);
  std::vector<std::string> programs = seeds();
  for (int round = 0; round < 4000; ++round) {
    std::string text = programs[rng() % programs.size()];
    int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0:
          text[at] = char(text[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        case 2: {
          const std::string& other = programs[rng() % programs.size()];
          size_t from = rng() % other.size();
          text.insert(at, other.substr(from, 1 + rng() % 40));
          break;
        }
        default:
          text.insert(at, 1, " ()[],:=\n-"[rng() % 10]);
      }
      if (text.empty()) text = "@";
    }
    parse_survives(text);
  }
}

TEST(TirParserBadInput, HugeLiteralsAndLanes) {
  const std::string head =
      "@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer(a, (4,), \"float32\")\n";
  for (const char* line : {
           "    T.evaluate(99999999999999999999999)\n",
           "    T.evaluate(T.float32(1e999))\n",
           "    T.evaluate(T.Ramp(0, 1, 70000))\n",
           "    T.evaluate(T.Broadcast(T.float32(1), 1))\n",
           "    T.evaluate(T.int64(-9223372036854775809))\n",
           "    T.evaluate(T.uint8(-1))\n",
           "    B = T.match_buffer(a, (4,), \"float32x65535\")\n",
           "    B = T.decl_buffer((4,), \"float32x65535\")\n    B[T.Ramp(0, 1, 4)] = B[T.Ramp(0, "
           "1, 4)]\n",
           "    B = T.decl_buffer((4,), \"float32\", align=-3)\n",
           "    B = T.decl_buffer((4,), \"vector\")\n",
           "    T.evaluate(T.Cast(\"float32x4\", T.float32(1)))\n",
           "    T.evaluate(T.Select(1, 2, 3))\n",
           "    T.evaluate(A)\n",
           "    T.evaluate(A.shape)\n",
           "    T.evaluate(\"a\" + \"b\")\n",
       }) {
    EXPECT_FALSE(parse_survives(head + line)) << line;
  }
}

}  // namespace
}  // namespace anvil::tir
