// Graph JSON -> GraphSpec. The file may come from anywhere (a package on disk), so every
// field is checked for kind and range before it is used, and every message is one line.
#include "runtime/graph_executor_spec.h"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "anvil/runtime/tensor.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"

namespace anvil::detail {

namespace {

using Json = nlohmann::json;

// Most dims an entry may have; matches the tensor file readers.
constexpr int kMaxGraphDims = kMaxFileDims;

class GraphParser {
 public:
  explicit GraphParser(const std::string& what) : what_(what) {}

  GraphSpec parse(std::string_view text) {
    Json root;
    try {
      root = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& e) {
      fail("not valid JSON: ", printable(e.what(), 160));
    }
    if (!root.is_object()) fail("the top level must be an object, got ", root.type_name());
    const Json& nodes = member(root, "nodes", Json::value_t::array);
    const Json& arg_nodes = member(root, "arg_nodes", Json::value_t::array);
    const Json& row_ptr = member(root, "node_row_ptr", Json::value_t::array);
    const Json& heads = member(root, "heads", Json::value_t::array);
    const Json& attrs = member(root, "attrs", Json::value_t::object);

    if (nodes.size() > size_t(std::numeric_limits<int>::max() / 2)) fail("too many nodes");
    total_nodes_ = int64_t(nodes.size());
    spec_.nodes.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) parse_node(nodes[i], int(i));
    parse_row_ptr(row_ptr);
    parse_arg_nodes(arg_nodes);
    for (size_t i = 0; i < heads.size(); ++i)
      spec_.heads.push_back(
          parse_entry_ref(heads[i], "heads[" + std::to_string(i) + "]", int(total_nodes_)));
    parse_attrs(attrs);
    check_copies();
    return std::move(spec_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw_error(what_, ": ", args...);
  }

  const Json& member(const Json& object, const char* key, Json::value_t kind,
                     const std::string& where = {}) const {
    auto it = object.find(key);
    std::string field = where.empty() ? std::string("'") + key + "'" : where + " '" + key + "'";
    if (it == object.end()) fail("missing ", field);
    if (it->type() != kind)
      fail(field, " must be ", kind == Json::value_t::array ? "an array" : "an object", ", got ",
           it->type_name());
    return *it;
  }

  int64_t integer(const Json& value, const std::string& field) const {
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(field, " is out of range");
      return int64_t(value.get<uint64_t>());
    }
    if (value.is_number_integer()) return value.get<int64_t>();
    fail(field, " must be an integer, got ", value.type_name());
  }

  // An int in [lo, hi).
  int bounded(const Json& value, const std::string& field, int64_t lo, int64_t hi,
              const char* range_text) const {
    int64_t v = integer(value, field);
    if (v < lo || v >= hi) fail(field, " is ", v, ", but ", range_text);
    return int(v);
  }

  // TVM writes node attrs as strings ("num_inputs": "3"); plain integers are accepted too.
  int64_t attr_integer(const Json& value, const std::string& field) const {
    if (!value.is_string()) return integer(value, field);
    const std::string& text = value.get_ref<const std::string&>();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      fail(field, " must be an integer, got '", printable(text), "'");
    return v;
  }

  std::string node_label(int index, const std::string& name) const {
    return "node " + std::to_string(index) + " ('" + printable(name) + "')";
  }

