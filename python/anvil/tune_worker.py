"""The measurement worker of anvil.tune: reads requests on stdin, answers on stdout."""

import sys

from . import _core

if __name__ == "__main__":
    sys.exit(_core.run_measure_worker())
