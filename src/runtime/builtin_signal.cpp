// Signal-processing runtime functions (anvil/runtime/builtins.h): STFT with its frame count and
// length given at run time, and the mel filter bank whose size is an input's value.
#include <cmath>
#include <numbers>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"
#include "runtime/builtin_registration.h"

namespace anvil::builtins {
namespace {

// The one value of t (a scalar or a one-element tensor), as a double.
double one_value(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw_error(what, " must hold one value, got shape ", shape_to_string(t.shape()));
  return t.get_as_double(0);
}

int64_t one_integer(const Tensor& t, const char* what) {
  if (!t.dtype().is_int() && !t.dtype().is_uint())
    throw_error(what, " must be an integer, got ", t.dtype().to_string());
  return int64_t(one_value(t, what));
}

}  // namespace

Tensor stft(const Tensor& signal, const Tensor& frame_step, const Tensor& window,
            const Tensor& frame_length, const Tensor& onesided) {
  const DataType dtype = signal.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64())
    throw_error("stft: the signal must be float32 or float64, got ", dtype.to_string());
  if (signal.ndim() != 3 || (signal.shape()[2] != 1 && signal.shape()[2] != 2))
    throw_error("stft: the signal must be [batch, length, 1 or 2], got shape ",
                shape_to_string(signal.shape()));
  const int64_t batch = signal.shape()[0], length = signal.shape()[1];
  const bool complex = signal.shape()[2] == 2;
  const int64_t step = one_integer(frame_step, "stft: frame_step");
  int64_t frame = one_integer(frame_length, "stft: frame_length");
  const bool windowed = window.numel() > 0;
  if (frame < 0) {
    if (!windowed) throw_error("stft: give a window or a frame_length");
    frame = window.numel();
  }
  if (windowed && (window.ndim() != 1 || window.numel() != frame))
    throw_error("stft: the window must be [frame_length] = [", frame, "], got shape ",
                shape_to_string(window.shape()));
  if (step <= 0) throw_error("stft: frame_step must be positive, got ", step);
  if (frame <= 0 || frame > length)
    throw_error("stft: frame_length must be in [1, ", length, "] (the signal's length), got ",
                frame);
  const int64_t frames = 1 + (length - frame) / step;
  const int64_t bins = one_integer(onesided, "stft: onesided") != 0 ? frame / 2 + 1 : frame;
  Tensor out = Tensor::empty({batch, frames, bins, 2}, dtype);
  std::vector<double> re(static_cast<size_t>(frame)), im(static_cast<size_t>(frame));
  const double two_pi = 2 * std::numbers::pi;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t n = 0; n < frame; ++n) {
        const int64_t at = (b * length + f * step + n) * signal.shape()[2];
        const double w = windowed ? window.get_as_double(n) : 1.0;
        re[size_t(n)] = signal.get_as_double(at) * w;
        im[size_t(n)] = complex ? signal.get_as_double(at + 1) * w : 0.0;
      }
      for (int64_t k = 0; k < bins; ++k) {
        double sum_re = 0, sum_im = 0;
        for (int64_t n = 0; n < frame; ++n) {
          const double angle = two_pi * double((k * n) % frame) / double(frame);
          const double c = std::cos(angle), s = std::sin(angle);
          sum_re += re[size_t(n)] * c + im[size_t(n)] * s;
          sum_im += im[size_t(n)] * c - re[size_t(n)] * s;
        }
        const int64_t o = ((b * frames + f) * bins + k) * 2;
        out.set_from_double(o, sum_re);
        out.set_from_double(o + 1, sum_im);
      }
    }
  }
  return out;
}

std::pair<double, double> dft_weight(int64_t t, int64_t k, int64_t length, bool inverse,
                                     bool onesided) {
  const double two_pi = 2 * std::numbers::pi;
  const double angle = two_pi * double((t * k) % length) / double(length);
  if (!inverse) {  // X_k = sum_t x_t e^{-2 pi i t k / L}; positions past L drop out
    if (t >= length) return {0, 0};
    return {std::cos(angle), -std::sin(angle)};
  }
  if (!onesided) {  // x_t = 1/L sum_k X_k e^{2 pi i t k / L}
    if (t >= length) return {0, 0};
    return {std::cos(angle) / double(length), std::sin(angle) / double(length)};
  }
  // numpy's irfft: frequency t of a Hermitian spectrum of L values; the ones with a mirror
  // count twice, the imaginary parts of 0 and L/2 drop out (sin is 0 there).
  if (t > length / 2) return {0, 0};
  const double weight = (t == 0 || 2 * t == length) ? 1.0 : 2.0;
  return {weight * std::cos(angle) / double(length), weight * std::sin(angle) / double(length)};
}