  void parse_node(const Json& json, int index) {
    std::string where = "node " + std::to_string(index);
    if (!json.is_object()) fail(where, " must be an object, got ", json.type_name());
    auto op_it = json.find("op");
    if (op_it == json.end() || !op_it->is_string()) fail(where, " needs a string 'op'");
    auto name_it = json.find("name");
    if (name_it == json.end() || !name_it->is_string()) fail(where, " needs a string 'name'");
    GraphNode node;
    node.name = name_it->get<std::string>();
    where = node_label(index, node.name);
    const Json& inputs = member(json, "inputs", Json::value_t::array, where);
    const std::string& op = op_it->get_ref<const std::string&>();
    if (op == "null") {
      node.is_input = true;
      if (!inputs.empty()) fail(where, ": an input ('null') node cannot have inputs");
    } else if (op == "tvm_op") {
      parse_kernel_attrs(json, where, node);
      if (int64_t(inputs.size()) != expected_inputs_)
        fail(where, ": attrs say num_inputs ", expected_inputs_, ", but 'inputs' has ",
             inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i)
        node.inputs.push_back(
            parse_entry_ref(inputs[i], where + " input " + std::to_string(i), index));
    } else {
      fail(where, ": unknown op '", printable(op), "' (expected 'null' or 'tvm_op')");
    }
    spec_.nodes.push_back(std::move(node));
  }

  void parse_kernel_attrs(const Json& json, const std::string& where, GraphNode& node) {
    // Older TVM versions call the node attrs "param".
    auto it = json.find("attrs");
    if (it == json.end()) it = json.find("param");
    if (it == json.end() || !it->is_object())
      fail(where, ": a 'tvm_op' node needs an 'attrs' object");
    const Json& attrs = *it;
    auto func = attrs.find("func_name");
    if (func == attrs.end() || !func->is_string() || func->get_ref<const std::string&>().empty())
      fail(where, ": attrs need a non-empty string 'func_name'");
    node.func_name = func->get<std::string>();
    auto inputs = attrs.find("num_inputs");
    expected_inputs_ = -1;
    if (inputs != attrs.end()) {
      expected_inputs_ = attr_integer(*inputs, where + " attrs 'num_inputs'");
    } else if (auto in = json.find("inputs"); in != json.end() && in->is_array()) {
      expected_inputs_ = int64_t(in->size());
    }
    auto outputs = attrs.find("num_outputs");
    int64_t num_outputs =
        outputs == attrs.end() ? 1 : attr_integer(*outputs, where + " attrs 'num_outputs'");
    if (num_outputs < 1 || num_outputs > std::numeric_limits<int>::max() / 2)
      fail(where, ": attrs 'num_outputs' is ", num_outputs, ", but must be at least 1");
    node.num_outputs = int(num_outputs);
    // What a profile shows; optional, so graphs written elsewhere still load.
    if (auto fused = attrs.find("fused_ops"); fused != attrs.end() && fused->is_string())
      node.fused_ops = fused->get<std::string>();
    if (auto schedule = attrs.find("schedule"); schedule != attrs.end() && schedule->is_string())
      node.schedule = schedule->get<std::string>();
    if (auto refused = attrs.find("schedule_refused");
        refused != attrs.end() && refused->is_string())
      node.schedule_refused = refused->get<std::string>();
    if (auto flops = attrs.find("flops"); flops != attrs.end())
      node.flops = std::max<int64_t>(0, attr_integer(*flops, where + " attrs 'flops'"));
  }

  // [node, index] or [node, index, version]; the node must come before `before`.
  GraphEntryRef parse_entry_ref(const Json& json, const std::string& where, int before) {
    if (!json.is_array() || json.size() < 2 || json.size() > 3)
      fail(where, " must be [node, index] or [node, index, version]");
    int64_t node = integer(json[0], where + " node");
    int64_t index = integer(json[1], where + " output index");
    if (json.size() == 3) integer(json[2], where + " version");
    if (node < 0 || node >= total_nodes_)
      fail(where, " refers to node ", node, ", but the graph has ", total_nodes_, " nodes");
    if (node >= before) fail(where, " refers to node ", node, ", which does not come before it");
    const GraphNode& producer = spec_.nodes[size_t(node)];
    if (index < 0 || index >= producer.num_outputs)
      fail(where, " refers to output ", index, " of ", node_label(int(node), producer.name),
           ", which has ", producer.num_outputs, " output", producer.num_outputs == 1 ? "" : "s");
    return GraphEntryRef{int(node), int(index)};
  }

