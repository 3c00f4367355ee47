"""build(): the whole compiler in one call (TVM's relay.build)."""

from .. import _core
from ..transform import PassContext


def _target_string(target):
    if target is None:
        return "llvm"
    if isinstance(target, dict):  # TVM's {"cpu": target}
        if len(target) != 1:
            raise _core.AnvilError("build: give one target")
        target = next(iter(target.values()))
    return str(target)


class ExecutorFactory:
    """What build() returns (TVM's GraphExecutorFactoryModule): the graph JSON, the compiled
    kernels and the params left after constant folding.

    ``lib["default"](dev)`` makes a graph executor for GraphModule; ``export_library`` writes a
    package that ``anvil.runtime.load_module`` reads back anywhere.
    """

    def __init__(self, built):
        self._built = built

    @property
    def graph_json(self):
        return self._built.graph_json

    def get_graph_json(self):
        return self._built.graph_json

    @property
    def params(self):
        return self._built.params

    def get_params(self):
        """The params the graph reads at run time, by name (save them with save_param_dict)."""
        return self._built.params

    def get_lib(self):
        """The compiled kernels, as a runtime Module for graph_executor.create."""
        from ..runtime import Module

        return Module(self._built.package())

    def get_source(self, fmt="relay"):
        """The module as text at one stage: "relay" (the optimized graph), "tir", "ll", "asm"
        or "c"."""
        return self._built.get_source(fmt)

    def export_library(self, path, cc="cc"):
        """Writes path.tar (mod.so, mod.json, mod.params) or path.so (self-contained)."""
        self._built.export_library(str(path), cc)

    def __getitem__(self, name):
        if name != "default":
            raise _core.AnvilError(f"the factory has no function '{name}' (only 'default')")
        return lambda device=None: self._built.create_executor()


def build(mod, target="llvm", params=None, target_host=None, mod_name="default",
          tuning_records=None):
    """Compiles mod's @main (params bound as constants) for the graph executor.

    The graph passes run at the opt level of the current PassContext (3 without one). Raises
    AnvilError for unsupported operators (all listed at once), dynamic shapes (use anvil.vm)
    or a bad target. ``tuning_records`` is a file written by anvil.tune or ``anvil tune``.
    """
    del target_host, mod_name  # TVM's signature; the host is the target here
    ctx = PassContext.current()
    built = _core.build(mod, params, _target_string(target), ctx.opt_level, ctx.disabled_pass,
                        ctx.config, str(tuning_records) if tuning_records else "")
    return ExecutorFactory(built)


__all__ = ["build", "ExecutorFactory"]
