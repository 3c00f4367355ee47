"""GraphModule: runs a built graph (TVM's graph_executor.GraphModule)."""

from .. import _core
from ..base import AnvilError


class BenchmarkResult:
    """Times of benchmark(), in seconds: mean, median, std, min, max, and one per repeat."""

    def __init__(self, d):
        self.mean = d["mean"]
        self.median = d["median"]
        self.std = d["std"]
        self.min = d["min"]
        self.max = d["max"]
        self.results = list(d["results"])

    def __repr__(self):
        return (f"BenchmarkResult(mean={self.mean * 1e3:.4f} ms, median={self.median * 1e3:.4f} ms, "
                f"std={self.std * 1e3:.4f} ms, min={self.min * 1e3:.4f} ms, "
                f"max={self.max * 1e3:.4f} ms, repeats={len(self.results)})")

    def __str__(self):
        return ("Execution time summary:\n"
                f" mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                f" {self.mean * 1e3:9.4f}   {self.median * 1e3:9.4f}   {self.max * 1e3:9.4f}   "
                f"{self.min * 1e3:9.4f}   {self.std * 1e3:9.4f}")


class ProfileReport:
    """Per-kernel times of profile(), slowest first: ``rows`` of dicts (node_name, func_name,
    mean_ms, percent, fused_ops, flops, schedule)."""

    def __init__(self, rows):
        self.rows = list(rows)

    def table(self):
        lines = [f"{'kernel':<48} {'mean ms':>10} {'percent':>8}  fused ops"]
        for r in self.rows:
            lines.append(f"{r['func_name'][:48]:<48} {r['mean_ms']:>10.4f} {r['percent']:>7.2f}%  "
                         f"{r['fused_ops']}")
        return "\n".join(lines)

    __str__ = table


class GraphModule:
    """A graph executor over a built or loaded module::

        m = GraphModule(lib["default"](anvil.cpu()))
        m.set_input("data", x)       # or m.set_input(0, x), m.set_input(data=x)
        m.run()
        y = m.get_output(0).numpy()

    Each GraphModule owns its storage: several run at once on separate Python threads (the GIL
    is released while one runs). ``get_output`` returns a view of the executor's storage that
    the next run overwrites (``.numpy()`` copies it).
    """

    def __init__(self, module):
        if not isinstance(module, _core.GraphExecutor):
            raise AnvilError("GraphModule: expected lib['default'](dev) of a built or loaded "
                             f"graph module, got {type(module).__name__}")
        self._executor = module

    @property
    def _m(self):
        if self._executor is None:
            raise AnvilError("this GraphModule is closed")
        return self._executor

    def set_input(self, key=None, value=None, **params):
        """Copies value into the input named key (a str) or at position key (an int); keyword
        arguments set inputs by name. A wrong name, shape or dtype raises AnvilError."""
        m = self._m
        if key is not None:
            m.set_input(key, value)
        for name, v in params.items():
            m.set_input(name, v)

    def run(self, **input_dict):
        """Runs the graph once, after setting the given inputs by name."""
        m = self._m
        for name, v in input_dict.items():
            m.set_input(name, v)
        m.run()

    def get_output(self, index, out=None):
        """Output index, an NDArray; copied into out when given."""
        result = self._m.get_output(index)
        if out is not None:
            out.copyfrom(result)
            return out
        return result

    def get_input(self, index):
        if isinstance(index, str):
            i = self._m.get_input_index(index)
            if i < 0:
                raise AnvilError(f"the graph has no input named '{index}'")
            index = i
        return self._m.get_input(index)

    def get_input_index(self, name):
        return self._m.get_input_index(name)

    def get_num_inputs(self):
        return self._m.get_num_inputs()

    def get_num_outputs(self):
        return self._m.get_num_outputs()

    def get_input_info(self):
        """(shape_dict, dtype_dict) of the inputs that are not params."""
        shapes, dtypes = {}, {}
        for name, shape, dtype in self._m.get_input_info():
            shapes[name] = shape
            dtypes[name] = dtype
        return shapes, dtypes

    def load_params(self, params_bytes):
        """Loads params written by save_param_dict into the matching inputs."""
        self._m.load_params(bytes(params_bytes))

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  end_to_end=False):
        """Times run(): ``repeat`` samples of ``number`` runs each, after a warm-up run."""
        del device, func_name, min_repeat_ms, end_to_end
        return BenchmarkResult(self._m.benchmark(repeat, number))

    def profile(self, repeat=10):
        """Per-kernel mean times over ``repeat`` runs, slowest first."""
        return ProfileReport(self._m.profile(repeat))

    def close(self):
        """Releases the executor's storage; later calls raise AnvilError."""
        self._executor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def create(graph_json_str, libmod, device):
    """A GraphModule over graph JSON and the kernels of a loaded module (TVM's
    graph_executor.create); load the params with load_params."""
    from . import Module

    if not isinstance(libmod, Module):
        raise AnvilError("graph_executor.create: libmod must be a module from load_module or "
                         "ExecutorFactory.get_lib()")
    return GraphModule(_core.GraphExecutor(graph_json_str, libmod._package, device))


__all__ = ["GraphModule", "BenchmarkResult", "ProfileReport", "create"]
