"""The error every failed anvil call raises."""

import os

from ._core import AnvilError

AnvilError.__doc__ = (
    "An anvil call failed: bad input (a wrong shape, dtype or name, a corrupt file, an unknown "
    "operator) or something the compiler cannot do. A ValueError whose message is one line "
    "naming the culprit.")



def read_model(model, caller):
    """(bytes, name for messages, directory of external data) of an ONNX model given as a
    path, bytes or an onnx.ModelProto."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                return f.read(), path, os.path.dirname(os.path.abspath(path))
        except OSError as e:
            raise AnvilError(f"cannot read ONNX model '{path}': {e.strerror}") from None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<model>", ""
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString(), "<model>", ""
    raise AnvilError(f"{caller}: expected an onnx.ModelProto, bytes or a path, got "
                     f"{type(model).__name__}")


__all__ = ["AnvilError"]
