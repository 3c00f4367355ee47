"""TVM's contrib namespace: graph_executor."""

from . import graph_executor

__all__ = ["graph_executor"]
