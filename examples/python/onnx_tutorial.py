"""TVM's "compile ONNX models" tutorial with anvil: an ONNX image classifier is imported,
built and run; its top-1 class must equal ONNX Runtime's on the same input.

    python onnx_tutorial.py MODEL.onnx
"""

import sys

import numpy as np
import onnx
import onnxruntime

import anvil
from anvil.contrib import graph_executor

model_path = sys.argv[1]
onnx_model = onnx.load(model_path)
input_name = onnx_model.graph.input[0].name
x = np.random.default_rng(0).uniform(0, 1, size=(1, 3, 224, 224)).astype("float32")

mod, params = anvil.frontend.from_onnx(onnx_model, shape={input_name: x.shape})
with anvil.transform.PassContext(opt_level=3):
    lib = anvil.build(mod, target="llvm", params=params)
m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
m.set_input(input_name, x)
m.run()
ours = m.get_output(0).numpy()

session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
theirs = session.run(None, {input_name: x})[0]
print(f"top-1: anvil {ours.argmax()}, ONNX Runtime {theirs.argmax()}; "
      f"max |diff| = {np.abs(ours - theirs).max():.3g}")
print(m.benchmark(repeat=3, number=1))
if ours.argmax() != theirs.argmax():
    sys.exit("top-1 differs from ONNX Runtime's")
