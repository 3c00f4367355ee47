"""The runtime: devices, loaded modules, the function registry, params blobs."""

import atexit

from .. import _core
from .._core import Device, NDArray, PackedFunc, cpu
from ..base import AnvilError


class Module:
    """A loaded package (TVM's runtime.Module): ``mod["default"](dev)`` makes a graph executor
    for GraphModule; a VM package goes to anvil.vm.VirtualMachine."""

    def __init__(self, package):
        self._package = package

    @property
    def is_vm(self):
        return self._package.is_vm

    @property
    def graph_json(self):
        return self._package.graph_json

    @property
    def params(self):
        return self._package.params

    def function_names(self):
        return self._package.function_names()

    def get_function(self, name):
        """A kernel of the package as a PackedFunc."""
        return self._package.get_function(name)

    def __getitem__(self, name):
        if name == "default":
            if self._package.is_vm:
                raise AnvilError("this is a VM package: run it with anvil.vm.VirtualMachine")
            return lambda device=None: _core.GraphExecutor.from_package(
                self._package, device or cpu())
        return self.get_function(name)


def load_module(path):
    """Reads a package written by export_library (a .tar or a self-contained .so)."""
    return Module(_core.load_module(str(path)))


_registered = set()


def register_func(func_name, f=None, override=False):
    """Registers a Python function under a global name, for ``call_dps_packed`` in compiled
    code and for get_global_func. Usable as a decorator::

        @anvil.register_func("env.linear", override=True)
        def linear(x, w, b, out):      # destination-passing style: write into out
            torch.addmm(torch.from_dlpack(b), torch.from_dlpack(x), torch.from_dlpack(w).T,
                        out=torch.from_dlpack(out))

    Arrays arrive as NDArrays sharing the runtime's memory. An exception in the function
    fails the run with AnvilError naming the function.
    """
    if not isinstance(func_name, str):
        raise AnvilError("register_func: the name must be a str")

    def register(func):
        _core.register_func(func_name, func, override)
        _registered.add(func_name)
        return func

    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    """The function registered under name (None when allow_missing and there is none)."""
    return _core.get_global_func(name, allow_missing)


def list_global_func_names():
    return _core.list_global_func_names()


@atexit.register
def _unregister_python_functions():
    # Python functions leave the registry while the interpreter can still release them.
    for name in list(_registered):
        _core.remove_global_func(name)
    _registered.clear()


def save_param_dict(params):
    """The params as bytes in TVM's params format."""
    return _core.save_param_dict(dict(params))


def load_param_dict(param_bytes):
    """A dict of name -> NDArray from bytes written by save_param_dict."""
    return _core.load_param_dict(bytes(param_bytes))


from .graph_executor import GraphModule  # noqa: E402

__all__ = [
    "Device", "NDArray", "PackedFunc", "cpu", "Module", "load_module", "register_func",
    "get_global_func", "list_global_func_names", "save_param_dict", "load_param_dict",
    "GraphModule",
]
