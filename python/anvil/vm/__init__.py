"""The virtual machine: modules with dynamic shapes, control flow or runtime functions (TVM's
relay.vm / relax.VirtualMachine)."""

from .. import _core
from ..base import AnvilError
from ..driver import _target_string
from ..runtime import Module, cpu
from ..transform import PassContext


class Executable:
    """What anvil.vm.build returns: the VM's instructions and compiled kernels."""

    def __init__(self, vm_module):
        self._vm_module = vm_module

    def as_text(self):
        """The instructions of every function (docs/vm.md)."""
        return self._vm_module.as_text()

    def export_library(self, path, cc="cc"):
        """Writes a VM package path.tar (mod.so, mod.vm) for anvil.runtime.load_module."""
        self._vm_module.export_library(str(path), cc)


def build(mod, target="llvm", params=None, exec_mode="bytecode"):
    """Compiles mod's @main for the VM under the current PassContext (TVM's relax.build)."""
    del exec_mode
    ctx = PassContext.current()
    return Executable(_core.vm_build(mod, params, _target_string(target), ctx.opt_level,
                                     ctx.disabled_pass, ctx.config))


compile = build  # TVM's relay.vm.compile


class VirtualMachine:
    """Runs an Executable or a loaded VM package::

        vm = anvil.vm.VirtualMachine(ex, anvil.cpu())
        out = vm["main"](x, w)          # an NDArray, or a tuple of them

    Results are new arrays (the next call does not overwrite them).
    """

    def __init__(self, rt_mod, device=None, memory_cfg=None):
        del memory_cfg
        device = device or cpu()
        if isinstance(rt_mod, Executable):
            self._vm = rt_mod._vm_module.create_vm()
        elif isinstance(rt_mod, Module):
            if not rt_mod.is_vm:
                raise AnvilError("VirtualMachine: the package is a graph package (run it with "
                                 "graph_executor.GraphModule)")
            self._vm = _core.VirtualMachine.from_package(rt_mod._package, device)
        else:
            raise AnvilError("VirtualMachine: expected an anvil.vm.Executable or a VM package "
                             f"from load_module, got {type(rt_mod).__name__}")

    def __getitem__(self, name):
        if name != "main":
            raise AnvilError(f"the VM has no function '{name}' (only 'main')")
        return self._invoke

    def set_input(self, func_name, *args, **kwargs):
        if func_name != "main":
            raise AnvilError(f"the VM has no function '{func_name}' (only 'main')")
        count = self._vm.get_num_inputs()
        if len(args) > count:
            raise AnvilError(f"'main' takes {count} inputs, got {len(args)}")
        for i, value in enumerate(args):
            self._vm.set_input(i, value)
        for name, value in kwargs.items():
            self._vm.set_input(name, value)

    def invoke_stateful(self, func_name):
        if func_name != "main":
            raise AnvilError(f"the VM has no function '{func_name}' (only 'main')")
        self._vm.run()

    def get_outputs(self, func_name="main"):
        del func_name
        outs = [_copy(self._vm.get_output(i)) for i in range(self._vm.get_num_outputs())]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _invoke(self, *args, **kwargs):
        count = self._vm.get_num_inputs()
        if len(args) + len(kwargs) != count:
            raise AnvilError(f"'main' takes {count} inputs, got {len(args) + len(kwargs)}")
        self.set_input("main", *args, **kwargs)
        self._vm.run()
        return self.get_outputs()

    def get_input_info(self):
        """(name, shape, dtype) of each input of 'main'; a dynamic dim is -1."""
        return self._vm.get_input_info()

    def benchmark(self, repeat=5, number=5):
        from ..runtime.graph_executor import BenchmarkResult

        return BenchmarkResult(self._vm.benchmark(repeat, number))

    def profile(self, repeat=10):
        from ..runtime.graph_executor import ProfileReport

        return ProfileReport(self._vm.profile(repeat))


def _copy(array):
    result = _core.empty(list(array.shape), array.dtype)
    result.copyfrom(array)
    return result


__all__ = ["Executable", "build", "compile", "VirtualMachine"]
