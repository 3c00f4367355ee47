"""The pre-activation ResNet of TVM's relay.testing.resnet."""

from .. import _core


def get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224), num_classes=1000,
                 dtype="float32"):
    """(mod, params) of ResNet-num_layers (18, 34, 50, 101, 152); the input is "data"."""
    return _core.resnet(num_layers, batch_size, list(image_shape), num_classes, dtype)
