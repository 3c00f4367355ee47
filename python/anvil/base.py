"""The error every failed anvil call raises."""

from ._core import AnvilError

AnvilError.__doc__ = (
    "An anvil call failed: bad input (a wrong shape, dtype or name, a corrupt file, an unknown "
    "operator) or something the compiler cannot do. A ValueError whose message is one line "
    "naming the culprit.")

__all__ = ["AnvilError"]
