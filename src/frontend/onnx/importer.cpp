// from_onnx: parse, check every op is supported, bind inputs and
// initializers, convert the nodes, and type the resulting @main.
#include <fstream>
#include <set>
#include <sstream>

#include "anvil/ir/infer_type.h"
#include "frontend/onnx/graph_converter.h"

namespace anvil::frontend {

using namespace ir;
using namespace onnx_import;

namespace {

// The declared type of a graph input, with dims fixed by shape_dict where given.
Type input_type(const onnx::ValueInfoProto& info, const OnnxImportOptions& options) {
  const std::string what = "input '" + info.name() + "'";
  if (!info.type().has_tensor_type())
    throw_error(what, " is not a tensor (sequence, map and optional inputs are not supported)");
  const auto& tensor = info.type().tensor_type();
  DataType dtype = tensor.elem_type() != 0 ? onnx_dtype(tensor.elem_type(), what)
                                           : options.dtype.value_or(DataType::float32());
  for (const auto& [name, shape] : options.shape_dict) {
    if (name != info.name()) continue;
    if (tensor.has_shape() && tensor.shape().dim_size() != int(shape.size()))
      throw_error("shape_dict gives ", what, " rank ", shape.size(),
                  " but the model declares rank ", tensor.shape().dim_size());
    for (size_t i = 0; tensor.has_shape() && i < shape.size(); ++i) {
      const auto& dim = tensor.shape().dim(int(i));
      if (dim.has_dim_value() && dim.dim_value() != shape[i])
        throw_error("shape_dict gives ", what, " dim ", i, " = ", shape[i],
                    " but the model fixes it to ", dim.dim_value());
    }
    return TensorTypeNode::make(to_dims(shape), dtype);
  }
  if (!tensor.has_shape()) return TensorTypeNode::make_unknown_rank(dtype);
  std::vector<Dim> dims;
  for (int i = 0; i < tensor.shape().dim_size(); ++i) {
    const auto& dim = tensor.shape().dim(i);
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      dims.push_back(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      dims.push_back(Dim::var(sanitize_name(dim.dim_param())));
    } else {
      dims.push_back(Dim::var(sanitize_name(info.name()) + "_dim" + std::to_string(i)));
    }
  }
  return TensorTypeNode::make(std::move(dims), dtype);
}

std::map<std::string, int64_t> model_opsets(const onnx::ModelProto& model,
                                            const OnnxImportOptions& options) {
  std::map<std::string, int64_t> opsets;
  for (const auto& entry : model.opset_import())
    opsets[normalize_domain(entry.domain())] = entry.version();
  if (options.opset) opsets[""] = *options.opset;
  if (!opsets.count("")) opsets[""] = 1;  // a model importing nothing uses the first opset
  return opsets;
}

ImportedModel convert_model(const onnx::ModelProto& model, const OnnxImportOptions& options,
                            const std::filesystem::path& base_dir) {
  const onnx::GraphProto& graph = model.graph();
  std::map<std::string, int64_t> opsets = model_opsets(model, options);
  check_supported(graph, opsets);

  GraphConverter converter(opsets, base_dir);
  ImportedModel result;
  std::set<std::string> initializer_names;
  for (const onnx::TensorProto& init : graph.initializer()) initializer_names.insert(init.name());
  for (const auto& [name, shape] : options.shape_dict) {
    bool found = false;
    for (const auto& in : graph.input()) found |= in.name() == name;
    if (!found) throw_error("shape_dict names '", name, "', which is not an input of the model");
  }

  std::map<std::string, Tensor> fixed;
  for (const auto& [name, value] : options.constant_inputs) {
    bool found = initializer_names.count(name) > 0;
    for (const auto& in : graph.input()) found |= in.name() == name;
    if (!found)
      throw_error("constant_inputs names '", name, "', which is not an input of the model");
    fixed[name] = value;
  }

  std::vector<Var> params;
  for (const onnx::ValueInfoProto& info : graph.input()) {
    if (initializer_names.count(info.name())) continue;  // an initializer with a default value
    if (auto it = fixed.find(info.name()); it != fixed.end()) {
      converter.define(info.name(), ConstantNode::make(it->second), "graph input");
      continue;
    }
    Var v = VarNode::make(info.name(), input_type(info, options));
    converter.define(info.name(), v, "graph input");
    params.push_back(v);
    result.input_names.push_back(info.name());
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    Tensor value = tensor_from_proto(init, base_dir);
    if (auto it = fixed.find(init.name()); it != fixed.end()) value = it->second;
    if (options.freeze_params || fixed.count(init.name())) {
      Expr c = ConstantNode::make(value);
      converter.define(init.name(), c, "initializer");
      continue;
    }
    Var v = VarNode::make(init.name(),
                          TensorTypeNode::make(to_dims(value.shape_vector()), value.dtype()));
    converter.define(init.name(), v, "initializer");
    converter.remember_value(v.get(), value);
    params.push_back(v);
    result.params.emplace_back(init.name(), value);
  }

  converter.convert_nodes(graph);
  std::vector<Expr> outputs;
  for (const onnx::ValueInfoProto& out : graph.output()) {
    Expr e = converter.lookup(out.name());
    if (!e) throw_error("graph output '", out.name(), "' is not computed by any node");
    outputs.push_back(e);
    result.output_names.push_back(out.name());
  }
  if (outputs.empty()) throw_error("the model has no outputs");
  Expr body = outputs.size() == 1 ? outputs[0] : Expr(TupleNode::make(outputs));
  result.mod.add("main", FunctionNode::make(params, body));
  result.mod = infer_type(result.mod);
  return result;
}

}  // namespace

ImportedModel from_onnx_bytes(std::string_view bytes, const OnnxImportOptions& options,
                              const std::string& what, const std::filesystem::path& base_dir) {
  if (bytes.empty()) throw_error(what, " is empty, not an ONNX model");
  onnx::ModelProto model;
  if (bytes.size() > size_t(INT32_MAX) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    throw_error(what, " is not an ONNX model (it does not parse as an ONNX protobuf)");
  if (!model.has_graph() || model.ir_version() <= 0)
    throw_error(what, " is not an ONNX model (", model.has_graph() ? "no IR version" : "no graph",
                ")");
  try {
    return convert_model(model, options, base_dir);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
}

ImportedModel from_onnx(const std::filesystem::path& path, const OnnxImportOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw_error("model file '", path.string(), "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw_error("model file '", path.string(), "' is a directory, not a file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw_error("model file '", path.string(), "' cannot be opened");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return from_onnx_bytes(buffer.str(), options, "'" + path.string() + "'", path.parent_path());
}

std::vector<std::string> supported_onnx_ops() { return ConverterTable::global().list(); }

}  // namespace anvil::frontend
