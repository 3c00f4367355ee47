"""MobileNet v1 of TVM's relay.testing.mobilenet."""

from .. import _core


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32"):
    """(mod, params) of MobileNet v1; the input is "data"."""
    return _core.mobilenet(batch_size, num_classes, list(image_shape), dtype)
