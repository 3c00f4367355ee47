// What calibration records of one activation: its extremes (first pass) and, for the
// percentile and entropy methods, a histogram over them (second pass); and the range each
// method chooses from them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "anvil/quantize/quantize.h"

namespace anvil::quantize {

class RangeObserver {
 public:
  static constexpr int kBins = 2048;

  // First pass: the extremes.
  void observe_extremes(const Tensor& t);
  // Second pass: the histogram of values over [min, max] (percentile) and of magnitudes over
  // [0, max |x|] (entropy).
  void observe_histogram(const Tensor& t);

  // The range the method chooses, widened to include 0 (so that 0 is exact).
  std::pair<double, double> range(RangeMethod method, double percentile) const;

  bool seen() const { return seen_; }

 private:
  std::pair<double, double> percentile_range(double percentile) const;
  double entropy_threshold() const;

  bool seen_ = false;
  double min_ = 0, max_ = 0;
  std::vector<int64_t> values_;      // kBins over [min_, max_]
  std::vector<int64_t> magnitudes_;  // kBins over [0, max(|min_|, |max_|)]
};

// Whether a method needs the second (histogram) pass.
inline bool needs_histogram(RangeMethod method) { return method != RangeMethod::MinMax; }

}  // namespace anvil::quantize
