// STFT and MelWeightMatrix through the command line, their frame counts and sizes given at run
// time, over grids of lengths, steps, windows, sidedness and dtypes; ONNX Runtime's outputs are
// the oracle (numpy's FFT for complex signals, where ONNX Runtime 1.19's STFT is wrong).
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliSignal : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
I64 = TensorProto.INT64

def save(name, nodes, feeds, inits, outputs, opset=17, oracle=None):
    inputs = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
              for k, v in feeds.items()]
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    model.ir_version = 8
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    if oracle is None:
        results = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, feeds)
    else:
        results = [oracle]
    np.savez(os.path.join(out_dir, name + '.ort.npz'),
             **{'output_%d' % i: r for i, r in enumerate(results)})

def stft(name, batch, length, step, frame, window, onesided, complex_input=False,
         dtype=np.float32, lengths_as_initializers=False):
    signal = rng.normal(0, 1, (batch, length, 2 if complex_input else 1)).astype(dtype)
    feeds, inits = {'signal': signal}, []
    scalars = {'step': np.array(step, np.int64)}
    names = ['signal', 'step', '', '']
    if window:
        feeds['window'] = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame) / frame)).astype(dtype)
        names[2] = 'window'
    if frame is not None and not window or window == 'and_length':
        scalars['frame'] = np.array(frame, np.int64)
        names[3] = 'frame'
    for key, value in scalars.items():
        if lengths_as_initializers:
            inits.append(numpy_helper.from_array(value, key))
        else:
            feeds[key] = value
    while names[-1] == '':
        names.pop()
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node('STFT', names, ['y'], onesided=onesided)
    oracle = None
    if complex_input:  # ONNX Runtime 1.19 returns garbage for complex signals: numpy's FFT
        c = signal[..., 0] + 1j * signal[..., 1]
        w = feeds.get('window', np.ones(frame))
        frames = 1 + (length - frame) // step
        spectra = np.array([[np.fft.fft(c[b, f * step:f * step + frame] * w)
                             for f in range(frames)] for b in range(batch)])
        oracle = np.stack([spectra.real, spectra.imag], -1).astype(dtype)
    save(name, [node], feeds, inits, [helper.make_tensor_value_info('y', elem, None)],
         oracle=oracle)

stft('stft0', 1, 128, 16, 32, 'hann', 1)
stft('stft1', 2, 100, 8, 20, None, 1)
stft('stft2', 1, 64, 64, 64, 'hann', 0)
stft('stft3', 2, 50, 7, 16, 'and_length', 0, complex_input=True)
stft('stft4', 3, 77, 5, 12, 'hann', 1, dtype=np.float64)
stft('stft5', 1, 40, 3, 9, None, 0, lengths_as_initializers=True)

def mel(name, bins, dft, rate, lower, upper, out_type=TensorProto.FLOAT):
    feeds = {'bins': np.array(bins, np.int64), 'dft': np.array(dft, np.int64),
             'rate': np.array(rate, np.int64), 'lower': np.array(lower, np.float32),
             'upper': np.array(upper, np.float32)}
    node = helper.make_node('MelWeightMatrix', list(feeds), ['w'], output_datatype=out_type)
    save(name, [node], feeds, [], [helper.make_tensor_value_info('w', out_type, None)])

# DFT-20 with its axis an input (so the output shape is known only at run time): real
# forward one-sided (numpy's rfft), the inverse of a one-sided spectrum (irfft), and full
# complex transforms with dft_length padding or truncating; numpy's FFT is the oracle.
def dft(name, x, axis, inverse=0, onesided=0, length=None):
    feeds = {'x': x, 'axis': np.array(axis, np.int64)}
    names = ['x', '', 'axis']
    inits = []
    if length is not None:
        inits.append(numpy_helper.from_array(np.array(length, np.int64), 'length'))
        names[1] = 'length'
    node = helper.make_node('DFT', names, ['y'], inverse=inverse, onesided=onesided)
    a = axis % x.ndim
    c = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]
    if inverse and onesided:
        y = np.fft.irfft(c, n=length, axis=a)[..., None]
    elif inverse:
        y = np.fft.ifft(c, n=length, axis=a)
    elif onesided:
        y = np.fft.rfft(c, n=length, axis=a)
    else:
        y = np.fft.fft(c, n=length, axis=a)
    if not (inverse and onesided):
        y = np.stack([y.real, y.imag], -1)
    save(name, [node], feeds, inits, [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
         opset=20, oracle=y.astype(np.float32))

dft('dft0', rng.normal(0, 1, (2, 12, 5, 1)).astype(np.float32), 1, onesided=1)
dft('dft1', rng.normal(0, 1, (2, 12, 5, 1)).astype(np.float32), -2, onesided=1)
dft('dft2', rng.normal(0, 1, (1, 7, 8, 2)).astype(np.float32), 2, inverse=1, onesided=1)
dft('dft3', rng.normal(0, 1, (3, 6, 4, 2)).astype(np.float32), 1, length=9)
dft('dft4', rng.normal(0, 1, (2, 10, 3, 2)).astype(np.float32), 1, inverse=1, length=6)

mel('mel0', 8, 64, 8000, 0.0, 4000.0)
mel('mel1', 20, 512, 16000, 20.0, 8000.0)
mel('mel2', 3, 16, 1000, 100.0, 300.0)
mel('mel3', 10, 128, 22050, 0.0, 11025.0, TensorProto.DOUBLE)
)");
  }
};

TEST_F(CliSignal, StftOverAGridMatchesOnnxRuntime) {
  for (int k = 0; k < 6; ++k) expect_run_matches_oracle("stft" + std::to_string(k));
}

TEST_F(CliSignal, DftWithARunTimeAxisMatchesNumpy) {
  for (int k = 0; k < 5; ++k) expect_run_matches_oracle("dft" + std::to_string(k));
}

TEST_F(CliSignal, MelWeightMatrixOverAGridMatchesOnnxRuntime) {
  for (int k = 0; k < 4; ++k) expect_run_matches_oracle("mel" + std::to_string(k));
}

}  // namespace
}  // namespace anvil::testing