  void parse_row_ptr(const Json& json) {
    if (json.size() != spec_.nodes.size() + 1)
      fail("'node_row_ptr' has ", json.size(), " elements, expected ", spec_.nodes.size() + 1,
           " (one per node plus one)");
    int previous = 0;
    for (size_t i = 0; i < json.size(); ++i) {
      std::string field = "node_row_ptr[" + std::to_string(i) + "]";
      int value = bounded(json[i], field, 0, std::numeric_limits<int>::max(), "must be >= 0");
      if (i == 0 && value != 0) fail(field, " is ", value, ", but must be 0");
      if (i > 0 && value - previous != spec_.nodes[i - 1].num_outputs)
        fail(field, " is ", value, ", but ", node_label(int(i - 1), spec_.nodes[i - 1].name),
             " has ", spec_.nodes[i - 1].num_outputs, " outputs, so it must be ",
             int64_t(previous) + spec_.nodes[i - 1].num_outputs);
      previous = value;
    }
    spec_.node_row_ptr.reserve(json.size());
    for (const Json& v : json) spec_.node_row_ptr.push_back(int(v.get<int64_t>()));
  }

  void parse_arg_nodes(const Json& json) {
    std::set<int> seen;
    std::set<std::string> names;
    for (size_t i = 0; i < json.size(); ++i) {
      std::string field = "arg_nodes[" + std::to_string(i) + "]";
      int node =
          bounded(json[i], field, 0, int64_t(spec_.nodes.size()),
                  ("the graph has " + std::to_string(spec_.nodes.size()) + " nodes").c_str());
      const GraphNode& n = spec_.nodes[size_t(node)];
      if (!n.is_input) fail(field, " names ", node_label(node, n.name), ", which is not an input");
      if (!seen.insert(node).second) fail(field, " repeats node ", node);
      if (!names.insert(n.name).second)
        fail(field, ": two inputs are named '", printable(n.name), "'");
      spec_.arg_nodes.push_back(node);
    }
  }

