"""The graph IR: modules, and their text format (docs/ir-text-format.md)."""

from . import _core
from ._core import IRModule


def parse(text, source_name="<text>"):
    """Parses a module from text: the graph IR's text (``def @main(...) { ... }``, with
    ``prim_func @name`` entries in the tensor IR's format), or a file of tensor IR functions
    alone (``@T.prim_func def ...``), each added under its name. Malformed text raises
    AnvilError naming the line and column."""
    stripped = "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")).lstrip()
    if stripped.startswith("@T.prim_func"):
        return _core.parse_tir(text, source_name)
    return _core.parse(text, source_name)


__all__ = ["IRModule", "parse"]
