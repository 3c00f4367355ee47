"""NDArray: anvil's n-dimensional array (TVM's tvm.nd), shared with numpy and torch by DLPack."""

from ._core import NDArray, empty, from_dlpack
from ._core import array as _array


def array(source, device=None, dtype=None):
    """A new NDArray holding a copy of ``source`` (a numpy array or anything array-like).

    ``device`` is accepted for TVM's signature; anvil's arrays live on the host CPU.
    """
    import numpy as np

    if not isinstance(source, NDArray) and not hasattr(source, "__array_interface__"):
        source = np.asarray(source, dtype=dtype)
    elif hasattr(source, "__array_interface__"):
        source = np.ascontiguousarray(source)
    return _array(source, dtype)


__all__ = ["NDArray", "array", "empty", "from_dlpack"]
