"""Pass contexts and module-level passes (TVM's tvm.transform and relay.transform)."""

import threading

from . import _core

_state = threading.local()


class PassContext:
    """The settings a build runs its graph passes under, as a context manager::

        with anvil.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
            lib = anvil.build(mod, target="llvm", params=params)

    ``opt_level`` defaults to 3, as ``build()`` without a context does, so a context made
    without arguments loses no pass. ``config`` holds per-pass settings by name
    (``{"relay.FuseOps.max_depth": 8}``); values are passed on as strings.
    """

    def __init__(self, opt_level=3, required_pass=None, disabled_pass=None, config=None):
        if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
            raise _core.AnvilError(f"PassContext: opt_level must be an int in 0..3, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.config = {str(k): _config_value(v) for k, v in (config or {}).items()}

    def __enter__(self):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()
        return False

    @staticmethod
    def current():
        """The innermost context entered on this thread, or the default one."""
        stack = getattr(_state, "stack", None)
        return stack[-1] if stack else PassContext()

    def __repr__(self):
        return (f"PassContext(opt_level={self.opt_level}, disabled_pass={self.disabled_pass}, "
                f"config={self.config})")


def _config_value(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


class BindParams:
    """Replaces the named parameters of a function by constants (TVM's relax BindParams)::

        mod = anvil.transform.BindParams("main", params)(mod)
    """

    def __init__(self, func_name, params):
        if func_name != "main":
            raise _core.AnvilError(f"BindParams: only 'main' can be bound, got '{func_name}'")
        self.params = dict(params)

    def __call__(self, mod):
        return _core.bind_params(mod, self.params)


__all__ = ["PassContext", "BindParams"]
