"""TVM's quick start with anvil: the built-in ResNet-18 is built at opt level 3 and run; the
library, graph JSON and params are written to three files, loaded back and run again; both runs
must agree.

    python quickstart.py [OUT_DIR]
"""

import os
import sys

import numpy as np

import anvil
from anvil.contrib import graph_executor

out_dir = sys.argv[1] if len(sys.argv) > 1 else "quickstart-out"
os.makedirs(out_dir, exist_ok=True)

# 1. The network and its parameters.
mod, params = anvil.testing.resnet.get_workload(num_layers=18, batch_size=1)

# 2. Build it.
with anvil.transform.PassContext(opt_level=3):
    lib = anvil.build(mod, target="llvm", params=params)

# 3. Run it.
dev = anvil.cpu()
data = np.random.default_rng(0).uniform(-1, 1, size=(1, 3, 224, 224)).astype("float32")
module = graph_executor.GraphModule(lib["default"](dev))
module.set_input("data", data)
module.run()
out = module.get_output(0).numpy()
print("output", out.shape, "top-1 class", int(out.argmax()))

# 4. Save the library, the graph and the params as three files.
lib_path = os.path.join(out_dir, "deploy_lib.so")
lib.export_library(lib_path)
with open(os.path.join(out_dir, "deploy_graph.json"), "w") as f:
    f.write(lib.get_graph_json())
with open(os.path.join(out_dir, "deploy_param.params"), "wb") as f:
    f.write(anvil.runtime.save_param_dict(lib.get_params()))

# 5. Load them back and run again.
loaded_json = open(os.path.join(out_dir, "deploy_graph.json")).read()
loaded_lib = anvil.runtime.load_module(lib_path)
loaded_params = bytearray(open(os.path.join(out_dir, "deploy_param.params"), "rb").read())
loaded = graph_executor.create(loaded_json, loaded_lib, dev)
loaded.load_params(loaded_params)
loaded.run(data=data)
again = loaded.get_output(0).numpy()

diff = float(np.abs(out - again).max())
print(f"max |in-memory - loaded| = {diff:g}")
if diff > 1e-5:
    sys.exit("the loaded module disagrees with the in-memory build")
