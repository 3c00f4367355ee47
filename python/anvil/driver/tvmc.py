"""tvmc from Python (TVM's tvm.driver.tvmc): load, tune, compile, run."""

import os

import numpy as np

from .. import _core
from ..base import AnvilError


class TVMCModel:
    """An imported model: mod and params."""

    def __init__(self, mod, params):
        self.mod = mod
        self.params = params

    def summary(self):
        return self.mod.astext()


class TVMCPackage:
    """A compiled package on disk (a .tar written by compile)."""

    def __init__(self, package_path):
        self.package_path = os.fspath(package_path)
        self._module = None

    @property
    def module(self):
        if self._module is None:
            from ..runtime import load_module

            self._module = load_module(self.package_path)
        return self._module


class TVMCResult:
    """What run returns: the outputs by name (output_0, ...) and the times in ms."""

    def __init__(self, outputs, times):
        self.outputs = outputs
        self.times = times

    def format_times(self):
        t = np.array(self.times)
        return ("Execution time summary:\n"
                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                f" {t.mean():9.4f}   {np.median(t):9.4f}   {t.max():9.4f}   {t.min():9.4f}   "
                f"{t.std():9.4f}")

    def __str__(self):
        return self.format_times() + "\n" + "\n".join(
            f"{name}: shape {tuple(v.shape)}, dtype {v.dtype}" for name, v in self.outputs.items())


def load(path, shape_dict=None, model_format=None, **kwargs):
    """Imports a model file (ONNX) into a TVMCModel."""
    from ..frontend import from_onnx

    if model_format not in (None, "onnx"):
        raise AnvilError(f"tvmc.load: only ONNX models are supported, not '{model_format}'")
    mod, params = from_onnx(path, shape=shape_dict, **kwargs)
    return TVMCModel(mod, params)


def tune(tvmc_model, target="llvm", tuning_records=None, trials=0, tuner="xgb", **kwargs):
    """Tunes the model's kernels; returns the records file's path."""
    from ..tools import tune as _tune

    records = tuning_records or "tuning_records.json"
    _tune(tvmc_model.mod, tvmc_model.params, target=target, tuning_records=records, trials=trials,
          tuner=tuner, **kwargs)
    return records


def compile(tvmc_model, target="llvm", tuning_records=None, package_path=None, opt_level=3,
            disabled_pass=None):
    """Builds the model and writes a package (module.tar by default); returns a TVMCPackage."""
    from ..driver import build
    from ..transform import PassContext

    package_path = package_path or "module.tar"
    with PassContext(opt_level=opt_level, disabled_pass=disabled_pass):
        lib = build(tvmc_model.mod, target=target, params=tvmc_model.params,
                    tuning_records=tuning_records)
    lib.export_library(package_path)
    return TVMCPackage(package_path)


def run(tvmc_package, device="cpu", inputs=None, fill_mode="random", repeat=10, number=1,
        seed=0):
    """Runs a package: inputs by name (the rest filled with fill_mode: "random", "zeros" or
    "ones"), then times ``repeat`` x ``number`` runs."""
    from ..runtime import cpu
    from ..runtime.graph_executor import GraphModule

    if device != "cpu":
        raise AnvilError(f"tvmc.run: unknown device '{device}' (this build runs on 'cpu')")
    module = tvmc_package.module
    m = GraphModule(module["default"](cpu()))
    rng = np.random.default_rng(seed)
    shapes, dtypes = m.get_input_info()
    inputs = dict(inputs or {})
    for name in inputs:
        if name not in shapes:
            raise AnvilError(f"tvmc.run: the model has no input named '{name}'")
    for name, shape in shapes.items():
        if name in inputs:
            continue
        if fill_mode == "random":
            value = rng.uniform(-1, 1, size=shape)
        elif fill_mode in ("zeros", "ones"):
            value = np.zeros(shape) if fill_mode == "zeros" else np.ones(shape)
        else:
            raise AnvilError(f"tvmc.run: fill_mode must be random, zeros or ones, got '{fill_mode}'")
        inputs[name] = value.astype(dtypes[name])
    m.run(**{k: np.ascontiguousarray(v) for k, v in inputs.items()})
    outputs = {f"output_{i}": m.get_output(i).numpy() for i in range(m.get_num_outputs())}
    times = [t * 1e3 for t in m.benchmark(repeat=repeat, number=number).results]
    return TVMCResult(outputs, times)


__all__ = ["TVMCModel", "TVMCPackage", "TVMCResult", "load", "tune", "compile", "run"]
