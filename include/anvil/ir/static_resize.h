// The static form of an ONNX Resize: which image.resize1d/2d/3d attrs carry out a resize whose
// scales or sizes (and roi) are known when the graph is built. The ONNX importer asks it for
// constant operands, DynamicToStatic for dyn.image.resize calls whose operands became
// constants; one derivation keeps the two from drifting apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace anvil::ir {

// A resize as ONNX Resize states it, with every operand's values known.
struct ResizeRequest {
  std::vector<std::optional<int64_t>> dims;  // the data's dims; nullopt for a symbolic one
  std::vector<double> target;                // one scale, or one size, per listed axis
  bool sizes = false;                        // target holds sizes rather than scales
  std::vector<int64_t> axes;                 // the listed axes (negative from the end); empty: all
  std::vector<double> roi;  // the listed axes' starts, then their ends; empty: no roi
  // ONNX keep_aspect_ratio_policy: stretch, not_larger or not_smaller (sizes only).
  std::string keep_aspect_ratio_policy = "stretch";
};

// The attrs of image.resize{rank - 2}d that carry out a request, over the spatial axes.
struct StaticResize {
  std::vector<double> scales;             // per spatial axis; set when the request holds scales
  std::vector<int64_t> size;              // per spatial axis; set when the request holds sizes
  std::vector<double> coordinate_scales;  // the aspect-ratio policy's scale; empty for stretch
  std::vector<double> roi;                // spatial starts, then ends; empty without roi
};

// The static form of a resize, or nullopt when image.resize1d/2d/3d cannot express it: a rank
// outside 3..5, a batch or channel dim that changes, a dim the result needs that is symbolic,
// an axis out of range, or target or roi lengths that do not match the axes.
std::optional<StaticResize> static_resize(const ResizeRequest& request);

}  // namespace anvil::ir
