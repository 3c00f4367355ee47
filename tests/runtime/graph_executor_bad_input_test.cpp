// Untrusted graph JSON and packages: each malformed input gets a one-line Error that names the
// problem, and no truncation, random input or bit flip crashes (the suite runs under ASan).
// Packages here are .tar files written by a small ustar writer below around the hand-written
// fixture kernel library, so no compiler is involved.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/params.h"
#include "anvil/support/error.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using anvil::testing::read_file;
using anvil::testing::ScratchDir;
using anvil::testing::write_file;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The fixture library's only kernel used here is add_one(x): x += 1 in place, so the graph
// copies its input and lets add_one's output share that copy's storage. "w" is a param,
// echoed as a second output.
const char* kAddOneGraph = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "w", "inputs": []},
    {"op": "tvm_op", "name": "copy", "attrs": {"func_name": "__copy", "num_inputs": "1",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0, 0]]},
    {"op": "tvm_op", "name": "inc", "attrs": {"func_name": "add_one", "num_inputs": "0",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": []},
    {"op": "tvm_op", "name": "echo_w", "attrs": {"func_name": "__copy", "num_inputs": "1",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "node_row_ptr": [0, 1, 2, 3, 4, 5],
  "heads": [[3, 0, 0], [4, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32"]],
    "shape": ["list_shape", [[2, 3], [3], [2, 3], [2, 3], [3]]],
    "storage_id": ["list_int", [0, 1, 2, 2, 3]]
  }
})";

Module fixture_kernels() { return Module::load_shared(ANVIL_TEST_KERNELS); }

Tensor w_param() {
  Tensor w = Tensor::empty({3}, DataType::float32());
  for (int i = 0; i < 3; ++i) w.data_as<float>()[i] = float(i) * 1.5f - 1;
  return w;
}

// ---- Graph JSON ----

TEST(GraphJsonBadInputTest, TheFixtureGraphRuns) {
  GraphExecutor executor(kAddOneGraph, fixture_kernels());
  executor.load_params({{"w", w_param()}});
  Tensor data = Tensor::empty({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) data.data_as<float>()[i] = float(i);
  executor.set_input("data", data);
  executor.run();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(executor.get_output(0).data_as<float>()[i], float(i + 1));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(executor.get_output(1).data_as<float>()[i], w_param().data_as<float>()[i]);
}

// kAddOneGraph with `from` replaced by `to` (which must occur).
std::string graph_with(const std::string& from, const std::string& to) {
  std::string graph = kAddOneGraph;
  size_t at = graph.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) graph.replace(at, from.size(), to);
  return graph;
}

TEST(GraphJsonBadInputTest, EachProblemHasItsMessage) {
  struct Case {
    std::string graph;
    std::string message;
  };
  std::vector<Case> cases = {
      {"{\"nodes\": [", "graph JSON: not valid JSON: "},
      {"[1, 2]", "graph JSON: the top level must be an object, got array"},
      {graph_with("\"heads\"", "\"heads_\""), "graph JSON: missing 'heads'"},
      {graph_with("\"arg_nodes\": [0, 1]", "\"arg_nodes\": {}"),
       "graph JSON: 'arg_nodes' must be an array, got object"},
      {graph_with("[[1, 0, 0]]", "[[7, 0, 0]]"),
       "graph JSON: node 4 ('echo_w') input 0 refers to node 7, but the graph has 5 nodes"},
      {graph_with("[[1, 0, 0]]", "[[4, 0, 0]]"),
       "graph JSON: node 4 ('echo_w') input 0 refers to node 4, which does not come before it"},
      {graph_with("[[1, 0, 0]]", "[[1, 2, 0]]"),
       "graph JSON: node 4 ('echo_w') input 0 refers to output 2 of node 1 ('w'), which has 1 "
       "output"},
      {graph_with("[[1, 0, 0]]", "[[1, \"0\", 0]]"),
       "graph JSON: node 4 ('echo_w') input 0 output index must be an integer, got string"},
      {graph_with("[[3, 0, 0], [4, 0, 0]]", "[[3, 0, 0], [9, 0, 0]]"),
       "graph JSON: heads[1] refers to node 9, but the graph has 5 nodes"},
      {graph_with("\"op\": \"tvm_op\", \"name\": \"inc\"", "\"op\": \"conv\", \"name\": \"inc\""),
       "graph JSON: node 3 ('inc'): unknown op 'conv' (expected 'null' or 'tvm_op')"},
      {graph_with("\"func_name\": \"add_one\"", "\"func_name\": \"\""),
       "graph JSON: node 3 ('inc'): attrs need a non-empty string 'func_name'"},
      {graph_with("\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": []",
                  "\"num_outputs\": \"x1\", \"flatten_data\": \"0\"}, \"inputs\": []"),
       "graph JSON: node 3 ('inc') attrs 'num_outputs' must be an integer, got 'x1'"},
      {graph_with("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 5, 6]"),
       "graph JSON: node_row_ptr[4] is 5, but node 3 ('inc') has 1 outputs, so it must be 4"},
      {graph_with("[0, 1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4]"),
       "graph JSON: 'node_row_ptr' has 5 elements, expected 6 (one per node plus one)"},
      {graph_with("\"arg_nodes\": [0, 1]", "\"arg_nodes\": [0, 2]"),
       "graph JSON: arg_nodes[1] names node 2 ('copy'), which is not an input"},
      {graph_with("\"arg_nodes\": [0, 1]", "\"arg_nodes\": [0, 0]"),
       "graph JSON: arg_nodes[1] repeats node 0"},
      {graph_with("\"name\": \"w\"", "\"name\": \"data\""),
       "graph JSON: arg_nodes[1]: two inputs are named 'data'"},
      {graph_with("\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"",
                  "\"float32\", \"float32\", \"float32\", \"float32\""),
       "graph JSON: attrs 'dltype' has 4 elements, but the graph has 5 node entries"},
      {graph_with("\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"",
                  "\"float32\", \"float32\", \"floaty\", \"float32\", \"float32\""),
       "graph JSON: attrs entry 2: bad 'dltype': "},
      {graph_with("[[2, 3], [3], [2, 3], [2, 3], [3]]", "[[2, 3], [-3], [2, 3], [2, 3], [3]]"),
       "graph JSON: attrs entry 1: shape dim 0 is negative (-3)"},
      {graph_with("[[2, 3], [3], [2, 3], [2, 3], [3]]",
                  "[[2, 3], [4294967296, 4294967296], [2, 3], [2, 3], [3]]"),
       "graph JSON: attrs entry 1: the byte size of shape overflows"},
      {graph_with("[0, 1, 2, 2, 3]", "[0, 1, 2, 2, 5]"),
       "graph JSON: attrs entry 4 'storage_id' is 5, but storage ids must lie below the number "
       "of node entries"},
      {graph_with("\"storage_id\": [\"list_int\"", "\"storage_id\": [\"list_str\""),
       "graph JSON: attrs 'storage_id' must be [\"list_int\", [...]]"},
      {graph_with("\"shape\": [\"list_shape\",", "\"shapes\": [\"list_shape\","),
       "graph JSON: missing attrs 'shape'"},
      {graph_with("[[2, 3], [3], [2, 3], [2, 3], [3]]", "[[2, 3], [3], [2, 3], [2, 3], [4]]"),
       "graph JSON: node 4 ('echo_w'): '__copy' needs one input and one output of the same "
       "byte size"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"arena_offset\": "
                  "[\"list_int\", [-1, -1, 32, -1, -1]]"),
       "graph JSON: attrs entry 2 'arena_offset' is 32, but must be -1 or a multiple of 64"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"arena_offset\": "
                  "[\"list_int\", [0, -1, -1, -1, -1]]"),
       "graph JSON: attrs entry 0 'arena_offset': a graph input or output cannot live in the "
       "arena"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"arena_offset\": "
                  "[\"list_int\", [-1, -1, -1, 64, -1]]"),
       "graph JSON: attrs entry 3 'arena_offset': a graph input or output cannot live in the "
       "arena"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"arena_offset\": "
                  "[\"list_int\", [-1, -1, 0, -1]]"),
       "graph JSON: attrs 'arena_offset' has 4 elements, but the graph has 5 node entries"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"arena_offset\": "
                  "[\"list_int\", [-1, -1, \"0\", -1, -1]]"),
       "graph JSON: attrs entry 2 'arena_offset' must be an integer, got string"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"largest_live_set_bytes\": "
                  "[\"size_t\", -5]"),
       "graph JSON: attrs 'largest_live_set_bytes' is -5, but must be >= 0"},
      {graph_with("\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]]",
                  "\"storage_id\": [\"list_int\", [0, 1, 2, 2, 3]], \"largest_live_set_bytes\": "
                  "[\"list_int\", [5]]"),
       "graph JSON: attrs 'largest_live_set_bytes' must be [\"size_t\", N]"},
  };
  for (const Case& c : cases) {
    std::string message = error_of([&] { GraphExecutor(c.graph, fixture_kernels()); });
    EXPECT_TRUE(message.starts_with(c.message)) << "got: " << message << "\nwant: " << c.message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// Builds (and, if it builds, runs) an executor for bytes; only anvil::Error may come out.
void construct_and_run(const std::string& bytes, const Module& lib) {
  try {
    GraphExecutor executor(bytes, lib);
    executor.run();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(GraphJsonBadInputTest, TruncationsRandomBytesAndBitFlipsNeverCrash) {
  Module lib = fixture_kernels();
  const std::string valid = kAddOneGraph;
  for (size_t n = 0; n < valid.size(); ++n) construct_and_run(valid.substr(0, n), lib);
  std::mt19937 rng(20240501);
  for (int i = 0; i < 300; ++i) {
    std::string junk(size_t(rng() % 400), '\0');
    for (char& c : junk) c = char(rng());
    construct_and_run(junk, lib);
  }
  for (size_t byte = 0; byte < valid.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = valid;
      flipped[byte] = char(flipped[byte] ^ (1 << bit));
      construct_and_run(flipped, lib);
    }
}

// ---- Packages ----

// One ustar member header followed by the data padded to whole 512-byte blocks.
std::string tar_member(const std::string& name, const std::string& data) {
  std::string header(512, '\0');
  auto put = [&](size_t offset, const std::string& text) {
    std::memcpy(header.data() + offset, text.data(), text.size());
  };
  auto octal = [](uint64_t value, int digits) {
    std::string text(size_t(digits), '0');
    for (int i = digits - 1; i >= 0 && value; --i, value >>= 3)
      text[size_t(i)] = char('0' + (value & 7));
    return text;
  };
  put(0, name);
  put(100, octal(0644, 7));
  put(108, octal(0, 7));
  put(116, octal(0, 7));
  put(124, octal(data.size(), 11));
  put(136, octal(1700000000, 11));
  put(148, "        ");  // the checksum counts its own field as spaces
  header[156] = '0';
  put(257, std::string("ustar\0"
                       "00",
                       8));
  unsigned checksum = 0;
  for (char c : header) checksum += static_cast<unsigned char>(c);
  put(148, octal(checksum, 6) + std::string("\0 ", 2));
  std::string padded = data;
  padded.resize((data.size() + 511) / 512 * 512, '\0');
  return header + padded;
}

std::string tar_of(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string tar;
  for (const auto& [name, data] : members) tar += tar_member(name, data);
  return tar + std::string(1024, '\0');
}

std::string fixture_library_bytes() { return read_file(ANVIL_TEST_KERNELS); }

std::string valid_package_tar() {
  return tar_of({{"mod.json", kAddOneGraph},
                 {"mod.params", save_params({{"w", w_param()}})},
                 {"mod.so", fixture_library_bytes()}});
}

TEST(PackageBadInputTest, AHandWrittenTarLoadsAndRuns) {
  ScratchDir dir;
  // "./" prefixes, as `tar -C dir .` writes them, are accepted; extra members are ignored.
  write_file(dir / "m.tar", tar_of({{"./mod.so", fixture_library_bytes()},
                                    {"README", "not part of the package"},
                                    {"./mod.json", kAddOneGraph},
                                    {"./mod.params", save_params({{"w", w_param()}})}}));
  Package package = load_module((dir / "m.tar").string());
  EXPECT_EQ(package.graph_json, kAddOneGraph);
  ASSERT_EQ(package.params.size(), 1u);
  EXPECT_EQ(package.params[0].first, "w");
  EXPECT_EQ(package.lib.name(), (dir / "m.tar").string());
  GraphExecutor executor = package.create_executor();
  EXPECT_EQ(executor.get_num_inputs(), 1);
  Tensor data = Tensor::zeros({2, 3}, DataType::float32());
  executor.set_input("data", data);
  executor.run();
  EXPECT_EQ(executor.get_output(0).data_as<float>()[5], 1.0f);
  EXPECT_EQ(executor.get_output(1).data_as<float>()[2], 2.0f);
}

TEST(PackageBadInputTest, EachProblemNamesTheFile) {
  ScratchDir dir;
  std::string path = (dir / "m.tar").string();
  std::string params = save_params({{"w", w_param()}});
  std::string library = fixture_library_bytes();
  auto message_for = [&](const std::string& bytes) {
    write_file(path, bytes);
    return error_of([&] { load_module(path); });
  };
  std::string prefix = "package '" + path + "': ";

  EXPECT_EQ(error_of([&] { load_module((dir / "absent.tar").string()); }),
            "package '" + (dir / "absent.tar").string() + "': no such file");
  EXPECT_EQ(error_of([&] { load_module(dir.path().string()); }),
            "package '" + dir.path().string() + "': is a directory, not a file");
  EXPECT_EQ(message_for("hello, world"),
            prefix + "not a package (neither a tar archive nor an ELF shared object)");
  EXPECT_EQ(message_for(tar_of({{"mod.json", kAddOneGraph}, {"mod.so", library}})),
            prefix + "the archive has no member mod.params");
  EXPECT_EQ(message_for(tar_of({{"mod.json", kAddOneGraph},
                                {"mod.params", params},
                                {"mod.params", params},
                                {"mod.so", library}})),
            prefix + "member mod.params appears twice");
  EXPECT_TRUE(
      message_for(
          tar_of({{"mod.json", "{\"nodes\": "}, {"mod.params", params}, {"mod.so", library}}))
          .starts_with(prefix + "mod.json: not valid JSON: "));
  EXPECT_EQ(message_for(tar_of({{"mod.json", graph_with("[[1, 0, 0]]", "[[7, 0, 0]]")},
                                {"mod.params", params},
                                {"mod.so", library}})),
            prefix +
                "mod.json: node 4 ('echo_w') input 0 refers to node 7, but the graph has 5 "
                "nodes");
  EXPECT_TRUE(
      message_for(tar_of({{"mod.json", kAddOneGraph}, {"mod.params", "junk"}, {"mod.so", library}}))
          .starts_with(prefix + "mod.params: "));
  Tensor wrong = Tensor::zeros({4}, DataType::float32());
  EXPECT_EQ(message_for(tar_of({{"mod.json", kAddOneGraph},
                                {"mod.params", save_params({{"w", wrong}})},
                                {"mod.so", library}})),
            prefix + "param 'w' is (4,) float32, but the graph's input is (3,) float32");
  EXPECT_EQ(message_for(tar_of({{"mod.json", kAddOneGraph},
                                {"mod.params", save_params({{"bias", wrong}})},
                                {"mod.so", library}})),
            prefix + "param 'bias' is not an input of the graph");
  EXPECT_EQ(message_for(tar_of({{"mod.json", graph_with("add_one", "add_two")},
                                {"mod.params", params},
                                {"mod.so", library}})),
            prefix +
                "mod.json: node 3 ('inc') calls 'add_two', which neither the kernel "
                "library nor the global registry has");
  EXPECT_EQ(message_for(tar_of(
                {{"mod.json", kAddOneGraph}, {"mod.params", params}, {"mod.so", "#!/bin/sh\n"}})),
            prefix + "mod.so is not an ELF shared object");
  EXPECT_TRUE(contains(message_for(tar_of({{"mod.json", kAddOneGraph},
                                           {"mod.params", params},
                                           {"mod.so", library.substr(0, library.size() / 2)}})),
                       prefix + "mod.so: truncated"));
  // A valid tar cut short inside a member.
  std::string tar = valid_package_tar();
  EXPECT_TRUE(message_for(tar.substr(0, 700)).starts_with(prefix));
  // An ELF file that is a kernel library but not a package.
  write_file(dir / "kernels.so", library);
  EXPECT_EQ(error_of([&] { load_module((dir / "kernels.so").string()); }),
            "package '" + (dir / "kernels.so").string() +
                "': a kernel library, not a package: symbol 'anvil_package_graph_json' not found");
  write_file(dir / "half.so", library.substr(0, library.size() / 2));
  EXPECT_TRUE(error_of([&] {
                load_module((dir / "half.so").string());
              }).starts_with("package '" + (dir / "half.so").string() + "': truncated"));
}

// Loads bytes as a package; only anvil::Error may come out.
void load_bytes(const std::filesystem::path& path, const std::string& bytes) {
  // A fresh file each time: truncating one in place makes ext4 flush it on close.
  std::filesystem::remove(path);
  write_file(path, bytes);
  try {
    Package package = load_module(path.string());
    package.create_executor().run();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(PackageBadInputTest, TruncationsRandomBytesAndBitFlipsNeverCrash) {
  ScratchDir dir;
  std::filesystem::path path = dir / "fuzz.tar";
  const std::string valid = valid_package_tar();
  for (size_t n = 0; n < valid.size(); n += (n < 2048 ? 7 : 509))
    load_bytes(path, valid.substr(0, n));
  std::mt19937 rng(99);
  for (int i = 0; i < 100; ++i) {
    std::string junk(size_t(rng() % 2048), '\0');
    for (char& c : junk) c = char(rng());
    if (i % 2 && junk.size() >= 512) std::memcpy(junk.data() + 257, "ustar", 5);
    load_bytes(path, junk);
  }
  // One bit per byte of everything before the kernel library's data (member headers, graph
  // JSON, params, the library's header block): flips inside machine code would only be found
  // by running it.
  size_t library_data = valid.find(
      "\x7f"
      "ELF");
  ASSERT_NE(library_data, std::string::npos);
  for (size_t byte = 0; byte < library_data; ++byte) {
    std::string flipped = valid;
    flipped[byte] = char(flipped[byte] ^ (1 << (rng() % 8)));
    load_bytes(path, flipped);
  }
}

}  // namespace
}  // namespace anvil