  // attrs[key] = [type_tag, [values...]] with one value per node entry.
  const Json& attr_list(const Json& attrs, const char* key, const char* tag) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) fail("missing attrs '", key, "'");
    const Json& v = *it;
    if (!v.is_array() || v.size() != 2 || !v[0].is_string() ||
        v[0].get_ref<const std::string&>() != tag || !v[1].is_array())
      fail("attrs '", key, "' must be [\"", tag, "\", [...]]");
    size_t entries = size_t(spec_.node_row_ptr.back());
    if (v[1].size() != entries)
      fail("attrs '", key, "' has ", v[1].size(), " elements, but the graph has ", entries,
           " node entries");
    return v[1];
  }

  void parse_attrs(const Json& attrs) {
    const Json& dltypes = attr_list(attrs, "dltype", "list_str");
    const Json& shapes = attr_list(attrs, "shape", "list_shape");
    const Json& storage = attr_list(attrs, "storage_id", "list_int");
    size_t count = dltypes.size();
    spec_.entries.resize(count);
    for (size_t i = 0; i < count; ++i) {
      GraphEntry& entry = spec_.entries[i];
      std::string where = "attrs entry " + std::to_string(i);
      if (!dltypes[i].is_string()) fail(where, ": 'dltype' must be a string");
      try {
        entry.dtype = DataType::parse(dltypes[i].get_ref<const std::string&>());
      } catch (const Error& e) {
        fail(where, ": bad 'dltype': ", e.what());
      }
      const Json& shape = shapes[i];
      if (!shape.is_array()) fail(where, ": 'shape' must be an array");
      if (shape.size() > size_t(kMaxGraphDims)) fail(where, ": more than ", kMaxGraphDims, " dims");
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t dim = integer(shape[d], where + " shape dim " + std::to_string(d));
        if (dim < 0) fail(where, ": shape dim ", d, " is negative (", dim, ")");
        entry.shape.push_back(dim);
      }
      if (!checked_byte_size(entry.shape, entry.dtype.bytes(), &entry.nbytes))
        fail(where, ": the byte size of shape overflows");
      entry.storage_id = bounded(storage[i], where + " 'storage_id'", 0, int64_t(count),
                                 "storage ids must lie below the number of node entries");
      spec_.num_storage = std::max(spec_.num_storage, entry.storage_id + 1);
    }
    if (attrs.contains("arena_offset")) parse_arena(attr_list(attrs, "arena_offset", "list_int"));
    // Written by anvil's graph codegen for the memory report; TVM's executor skips a "size_t".
    if (auto it = attrs.find("largest_live_set_bytes"); it != attrs.end()) {
      const Json& v = *it;
      if (!v.is_array() || v.size() != 2 || !v[0].is_string() ||
          v[0].get_ref<const std::string&>() != "size_t")
        fail("attrs 'largest_live_set_bytes' must be [\"size_t\", N]");
      spec_.largest_live_set = integer(v[1], "attrs 'largest_live_set_bytes'");
      if (spec_.largest_live_set < 0)
        fail("attrs 'largest_live_set_bytes' is ", spec_.largest_live_set, ", but must be >= 0");
    }
  }

  // Entries placed in the activation arena: kernel outputs that are not graph outputs (an input
  // is set from outside, an output read after the run), at offsets that keep the kernels'
  // alignment.
  void parse_arena(const Json& offsets) {
    std::vector<bool> held(spec_.entries.size(), false);
    for (size_t n = 0; n < spec_.nodes.size(); ++n)
      if (spec_.nodes[n].is_input) held[size_t(spec_.node_row_ptr[n])] = true;
    for (GraphEntryRef head : spec_.heads) held[size_t(spec_.entry_id(head))] = true;
    for (size_t i = 0; i < offsets.size(); ++i) {
      std::string where = "attrs entry " + std::to_string(i) + " 'arena_offset'";
      GraphEntry& entry = spec_.entries[i];
      entry.arena_offset = integer(offsets[i], where);
      if (entry.arena_offset == -1) continue;
      if (entry.arena_offset < 0 || entry.arena_offset % int64_t(Tensor::kAlignment) != 0)
        fail(where, " is ", entry.arena_offset, ", but must be -1 or a multiple of ",
             Tensor::kAlignment);
      if (held[i]) fail(where, ": a graph input or output cannot live in the arena");
      if (entry.arena_offset > std::numeric_limits<int64_t>::max() - entry.nbytes)
        fail(where, " is out of range");
      spec_.arena_bytes = std::max(spec_.arena_bytes, entry.arena_offset + entry.nbytes);
    }
  }

  // The built-in "__copy" moves bytes, so its two entries must have the same byte size.
  void check_copies() const {
    for (size_t n = 0; n < spec_.nodes.size(); ++n) {
      const GraphNode& node = spec_.nodes[n];
      if (node.is_input || node.func_name != kGraphCopyFunc) continue;
      if (node.inputs.size() != 1 || node.num_outputs != 1 ||
          spec_.entries[size_t(spec_.entry_id(node.inputs[0]))].nbytes !=
              spec_.entries[size_t(spec_.node_row_ptr[n])].nbytes)
        fail(node_label(int(n), node.name),
             ": '__copy' needs one input and one output of the same byte size");
    }
  }

  const std::string& what_;
  GraphSpec spec_;
  int64_t expected_inputs_ = -1;
  int64_t total_nodes_ = 0;
};

}  // namespace

GraphSpec parse_graph_json(std::string_view json, const std::string& what) {
  return GraphParser(what).parse(json);
}

std::string describe_node(const GraphSpec& spec, int node) {
  return "node " + std::to_string(node) + " ('" + printable(spec.nodes[size_t(node)].name) + "')";
}

}  // namespace anvil::detail
