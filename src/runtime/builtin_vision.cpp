// Runtime functions of the vision ops (anvil/runtime/builtins.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/thread_pool.h"
#include "anvil/support/error.h"
#include "runtime/builtin_registration.h"

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

Tensor roi_align(const Tensor& data, const Tensor& rois, const Tensor& batch_indices,
                 const Tensor& params) {
  const DataType dtype = data.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64())
    throw_error("roi_align: X must be float32 or float64, got ", dtype.to_string());
  if (data.ndim() != 4)
    throw_error("roi_align: X must be [N, C, H, W], got shape ", shape_to_string(data.shape()));
  if (rois.ndim() != 2 || rois.shape()[1] != 4)
    throw_error("roi_align: rois must be [num_rois, 4], got shape ", shape_to_string(rois.shape()));
  const int64_t count = rois.shape()[0];
  if (batch_indices.ndim() != 1 || batch_indices.numel() != count)
    throw_error("roi_align: batch_indices must be [", count, "], got shape ",
                shape_to_string(batch_indices.shape()));
  if (params.numel() != 6) throw_error("roi_align: expected 6 parameters, got ", params.numel());
  const int64_t batch = data.shape()[0], channels = data.shape()[1], height = data.shape()[2],
                width = data.shape()[3];
  const int64_t out_h = int64_t(params.get_as_double(0)), out_w = int64_t(params.get_as_double(1));
  const int64_t sampling_ratio = int64_t(params.get_as_double(2));
  const double scale = params.get_as_double(3);
  const bool max_mode = params.get_as_double(4) != 0, half_pixel = params.get_as_double(5) != 0;
  if (out_h <= 0 || out_w <= 0)
    throw_error("roi_align: output_height and output_width must be positive, got ", out_h, " and ",
                out_w);
  Tensor out = Tensor::empty({count, channels, out_h, out_w}, dtype);
  const Tensor compact = data.is_contiguous() ? data : data.copy();
  struct Sample {
    int64_t pos[4];
    double weight[4];
  };
  for (int64_t r = 0; r < count; ++r) {
    const int64_t b = int64_t(batch_indices.get_as_double(r));
    if (b < 0 || b >= batch)
      throw_error("roi_align: batch_indices[", r, "] = ", b, " is outside [0, ", batch, ")");
  }
  // The regions are independent: split across the thread pool.
  parallel_for(count, [&](int64_t first_roi, int64_t end_roi) {
    std::vector<Sample> samples;
    for (int64_t r = first_roi; r < end_roi; ++r) {
      const int64_t b = int64_t(batch_indices.get_as_double(r));
      const double offset = half_pixel ? 0.5 : 0.0;
      const double start_w = rois.get_as_double(r * 4 + 0) * scale - offset;
      const double start_h = rois.get_as_double(r * 4 + 1) * scale - offset;
      double roi_w = rois.get_as_double(r * 4 + 2) * scale - offset - start_w;
      double roi_h = rois.get_as_double(r * 4 + 3) * scale - offset - start_h;
      if (!half_pixel) {  // malformed boxes become 1 x 1
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / double(out_h), bin_w = roi_w / double(out_w);
      const int64_t grid_h =
          sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(roi_h / double(out_h)));
      const int64_t grid_w =
          sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(roi_w / double(out_w)));
      const double divisor = double(std::max<int64_t>(grid_h * grid_w, 1));
      for (int64_t ph = 0; ph < out_h; ++ph) {
        for (int64_t pw = 0; pw < out_w; ++pw) {
          // The bilinear samples of this bin, shared by every channel.
          samples.clear();
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double y = start_h + double(ph) * bin_h + (double(iy) + 0.5) * bin_h / double(grid_h);
              double x = start_w + double(pw) * bin_w + (double(ix) + 0.5) * bin_w / double(grid_w);
              Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
              if (!(y < -1.0 || y > double(height) || x < -1.0 || x > double(width))) {
                y = std::max(y, 0.0);
                x = std::max(x, 0.0);
                int64_t y_low = int64_t(y), x_low = int64_t(x), y_high, x_high;
                if (y_low >= height - 1) {
                  y_high = y_low = height - 1;
                  y = double(y_low);
                } else {
                  y_high = y_low + 1;
                }
                if (x_low >= width - 1) {
                  x_high = x_low = width - 1;
                  x = double(x_low);
                } else {
                  x_high = x_low + 1;
                }
                const double ly = y - double(y_low), lx = x - double(x_low);
                const double hy = 1 - ly, hx = 1 - lx;
                s = Sample{{y_low * width + x_low, y_low * width + x_high, y_high * width + x_low,
                            y_high * width + x_high},
                           {hy * hx, hy * lx, ly * hx, ly * lx}};
              }
              samples.push_back(s);
            }
          }
          // Every channel of the bin, through typed pointers (an accessor per element made the
          // op most of a two-stage detector's run).
          auto pool = [&](const auto* in, auto* result) {
            for (int64_t c = 0; c < channels; ++c) {
              const auto* plane = in + (b * channels + c) * height * width;
              double value = 0;
              bool first = true;
              for (const Sample& smp : samples) {
                double v[4];
                for (int k = 0; k < 4; ++k) v[k] = smp.weight[k] * double(plane[smp.pos[k]]);
                if (max_mode) {
                  const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                  value = first ? m : std::max(value, m);
                  first = false;
                } else {
                  value += v[0] + v[1] + v[2] + v[3];
                }
              }
              if (!max_mode) value /= divisor;
              using T = std::remove_pointer_t<decltype(result)>;
              result[((r * channels + c) * out_h + ph) * out_w + pw] = T(value);
            }
          };
          if (dtype == DataType::float32())
            pool(static_cast<const float*>(compact.data()), static_cast<float*>(out.data()));
          else
            pool(static_cast<const double*>(compact.data()), static_cast<double*>(out.data()));
        }
      }
    }
  });
  return out;
}

