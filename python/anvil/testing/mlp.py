"""The MLP of the MLC course: dense, relu, dense."""

import math

from .. import _core


def get_workload(batch_size=1, num_classes=10, image_shape=(1, 28, 28), dtype="float32",
                 hidden=128):
    """(mod, params) of dense(prod(image_shape) -> hidden), relu, dense(hidden -> classes)."""
    return _core.mlp(batch_size, math.prod(image_shape), hidden, num_classes, dtype)
