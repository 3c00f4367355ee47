"""Auto-tuning and post-training quantization (the tune and quantize commands, from Python)."""

import os
import sys

from . import _core
from .base import AnvilError, read_model


def tune(mod, params=None, target="llvm", tuning_records="tuning.json", trials=0, tuner="xgb",
         total_time_s=0.0, early_stopping=0, batch_size=8, repeat=3, number=1, min_repeat_ms=10.0,
         timeout_s=10.0,
         seed=1, opt_level=3, list_tasks=False, prior_records=None, threads=0,
         desired_layout=None):
    """Tunes the kernels of mod (tvmc tune): measures schedule candidates of each task in a
    worker process and writes one record per measurement to ``tuning_records``, which
    ``anvil.build(..., tuning_records=...)`` applies.

    As ``anvil tune``: ``prior_records`` (a records file of an earlier run) are not measured
    again and are copied into ``tuning_records`` (appended to when it is the same file);
    ``threads`` is the kernels' thread count while measured (0: all cores);
    ``desired_layout`` ("NCHW" or "NHWC") is the convolution layout to tune for.

    Returns one dict per task (name, key, fused_ops, flops, calls, strategy, space_size and,
    after tuning, default_ms, best_ms, trials, errors). ``list_tasks`` only lists them.
    """
    if not str(target).startswith("llvm"):
        raise AnvilError(f"tune: tuning measures on this machine: give an llvm target, not "
                         f"'{target}'")
    if threads < 0:
        raise AnvilError(f"tune: threads must be 0 (all cores) or more, not {threads}")
    if desired_layout not in (None, "NCHW", "NHWC"):
        raise AnvilError(f"tune: desired_layout must be NCHW or NHWC, not '{desired_layout}'")
    worker = [sys.executable, "-m", "anvil.tune_worker"]
    prior = os.fspath(prior_records) if prior_records is not None else ""
    return _core.tune(mod, dict(params or {}), str(target), opt_level, os.fspath(tuning_records),
                      tuner, trials, total_time_s, early_stopping, batch_size, repeat, number,
                      min_repeat_ms, timeout_s, seed, worker, list_tasks, prior, threads,
                      desired_layout or "")


def quantize(model, calibration, output=None, method="minmax", percentile=99.999,
             per_channel=True, exclude=(), report=False):
    """Post-training static quantization of a float ONNX model (anvil quantize).

    ``model`` is a path, bytes or an onnx.ModelProto; ``calibration`` a list of samples, each a
    dict of input name -> array. Returns a dict: "model" (the QDQ model's bytes, also written
    to ``output`` when given), "quantized_nodes", and with ``report`` the per-layer and
    per-output SQNR ("layers", "outputs": dicts of node, op_type, tensor, sqnr_db).
    """
    model, what, _ = read_model(model, "quantize")
    result = _core.quantize(model, what, list(calibration), method, percentile,
                            per_channel, list(exclude), report)
    if output is not None:
        with open(output, "wb") as f:
            f.write(result["model"])
    return result


__all__ = ["tune", "quantize"]
