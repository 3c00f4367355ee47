// Runtime functions of the vision ops (anvil/runtime/builtins.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"

namespace anvil::builtins {
namespace {

// A box as its extent on each axis, whichever corner comes first.
struct Extent {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

Extent extent_of(const float* corners) {
  return {std::min(corners[0], corners[2]), std::min(corners[1], corners[3]),
          std::max(corners[0], corners[2]), std::max(corners[1], corners[3])};
}

// Whether b suppresses a: an overlap of positive area whose IoU exceeds the threshold.
// Degenerate boxes (no area) never suppress, as in ONNX Runtime.
bool suppresses(const Extent& a, const Extent& b, float iou_threshold) {
  const float height = std::max(0.0f, std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min));
  const float width = std::max(0.0f, std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min));
  const float intersection = height * width;
  if (intersection <= 0) return false;
  const float area_a = a.area(), area_b = b.area();
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

// The one value of a scalar or one-element tensor of dtype `want`.
template <typename T>
T scalar_of(const Tensor& t, DataType want, const char* name) {
  if (t.dtype() != want || t.numel() != 1 || !t.is_contiguous())
    throw_error("non_max_suppression: ", name, " must be one ", want.to_string(), " value, got a ",
                t.dtype().to_string(), " tensor of ", t.numel(), " elements");
  T value;
  std::memcpy(&value, static_cast<const char*>(t.data()) + t.byte_offset_of(0), sizeof(T));
  return value;
}

void expect_float_tensor(const Tensor& t, int64_t rank, const char* name) {
  if (t.dtype() != DataType::float32() || t.ndim() != rank || !t.is_contiguous())
    throw_error("non_max_suppression: ", name, " must be a contiguous float32 tensor of rank ",
                rank, ", got ", t.dtype().to_string(), " of rank ", t.ndim());
}

}  // namespace

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores,
                           const Tensor& max_output_boxes_per_class, const Tensor& iou_threshold,
                           const Tensor& score_threshold) {
  expect_float_tensor(boxes, 3, "boxes");
  expect_float_tensor(scores, 3, "scores");
  const int64_t batches = boxes.shape()[0], count = boxes.shape()[1];
  const int64_t classes = scores.shape()[1];
  if (boxes.shape()[2] != 4)
    throw_error("non_max_suppression: boxes must have 4 coordinates per box, got ",
                boxes.shape()[2]);
  if (scores.shape()[0] != batches || scores.shape()[2] != count)
    throw_error("non_max_suppression: scores of shape [", scores.shape()[0], ", ", classes, ", ",
                scores.shape()[2], "] do not match boxes of shape [", batches, ", ", count, ", 4]");
  const int64_t max_per_class = scalar_of<int64_t>(max_output_boxes_per_class, DataType::int64(),
                                                   "max_output_boxes_per_class");
  const float iou = scalar_of<float>(iou_threshold, DataType::float32(), "iou_threshold");
  const float min_score = scalar_of<float>(score_threshold, DataType::float32(), "score_threshold");

  const float* box_data = boxes.data_as<float>();
  const float* score_data = scores.data_as<float>();
  std::vector<int64_t> rows;  // (batch, class, box) triples
  std::vector<int64_t> order;
  std::vector<Extent> kept;
  for (int64_t b = 0; b < batches && max_per_class > 0; ++b) {
    const float* batch_boxes = box_data + b * count * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = score_data + (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i)
        if (s[i] > min_score) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [s](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_per_class) break;
        Extent candidate = extent_of(batch_boxes + i * 4);
        bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Extent& k) {
          return suppresses(candidate, k, iou);
        });
        if (suppressed) continue;
        kept.push_back(candidate);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  }
  Tensor out = Tensor::empty({int64_t(rows.size() / 3), 3}, DataType::int64());
  if (!rows.empty()) std::memcpy(out.data(), rows.data(), rows.size() * sizeof(int64_t));
  return out;
}

namespace {

// The VM's runtime-function convention: the inputs, then where the outputs go.
const bool kRegistered = [] {
  register_global(kNonMaxSuppression,
                  PackedFunc(
                      [](const PackedArgs& args) -> Value {
                        if (args.size() != 6)
                          throw_error(kNonMaxSuppression, " takes 5 tensors, got ",
                                      args.size() - 1);
                        auto* outputs = args.get<std::vector<Tensor>*>(5);
                        *outputs = {non_max_suppression(args.get<Tensor>(0), args.get<Tensor>(1),
                                                        args.get<Tensor>(2), args.get<Tensor>(3),
                                                        args.get<Tensor>(4))};
                        return Value();
                      },
                      kNonMaxSuppression));
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
