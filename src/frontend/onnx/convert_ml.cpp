// The ai.onnx.ml domain's tensor ops that are plain tensor math: Binarizer and
// ArrayFeatureExtractor. (Its string, map and tree-ensemble ops are not converted.)
#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

// Binarizer: 1 where x > threshold, else 0, in x's dtype.
std::vector<Expr> convert_binarizer(ConvertContext& ctx) {
  const DataType t = ctx.input_tensor(0).dtype;
  Expr above =
      ctx.op("greater", {ctx.input(0), scalar_constant(ctx, ctx.attr_float("threshold", 0.0), t)});
  return {ctx.op("cast", {above}, {{"dtype", t}})};
}

// ArrayFeatureExtractor: the elements of the last axis at the (flattened) indices; a 1-D
// input gives one row (1, n), as ONNX Runtime does.
std::vector<Expr> convert_array_feature_extractor(ConvertContext& ctx) {
  const ir::TensorTypeNode& x = ctx.input_tensor(0);
  Expr indices = ctx.op("reshape", {ctx.input(1)}, {{"newshape", std::vector<int64_t>{-1}}});
  indices = ctx.op("cast", {indices}, {{"dtype", DataType::int64()}});
  Expr picked = ctx.op("take", {ctx.input(0), indices}, {{"axis", int64_t(-1)}});
  if (x.ndim() == 1) picked = ctx.op("expand_dims", {picked}, {{"axis", int64_t(0)}});
  return {picked};
}

}  // namespace

void register_ml_converters(ConverterTable& table) {
  const std::string ml = "ai.onnx.ml";
  table.add("Binarizer", 1, convert_binarizer, ml);
  table.add("ArrayFeatureExtractor", 1, convert_array_feature_extractor, ml);
}

}  // namespace anvil::frontend::onnx_import
