// Linear algebra: Det becomes linalg.det, run by the VM as a runtime function
// (anvil/runtime/builtins.h).
#include "frontend/onnx/convert_nn.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

std::vector<Expr> convert_det(ConvertContext& ctx) {
  return {ctx.op("linalg.det", {ctx.input(0)})};
}

}  // namespace

void register_linalg_converters(ConverterTable& table) { table.add("Det", 11, convert_det); }

}  // namespace anvil::frontend::onnx_import
