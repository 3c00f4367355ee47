// The loops of the graph IR (While) that converters build: Loop and Scan that are not unrolled,
// and recurrent layers over a sequence of run-time length.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import {

// A loop of the IR built from a step: the vars are an iteration count (var 0, from 0), the
// carried values and one accumulator per scan output. `step` converts the body over the vars
// (the count and the carried values) and returns the carried values' next values (the count's
// excluded) and the iteration's scan items; `cond` is the loop's condition over the same vars.
// Each accumulator starts as an empty (0, ...) tensor and gains a row per iteration (where a
// row's dims are known only at run time, the first iteration's row replaces the empty start,
// and a loop that runs no iteration gives 0 for those dims). The vars' types are the initial
// values' joined with what the body gives them, found by converting the body until they stop
// widening. Returns the carried values' last values (the count's excluded), then the
// accumulators.
struct LoopBuilder {
  std::vector<ir::Expr> init;  // the carried values, the count's excluded
  std::vector<std::string> names;
  size_t scans = 0;
  // Optional: each accumulator's empty (0, ...) start. Given, it carries the row's symbolic
  // dims (a batch), which the default start, a constant, cannot.
  std::vector<ir::Expr> scan_init;
  std::function<std::pair<std::vector<ir::Expr>, std::vector<ir::Expr>>(
      const std::vector<ir::Expr>& vars)>
      step;
  std::function<ir::Expr(const std::vector<ir::Expr>& vars)> cond;
};

std::vector<ir::Expr> build_while(ConvertContext& ctx, const LoopBuilder& loop);

}  // namespace anvil::frontend::onnx_import
