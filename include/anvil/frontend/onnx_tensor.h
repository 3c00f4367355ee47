// Reading an ONNX TensorProto, for code outside the importer that works on ONNX models
// directly (the QDQ rewrite of anvil::quantize reads initializers with it). Unlike
// anvil/frontend/onnx.h, it needs ONNX's protobuf classes.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "anvil/runtime/tensor.h"

namespace anvil::frontend::onnx_import {

// A TensorProto's value (inline, raw or external data relative to base_dir).
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

}  // namespace anvil::frontend::onnx_import
