"""The graph IR's text, the VM (dynamic shapes, packages), functions registered from Python
and called from compiled code, BindParams."""

import re

import numpy as np
import pytest
import torch

import anvil
from conftest import run_onnxruntime, small_cnn

MLP_TEXT = """
def @main(%x: Tensor[(n, 4), float32], %w: Tensor[(3, 4), float32], %b: Tensor[(3), float32]) -> Tensor[(n, 3), float32] {
  dataflow {
    %lv0 = call_dps_packed("test.linear", (%x, %w, %b), out=Tensor[(n, 3), float32]);
    %gv = nn.relu(%lv0);
    output(%gv);
  }
  %gv
}
"""

RELU_TIR = """
@T.prim_func
def relu0(x: T.handle, y: T.handle):
    T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
    X = T.match_buffer(x, (2, 8), "float32")
    Y = T.match_buffer(y, (2, 8), "float32")
    for i, j in T.grid(2, 8):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
"""


def test_text_round_trips():
    mod, _ = anvil.frontend.from_onnx(small_cnn())
    text = mod.astext()
    assert str(mod) == text and "/* ty=" in text
    again = anvil.ir.parse(text)
    # The parsed module is untyped until a build infers the types: the same text without the
    # type comments, and a fixed point of print-parse.
    assert again.astext() == re.sub(r" /\* ty=.*?\*/", "", text)
    assert anvil.ir.parse(again.astext()).astext() == again.astext()
    assert "main" in again and again.function_names() == ["main"]


def test_tensor_ir_text_parses_into_a_module():
    mod = anvil.ir.parse(RELU_TIR)
    assert mod.function_names() == ["relu0"]
    assert "prim_func @relu0" in mod.astext()


def test_parse_errors_name_line_and_column():
    with pytest.raises(anvil.AnvilError, match=r"<text>:2:\d+"):
        anvil.ir.parse("def @main(%x: Tensor[(1), float32]) {\n  nn.relu(%y)\n}")
    with pytest.raises(anvil.AnvilError, match=r"kernel.tir:\d+:\d+"):
        anvil.ir.parse(RELU_TIR.replace("T.max(", "T.mux("), "kernel.tir")


def test_vm_runs_a_dynamic_batch_and_its_package(tmp_path, rng):
    model = small_cnn(batch="N")
    mod, params = anvil.frontend.from_onnx(model)
    ex = anvil.vm.build(mod, target="llvm", params=params)
    assert "main" in ex.as_text()
    vm = anvil.vm.VirtualMachine(ex, anvil.cpu())
    for batch in (1, 3, 5):
        x = rng.uniform(-1, 1, size=(batch, 3, 16, 16)).astype("float32")
        out = vm["main"](x)
        np.testing.assert_allclose(out.numpy(), run_onnxruntime(model, {"input": x})[0],
                                   rtol=1e-4, atol=1e-5)
    ex.export_library(str(tmp_path / "vm.tar"))
    loaded = anvil.runtime.load_module(tmp_path / "vm.tar")
    assert loaded.is_vm
    vm2 = anvil.vm.VirtualMachine(loaded, anvil.cpu())
    x = rng.uniform(-1, 1, size=(2, 3, 16, 16)).astype("float32")
    np.testing.assert_allclose(vm2["main"](anvil.nd.array(x)).numpy(),
                               run_onnxruntime(model, {"input": x})[0], rtol=1e-4, atol=1e-5)
    vm2.set_input("main", x)
    vm2.invoke_stateful("main")
    np.testing.assert_allclose(vm2.get_outputs("main").numpy(),
                               run_onnxruntime(model, {"input": x})[0], rtol=1e-4, atol=1e-5)
    assert vm2.benchmark(repeat=2, number=1).mean > 0
    assert vm2.profile(repeat=1).rows