Tensor affine_grid(const Tensor& theta, const Tensor& size, const Tensor& align_corners) {
  const DataType dtype = theta.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64())
    throw_error("affine_grid: theta must be float32 or float64, got ", dtype.to_string());
  if (size.ndim() != 1 || (size.numel() != 4 && size.numel() != 5) || !size.dtype().is_int())
    throw_error("affine_grid: size must be an integer vector of 4 or 5 values, got ",
                size.dtype().to_string(), " of shape ", shape_to_string(size.shape()));
  const int64_t spatial = size.numel() - 2;  // 2 or 3
  if (theta.ndim() != 3 || theta.shape()[1] != spatial || theta.shape()[2] != spatial + 1)
    throw_error("affine_grid: theta must be [N, ", spatial, ", ", spatial + 1, "] for a size of ",
                size.numel(), " values, got shape ", shape_to_string(theta.shape()));
  const int64_t batch = theta.shape()[0];
  if (int64_t(size.get_as_double(0)) != batch)
    throw_error("affine_grid: size[0] = ", int64_t(size.get_as_double(0)),
                " differs from theta's batch ", batch);
  std::vector<int64_t> dims;  // D, H, W (or H, W)
  for (int64_t d = 0; d < spatial; ++d) {
    dims.push_back(int64_t(size.get_as_double(2 + d)));
    if (dims.back() <= 0) throw_error("affine_grid: size[", 2 + d, "] must be positive");
  }
  const bool corners = align_corners.numel() == 1 && align_corners.get_as_double(0) != 0;
  // The normalized coordinate of index i of an axis of n points.
  auto coordinate = [corners](int64_t i, int64_t n) {
    if (corners) return n == 1 ? -1.0 : -1.0 + double(i) * 2.0 / double(n - 1);
    return (2.0 * double(i) + 1.0) / double(n) - 1.0;
  };
  std::vector<int64_t> out_shape = {batch};
  out_shape.insert(out_shape.end(), dims.begin(), dims.end());
  out_shape.push_back(spatial);
  Tensor out = Tensor::empty(out_shape, dtype);
  const int64_t points = shape_numel(dims);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t p = 0; p < points; ++p) {
      // The point's homogeneous coordinates, x (the last axis) first.
      double homogeneous[4] = {0, 0, 0, 1};
      int64_t rest = p;
      for (int64_t d = spatial - 1; d >= 0; --d) {
        homogeneous[spatial - 1 - d] = coordinate(rest % dims[size_t(d)], dims[size_t(d)]);
        rest /= dims[size_t(d)];
      }
      homogeneous[spatial] = 1;
      for (int64_t r = 0; r < spatial; ++r) {
        double value = 0;
        for (int64_t k = 0; k <= spatial; ++k)
          value += theta.get_as_double((b * spatial + r) * (spatial + 1) + k) * homogeneous[k];
        out.set_from_double((b * points + p) * spatial + r, value);
      }
    }
  }
  return out;
}

namespace {

// The VM's runtime-function convention: the inputs, then where the outputs go.
const bool kRegistered = [] {
  detail::register_runtime_function(kNonMaxSuppression, &non_max_suppression);
  detail::register_runtime_function(kRoiAlign, &roi_align);
  detail::register_runtime_function(kAffineGrid, &affine_grid);
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
