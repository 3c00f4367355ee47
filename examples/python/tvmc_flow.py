"""tvmc from Python with anvil: load an ONNX model, tune its kernels a little, compile with the
records into a package, run the package; the outputs must match ONNX Runtime's.

    python tvmc_flow.py MODEL.onnx [WORK_DIR]
"""

import os
import sys

import numpy as np
import onnxruntime

from anvil.driver import tvmc

model_path = sys.argv[1]
work = sys.argv[2] if len(sys.argv) > 2 else "tvmc-out"
os.makedirs(work, exist_ok=True)

model = tvmc.load(model_path)
records = tvmc.tune(model, target="llvm", tuning_records=os.path.join(work, "records.json"),
                    trials=4, tuner="random", repeat=1, min_repeat_ms=1)
package = tvmc.compile(model, target="llvm", tuning_records=records,
                       package_path=os.path.join(work, "module.tar"))
x = np.random.default_rng(0).uniform(-1, 1, size=(1, 3, 224, 224)).astype("float32")
session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
input_name = session.get_inputs()[0].name
result = tvmc.run(package, inputs={input_name: x}, repeat=3)
print(result)
expected = session.run(None, {input_name: x})[0]
diff = float(np.abs(result.outputs["output_0"] - expected).max())
print(f"max |anvil - ONNX Runtime| = {diff:.3g}")
if diff > 1e-3 * max(1.0, float(np.abs(expected).max())):
    sys.exit("the package disagrees with ONNX Runtime")