def test_vm_results_are_not_overwritten_by_the_next_call():
    mod, params = anvil.frontend.from_onnx(small_cnn(batch="N"))
    vm = anvil.vm.VirtualMachine(anvil.vm.build(mod, params=params))
    first = vm["main"](np.zeros((1, 3, 16, 16), dtype="float32")).numpy()
    kept = vm["main"](np.zeros((1, 3, 16, 16), dtype="float32"))
    vm["main"](np.ones((1, 3, 16, 16), dtype="float32"))
    np.testing.assert_array_equal(kept.numpy(), first)


def linear_reference(x, w, b):
    return np.maximum(x @ w.T + b, 0)


def test_python_function_called_from_compiled_code_with_torch(rng):
    calls = []

    @anvil.register_func("test.linear", override=True)
    def linear(x, w, b, out):
        calls.append(x.shape)
        out_t = torch.from_dlpack(out)
        torch.mm(torch.from_dlpack(x), torch.from_dlpack(w).T, out=out_t)
        out_t.add_(torch.from_dlpack(b))

    assert anvil.get_global_func("test.linear").name == "test.linear"
    mod = anvil.ir.parse(MLP_TEXT)
    w = rng.normal(size=(3, 4)).astype("float32")
    b = rng.normal(size=(3,)).astype("float32")
    vm = anvil.vm.VirtualMachine(anvil.vm.build(mod, target="llvm"), anvil.cpu())
    x = rng.normal(size=(5, 4)).astype("float32")
    np.testing.assert_allclose(vm["main"](x, w, b).numpy(), linear_reference(x, w, b), rtol=1e-5,
                               atol=1e-6)
    assert calls == [(5, 4)]

    # BindParams: the weights become constants; only x is left as an input.
    bound = anvil.transform.BindParams("main", {"w": w, "b": anvil.nd.array(b)})(mod)
    assert "%w" not in bound.astext().split("{")[0]
    vm = anvil.vm.VirtualMachine(anvil.vm.build(bound, target="llvm"), anvil.cpu())
    x = rng.normal(size=(2, 4)).astype("float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), linear_reference(x, w, b), rtol=1e-5,
                               atol=1e-6)


def test_python_function_called_by_the_graph_executor(rng):
    """The graph executor resolves call_dps_packed in the registry too (a static module)."""

    @anvil.register_func("test.linear", override=True)
    def linear(x, w, b, out):
        np.matmul(np.asarray(x), np.asarray(w).T, out=np.asarray(out))
        np.asarray(out)[...] += np.asarray(b)

    w = rng.normal(size=(3, 4)).astype("float32")
    b = rng.normal(size=(3,)).astype("float32")
    mod = anvil.ir.parse(MLP_TEXT.replace("(n, ", "(2, "))
    lib = anvil.build(mod, params={"w": w, "b": b})
    m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    x = rng.normal(size=(2, 4)).astype("float32")
    m.run(x=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), linear_reference(x, w, b), rtol=1e-5,
                               atol=1e-6)


def test_an_exception_in_a_python_function_fails_the_run():
    @anvil.register_func("test.linear", override=True)
    def broken(x, w, b, out):
        raise KeyError("no such weight")

    vm = anvil.vm.VirtualMachine(anvil.vm.build(anvil.ir.parse(MLP_TEXT)), anvil.cpu())
    args = [np.zeros((1, 4), "float32"), np.zeros((3, 4), "float32"), np.zeros(3, "float32")]
    with pytest.raises(anvil.AnvilError, match="test.linear.*KeyError"):
        vm["main"](*args)


def test_registry_calls_and_duplicates():
    anvil.register_func("test.add_one", lambda x: x + 1, override=True)
    f = anvil.get_global_func("test.add_one")
    assert f(41) == 42
    with pytest.raises(anvil.AnvilError, match="test.add_one"):
        anvil.register_func("test.add_one", lambda x: x)
    assert anvil.get_global_func("test.no_such", allow_missing=True) is None
    with pytest.raises(anvil.AnvilError, match="test.no_such"):
        anvil.get_global_func("test.no_such")
    assert "test.add_one" in anvil.runtime.list_global_func_names()