Tensor dft(const Tensor& input, const Tensor& dft_length, const Tensor& axis_value,
           const Tensor& flags) {
  const DataType dtype = input.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64())
    throw_error("dft: the input must be float32 or float64, got ", dtype.to_string());
  const int64_t rank = input.ndim();
  if (rank < 3 || (input.shape()[size_t(rank - 1)] != 1 && input.shape()[size_t(rank - 1)] != 2))
    throw_error("dft: the input must be [batch, ..., 1 or 2], got shape ",
                shape_to_string(input.shape()));
  if (flags.numel() != 2) throw_error("dft: expected the flags (inverse, onesided)");
  const bool inverse = flags.get_as_double(0) != 0, onesided = flags.get_as_double(1) != 0;
  const bool complex_input = input.shape()[size_t(rank - 1)] == 2;
  int64_t axis = one_integer(axis_value, "dft: axis");
  if (axis < -rank || axis >= rank) throw_error("dft: axis ", axis, " is out of range");
  if (axis < 0) axis += rank;
  if (axis == 0 || axis == rank - 1)
    throw_error("dft: axis ", axis, " is the batch or the complex axis");
  const int64_t in = input.shape()[size_t(axis)];
  int64_t length = one_integer(dft_length, "dft: dft_length");
  if (length < 0) length = inverse && onesided ? 2 * (in - 1) : in;
  if (length < 1) throw_error("dft: the transform length must be positive, got ", length);
  if (onesided && !inverse && complex_input) throw_error("dft: onesided needs a real input");
  const int64_t out_len = onesided && !inverse ? length / 2 + 1 : length;
  const bool complex_output = !(inverse && onesided);
  std::vector<int64_t> out_shape = input.shape_vector();
  out_shape[size_t(axis)] = out_len;
  out_shape.back() = complex_output ? 2 : 1;
  Tensor out = Tensor::empty(out_shape, dtype);
  // Lines along the axis: outer (dims before it) x inner (dims after it, without the last).
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= input.shape()[size_t(d)];
  for (int64_t d = axis + 1; d + 1 < rank; ++d) inner *= input.shape()[size_t(d)];
  const int64_t in_comps = complex_input ? 2 : 1, out_comps = complex_output ? 2 : 1;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < out_len; ++k) {
        double sum_re = 0, sum_im = 0;
        for (int64_t t = 0; t < in; ++t) {
          auto [wr, wi] = dft_weight(t, k, length, inverse, onesided);
          if (wr == 0 && wi == 0) continue;
          const int64_t at = ((o * in + t) * inner + i) * in_comps;
          const double re = input.get_as_double(at);
          const double im = complex_input ? input.get_as_double(at + 1) : 0.0;
          sum_re += re * wr - im * wi;
          sum_im += re * wi + im * wr;
        }
        const int64_t to = ((o * out_len + k) * inner + i) * out_comps;
        out.set_from_double(to, sum_re);
        if (complex_output) out.set_from_double(to + 1, sum_im);
      }
    }
  }
  return out;
}

Tensor mel_weight_matrix(const Tensor& num_mel_bins, const Tensor& dft_length,
                         const Tensor& sample_rate, const Tensor& lower_edge_hertz,
                         const Tensor& upper_edge_hertz) {
  const int64_t mels = one_integer(num_mel_bins, "mel_weight_matrix: num_mel_bins");
  const int64_t dft = one_integer(dft_length, "mel_weight_matrix: dft_length");
  const int64_t rate = one_integer(sample_rate, "mel_weight_matrix: sample_rate");
  const double lower = one_value(lower_edge_hertz, "mel_weight_matrix: lower_edge_hertz");
  const double upper = one_value(upper_edge_hertz, "mel_weight_matrix: upper_edge_hertz");
  if (mels <= 0) throw_error("mel_weight_matrix: num_mel_bins must be positive, got ", mels);
  if (dft <= 0) throw_error("mel_weight_matrix: dft_length must be positive, got ", dft);
  if (rate <= 0) throw_error("mel_weight_matrix: sample_rate must be positive, got ", rate);
  if (!(lower >= 0 && lower < upper))
    throw_error("mel_weight_matrix: the edges must satisfy 0 <= lower < upper, got ", lower,
                " and ", upper);
  const int64_t spectrum_bins = dft / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low_mel = to_mel(lower), high_mel = to_mel(upper);
  const double mel_step = (high_mel - low_mel) / double(mels + 2);
  std::vector<int64_t> points(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (double(i) * mel_step + low_mel) / 2595) - 1);
    points[size_t(i)] = int64_t(std::floor(double(dft + 1) * hz / double(rate)));
    if (points[size_t(i)] < 0 || points[size_t(i)] >= spectrum_bins)
      throw_error("mel_weight_matrix: upper_edge_hertz ", upper, " lies past the ", spectrum_bins,
                  " bins of a ", dft, "-point DFT at ", rate, " Hz");
  }
  Tensor out = Tensor::zeros({spectrum_bins, mels}, DataType::float32());
  float* w = out.data_as<float>();
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = points[size_t(i)], center = points[size_t(i + 1)],
                  right = points[size_t(i + 2)];
    if (center == left) {
      w[center * mels + i] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        w[j * mels + i] = float(double(j - left) / double(center - left));
    }
    for (int64_t j = center; j < right; ++j)
      w[j * mels + i] = float(double(right - j) / double(right - center));
  }
  return out;
}

namespace {

const bool kRegistered = [] {
  detail::register_runtime_function(kStft, &stft);
  detail::register_runtime_function(kDft, &dft);
  detail::register_runtime_function(kMelWeightMatrix, &mel_weight_matrix);
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
