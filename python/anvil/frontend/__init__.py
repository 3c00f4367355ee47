"""Importers: ONNX models to the graph IR (TVM's relay.frontend)."""

from .. import _core
from ..base import AnvilError, read_model


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=False):
    """Imports an ONNX model: an onnx.ModelProto, its serialized bytes, or a path.

    Returns (mod, params): @main takes the model's inputs, by their names, then one parameter
    per initializer (unless freeze_params); params maps those names to NDArrays. ``shape``
    fixes the shape of named inputs ({"input": (1, 3, 224, 224)}); other dynamic dims stay
    symbolic (build with anvil.vm). ``dtype`` is the element type of inputs whose type the
    model leaves open; ``opset`` overrides the model's.
    """
    data, what, base_dir = read_model(model, "from_onnx")
    shape_list = []
    for name, dims in (shape or {}).items():
        try:
            shape_list.append((str(name), [int(d) for d in dims]))
        except (TypeError, ValueError):
            raise AnvilError(f"from_onnx: the shape of '{name}' must be a sequence of ints, "
                             f"got {dims!r}") from None
    mod, params, _, _ = _core.from_onnx(data, what, base_dir, shape_list,
                                        None if dtype is None else str(dtype), opset,
                                        bool(freeze_params))
    return mod, params


__all__ = ["from_onnx"]
