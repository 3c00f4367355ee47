"""The MLC course's end-to-end lesson with anvil: a module written as text mixes a tensor-IR
kernel (linear0, called with call_tir) and runtime functions registered from Python (env.relu
with numpy, env.linear with torch, both writing into the runtime's output buffer, no copy).
The weights are bound as constants with BindParams, the module is built for the VM and run;
the result must match numpy's.
"""

import sys

import numpy as np
import torch

import anvil

MODULE = """
prim_func @linear0 @T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    X = T.match_buffer(x, (1, 784), "float32")
    W = T.match_buffer(w, (128, 784), "float32")
    B = T.match_buffer(b, (128,), "float32")
    Z = T.match_buffer(z, (1, 128), "float32")
    Y = T.alloc_buffer((1, 128), "float32")
    for i, j, k in T.grid(1, 128, 784):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, 128):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]

def @main(%x: Tensor[(1, 784), float32], %w0: Tensor[(128, 784), float32], %b0: Tensor[(128), float32], %w1: Tensor[(10, 128), float32], %b1: Tensor[(10), float32]) -> Tensor[(1, 10), float32] {
  dataflow {
    %lv0 = call_tir(@linear0, (%x, %w0, %b0), out=Tensor[(1, 128), float32]);
    %lv1 = call_dps_packed("env.relu", (%lv0), out=Tensor[(1, 128), float32]);
    %out = call_dps_packed("env.linear", (%lv1, %w1, %b1), out=Tensor[(1, 10), float32]);
    output(%out);
  }
  %out
}
"""


@anvil.register_func("env.linear", override=True)
def torch_linear(x, w, b, out):
    x_torch, w_torch, b_torch = (torch.from_dlpack(a) for a in (x, w, b))
    out_torch = torch.from_dlpack(out)
    torch.mm(x_torch, w_torch.T, out=out_torch)
    torch.add(out_torch, b_torch, out=out_torch)


@anvil.register_func("env.relu", override=True)
def numpy_relu(x, out):
    np.maximum(np.asarray(x), 0, out=np.asarray(out))


mod = anvil.ir.parse(MODULE)
print(mod.astext()[:400], "...")

rng = np.random.default_rng(7)
params = {
    "w0": rng.uniform(-0.1, 0.1, size=(128, 784)).astype("float32"),
    "b0": rng.uniform(-0.1, 0.1, size=(128,)).astype("float32"),
    "w1": rng.uniform(-0.1, 0.1, size=(10, 128)).astype("float32"),
    "b1": rng.uniform(-0.1, 0.1, size=(10,)).astype("float32"),
}
mod = anvil.transform.BindParams("main", {k: anvil.nd.array(v) for k, v in params.items()})(mod)
ex = anvil.vm.build(mod, target="llvm")
vm = anvil.vm.VirtualMachine(ex, anvil.cpu())
data = rng.uniform(0, 1, size=(1, 784)).astype("float32")
result = vm["main"](anvil.nd.array(data)).numpy()

hidden = np.maximum(data @ params["w0"].T + params["b0"], 0)
expected = hidden @ params["w1"].T + params["b1"]
diff = float(np.abs(result - expected).max())
print(f"prediction {result.argmax()}, max |anvil - numpy| = {diff:.3g}")
if diff > 1e-4:
    sys.exit("the module disagrees with numpy")
