"""anvil: a deep-learning compiler. A model goes in, native code comes out, a small runtime runs it.

The names follow TVM's, so that TVM's tutorials run with ``tvm`` replaced by ``anvil``::

    import anvil
    from anvil.contrib import graph_executor

    mod, params = anvil.frontend.from_onnx("model.onnx", shape={"input": (1, 3, 224, 224)})
    with anvil.transform.PassContext(opt_level=3):
        lib = anvil.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    m.set_input("input", image)
    m.run()
    top1 = m.get_output(0).numpy().argmax()
"""

from . import _core
from .base import AnvilError
from . import nd
from . import ir
from . import transform
from . import runtime
from . import frontend
from . import testing
from . import vm
from .driver import build, ExecutorFactory
from .driver import tvmc
from .runtime import cpu, Device, register_func, get_global_func, load_module
from .tools import tune, quantize

__version__ = "0.1.0"

__all__ = [
    "AnvilError", "nd", "ir", "transform", "runtime", "frontend", "testing", "vm", "build",
    "ExecutorFactory", "cpu", "Device", "register_func", "get_global_func", "load_module", "tune",
    "quantize",
]
