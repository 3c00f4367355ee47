"""Built-in workloads with seeded parameters (TVM's relay.testing)."""

from . import mlp, mobilenet, resnet

__all__ = ["mlp", "mobilenet", "resnet"]
