// Calibration ranges: min-max, percentile and entropy (KL divergence) methods.
#include "quantize/range_observer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "anvil/support/error.h"

namespace anvil::quantize {

RangeMethod parse_range_method(const std::string& text) {
  if (text == "minmax") return RangeMethod::MinMax;
  if (text == "percentile") return RangeMethod::Percentile;
  if (text == "entropy") return RangeMethod::Entropy;
  throw_error("unknown calibration method '", text, "' (minmax, percentile, entropy)");
}

void RangeObserver::observe_extremes(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_as_double(i);
    if (!std::isfinite(v)) continue;
    if (!seen_) {
      min_ = max_ = v;
      seen_ = true;
    }
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
}

void RangeObserver::observe_histogram(const Tensor& t) {
  if (!seen_) return;
  if (values_.empty()) {
    values_.assign(kBins, 0);
    magnitudes_.assign(kBins, 0);
  }
  const double width = max_ - min_;
  const double magnitude = std::max(std::fabs(min_), std::fabs(max_));
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get_as_double(i);
    if (!std::isfinite(v)) continue;
    int64_t bin = width > 0 ? int64_t((v - min_) / width * kBins) : 0;
    ++values_[size_t(std::clamp<int64_t>(bin, 0, kBins - 1))];
    int64_t mbin = magnitude > 0 ? int64_t(std::fabs(v) / magnitude * kBins) : 0;
    ++magnitudes_[size_t(std::clamp<int64_t>(mbin, 0, kBins - 1))];
  }
}

std::pair<double, double> RangeObserver::percentile_range(double percentile) const {
  int64_t total = 0;
  for (int64_t c : values_) total += c;
  if (total == 0) return {min_, max_};
  const double tail = double(total) * (100.0 - percentile) / 100.0;
  const double width = (max_ - min_) / kBins;
  // The lower bound: the start of the first bin past the lower tail; the upper: the end of the
  // last bin before the upper tail.
  double seen = 0;
  int lo = 0;
  while (lo < kBins - 1 && seen + double(values_[size_t(lo)]) <= tail)
    seen += double(values_[size_t(lo++)]);
  seen = 0;
  int hi = kBins - 1;
  while (hi > lo && seen + double(values_[size_t(hi)]) <= tail)
    seen += double(values_[size_t(hi--)]);
  return {min_ + lo * width, min_ + (hi + 1) * width};
}

// KL(P || Q) for each candidate threshold of `bins` bins: P is the histogram up to it with the
// clipped outliers added to its last bin; Q is the histogram up to it (outliers left out) merged
// into 128 levels, then spread back uniformly over the nonzero bins of each level (TensorRT's
// entropy calibration). The threshold of least divergence wins.
double RangeObserver::entropy_threshold() const {
  const double magnitude = std::max(std::fabs(min_), std::fabs(max_));
  constexpr int kLevels = 128;
  double best_divergence = std::numeric_limits<double>::infinity();
  int best_bins = kBins;
  for (int bins = kLevels; bins <= kBins; bins += 16) {
    std::vector<double> p(magnitudes_.begin(), magnitudes_.begin() + bins);
    for (int i = bins; i < kBins; ++i) p.back() += double(magnitudes_[size_t(i)]);
    double total = 0;
    for (double v : p) total += v;
    if (total == 0) continue;
    std::vector<double> q(size_t(bins), 0.0);
    const double per_level = double(bins) / kLevels;
    for (int level = 0; level < kLevels; ++level) {
      int start = int(std::floor(level * per_level)),
          end = int(std::floor((level + 1) * per_level));
      if (level == kLevels - 1) end = bins;
      double sum = 0;
      int nonzero = 0;
      for (int i = start; i < end; ++i) {
        sum += double(magnitudes_[size_t(i)]);
        nonzero += magnitudes_[size_t(i)] != 0;
      }
      for (int i = start; i < end; ++i)
        if (p[size_t(i)] != 0 && nonzero > 0) q[size_t(i)] = sum / nonzero;
    }
    double q_total = 0;
    for (double v : q) q_total += v;
    double divergence = 0;
    for (int i = 0; i < bins; ++i) {
      if (p[size_t(i)] == 0) continue;
      double pi = p[size_t(i)] / total, qi = q[size_t(i)] / q_total;
      divergence += qi > 0 ? pi * std::log(pi / qi) : pi * 30.0;  // a level that lost its mass
    }
    if (divergence < best_divergence) {
      best_divergence = divergence;
      best_bins = bins;
    }
  }
  return magnitude * best_bins / kBins;
}

std::pair<double, double> RangeObserver::range(RangeMethod method, double percentile) const {
  double lo = min_, hi = max_;
  if (method == RangeMethod::Percentile && !values_.empty()) {
    std::tie(lo, hi) = percentile_range(percentile);
  } else if (method == RangeMethod::Entropy && !magnitudes_.empty()) {
    const double threshold = entropy_threshold();
    lo = std::max(min_, -threshold);
    hi = std::min(max_, threshold);
  }
  return {std::min(lo, 0.0), std::max(hi, 0.0)};
}

}  // namespace anvil::quantize
