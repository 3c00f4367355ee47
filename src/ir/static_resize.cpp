#include "anvil/ir/static_resize.h"

#include <algorithm>
#include <cmath>

namespace anvil::ir {
namespace {

// The one scale keep_aspect_ratio_policy gives every listed axis: the largest that fits the
// sizes (not_larger) or the smallest that covers them (not_smaller); nullopt when an axis'
// size is unknown.
std::optional<double> aspect_scale(const std::vector<std::optional<int64_t>>& dims,
                                   const std::vector<size_t>& listed,
                                   const std::vector<double>& sizes, const std::string& policy) {
  const bool covers = policy == "not_smaller";
  double scale = covers ? 0.0 : INFINITY;
  for (size_t i = 0; i < listed.size(); ++i) {
    std::optional<int64_t> dim = dims[listed[i]];
    if (!dim || *dim < 1) return std::nullopt;
    double s = sizes[i] / double(*dim);
    scale = covers ? std::max(scale, s) : std::min(scale, s);
  }
  return scale;
}

}  // namespace

std::optional<StaticResize> static_resize(const ResizeRequest& r) {
  const size_t rank = r.dims.size();
  if (rank < 3 || rank > 5) return std::nullopt;
  std::vector<size_t> listed;
  for (int64_t axis : r.axes) {
    int64_t k = axis < 0 ? axis + int64_t(rank) : axis;
    if (k < 0 || k >= int64_t(rank)) return std::nullopt;
    listed.push_back(size_t(k));
  }
  if (r.axes.empty())
    for (size_t k = 0; k < rank; ++k) listed.push_back(k);
  if (r.target.size() != listed.size()) return std::nullopt;
  if (!r.roi.empty() && r.roi.size() != 2 * listed.size()) return std::nullopt;
  std::optional<double> aspect;
  if (r.sizes && r.keep_aspect_ratio_policy != "stretch") {
    aspect = aspect_scale(r.dims, listed, r.target, r.keep_aspect_ratio_policy);
    if (!aspect) return std::nullopt;
  }
  // Per axis of the data: the scale or size asked for, and the roi; axes not listed keep
  // their size.
  std::vector<std::optional<double>> value(rank);
  std::vector<double> starts(rank, 0.0), ends(rank, 1.0);
  for (size_t i = 0; i < listed.size(); ++i) {
    value[listed[i]] = r.target[i];
    if (!r.roi.empty()) {
      starts[listed[i]] = r.roi[i];
      ends[listed[i]] = r.roi[listed.size() + i];
    }
  }
  StaticResize s;
  for (size_t k = 0; k < rank; ++k) {
    std::optional<int64_t> dim = r.dims[k];
    if (k < 2) {
      // image.resize only touches the spatial axes; N and C must stay as they are.
      bool unchanged = !value[k] || (aspect    ? *aspect == 1.0
                                     : r.sizes ? dim && double(*dim) == *value[k]
                                               : *value[k] == 1.0);
      if (!unchanged || starts[k] != 0.0 || ends[k] != 1.0) return std::nullopt;
      continue;
    }
    if (aspect) {
      // A listed axis takes in * scale rounded half up, an unlisted one keeps its size.
      if (!dim) return std::nullopt;
      double scale = value[k] ? *aspect : 1.0;
      s.size.push_back(value[k] ? int64_t(double(*dim) * scale + 0.5) : *dim);
      s.coordinate_scales.push_back(scale);
    } else if (r.sizes) {
      if (!value[k] && !dim) return std::nullopt;
      s.size.push_back(value[k] ? int64_t(*value[k]) : *dim);
    } else {
      s.scales.push_back(value[k].value_or(1.0));
    }
  }
  if (!r.roi.empty()) {
    s.roi.assign(starts.begin() + 2, starts.end());
    s.roi.insert(s.roi.end(), ends.begin() + 2, ends.end());
  }
  return s;
}

}  // namespace anvil::ir
